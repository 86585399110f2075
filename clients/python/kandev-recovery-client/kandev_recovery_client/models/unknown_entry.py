from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="UnknownEntry")


@_attrs_define
class UnknownEntry:
    """One distinct unrecognised excerpt.

    Attributes:
        catalogue_version (str):
        classifier_rule (str): `fallback.unmatched`, `fallback.conflict` or an explicit near-miss rule.
        count (int):
        first_seen (datetime.datetime):
        last_seen (datetime.datetime):
        safe_excerpt (str):
        model_id (None | str | Unset):
        provider_id (None | str | Unset):
    """

    catalogue_version: str
    classifier_rule: str
    count: int
    first_seen: datetime.datetime
    last_seen: datetime.datetime
    safe_excerpt: str
    model_id: None | str | Unset = UNSET
    provider_id: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        catalogue_version = self.catalogue_version

        classifier_rule = self.classifier_rule

        count = self.count

        first_seen = self.first_seen.isoformat()

        last_seen = self.last_seen.isoformat()

        safe_excerpt = self.safe_excerpt

        model_id: None | str | Unset
        if isinstance(self.model_id, Unset):
            model_id = UNSET
        else:
            model_id = self.model_id

        provider_id: None | str | Unset
        if isinstance(self.provider_id, Unset):
            provider_id = UNSET
        else:
            provider_id = self.provider_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "catalogue_version": catalogue_version,
                "classifier_rule": classifier_rule,
                "count": count,
                "first_seen": first_seen,
                "last_seen": last_seen,
                "safe_excerpt": safe_excerpt,
            }
        )
        if model_id is not UNSET:
            field_dict["model_id"] = model_id
        if provider_id is not UNSET:
            field_dict["provider_id"] = provider_id

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        catalogue_version = d.pop("catalogue_version")

        classifier_rule = d.pop("classifier_rule")

        count = d.pop("count")

        first_seen = datetime.datetime.fromisoformat(d.pop("first_seen"))

        last_seen = datetime.datetime.fromisoformat(d.pop("last_seen"))

        safe_excerpt = d.pop("safe_excerpt")

        def _parse_model_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        model_id = _parse_model_id(d.pop("model_id", UNSET))

        def _parse_provider_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        provider_id = _parse_provider_id(d.pop("provider_id", UNSET))

        unknown_entry = cls(
            catalogue_version=catalogue_version,
            classifier_rule=classifier_rule,
            count=count,
            first_seen=first_seen,
            last_seen=last_seen,
            safe_excerpt=safe_excerpt,
            model_id=model_id,
            provider_id=provider_id,
        )

        unknown_entry.additional_properties = d
        return unknown_entry

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
