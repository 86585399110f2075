from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.decision_kind import DecisionKind
from ..models.unsafe_reason import UnsafeReason
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.circuit_hold import CircuitHold
    from ..models.route_outcome_type_0 import RouteOutcomeType0
    from ..models.route_outcome_type_1 import RouteOutcomeType1
    from ..models.route_outcome_type_2 import RouteOutcomeType2
    from ..models.route_outcome_type_3 import RouteOutcomeType3
    from ..models.route_outcome_type_4 import RouteOutcomeType4


T = TypeVar("T", bound="DecisionView")


@_attrs_define
class DecisionView:
    """The decision as the API reports it.

    Attributes:
        kind (DecisionKind): A decision as the API names it (`decision.kind`, an attempt's
            `decision`): the four policy outcomes or a rejection.
        outcome (RouteOutcomeType0 | RouteOutcomeType1 | RouteOutcomeType2 | RouteOutcomeType3 | RouteOutcomeType4):
            Where a failure report left the route (a decision's and an attempt's
            `outcome`). On the wire an object tagged by `kind`:
            `{"kind": "stopped", "reason"}`, `{"kind": "switching", "to"}` (the
            candidate's label), `{"kind": "waiting", "state", "until"}`,
            `{"kind": "now", "state"}` (nothing pending) or
            `{"kind": "unchanged", "generation", "state"}` (the report was about an
            attempt the route had left). Stored attempt rows keep a short label
            instead ([`fmt::Display`] and [`FromStr`]), which nothing on the wire
            uses.
        class_ (None | str | Unset):  Example: transient.
        deadline (datetime.datetime | None | Unset):
        delay_seconds (int | None | Unset):
        held_by (CircuitHold | None | Unset):
        max_retries (int | None | Unset):
        retry_ordinal (int | None | Unset):
        unsafe_reason (None | UnsafeReason | Unset):
    """

    kind: DecisionKind
    outcome: RouteOutcomeType0 | RouteOutcomeType1 | RouteOutcomeType2 | RouteOutcomeType3 | RouteOutcomeType4
    class_: None | str | Unset = UNSET
    deadline: datetime.datetime | None | Unset = UNSET
    delay_seconds: int | None | Unset = UNSET
    held_by: CircuitHold | None | Unset = UNSET
    max_retries: int | None | Unset = UNSET
    retry_ordinal: int | None | Unset = UNSET
    unsafe_reason: None | UnsafeReason | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.circuit_hold import CircuitHold  # noqa: PLC0415
        from ..models.route_outcome_type_0 import RouteOutcomeType0  # noqa: PLC0415
        from ..models.route_outcome_type_1 import RouteOutcomeType1  # noqa: PLC0415
        from ..models.route_outcome_type_2 import RouteOutcomeType2  # noqa: PLC0415
        from ..models.route_outcome_type_3 import RouteOutcomeType3  # noqa: PLC0415

        kind = self.kind.value

        outcome: dict[str, Any]
        if isinstance(self.outcome, RouteOutcomeType0):
            outcome = self.outcome.to_dict()
        elif isinstance(self.outcome, RouteOutcomeType1):
            outcome = self.outcome.to_dict()
        elif isinstance(self.outcome, RouteOutcomeType2):
            outcome = self.outcome.to_dict()
        elif isinstance(self.outcome, RouteOutcomeType3):
            outcome = self.outcome.to_dict()
        else:
            outcome = self.outcome.to_dict()

        class_: None | str | Unset
        if isinstance(self.class_, Unset):
            class_ = UNSET
        else:
            class_ = self.class_

        deadline: None | str | Unset
        if isinstance(self.deadline, Unset):
            deadline = UNSET
        elif isinstance(self.deadline, datetime.datetime):
            deadline = self.deadline.isoformat()
        else:
            deadline = self.deadline

        delay_seconds: int | None | Unset
        if isinstance(self.delay_seconds, Unset):
            delay_seconds = UNSET
        else:
            delay_seconds = self.delay_seconds

        held_by: dict[str, Any] | None | Unset
        if isinstance(self.held_by, Unset):
            held_by = UNSET
        elif isinstance(self.held_by, CircuitHold):
            held_by = self.held_by.to_dict()
        else:
            held_by = self.held_by

        max_retries: int | None | Unset
        if isinstance(self.max_retries, Unset):
            max_retries = UNSET
        else:
            max_retries = self.max_retries

        retry_ordinal: int | None | Unset
        if isinstance(self.retry_ordinal, Unset):
            retry_ordinal = UNSET
        else:
            retry_ordinal = self.retry_ordinal

        unsafe_reason: None | str | Unset
        if isinstance(self.unsafe_reason, Unset):
            unsafe_reason = UNSET
        elif isinstance(self.unsafe_reason, UnsafeReason):
            unsafe_reason = self.unsafe_reason.value
        else:
            unsafe_reason = self.unsafe_reason

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "kind": kind,
                "outcome": outcome,
            }
        )
        if class_ is not UNSET:
            field_dict["class"] = class_
        if deadline is not UNSET:
            field_dict["deadline"] = deadline
        if delay_seconds is not UNSET:
            field_dict["delay_seconds"] = delay_seconds
        if held_by is not UNSET:
            field_dict["held_by"] = held_by
        if max_retries is not UNSET:
            field_dict["max_retries"] = max_retries
        if retry_ordinal is not UNSET:
            field_dict["retry_ordinal"] = retry_ordinal
        if unsafe_reason is not UNSET:
            field_dict["unsafe_reason"] = unsafe_reason

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.circuit_hold import CircuitHold  # noqa: PLC0415
        from ..models.route_outcome_type_0 import RouteOutcomeType0  # noqa: PLC0415
        from ..models.route_outcome_type_1 import RouteOutcomeType1  # noqa: PLC0415
        from ..models.route_outcome_type_2 import RouteOutcomeType2  # noqa: PLC0415
        from ..models.route_outcome_type_3 import RouteOutcomeType3  # noqa: PLC0415
        from ..models.route_outcome_type_4 import RouteOutcomeType4  # noqa: PLC0415

        d = dict(src_dict)
        kind = DecisionKind(d.pop("kind"))

        def _parse_outcome(
            data: object,
        ) -> RouteOutcomeType0 | RouteOutcomeType1 | RouteOutcomeType2 | RouteOutcomeType3 | RouteOutcomeType4:
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_route_outcome_type_0 = RouteOutcomeType0.from_dict(data)

                return componentsschemas_route_outcome_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_route_outcome_type_1 = RouteOutcomeType1.from_dict(data)

                return componentsschemas_route_outcome_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_route_outcome_type_2 = RouteOutcomeType2.from_dict(data)

                return componentsschemas_route_outcome_type_2
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_route_outcome_type_3 = RouteOutcomeType3.from_dict(data)

                return componentsschemas_route_outcome_type_3
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            if not isinstance(data, dict):
                raise TypeError()
            componentsschemas_route_outcome_type_4 = RouteOutcomeType4.from_dict(data)

            return componentsschemas_route_outcome_type_4

        outcome = _parse_outcome(d.pop("outcome"))

        def _parse_class_(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        class_ = _parse_class_(d.pop("class", UNSET))

        def _parse_deadline(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                deadline_type_0 = datetime.datetime.fromisoformat(data)

                return deadline_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        deadline = _parse_deadline(d.pop("deadline", UNSET))

        def _parse_delay_seconds(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        delay_seconds = _parse_delay_seconds(d.pop("delay_seconds", UNSET))

        def _parse_held_by(data: object) -> CircuitHold | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                held_by_type_1 = CircuitHold.from_dict(data)

                return held_by_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(CircuitHold | None | Unset, data)

        held_by = _parse_held_by(d.pop("held_by", UNSET))

        def _parse_max_retries(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        max_retries = _parse_max_retries(d.pop("max_retries", UNSET))

        def _parse_retry_ordinal(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        retry_ordinal = _parse_retry_ordinal(d.pop("retry_ordinal", UNSET))

        def _parse_unsafe_reason(data: object) -> None | UnsafeReason | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                unsafe_reason_type_1 = UnsafeReason(data)

                return unsafe_reason_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | UnsafeReason | Unset, data)

        unsafe_reason = _parse_unsafe_reason(d.pop("unsafe_reason", UNSET))

        decision_view = cls(
            kind=kind,
            outcome=outcome,
            class_=class_,
            deadline=deadline,
            delay_seconds=delay_seconds,
            held_by=held_by,
            max_retries=max_retries,
            retry_ordinal=retry_ordinal,
            unsafe_reason=unsafe_reason,
        )

        decision_view.additional_properties = d
        return decision_view

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
