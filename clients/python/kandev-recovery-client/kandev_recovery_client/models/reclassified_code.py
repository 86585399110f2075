from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="ReclassifiedCode")


@_attrs_define
class ReclassifiedCode:
    """One code in an [`UnknownReclassification`].

    Attributes:
        class_ (str): The code's class (`transient`, `usage_limit`, …).
        code (str):
        entries (int):
        sightings (int):
    """

    class_: str
    code: str
    entries: int
    sightings: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        class_ = self.class_

        code = self.code

        entries = self.entries

        sightings = self.sightings

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "class": class_,
                "code": code,
                "entries": entries,
                "sightings": sightings,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        class_ = d.pop("class")

        code = d.pop("code")

        entries = d.pop("entries")

        sightings = d.pop("sightings")

        reclassified_code = cls(
            class_=class_,
            code=code,
            entries=entries,
            sightings=sightings,
        )

        reclassified_code.additional_properties = d
        return reclassified_code

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
