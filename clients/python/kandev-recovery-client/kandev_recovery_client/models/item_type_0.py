from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.item_type_0_kind import ItemType0Kind
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.http_headers import HttpHeaders


T = TypeVar("T", bound="ItemType0")


@_attrs_define
class ItemType0:
    """An HTTP response, or a request that got none (`status: null` plus
    `error`). Header names are read case-insensitively.

        Attributes:
            kind (ItemType0Kind):
            body (None | str | Unset):
            error (None | str | Unset):
            headers (HttpHeaders | Unset): An HTTP item's headers, by name (a named schema, so generators make
                one type of it).
            status (int | None | Unset):
    """

    kind: ItemType0Kind
    body: None | str | Unset = UNSET
    error: None | str | Unset = UNSET
    headers: HttpHeaders | Unset = UNSET
    status: int | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        kind = self.kind.value

        body: None | str | Unset
        if isinstance(self.body, Unset):
            body = UNSET
        else:
            body = self.body

        error: None | str | Unset
        if isinstance(self.error, Unset):
            error = UNSET
        else:
            error = self.error

        headers: dict[str, Any] | Unset = UNSET
        if not isinstance(self.headers, Unset):
            headers = self.headers.to_dict()

        status: int | None | Unset
        if isinstance(self.status, Unset):
            status = UNSET
        else:
            status = self.status

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "kind": kind,
            }
        )
        if body is not UNSET:
            field_dict["body"] = body
        if error is not UNSET:
            field_dict["error"] = error
        if headers is not UNSET:
            field_dict["headers"] = headers
        if status is not UNSET:
            field_dict["status"] = status

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.http_headers import HttpHeaders  # noqa: PLC0415

        d = dict(src_dict)
        kind = ItemType0Kind(d.pop("kind"))

        def _parse_body(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        body = _parse_body(d.pop("body", UNSET))

        def _parse_error(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        error = _parse_error(d.pop("error", UNSET))

        _headers = d.pop("headers", UNSET)
        headers: HttpHeaders | Unset
        if isinstance(_headers, Unset):
            headers = UNSET
        else:
            headers = HttpHeaders.from_dict(_headers)

        def _parse_status(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        status = _parse_status(d.pop("status", UNSET))

        item_type_0 = cls(
            kind=kind,
            body=body,
            error=error,
            headers=headers,
            status=status,
        )

        item_type_0.additional_properties = d
        return item_type_0

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
