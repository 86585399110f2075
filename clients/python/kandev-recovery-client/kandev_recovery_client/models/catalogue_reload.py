from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.catalogue_in_force import CatalogueInForce


T = TypeVar("T", bound="CatalogueReload")


@_attrs_define
class CatalogueReload:
    """What `POST /api/v1/catalogue/reload` answers when the directory loaded:
    the catalogue now in force and the version it replaced.

        Attributes:
            in_force (CatalogueInForce): The catalogue this server instance classifies with now.
            previous_version (str):
    """

    in_force: CatalogueInForce
    previous_version: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        in_force = self.in_force.to_dict()

        previous_version = self.previous_version

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "in_force": in_force,
                "previous_version": previous_version,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.catalogue_in_force import CatalogueInForce  # noqa: PLC0415

        d = dict(src_dict)
        in_force = CatalogueInForce.from_dict(d.pop("in_force"))

        previous_version = d.pop("previous_version")

        catalogue_reload = cls(
            in_force=in_force,
            previous_version=previous_version,
        )

        catalogue_reload.additional_properties = d
        return catalogue_reload

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
