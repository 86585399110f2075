from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="ReclassifiedEntry")


@_attrs_define
class ReclassifiedEntry:
    """One entry an [`UnknownReclassification`] would now classify.

    Attributes:
        classifier_rule (str):
        code (str):
        id (str):
    """

    classifier_rule: str
    code: str
    id: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        classifier_rule = self.classifier_rule

        code = self.code

        id = self.id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "classifier_rule": classifier_rule,
                "code": code,
                "id": id,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        classifier_rule = d.pop("classifier_rule")

        code = d.pop("code")

        id = d.pop("id")

        reclassified_entry = cls(
            classifier_rule=classifier_rule,
            code=code,
            id=id,
        )

        reclassified_entry.additional_properties = d
        return reclassified_entry

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
