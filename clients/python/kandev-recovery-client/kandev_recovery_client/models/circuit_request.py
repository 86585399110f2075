from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..models.circuit_scope import CircuitScope

T = TypeVar("T", bound="CircuitRequest")


@_attrs_define
class CircuitRequest:
    """`POST /api/v1/circuits/release` and `POST /api/v1/circuits/probe`: the
    circuit an administrator acts on, named as `GET /api/v1/circuits`
    lists it.

        Attributes:
            resource (str): The resource's name (`anthropic/team-a`).
            scope (CircuitScope): What kind of resource a circuit guards.
    """

    resource: str
    scope: CircuitScope

    def to_dict(self) -> dict[str, Any]:
        resource = self.resource

        scope = self.scope.value

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "resource": resource,
                "scope": scope,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        resource = d.pop("resource")

        scope = CircuitScope(d.pop("scope"))

        circuit_request = cls(
            resource=resource,
            scope=scope,
        )

        return circuit_request
