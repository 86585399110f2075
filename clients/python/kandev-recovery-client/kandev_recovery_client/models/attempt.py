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
    from ..models.candidate_ref import CandidateRef
    from ..models.circuit_hold import CircuitHold
    from ..models.class_policy import ClassPolicy
    from ..models.classification import Classification
    from ..models.returned import Returned
    from ..models.route_outcome_type_0 import RouteOutcomeType0
    from ..models.route_outcome_type_1 import RouteOutcomeType1
    from ..models.route_outcome_type_2 import RouteOutcomeType2
    from ..models.route_outcome_type_3 import RouteOutcomeType3
    from ..models.route_outcome_type_4 import RouteOutcomeType4


T = TypeVar("T", bound="Attempt")


@_attrs_define
class Attempt:
    """One row of a route's append-only attempt history.

    Attributes:
        candidate (CandidateRef):
        catalogue_version (str):
        class_ (str):  Example: transient.
        classifier_rule (str):
        code (str):
        created_at (datetime.datetime):
        cycle (int):
        decision (DecisionKind): A decision as the API names it (`decision.kind`, an attempt's
            `decision`): the four policy outcomes or a rejection.
        generation (int):
        invocation_id (str):
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
        retry_ordinal (int):
        safe_excerpt (str):
        seq (int):
        classification (Classification | None | Unset):
        deadline (datetime.datetime | None | Unset):
        held_by (CircuitHold | None | Unset):
        http_status (int | None | Unset): The provider's HTTP error status, when the evidence had one (≥ 400).
        late_effect (None | str | Unset): For a `late_effect` row: the kind of the effect that arrived late.
        policy (ClassPolicy | None | Unset):
        returned (None | Returned | Unset):
        unsafe_reason (None | UnsafeReason | Unset):
    """

    candidate: CandidateRef
    catalogue_version: str
    class_: str
    classifier_rule: str
    code: str
    created_at: datetime.datetime
    cycle: int
    decision: DecisionKind
    generation: int
    invocation_id: str
    outcome: RouteOutcomeType0 | RouteOutcomeType1 | RouteOutcomeType2 | RouteOutcomeType3 | RouteOutcomeType4
    retry_ordinal: int
    safe_excerpt: str
    seq: int
    classification: Classification | None | Unset = UNSET
    deadline: datetime.datetime | None | Unset = UNSET
    held_by: CircuitHold | None | Unset = UNSET
    http_status: int | None | Unset = UNSET
    late_effect: None | str | Unset = UNSET
    policy: ClassPolicy | None | Unset = UNSET
    returned: None | Returned | Unset = UNSET
    unsafe_reason: None | UnsafeReason | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.circuit_hold import CircuitHold  # noqa: PLC0415
        from ..models.class_policy import ClassPolicy  # noqa: PLC0415
        from ..models.classification import Classification  # noqa: PLC0415
        from ..models.returned import Returned  # noqa: PLC0415
        from ..models.route_outcome_type_0 import RouteOutcomeType0  # noqa: PLC0415
        from ..models.route_outcome_type_1 import RouteOutcomeType1  # noqa: PLC0415
        from ..models.route_outcome_type_2 import RouteOutcomeType2  # noqa: PLC0415
        from ..models.route_outcome_type_3 import RouteOutcomeType3  # noqa: PLC0415

        candidate = self.candidate.to_dict()

        catalogue_version = self.catalogue_version

        class_ = self.class_

        classifier_rule = self.classifier_rule

        code = self.code

        created_at = self.created_at.isoformat()

        cycle = self.cycle

        decision = self.decision.value

        generation = self.generation

        invocation_id = self.invocation_id

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

        retry_ordinal = self.retry_ordinal

        safe_excerpt = self.safe_excerpt

        seq = self.seq

        classification: dict[str, Any] | None | Unset
        if isinstance(self.classification, Unset):
            classification = UNSET
        elif isinstance(self.classification, Classification):
            classification = self.classification.to_dict()
        else:
            classification = self.classification

        deadline: None | str | Unset
        if isinstance(self.deadline, Unset):
            deadline = UNSET
        elif isinstance(self.deadline, datetime.datetime):
            deadline = self.deadline.isoformat()
        else:
            deadline = self.deadline

        held_by: dict[str, Any] | None | Unset
        if isinstance(self.held_by, Unset):
            held_by = UNSET
        elif isinstance(self.held_by, CircuitHold):
            held_by = self.held_by.to_dict()
        else:
            held_by = self.held_by

        http_status: int | None | Unset
        if isinstance(self.http_status, Unset):
            http_status = UNSET
        else:
            http_status = self.http_status

        late_effect: None | str | Unset
        if isinstance(self.late_effect, Unset):
            late_effect = UNSET
        else:
            late_effect = self.late_effect

        policy: dict[str, Any] | None | Unset
        if isinstance(self.policy, Unset):
            policy = UNSET
        elif isinstance(self.policy, ClassPolicy):
            policy = self.policy.to_dict()
        else:
            policy = self.policy

        returned: dict[str, Any] | None | Unset
        if isinstance(self.returned, Unset):
            returned = UNSET
        elif isinstance(self.returned, Returned):
            returned = self.returned.to_dict()
        else:
            returned = self.returned

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
                "candidate": candidate,
                "catalogue_version": catalogue_version,
                "class": class_,
                "classifier_rule": classifier_rule,
                "code": code,
                "created_at": created_at,
                "cycle": cycle,
                "decision": decision,
                "generation": generation,
                "invocation_id": invocation_id,
                "outcome": outcome,
                "retry_ordinal": retry_ordinal,
                "safe_excerpt": safe_excerpt,
                "seq": seq,
            }
        )
        if classification is not UNSET:
            field_dict["classification"] = classification
        if deadline is not UNSET:
            field_dict["deadline"] = deadline
        if held_by is not UNSET:
            field_dict["held_by"] = held_by
        if http_status is not UNSET:
            field_dict["http_status"] = http_status
        if late_effect is not UNSET:
            field_dict["late_effect"] = late_effect
        if policy is not UNSET:
            field_dict["policy"] = policy
        if returned is not UNSET:
            field_dict["returned"] = returned
        if unsafe_reason is not UNSET:
            field_dict["unsafe_reason"] = unsafe_reason

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.candidate_ref import CandidateRef  # noqa: PLC0415
        from ..models.circuit_hold import CircuitHold  # noqa: PLC0415
        from ..models.class_policy import ClassPolicy  # noqa: PLC0415
        from ..models.classification import Classification  # noqa: PLC0415
        from ..models.returned import Returned  # noqa: PLC0415
        from ..models.route_outcome_type_0 import RouteOutcomeType0  # noqa: PLC0415
        from ..models.route_outcome_type_1 import RouteOutcomeType1  # noqa: PLC0415
        from ..models.route_outcome_type_2 import RouteOutcomeType2  # noqa: PLC0415
        from ..models.route_outcome_type_3 import RouteOutcomeType3  # noqa: PLC0415
        from ..models.route_outcome_type_4 import RouteOutcomeType4  # noqa: PLC0415

        d = dict(src_dict)
        candidate = CandidateRef.from_dict(d.pop("candidate"))

        catalogue_version = d.pop("catalogue_version")

        class_ = d.pop("class")

        classifier_rule = d.pop("classifier_rule")

        code = d.pop("code")

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        cycle = d.pop("cycle")

        decision = DecisionKind(d.pop("decision"))

        generation = d.pop("generation")

        invocation_id = d.pop("invocation_id")

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

        retry_ordinal = d.pop("retry_ordinal")

        safe_excerpt = d.pop("safe_excerpt")

        seq = d.pop("seq")

        def _parse_classification(data: object) -> Classification | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                classification_type_1 = Classification.from_dict(data)

                return classification_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(Classification | None | Unset, data)

        classification = _parse_classification(d.pop("classification", UNSET))

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

        def _parse_http_status(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        http_status = _parse_http_status(d.pop("http_status", UNSET))

        def _parse_late_effect(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        late_effect = _parse_late_effect(d.pop("late_effect", UNSET))

        def _parse_policy(data: object) -> ClassPolicy | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                policy_type_1 = ClassPolicy.from_dict(data)

                return policy_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(ClassPolicy | None | Unset, data)

        policy = _parse_policy(d.pop("policy", UNSET))

        def _parse_returned(data: object) -> None | Returned | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                returned_type_1 = Returned.from_dict(data)

                return returned_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Returned | Unset, data)

        returned = _parse_returned(d.pop("returned", UNSET))

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

        attempt = cls(
            candidate=candidate,
            catalogue_version=catalogue_version,
            class_=class_,
            classifier_rule=classifier_rule,
            code=code,
            created_at=created_at,
            cycle=cycle,
            decision=decision,
            generation=generation,
            invocation_id=invocation_id,
            outcome=outcome,
            retry_ordinal=retry_ordinal,
            safe_excerpt=safe_excerpt,
            seq=seq,
            classification=classification,
            deadline=deadline,
            held_by=held_by,
            http_status=http_status,
            late_effect=late_effect,
            policy=policy,
            returned=returned,
            unsafe_reason=unsafe_reason,
        )

        attempt.additional_properties = d
        return attempt

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
