from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="WaitForReset")


@_attrs_define
class WaitForReset:
    """Waiting for a trusted, validated future reset time.

    Attributes:
        enabled (bool):
        max_wait_seconds (int): Longest reset this policy waits for (1–604800 s when enabled, else 0).
    """

    enabled: bool
    max_wait_seconds: int

    def to_dict(self) -> dict[str, Any]:
        enabled = self.enabled

        max_wait_seconds = self.max_wait_seconds

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "enabled": enabled,
                "max_wait_seconds": max_wait_seconds,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        enabled = d.pop("enabled")

        max_wait_seconds = d.pop("max_wait_seconds")

        wait_for_reset = cls(
            enabled=enabled,
            max_wait_seconds=max_wait_seconds,
        )

        return wait_for_reset
