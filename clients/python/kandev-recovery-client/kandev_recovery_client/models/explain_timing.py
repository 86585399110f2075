from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.timing_source import TimingSource
from ..types import UNSET, Unset

T = TypeVar("T", bound="ExplainTiming")


@_attrs_define
class ExplainTiming:
    """Where the reset came from.

    Attributes:
        trusted (list[TimingSource]):
        source (None | TimingSource | Unset):
    """

    trusted: list[TimingSource]
    source: None | TimingSource | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        trusted = []
        for trusted_item_data in self.trusted:
            trusted_item = trusted_item_data.value
            trusted.append(trusted_item)

        source: None | str | Unset
        if isinstance(self.source, Unset):
            source = UNSET
        elif isinstance(self.source, TimingSource):
            source = self.source.value
        else:
            source = self.source

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "trusted": trusted,
            }
        )
        if source is not UNSET:
            field_dict["source"] = source

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        trusted = []
        _trusted = d.pop("trusted")
        for trusted_item_data in _trusted:
            trusted_item = TimingSource(trusted_item_data)

            trusted.append(trusted_item)

        def _parse_source(data: object) -> None | TimingSource | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                source_type_1 = TimingSource(data)

                return source_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | TimingSource | Unset, data)

        source = _parse_source(d.pop("source", UNSET))

        explain_timing = cls(
            trusted=trusted,
            source=source,
        )

        explain_timing.additional_properties = d
        return explain_timing

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
