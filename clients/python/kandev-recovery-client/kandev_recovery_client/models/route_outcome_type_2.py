from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.route_outcome_type_2_kind import RouteOutcomeType2Kind
from ..models.route_state import RouteState

T = TypeVar("T", bound="RouteOutcomeType2")


@_attrs_define
class RouteOutcomeType2:
    """Waiting in `state` for a deadline.

    Attributes:
        kind (RouteOutcomeType2Kind):
        state (RouteState): The route states of docs/design.md (plus the terminal `completed` / `cancelled`).
        until (datetime.datetime):
    """

    kind: RouteOutcomeType2Kind
    state: RouteState
    until: datetime.datetime
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        kind = self.kind.value

        state = self.state.value

        until = self.until.isoformat()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "kind": kind,
                "state": state,
                "until": until,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        kind = RouteOutcomeType2Kind(d.pop("kind"))

        state = RouteState(d.pop("state"))

        until = datetime.datetime.fromisoformat(d.pop("until"))

        route_outcome_type_2 = cls(
            kind=kind,
            state=state,
            until=until,
        )

        route_outcome_type_2.additional_properties = d
        return route_outcome_type_2

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
