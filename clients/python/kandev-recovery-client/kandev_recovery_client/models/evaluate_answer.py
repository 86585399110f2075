from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.classification import Classification
    from ..models.cycle_usage import CycleUsage
    from ..models.verdict import Verdict


T = TypeVar("T", bound="EvaluateAnswer")


@_attrs_define
class EvaluateAnswer:
    """`POST /policies/evaluate` answer.

    Attributes:
        classification (Classification): The classifier's answer, as the API answers it and every attempt records it.
        cycle (CycleUsage): What the session already used in its current cycle, per class (a
            class left out has used nothing). The answer carries the cycle after
            the decision, to send with the next failure of the same cycle.
        decision (Verdict): The evaluator's decision for a concrete session: what to do and when.
            Deadlines are absolute (UTC), from the server's clock.
    """

    classification: Classification
    cycle: CycleUsage
    decision: Verdict
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        classification = self.classification.to_dict()

        cycle = self.cycle.to_dict()

        decision = self.decision.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "classification": classification,
                "cycle": cycle,
                "decision": decision,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.classification import Classification  # noqa: PLC0415
        from ..models.cycle_usage import CycleUsage  # noqa: PLC0415
        from ..models.verdict import Verdict  # noqa: PLC0415

        d = dict(src_dict)
        classification = Classification.from_dict(d.pop("classification"))

        cycle = CycleUsage.from_dict(d.pop("cycle"))

        decision = Verdict.from_dict(d.pop("decision"))

        evaluate_answer = cls(
            classification=classification,
            cycle=cycle,
            decision=decision,
        )

        evaluate_answer.additional_properties = d
        return evaluate_answer

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
