from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.unknown_entry import UnknownEntry


T = TypeVar("T", bound="UnknownSnapshot")


@_attrs_define
class UnknownSnapshot:
    """The unknown log, most frequent first.

    Attributes:
        capacity (int):
        entries (list[UnknownEntry]):
        evicted (int):
    """

    capacity: int
    entries: list[UnknownEntry]
    evicted: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        capacity = self.capacity

        entries = []
        for entries_item_data in self.entries:
            entries_item = entries_item_data.to_dict()
            entries.append(entries_item)

        evicted = self.evicted

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "capacity": capacity,
                "entries": entries,
                "evicted": evicted,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.unknown_entry import UnknownEntry  # noqa: PLC0415

        d = dict(src_dict)
        capacity = d.pop("capacity")

        entries = []
        _entries = d.pop("entries")
        for entries_item_data in _entries:
            entries_item = UnknownEntry.from_dict(entries_item_data)

            entries.append(entries_item)

        evicted = d.pop("evicted")

        unknown_snapshot = cls(
            capacity=capacity,
            entries=entries,
            evicted=evicted,
        )

        unknown_snapshot.additional_properties = d
        return unknown_snapshot

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
