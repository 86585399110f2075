from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.unsafe_reason import UnsafeReason
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.circuit_hold import CircuitHold


T = TypeVar("T", bound="LastFailure")


@_attrs_define
class LastFailure:
    """
    Attributes:
        class_ (str):  Example: transient.
        code (str):
        safe_cause (str): A cause written from the code ("Provider overloaded"), never raw text.
        held_by (CircuitHold | None | Unset):
        http_status (int | None | Unset): The provider's HTTP error status, when the evidence had one (≥ 400).
        unsafe_reason (None | UnsafeReason | Unset):
    """

    class_: str
    code: str
    safe_cause: str
    held_by: CircuitHold | None | Unset = UNSET
    http_status: int | None | Unset = UNSET
    unsafe_reason: None | UnsafeReason | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.circuit_hold import CircuitHold  # noqa: PLC0415

        class_ = self.class_

        code = self.code

        safe_cause = self.safe_cause

        held_by: dict[str, Any] | None | Unset
        if isinstance(self.held_by, Unset):
            held_by = UNSET
        elif isinstance(self.held_by, CircuitHold):
            held_by = self.held_by.to_dict()
        else:
            held_by = self.held_by

        http_status: int | None | Unset
        if isinstance(self.http_status, Unset):
            http_status = UNSET
        else:
            http_status = self.http_status

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
                "class": class_,
                "code": code,
                "safe_cause": safe_cause,
            }
        )
        if held_by is not UNSET:
            field_dict["held_by"] = held_by
        if http_status is not UNSET:
            field_dict["http_status"] = http_status
        if unsafe_reason is not UNSET:
            field_dict["unsafe_reason"] = unsafe_reason

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.circuit_hold import CircuitHold  # noqa: PLC0415

        d = dict(src_dict)
        class_ = d.pop("class")

        code = d.pop("code")

        safe_cause = d.pop("safe_cause")

        def _parse_held_by(data: object) -> CircuitHold | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                held_by_type_1 = CircuitHold.from_dict(data)

                return held_by_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(CircuitHold | None | Unset, data)

        held_by = _parse_held_by(d.pop("held_by", UNSET))

        def _parse_http_status(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        http_status = _parse_http_status(d.pop("http_status", UNSET))

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

        last_failure = cls(
            class_=class_,
            code=code,
            safe_cause=safe_cause,
            held_by=held_by,
            http_status=http_status,
            unsafe_reason=unsafe_reason,
        )

        last_failure.additional_properties = d
        return last_failure

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
