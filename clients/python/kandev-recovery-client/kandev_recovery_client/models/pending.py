from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.pending_kind import PendingKind
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.circuit_hold import CircuitHold
    from ..models.resume import Resume


T = TypeVar("T", bound="Pending")


@_attrs_define
class Pending:
    """
    Attributes:
        class_ (str):  Example: transient.
        code (str):
        deadline (datetime.datetime): Absolute UTC deadline; browsers only render it.
        kind (PendingKind): What the route does next, when it is waiting.
        max_retries (int):
        outcome_after (str): What happens when this attempt fails too and recovery is exhausted. Example: skip.
        retry_ordinal (int): 1-based retry number (0 for a reset wait).
        circuit (CircuitHold | None | Unset):
        resume (None | Resume | Unset):
    """

    class_: str
    code: str
    deadline: datetime.datetime
    kind: PendingKind
    max_retries: int
    outcome_after: str
    retry_ordinal: int
    circuit: CircuitHold | None | Unset = UNSET
    resume: None | Resume | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.circuit_hold import CircuitHold  # noqa: PLC0415
        from ..models.resume import Resume  # noqa: PLC0415

        class_ = self.class_

        code = self.code

        deadline = self.deadline.isoformat()

        kind = self.kind.value

        max_retries = self.max_retries

        outcome_after = self.outcome_after

        retry_ordinal = self.retry_ordinal

        circuit: dict[str, Any] | None | Unset
        if isinstance(self.circuit, Unset):
            circuit = UNSET
        elif isinstance(self.circuit, CircuitHold):
            circuit = self.circuit.to_dict()
        else:
            circuit = self.circuit

        resume: dict[str, Any] | None | Unset
        if isinstance(self.resume, Unset):
            resume = UNSET
        elif isinstance(self.resume, Resume):
            resume = self.resume.to_dict()
        else:
            resume = self.resume

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "class": class_,
                "code": code,
                "deadline": deadline,
                "kind": kind,
                "max_retries": max_retries,
                "outcome_after": outcome_after,
                "retry_ordinal": retry_ordinal,
            }
        )
        if circuit is not UNSET:
            field_dict["circuit"] = circuit
        if resume is not UNSET:
            field_dict["resume"] = resume

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.circuit_hold import CircuitHold  # noqa: PLC0415
        from ..models.resume import Resume  # noqa: PLC0415

        d = dict(src_dict)
        class_ = d.pop("class")

        code = d.pop("code")

        deadline = datetime.datetime.fromisoformat(d.pop("deadline"))

        kind = PendingKind(d.pop("kind"))

        max_retries = d.pop("max_retries")

        outcome_after = d.pop("outcome_after")

        retry_ordinal = d.pop("retry_ordinal")

        def _parse_circuit(data: object) -> CircuitHold | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                circuit_type_1 = CircuitHold.from_dict(data)

                return circuit_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(CircuitHold | None | Unset, data)

        circuit = _parse_circuit(d.pop("circuit", UNSET))

        def _parse_resume(data: object) -> None | Resume | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                resume_type_1 = Resume.from_dict(data)

                return resume_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Resume | Unset, data)

        resume = _parse_resume(d.pop("resume", UNSET))

        pending = cls(
            class_=class_,
            code=code,
            deadline=deadline,
            kind=kind,
            max_retries=max_retries,
            outcome_after=outcome_after,
            retry_ordinal=retry_ordinal,
            circuit=circuit,
            resume=resume,
        )

        pending.additional_properties = d
        return pending

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
