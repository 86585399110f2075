from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.decision_kind import DecisionKind
from ..models.unsafe_reason import UnsafeReason
from ..types import UNSET, Unset

T = TypeVar("T", bound="Verdict")


@_attrs_define
class Verdict:
    """The evaluator's decision for a concrete session: what to do and when.
    Deadlines are absolute (UTC), from the server's clock.

        Attributes:
            kind (DecisionKind): A decision as the API names it (`decision.kind`, an attempt's
                `decision`): the four policy outcomes or a rejection.
            summary (str): The decision in one sentence for people.
            class_ (None | str | Unset):  Example: transient.
            deadline (datetime.datetime | None | Unset):
            delay_seconds (int | None | Unset):
            max_retries (int | None | Unset):
            retry_ordinal (int | None | Unset):
            unsafe_reason (None | UnsafeReason | Unset):
    """

    kind: DecisionKind
    summary: str
    class_: None | str | Unset = UNSET
    deadline: datetime.datetime | None | Unset = UNSET
    delay_seconds: int | None | Unset = UNSET
    max_retries: int | None | Unset = UNSET
    retry_ordinal: int | None | Unset = UNSET
    unsafe_reason: None | UnsafeReason | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        kind = self.kind.value

        summary = self.summary

        class_: None | str | Unset
        if isinstance(self.class_, Unset):
            class_ = UNSET
        else:
            class_ = self.class_

        deadline: None | str | Unset
        if isinstance(self.deadline, Unset):
            deadline = UNSET
        elif isinstance(self.deadline, datetime.datetime):
            deadline = self.deadline.isoformat()
        else:
            deadline = self.deadline

        delay_seconds: int | None | Unset
        if isinstance(self.delay_seconds, Unset):
            delay_seconds = UNSET
        else:
            delay_seconds = self.delay_seconds

        max_retries: int | None | Unset
        if isinstance(self.max_retries, Unset):
            max_retries = UNSET
        else:
            max_retries = self.max_retries

        retry_ordinal: int | None | Unset
        if isinstance(self.retry_ordinal, Unset):
            retry_ordinal = UNSET
        else:
            retry_ordinal = self.retry_ordinal

        unsafe_reason: None | str | Unset
        if isinstance(self.unsafe_reason, Unset):
            unsafe_reason = UNSET
        elif isinstance(self.unsafe_reason, UnsafeReason):
            unsafe_reason = self.unsafe_reason.value
        else:
            unsafe_reason = self.unsafe_reason

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "kind": kind,
                "summary": summary,
            }
        )
        if class_ is not UNSET:
            field_dict["class"] = class_
        if deadline is not UNSET:
            field_dict["deadline"] = deadline
        if delay_seconds is not UNSET:
            field_dict["delay_seconds"] = delay_seconds
        if max_retries is not UNSET:
            field_dict["max_retries"] = max_retries
        if retry_ordinal is not UNSET:
            field_dict["retry_ordinal"] = retry_ordinal
        if unsafe_reason is not UNSET:
            field_dict["unsafe_reason"] = unsafe_reason

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        kind = DecisionKind(d.pop("kind"))

        summary = d.pop("summary")

        def _parse_class_(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        class_ = _parse_class_(d.pop("class", UNSET))

        def _parse_deadline(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                deadline_type_0 = datetime.datetime.fromisoformat(data)

                return deadline_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        deadline = _parse_deadline(d.pop("deadline", UNSET))

        def _parse_delay_seconds(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        delay_seconds = _parse_delay_seconds(d.pop("delay_seconds", UNSET))

        def _parse_max_retries(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        max_retries = _parse_max_retries(d.pop("max_retries", UNSET))

        def _parse_retry_ordinal(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        retry_ordinal = _parse_retry_ordinal(d.pop("retry_ordinal", UNSET))

        def _parse_unsafe_reason(data: object) -> None | UnsafeReason | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                unsafe_reason_type_1 = UnsafeReason(data)

                return unsafe_reason_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | UnsafeReason | Unset, data)

        unsafe_reason = _parse_unsafe_reason(d.pop("unsafe_reason", UNSET))

        verdict = cls(
            kind=kind,
            summary=summary,
            class_=class_,
            deadline=deadline,
            delay_seconds=delay_seconds,
            max_retries=max_retries,
            retry_ordinal=retry_ordinal,
            unsafe_reason=unsafe_reason,
        )

        verdict.additional_properties = d
        return verdict

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
