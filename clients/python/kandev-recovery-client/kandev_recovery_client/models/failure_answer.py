from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.classification import Classification
    from ..models.decision_view import DecisionView
    from ..models.route_snapshot import RouteSnapshot


T = TypeVar("T", bound="FailureAnswer")


@_attrs_define
class FailureAnswer:
    """
    Attributes:
        classification (Classification): The classifier's answer, as the API answers it and every attempt records it.
        decision (DecisionView): The decision as the API reports it.
        route (RouteSnapshot): The authoritative state of a route, as every route endpoint answers it.
    """

    classification: Classification
    decision: DecisionView
    route: RouteSnapshot
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        classification = self.classification.to_dict()

        decision = self.decision.to_dict()

        route = self.route.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "classification": classification,
                "decision": decision,
                "route": route,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.classification import Classification  # noqa: PLC0415
        from ..models.decision_view import DecisionView  # noqa: PLC0415
        from ..models.route_snapshot import RouteSnapshot  # noqa: PLC0415

        d = dict(src_dict)
        classification = Classification.from_dict(d.pop("classification"))

        decision = DecisionView.from_dict(d.pop("decision"))

        route = RouteSnapshot.from_dict(d.pop("route"))

        failure_answer = cls(
            classification=classification,
            decision=decision,
            route=route,
        )

        failure_answer.additional_properties = d
        return failure_answer

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
