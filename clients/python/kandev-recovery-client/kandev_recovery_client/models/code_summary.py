from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.scope import Scope
from ..types import UNSET, Unset

T = TypeVar("T", bound="CodeSummary")


@_attrs_define
class CodeSummary:
    """One code, with its class and a plain explanation.

    Attributes:
        class_ (str):  Example: transient.
        code (str):
        description (str):
        example (str):
        scope (None | Scope | Unset):
    """

    class_: str
    code: str
    description: str
    example: str
    scope: None | Scope | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        class_ = self.class_

        code = self.code

        description = self.description

        example = self.example

        scope: None | str | Unset
        if isinstance(self.scope, Unset):
            scope = UNSET
        elif isinstance(self.scope, Scope):
            scope = self.scope.value
        else:
            scope = self.scope

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "class": class_,
                "code": code,
                "description": description,
                "example": example,
            }
        )
        if scope is not UNSET:
            field_dict["scope"] = scope

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        class_ = d.pop("class")

        code = d.pop("code")

        description = d.pop("description")

        example = d.pop("example")

        def _parse_scope(data: object) -> None | Scope | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                scope_type_1 = Scope(data)

                return scope_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Scope | Unset, data)

        scope = _parse_scope(d.pop("scope", UNSET))

        code_summary = cls(
            class_=class_,
            code=code,
            description=description,
            example=example,
            scope=scope,
        )

        code_summary.additional_properties = d
        return code_summary

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
