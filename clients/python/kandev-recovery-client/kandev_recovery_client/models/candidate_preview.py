from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.schedule_preview import SchedulePreview


T = TypeVar("T", bound="CandidatePreview")


@_attrs_define
class CandidatePreview:
    """Preview of both classes of one candidate.

    Attributes:
        candidate_id (str):
        hard (SchedulePreview): The preview of one class policy: its delays and the sentence describing it.
        transient (SchedulePreview): The preview of one class policy: its delays and the sentence describing it.
    """

    candidate_id: str
    hard: SchedulePreview
    transient: SchedulePreview
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        candidate_id = self.candidate_id

        hard = self.hard.to_dict()

        transient = self.transient.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "candidate_id": candidate_id,
                "hard": hard,
                "transient": transient,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.schedule_preview import SchedulePreview  # noqa: PLC0415

        d = dict(src_dict)
        candidate_id = d.pop("candidate_id")

        hard = SchedulePreview.from_dict(d.pop("hard"))

        transient = SchedulePreview.from_dict(d.pop("transient"))

        candidate_preview = cls(
            candidate_id=candidate_id,
            hard=hard,
            transient=transient,
        )

        candidate_preview.additional_properties = d
        return candidate_preview

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
