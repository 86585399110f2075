from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.dispatch_reason import DispatchReason
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.candidate_ref import CandidateRef
    from ..models.resume import Resume


T = TypeVar("T", bound="Dispatch")


@_attrs_define
class Dispatch:
    """The backend telling a caller to deliver the prompt to a candidate.

    Attributes:
        candidate (CandidateRef):
        generation (int):
        id (str):
        invocation_id (str):
        prompt_generation (int):
        reason (DispatchReason): Why a dispatch exists.
        route_id (str):
        lease_until (datetime.datetime | None | Unset):
        resume (None | Resume | Unset):
    """

    candidate: CandidateRef
    generation: int
    id: str
    invocation_id: str
    prompt_generation: int
    reason: DispatchReason
    route_id: str
    lease_until: datetime.datetime | None | Unset = UNSET
    resume: None | Resume | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.resume import Resume  # noqa: PLC0415

        candidate = self.candidate.to_dict()

        generation = self.generation

        id = self.id

        invocation_id = self.invocation_id

        prompt_generation = self.prompt_generation

        reason = self.reason.value

        route_id = self.route_id

        lease_until: None | str | Unset
        if isinstance(self.lease_until, Unset):
            lease_until = UNSET
        elif isinstance(self.lease_until, datetime.datetime):
            lease_until = self.lease_until.isoformat()
        else:
            lease_until = self.lease_until

        resume: dict[str, Any] | None | Unset
        if isinstance(self.resume, Unset):
            resume = UNSET
        elif isinstance(self.resume, Resume):
            resume = self.resume.to_dict()
        else:
            resume = self.resume

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "candidate": candidate,
                "generation": generation,
                "id": id,
                "invocation_id": invocation_id,
                "prompt_generation": prompt_generation,
                "reason": reason,
                "route_id": route_id,
            }
        )
        if lease_until is not UNSET:
            field_dict["lease_until"] = lease_until
        if resume is not UNSET:
            field_dict["resume"] = resume

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.candidate_ref import CandidateRef  # noqa: PLC0415
        from ..models.resume import Resume  # noqa: PLC0415

        d = dict(src_dict)
        candidate = CandidateRef.from_dict(d.pop("candidate"))

        generation = d.pop("generation")

        id = d.pop("id")

        invocation_id = d.pop("invocation_id")

        prompt_generation = d.pop("prompt_generation")

        reason = DispatchReason(d.pop("reason"))

        route_id = d.pop("route_id")

        def _parse_lease_until(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                lease_until_type_0 = datetime.datetime.fromisoformat(data)

                return lease_until_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        lease_until = _parse_lease_until(d.pop("lease_until", UNSET))

        def _parse_resume(data: object) -> None | Resume | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                resume_type_1 = Resume.from_dict(data)

                return resume_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Resume | Unset, data)

        resume = _parse_resume(d.pop("resume", UNSET))

        dispatch = cls(
            candidate=candidate,
            generation=generation,
            id=id,
            invocation_id=invocation_id,
            prompt_generation=prompt_generation,
            reason=reason,
            route_id=route_id,
            lease_until=lease_until,
            resume=resume,
        )

        dispatch.additional_properties = d
        return dispatch

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
