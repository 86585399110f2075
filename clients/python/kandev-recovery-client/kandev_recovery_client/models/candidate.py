from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.candidate_policy import CandidatePolicy


T = TypeVar("T", bound="Candidate")


@_attrs_define
class Candidate:
    """One concrete agent profile inside a dynamic profile.

    Attributes:
        agent (str):
        id (str):
        label (str):
        model_id (str):
        policy (CandidatePolicy): A candidate's whole policy document: one policy per configurable class.
        profile_ref (str): Opaque reference to the caller's own agent profile.
        provider_id (str):
        account_ref (None | str | Unset): A non-secret name for the provider account this candidate uses
            (`team-a`), so candidates on one account share its circuit. Without
            one, two candidates cannot be proven to share an account.
    """

    agent: str
    id: str
    label: str
    model_id: str
    policy: CandidatePolicy
    profile_ref: str
    provider_id: str
    account_ref: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        agent = self.agent

        id = self.id

        label = self.label

        model_id = self.model_id

        policy = self.policy.to_dict()

        profile_ref = self.profile_ref

        provider_id = self.provider_id

        account_ref: None | str | Unset
        if isinstance(self.account_ref, Unset):
            account_ref = UNSET
        else:
            account_ref = self.account_ref

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "agent": agent,
                "id": id,
                "label": label,
                "model_id": model_id,
                "policy": policy,
                "profile_ref": profile_ref,
                "provider_id": provider_id,
            }
        )
        if account_ref is not UNSET:
            field_dict["account_ref"] = account_ref

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.candidate_policy import CandidatePolicy  # noqa: PLC0415

        d = dict(src_dict)
        agent = d.pop("agent")

        id = d.pop("id")

        label = d.pop("label")

        model_id = d.pop("model_id")

        policy = CandidatePolicy.from_dict(d.pop("policy"))

        profile_ref = d.pop("profile_ref")

        provider_id = d.pop("provider_id")

        def _parse_account_ref(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        account_ref = _parse_account_ref(d.pop("account_ref", UNSET))

        candidate = cls(
            agent=agent,
            id=id,
            label=label,
            model_id=model_id,
            policy=policy,
            profile_ref=profile_ref,
            provider_id=provider_id,
            account_ref=account_ref,
        )

        candidate.additional_properties = d
        return candidate

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
