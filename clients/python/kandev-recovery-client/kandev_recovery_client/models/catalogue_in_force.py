from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.catalogue_source import CatalogueSource
from ..types import UNSET, Unset

T = TypeVar("T", bound="CatalogueInForce")


@_attrs_define
class CatalogueInForce:
    """The catalogue this server instance classifies with now.

    Attributes:
        loaded_at (datetime.datetime): When this instance loaded it.
        rule_count (int): How many rules it has.
        source (CatalogueSource): Where the catalogue in force was loaded from.
        version (str): The catalogue's `version`, as every classification records it.
        directory (None | str | Unset): The directory it was read from (with `directory`).
    """

    loaded_at: datetime.datetime
    rule_count: int
    source: CatalogueSource
    version: str
    directory: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        loaded_at = self.loaded_at.isoformat()

        rule_count = self.rule_count

        source = self.source.value

        version = self.version

        directory: None | str | Unset
        if isinstance(self.directory, Unset):
            directory = UNSET
        else:
            directory = self.directory

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "loaded_at": loaded_at,
                "rule_count": rule_count,
                "source": source,
                "version": version,
            }
        )
        if directory is not UNSET:
            field_dict["directory"] = directory

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        loaded_at = datetime.datetime.fromisoformat(d.pop("loaded_at"))

        rule_count = d.pop("rule_count")

        source = CatalogueSource(d.pop("source"))

        version = d.pop("version")

        def _parse_directory(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        directory = _parse_directory(d.pop("directory", UNSET))

        catalogue_in_force = cls(
            loaded_at=loaded_at,
            rule_count=rule_count,
            source=source,
            version=version,
            directory=directory,
        )

        catalogue_in_force.additional_properties = d
        return catalogue_in_force

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
