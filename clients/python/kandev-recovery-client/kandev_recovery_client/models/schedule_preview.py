from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="SchedulePreview")


@_attrs_define
class SchedulePreview:
    """The preview of one class policy: its delays and the sentence describing it.

    Attributes:
        on_exhausted (str):
        retry_delays_seconds (list[int]):
        summary (str):
        max_wait_seconds (int | None | Unset):
    """

    on_exhausted: str
    retry_delays_seconds: list[int]
    summary: str
    max_wait_seconds: int | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        on_exhausted = self.on_exhausted

        retry_delays_seconds = self.retry_delays_seconds

        summary = self.summary

        max_wait_seconds: int | None | Unset
        if isinstance(self.max_wait_seconds, Unset):
            max_wait_seconds = UNSET
        else:
            max_wait_seconds = self.max_wait_seconds

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "on_exhausted": on_exhausted,
                "retry_delays_seconds": retry_delays_seconds,
                "summary": summary,
            }
        )
        if max_wait_seconds is not UNSET:
            field_dict["max_wait_seconds"] = max_wait_seconds

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        on_exhausted = d.pop("on_exhausted")

        retry_delays_seconds = cast(list[int], d.pop("retry_delays_seconds"))

        summary = d.pop("summary")

        def _parse_max_wait_seconds(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        max_wait_seconds = _parse_max_wait_seconds(d.pop("max_wait_seconds", UNSET))

        schedule_preview = cls(
            on_exhausted=on_exhausted,
            retry_delays_seconds=retry_delays_seconds,
            summary=summary,
            max_wait_seconds=max_wait_seconds,
        )

        schedule_preview.additional_properties = d
        return schedule_preview

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
