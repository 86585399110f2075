from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.evidence_skeleton import EvidenceSkeleton
    from ..models.unknown_entry import UnknownEntry


T = TypeVar("T", bound="UnknownDetail")


@_attrs_define
class UnknownDetail:
    """One unknown-log entry with the skeleton of its latest sighting.

    Attributes:
        entry (UnknownEntry): One distinct unrecognised failure: every sighting whose sanitised
            excerpt is the same once digit runs are folded (`exit code 1` and
            `exit code 2` are one entry).
        skeleton (EvidenceSkeleton | None | Unset):
    """

    entry: UnknownEntry
    skeleton: EvidenceSkeleton | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.evidence_skeleton import EvidenceSkeleton  # noqa: PLC0415

        entry = self.entry.to_dict()

        skeleton: dict[str, Any] | None | Unset
        if isinstance(self.skeleton, Unset):
            skeleton = UNSET
        elif isinstance(self.skeleton, EvidenceSkeleton):
            skeleton = self.skeleton.to_dict()
        else:
            skeleton = self.skeleton

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "entry": entry,
            }
        )
        if skeleton is not UNSET:
            field_dict["skeleton"] = skeleton

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.evidence_skeleton import EvidenceSkeleton  # noqa: PLC0415
        from ..models.unknown_entry import UnknownEntry  # noqa: PLC0415

        d = dict(src_dict)
        entry = UnknownEntry.from_dict(d.pop("entry"))

        def _parse_skeleton(data: object) -> EvidenceSkeleton | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                skeleton_type_1 = EvidenceSkeleton.from_dict(data)

                return skeleton_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(EvidenceSkeleton | None | Unset, data)

        skeleton = _parse_skeleton(d.pop("skeleton", UNSET))

        unknown_detail = cls(
            entry=entry,
            skeleton=skeleton,
        )

        unknown_detail.additional_properties = d
        return unknown_detail

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
