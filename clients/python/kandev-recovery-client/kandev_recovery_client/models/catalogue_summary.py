from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.code_summary import CodeSummary
    from ..models.tier_spec import TierSpec


T = TypeVar("T", bound="CatalogueSummary")


@_attrs_define
class CatalogueSummary:
    """The catalogue as the UI and docs see it.

    Attributes:
        codes (list[CodeSummary]):
        rule_count (int):
        tiers (list[TierSpec]):
        version (str):
    """

    codes: list[CodeSummary]
    rule_count: int
    tiers: list[TierSpec]
    version: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        codes = []
        for codes_item_data in self.codes:
            codes_item = codes_item_data.to_dict()
            codes.append(codes_item)

        rule_count = self.rule_count

        tiers = []
        for tiers_item_data in self.tiers:
            tiers_item = tiers_item_data.to_dict()
            tiers.append(tiers_item)

        version = self.version

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "codes": codes,
                "rule_count": rule_count,
                "tiers": tiers,
                "version": version,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.code_summary import CodeSummary  # noqa: PLC0415
        from ..models.tier_spec import TierSpec  # noqa: PLC0415

        d = dict(src_dict)
        codes = []
        _codes = d.pop("codes")
        for codes_item_data in _codes:
            codes_item = CodeSummary.from_dict(codes_item_data)

            codes.append(codes_item)

        rule_count = d.pop("rule_count")

        tiers = []
        _tiers = d.pop("tiers")
        for tiers_item_data in _tiers:
            tiers_item = TierSpec.from_dict(tiers_item_data)

            tiers.append(tiers_item)

        version = d.pop("version")

        catalogue_summary = cls(
            codes=codes,
            rule_count=rule_count,
            tiers=tiers,
            version=version,
        )

        catalogue_summary.additional_properties = d
        return catalogue_summary

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
