from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.item_type_4_kind import ItemType4Kind

T = TypeVar("T", bound="ItemType4")


@_attrs_define
class ItemType4:
    """The last lines of the agent's stderr.

    Attributes:
        kind (ItemType4Kind):
        lines (list[str]):
    """

    kind: ItemType4Kind
    lines: list[str]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        kind = self.kind.value

        lines = self.lines

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "kind": kind,
                "lines": lines,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        kind = ItemType4Kind(d.pop("kind"))

        lines = cast(list[str], d.pop("lines"))

        item_type_4 = cls(
            kind=kind,
            lines=lines,
        )

        item_type_4.additional_properties = d
        return item_type_4

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
