from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.candidate_policy import CandidatePolicy
    from ..models.cycle_usage import CycleUsage
    from ..models.evidence import Evidence


T = TypeVar("T", bound="EvaluateRequest")


@_attrs_define
class EvaluateRequest:
    """`POST /policies/evaluate` body.

    Attributes:
        evidence (Evidence): One failure report. Route identity fields are optional for classification.
        policy (CandidatePolicy): A candidate's whole policy document: one policy per configurable class.
        cycle (CycleUsage | None | Unset):
    """

    evidence: Evidence
    policy: CandidatePolicy
    cycle: CycleUsage | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.cycle_usage import CycleUsage  # noqa: PLC0415

        evidence = self.evidence.to_dict()

        policy = self.policy.to_dict()

        cycle: dict[str, Any] | None | Unset
        if isinstance(self.cycle, Unset):
            cycle = UNSET
        elif isinstance(self.cycle, CycleUsage):
            cycle = self.cycle.to_dict()
        else:
            cycle = self.cycle

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "evidence": evidence,
                "policy": policy,
            }
        )
        if cycle is not UNSET:
            field_dict["cycle"] = cycle

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.candidate_policy import CandidatePolicy  # noqa: PLC0415
        from ..models.cycle_usage import CycleUsage  # noqa: PLC0415
        from ..models.evidence import Evidence  # noqa: PLC0415

        d = dict(src_dict)
        evidence = Evidence.from_dict(d.pop("evidence"))

        policy = CandidatePolicy.from_dict(d.pop("policy"))

        def _parse_cycle(data: object) -> CycleUsage | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                cycle_type_1 = CycleUsage.from_dict(data)

                return cycle_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(CycleUsage | None | Unset, data)

        cycle = _parse_cycle(d.pop("cycle", UNSET))

        evaluate_request = cls(
            evidence=evidence,
            policy=policy,
            cycle=cycle,
        )

        return evaluate_request
