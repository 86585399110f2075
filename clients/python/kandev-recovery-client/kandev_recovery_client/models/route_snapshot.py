from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.route_state import RouteState
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.caller import Caller
    from ..models.candidate_ref import CandidateRef
    from ..models.last_failure import LastFailure
    from ..models.pending import Pending


T = TypeVar("T", bound="RouteSnapshot")


@_attrs_define
class RouteSnapshot:
    """The authoritative state of a route, as every route endpoint answers it.

    Attributes:
        caller (Caller):
        candidate (CandidateRef):
        cycle (int):
        excluded (list[str]): Candidates skipped in this cycle.
        generation (int):
        id (str):
        invocation_id (str):
        profile_id (str):
        prompt_generation (int):
        server_time (datetime.datetime): The server's clock when this snapshot was made, so a browser with a
            wrong clock can still count down correctly.
        state (RouteState): The route states of docs/design.md (plus the terminal `completed` / `cancelled`).
        updated_at (datetime.datetime):
        last_failure (LastFailure | None | Unset):
        pending (None | Pending | Unset):
        reason (None | str | Unset): Why the route stopped, when it is `action_required`. Example: stopped_by_policy.
    """

    caller: Caller
    candidate: CandidateRef
    cycle: int
    excluded: list[str]
    generation: int
    id: str
    invocation_id: str
    profile_id: str
    prompt_generation: int
    server_time: datetime.datetime
    state: RouteState
    updated_at: datetime.datetime
    last_failure: LastFailure | None | Unset = UNSET
    pending: None | Pending | Unset = UNSET
    reason: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.last_failure import LastFailure  # noqa: PLC0415
        from ..models.pending import Pending  # noqa: PLC0415

        caller = self.caller.to_dict()

        candidate = self.candidate.to_dict()

        cycle = self.cycle

        excluded = self.excluded

        generation = self.generation

        id = self.id

        invocation_id = self.invocation_id

        profile_id = self.profile_id

        prompt_generation = self.prompt_generation

        server_time = self.server_time.isoformat()

        state = self.state.value

        updated_at = self.updated_at.isoformat()

        last_failure: dict[str, Any] | None | Unset
        if isinstance(self.last_failure, Unset):
            last_failure = UNSET
        elif isinstance(self.last_failure, LastFailure):
            last_failure = self.last_failure.to_dict()
        else:
            last_failure = self.last_failure

        pending: dict[str, Any] | None | Unset
        if isinstance(self.pending, Unset):
            pending = UNSET
        elif isinstance(self.pending, Pending):
            pending = self.pending.to_dict()
        else:
            pending = self.pending

        reason: None | str | Unset
        if isinstance(self.reason, Unset):
            reason = UNSET
        else:
            reason = self.reason

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "caller": caller,
                "candidate": candidate,
                "cycle": cycle,
                "excluded": excluded,
                "generation": generation,
                "id": id,
                "invocation_id": invocation_id,
                "profile_id": profile_id,
                "prompt_generation": prompt_generation,
                "server_time": server_time,
                "state": state,
                "updated_at": updated_at,
            }
        )
        if last_failure is not UNSET:
            field_dict["last_failure"] = last_failure
        if pending is not UNSET:
            field_dict["pending"] = pending
        if reason is not UNSET:
            field_dict["reason"] = reason

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.caller import Caller  # noqa: PLC0415
        from ..models.candidate_ref import CandidateRef  # noqa: PLC0415
        from ..models.last_failure import LastFailure  # noqa: PLC0415
        from ..models.pending import Pending  # noqa: PLC0415

        d = dict(src_dict)
        caller = Caller.from_dict(d.pop("caller"))

        candidate = CandidateRef.from_dict(d.pop("candidate"))

        cycle = d.pop("cycle")

        excluded = cast(list[str], d.pop("excluded"))

        generation = d.pop("generation")

        id = d.pop("id")

        invocation_id = d.pop("invocation_id")

        profile_id = d.pop("profile_id")

        prompt_generation = d.pop("prompt_generation")

        server_time = datetime.datetime.fromisoformat(d.pop("server_time"))

        state = RouteState(d.pop("state"))

        updated_at = datetime.datetime.fromisoformat(d.pop("updated_at"))

        def _parse_last_failure(data: object) -> LastFailure | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                last_failure_type_1 = LastFailure.from_dict(data)

                return last_failure_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(LastFailure | None | Unset, data)

        last_failure = _parse_last_failure(d.pop("last_failure", UNSET))

        def _parse_pending(data: object) -> None | Pending | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                pending_type_1 = Pending.from_dict(data)

                return pending_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Pending | Unset, data)

        pending = _parse_pending(d.pop("pending", UNSET))

        def _parse_reason(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        reason = _parse_reason(d.pop("reason", UNSET))

        route_snapshot = cls(
            caller=caller,
            candidate=candidate,
            cycle=cycle,
            excluded=excluded,
            generation=generation,
            id=id,
            invocation_id=invocation_id,
            profile_id=profile_id,
            prompt_generation=prompt_generation,
            server_time=server_time,
            state=state,
            updated_at=updated_at,
            last_failure=last_failure,
            pending=pending,
            reason=reason,
        )

        route_snapshot.additional_properties = d
        return route_snapshot

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
