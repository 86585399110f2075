from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.reclassified_code import ReclassifiedCode
    from ..models.reclassified_entry import ReclassifiedEntry


T = TypeVar("T", bound="UnknownReclassification")


@_attrs_define
class UnknownReclassification:
    """What a catalogue makes of the logged unknowns
    (`GET /catalogue/unknown/reclassify`, `catalogue reclassify-unknown`):
    each entry's skeleton classified again.

        Attributes:
            by_code (list[ReclassifiedCode]): The codes they would now get, most entries first.
            catalogue_version (str): The catalogue that classified them.
            changed (list[ReclassifiedEntry]): Each entry that would now be classified: its id and its new code.
            classified (int): Entries the catalogue now classifies (a code other than
                `unclassified`), and how many sightings they stand for.
            classified_sightings (int):
            entries (int): Entries in the log.
            still_unknown (int): Entries still unknown.
            with_skeleton (int): Entries with a skeleton to classify (older ones have none).
    """

    by_code: list[ReclassifiedCode]
    catalogue_version: str
    changed: list[ReclassifiedEntry]
    classified: int
    classified_sightings: int
    entries: int
    still_unknown: int
    with_skeleton: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        by_code = []
        for by_code_item_data in self.by_code:
            by_code_item = by_code_item_data.to_dict()
            by_code.append(by_code_item)

        catalogue_version = self.catalogue_version

        changed = []
        for changed_item_data in self.changed:
            changed_item = changed_item_data.to_dict()
            changed.append(changed_item)

        classified = self.classified

        classified_sightings = self.classified_sightings

        entries = self.entries

        still_unknown = self.still_unknown

        with_skeleton = self.with_skeleton

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "by_code": by_code,
                "catalogue_version": catalogue_version,
                "changed": changed,
                "classified": classified,
                "classified_sightings": classified_sightings,
                "entries": entries,
                "still_unknown": still_unknown,
                "with_skeleton": with_skeleton,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.reclassified_code import ReclassifiedCode  # noqa: PLC0415
        from ..models.reclassified_entry import ReclassifiedEntry  # noqa: PLC0415

        d = dict(src_dict)
        by_code = []
        _by_code = d.pop("by_code")
        for by_code_item_data in _by_code:
            by_code_item = ReclassifiedCode.from_dict(by_code_item_data)

            by_code.append(by_code_item)

        catalogue_version = d.pop("catalogue_version")

        changed = []
        _changed = d.pop("changed")
        for changed_item_data in _changed:
            changed_item = ReclassifiedEntry.from_dict(changed_item_data)

            changed.append(changed_item)

        classified = d.pop("classified")

        classified_sightings = d.pop("classified_sightings")

        entries = d.pop("entries")

        still_unknown = d.pop("still_unknown")

        with_skeleton = d.pop("with_skeleton")

        unknown_reclassification = cls(
            by_code=by_code,
            catalogue_version=catalogue_version,
            changed=changed,
            classified=classified,
            classified_sightings=classified_sightings,
            entries=entries,
            still_unknown=still_unknown,
            with_skeleton=with_skeleton,
        )

        unknown_reclassification.additional_properties = d
        return unknown_reclassification

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
