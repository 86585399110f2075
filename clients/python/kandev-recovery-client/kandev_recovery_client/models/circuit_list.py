from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.circuit_view import CircuitView


T = TypeVar("T", bound="CircuitList")


@_attrs_define
class CircuitList:
    """The answer of `GET /api/v1/circuits`.

    Attributes:
        circuits (list[CircuitView]):
        server_time (datetime.datetime):
    """

    circuits: list[CircuitView]
    server_time: datetime.datetime
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        circuits = []
        for circuits_item_data in self.circuits:
            circuits_item = circuits_item_data.to_dict()
            circuits.append(circuits_item)

        server_time = self.server_time.isoformat()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "circuits": circuits,
                "server_time": server_time,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.circuit_view import CircuitView  # noqa: PLC0415

        d = dict(src_dict)
        circuits = []
        _circuits = d.pop("circuits")
        for circuits_item_data in _circuits:
            circuits_item = CircuitView.from_dict(circuits_item_data)

            circuits.append(circuits_item)

        server_time = datetime.datetime.fromisoformat(d.pop("server_time"))

        circuit_list = cls(
            circuits=circuits,
            server_time=server_time,
        )

        circuit_list.additional_properties = d
        return circuit_list

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
