from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="ClassUsage")


@_attrs_define
class ClassUsage:
    """What one class already used in the session's current cycle.

    Attributes:
        reset_wait_used (bool): Whether this class already waited for a reset (once per cycle).
        retries_used (int): Retries of this class already made (the next retry is this + 1).
    """

    reset_wait_used: bool
    retries_used: int

    def to_dict(self) -> dict[str, Any]:
        reset_wait_used = self.reset_wait_used

        retries_used = self.retries_used

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "reset_wait_used": reset_wait_used,
                "retries_used": retries_used,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        reset_wait_used = d.pop("reset_wait_used")

        retries_used = d.pop("retries_used")

        class_usage = cls(
            reset_wait_used=reset_wait_used,
            retries_used=retries_used,
        )

        return class_usage
