from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.circuit_scope import CircuitScope

T = TypeVar("T", bound="CircuitHold")


@_attrs_define
class CircuitHold:
    """Why a waiting route's deadline is where it is: a shared circuit holds
    its candidate, so the deadline is the circuit's (or its probe's).

        Attributes:
            awaiting_probe (bool): Another route is probing: this one waits for the probe's outcome.
            resource (str):
            scope (CircuitScope): What kind of resource a circuit guards.
            until (datetime.datetime): The circuit is open until then (or its probe's lease ends then).
    """

    awaiting_probe: bool
    resource: str
    scope: CircuitScope
    until: datetime.datetime
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        awaiting_probe = self.awaiting_probe

        resource = self.resource

        scope = self.scope.value

        until = self.until.isoformat()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "awaiting_probe": awaiting_probe,
                "resource": resource,
                "scope": scope,
                "until": until,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        awaiting_probe = d.pop("awaiting_probe")

        resource = d.pop("resource")

        scope = CircuitScope(d.pop("scope"))

        until = datetime.datetime.fromisoformat(d.pop("until"))

        circuit_hold = cls(
            awaiting_probe=awaiting_probe,
            resource=resource,
            scope=scope,
            until=until,
        )

        circuit_hold.additional_properties = d
        return circuit_hold

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
