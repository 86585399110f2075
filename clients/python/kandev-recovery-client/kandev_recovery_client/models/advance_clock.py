from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="AdvanceClock")


@_attrs_define
class AdvanceClock:
    """
    Attributes:
        advance_seconds (float):
    """

    advance_seconds: float

    def to_dict(self) -> dict[str, Any]:
        advance_seconds = self.advance_seconds

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "advance_seconds": advance_seconds,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        advance_seconds = d.pop("advance_seconds")

        advance_clock = cls(
            advance_seconds=advance_seconds,
        )

        return advance_clock
