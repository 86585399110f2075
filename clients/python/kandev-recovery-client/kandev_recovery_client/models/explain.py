from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.explain_outcome import ExplainOutcome
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.explain_place import ExplainPlace
    from ..models.explain_tier import ExplainTier
    from ..models.explain_timing import ExplainTiming


T = TypeVar("T", bound="Explain")


@_attrs_define
class Explain:
    """Everything the classifier weighed.

    Attributes:
        outcome (ExplainOutcome): How the best tier with a match decided.
        set_aside (list[int]): Items provenance left unread (an echoed prompt, a notice the agent
            superseded, an error it carried on after), by index.
        tiers (list[ExplainTier]): The tiers with a matching rule, best first, each with its matching
            rules; the first tier decides, the others are shown for context.
        timing (ExplainTiming): Where the reset came from.
        decided_by (None | str | Unset): The deciding rule's id; `null` on a conflict or no match.
        evidence (ExplainPlace | None | Unset):
    """

    outcome: ExplainOutcome
    set_aside: list[int]
    tiers: list[ExplainTier]
    timing: ExplainTiming
    decided_by: None | str | Unset = UNSET
    evidence: ExplainPlace | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.explain_place import ExplainPlace  # noqa: PLC0415

        outcome = self.outcome.value

        set_aside = self.set_aside

        tiers = []
        for tiers_item_data in self.tiers:
            tiers_item = tiers_item_data.to_dict()
            tiers.append(tiers_item)

        timing = self.timing.to_dict()

        decided_by: None | str | Unset
        if isinstance(self.decided_by, Unset):
            decided_by = UNSET
        else:
            decided_by = self.decided_by

        evidence: dict[str, Any] | None | Unset
        if isinstance(self.evidence, Unset):
            evidence = UNSET
        elif isinstance(self.evidence, ExplainPlace):
            evidence = self.evidence.to_dict()
        else:
            evidence = self.evidence

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "outcome": outcome,
                "set_aside": set_aside,
                "tiers": tiers,
                "timing": timing,
            }
        )
        if decided_by is not UNSET:
            field_dict["decided_by"] = decided_by
        if evidence is not UNSET:
            field_dict["evidence"] = evidence

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.explain_place import ExplainPlace  # noqa: PLC0415
        from ..models.explain_tier import ExplainTier  # noqa: PLC0415
        from ..models.explain_timing import ExplainTiming  # noqa: PLC0415

        d = dict(src_dict)
        outcome = ExplainOutcome(d.pop("outcome"))

        set_aside = cast(list[int], d.pop("set_aside"))

        tiers = []
        _tiers = d.pop("tiers")
        for tiers_item_data in _tiers:
            tiers_item = ExplainTier.from_dict(tiers_item_data)

            tiers.append(tiers_item)

        timing = ExplainTiming.from_dict(d.pop("timing"))

        def _parse_decided_by(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        decided_by = _parse_decided_by(d.pop("decided_by", UNSET))

        def _parse_evidence(data: object) -> ExplainPlace | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                evidence_type_1 = ExplainPlace.from_dict(data)

                return evidence_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(ExplainPlace | None | Unset, data)

        evidence = _parse_evidence(d.pop("evidence", UNSET))

        explain = cls(
            outcome=outcome,
            set_aside=set_aside,
            tiers=tiers,
            timing=timing,
            decided_by=decided_by,
            evidence=evidence,
        )

        explain.additional_properties = d
        return explain

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
