from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.candidate_policy import CandidatePolicy


T = TypeVar("T", bound="CandidateWrite")


@_attrs_define
class CandidateWrite:
    """A candidate as clients send it. Without `policy`, both classes skip
    immediately.

        Attributes:
            agent (str):
            label (str):
            account_ref (None | str | Unset): A non-secret name of the provider account (`team-a`): candidates
                naming the same one share its circuit.
            id (None | str | Unset):
            model_id (None | str | Unset):
            policy (CandidatePolicy | None | Unset):
            profile_ref (None | str | Unset):
            provider_id (None | str | Unset):
    """

    agent: str
    label: str
    account_ref: None | str | Unset = UNSET
    id: None | str | Unset = UNSET
    model_id: None | str | Unset = UNSET
    policy: CandidatePolicy | None | Unset = UNSET
    profile_ref: None | str | Unset = UNSET
    provider_id: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.candidate_policy import CandidatePolicy  # noqa: PLC0415

        agent = self.agent

        label = self.label

        account_ref: None | str | Unset
        if isinstance(self.account_ref, Unset):
            account_ref = UNSET
        else:
            account_ref = self.account_ref

        id: None | str | Unset
        if isinstance(self.id, Unset):
            id = UNSET
        else:
            id = self.id

        model_id: None | str | Unset
        if isinstance(self.model_id, Unset):
            model_id = UNSET
        else:
            model_id = self.model_id

        policy: dict[str, Any] | None | Unset
        if isinstance(self.policy, Unset):
            policy = UNSET
        elif isinstance(self.policy, CandidatePolicy):
            policy = self.policy.to_dict()
        else:
            policy = self.policy

        profile_ref: None | str | Unset
        if isinstance(self.profile_ref, Unset):
            profile_ref = UNSET
        else:
            profile_ref = self.profile_ref

        provider_id: None | str | Unset
        if isinstance(self.provider_id, Unset):
            provider_id = UNSET
        else:
            provider_id = self.provider_id

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "agent": agent,
                "label": label,
            }
        )
        if account_ref is not UNSET:
            field_dict["account_ref"] = account_ref
        if id is not UNSET:
            field_dict["id"] = id
        if model_id is not UNSET:
            field_dict["model_id"] = model_id
        if policy is not UNSET:
            field_dict["policy"] = policy
        if profile_ref is not UNSET:
            field_dict["profile_ref"] = profile_ref
        if provider_id is not UNSET:
            field_dict["provider_id"] = provider_id

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.candidate_policy import CandidatePolicy  # noqa: PLC0415

        d = dict(src_dict)
        agent = d.pop("agent")

        label = d.pop("label")

        def _parse_account_ref(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        account_ref = _parse_account_ref(d.pop("account_ref", UNSET))

        def _parse_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        id = _parse_id(d.pop("id", UNSET))

        def _parse_model_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        model_id = _parse_model_id(d.pop("model_id", UNSET))

        def _parse_policy(data: object) -> CandidatePolicy | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                policy_type_1 = CandidatePolicy.from_dict(data)

                return policy_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(CandidatePolicy | None | Unset, data)

        policy = _parse_policy(d.pop("policy", UNSET))

        def _parse_profile_ref(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        profile_ref = _parse_profile_ref(d.pop("profile_ref", UNSET))

        def _parse_provider_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        provider_id = _parse_provider_id(d.pop("provider_id", UNSET))

        candidate_write = cls(
            agent=agent,
            label=label,
            account_ref=account_ref,
            id=id,
            model_id=model_id,
            policy=policy,
            profile_ref=profile_ref,
            provider_id=provider_id,
        )

        return candidate_write
