from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.prefer import Prefer

if TYPE_CHECKING:
    from ..models.candidate import Candidate
    from ..models.candidate_preview import CandidatePreview


T = TypeVar("T", bound="ValidationReport")


@_attrs_define
class ValidationReport:
    """The answer of `POST /api/v1/profiles/validate`.

    Attributes:
        candidates (list[Candidate]):
        name (str):
        prefer (Prefer): Where a route's next invocation goes once a prompt succeeded.
        preview (list[CandidatePreview]):
    """

    candidates: list[Candidate]
    name: str
    prefer: Prefer
    preview: list[CandidatePreview]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        candidates = []
        for candidates_item_data in self.candidates:
            candidates_item = candidates_item_data.to_dict()
            candidates.append(candidates_item)

        name = self.name

        prefer = self.prefer.value

        preview = []
        for preview_item_data in self.preview:
            preview_item = preview_item_data.to_dict()
            preview.append(preview_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "candidates": candidates,
                "name": name,
                "prefer": prefer,
                "preview": preview,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.candidate import Candidate  # noqa: PLC0415
        from ..models.candidate_preview import CandidatePreview  # noqa: PLC0415

        d = dict(src_dict)
        candidates = []
        _candidates = d.pop("candidates")
        for candidates_item_data in _candidates:
            candidates_item = Candidate.from_dict(candidates_item_data)

            candidates.append(candidates_item)

        name = d.pop("name")

        prefer = Prefer(d.pop("prefer"))

        preview = []
        _preview = d.pop("preview")
        for preview_item_data in _preview:
            preview_item = CandidatePreview.from_dict(preview_item_data)

            preview.append(preview_item)

        validation_report = cls(
            candidates=candidates,
            name=name,
            prefer=prefer,
            preview=preview,
        )

        validation_report.additional_properties = d
        return validation_report

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
