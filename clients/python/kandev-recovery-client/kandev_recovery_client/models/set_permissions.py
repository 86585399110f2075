from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..models.permission import Permission

T = TypeVar("T", bound="SetPermissions")


@_attrs_define
class SetPermissions:
    """
    Attributes:
        permissions (list[Permission]): Every permission the person has from now on. Read as names, so an
            unknown one is answered with a field error that lists the known.
    """

    permissions: list[Permission]

    def to_dict(self) -> dict[str, Any]:
        permissions = []
        for permissions_item_data in self.permissions:
            permissions_item = permissions_item_data.value
            permissions.append(permissions_item)

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "permissions": permissions,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        permissions = []
        _permissions = d.pop("permissions")
        for permissions_item_data in _permissions:
            permissions_item = Permission(permissions_item_data)

            permissions.append(permissions_item)

        set_permissions = cls(
            permissions=permissions,
        )

        return set_permissions
