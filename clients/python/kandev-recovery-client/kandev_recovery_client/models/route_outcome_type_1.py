from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.route_outcome_type_1_kind import RouteOutcomeType1Kind

T = TypeVar("T", bound="RouteOutcomeType1")


@_attrs_define
class RouteOutcomeType1:
    """Moving to another candidate (its label).

    Attributes:
        kind (RouteOutcomeType1Kind):
        to (str):
    """

    kind: RouteOutcomeType1Kind
    to: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        kind = self.kind.value

        to = self.to

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "kind": kind,
                "to": to,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        kind = RouteOutcomeType1Kind(d.pop("kind"))

        to = d.pop("to")

        route_outcome_type_1 = cls(
            kind=kind,
            to=to,
        )

        route_outcome_type_1.additional_properties = d
        return route_outcome_type_1

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
