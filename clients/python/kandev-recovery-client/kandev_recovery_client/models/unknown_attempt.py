from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="UnknownAttempt")


@_attrs_define
class UnknownAttempt:
    """A route attempt an unknown-log entry was seen in.

    Attributes:
        attempt_seq (int): The attempt's `seq` in the route's history.
        route_id (str):
        seen_at (datetime.datetime):
    """

    attempt_seq: int
    route_id: str
    seen_at: datetime.datetime
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        attempt_seq = self.attempt_seq

        route_id = self.route_id

        seen_at = self.seen_at.isoformat()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "attempt_seq": attempt_seq,
                "route_id": route_id,
                "seen_at": seen_at,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        attempt_seq = d.pop("attempt_seq")

        route_id = d.pop("route_id")

        seen_at = datetime.datetime.fromisoformat(d.pop("seen_at"))

        unknown_attempt = cls(
            attempt_seq=attempt_seq,
            route_id=route_id,
            seen_at=seen_at,
        )

        unknown_attempt.additional_properties = d
        return unknown_attempt

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
