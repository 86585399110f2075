from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.route_outcome_type_3_kind import RouteOutcomeType3Kind
from ..models.route_state import RouteState

T = TypeVar("T", bound="RouteOutcomeType3")


@_attrs_define
class RouteOutcomeType3:
    """Now in `state`, with nothing pending.

    Attributes:
        kind (RouteOutcomeType3Kind):
        state (RouteState): The route states of docs/design.md (plus the terminal `completed` / `cancelled`).
    """

    kind: RouteOutcomeType3Kind
    state: RouteState
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        kind = self.kind.value

        state = self.state.value

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "kind": kind,
                "state": state,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        kind = RouteOutcomeType3Kind(d.pop("kind"))

        state = RouteState(d.pop("state"))

        route_outcome_type_3 = cls(
            kind=kind,
            state=state,
        )

        route_outcome_type_3.additional_properties = d
        return route_outcome_type_3

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
