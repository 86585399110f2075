from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="RetryPolicy")


@_attrs_define
class RetryPolicy:
    """Same-candidate retry with exponential backoff.

    Attributes:
        enabled (bool):
        initial_interval_seconds (int): Delay before the first retry (1–3600 s when enabled, else 0); later
            delays double.
        max_retries (int): Additional attempts after the failed one (1–10 when enabled, else 0).
    """

    enabled: bool
    initial_interval_seconds: int
    max_retries: int

    def to_dict(self) -> dict[str, Any]:
        enabled = self.enabled

        initial_interval_seconds = self.initial_interval_seconds

        max_retries = self.max_retries

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "enabled": enabled,
                "initial_interval_seconds": initial_interval_seconds,
                "max_retries": max_retries,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        enabled = d.pop("enabled")

        initial_interval_seconds = d.pop("initial_interval_seconds")

        max_retries = d.pop("max_retries")

        retry_policy = cls(
            enabled=enabled,
            initial_interval_seconds=initial_interval_seconds,
            max_retries=max_retries,
        )

        return retry_policy
