from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.circuit_scope import CircuitScope
from ..models.circuit_status import CircuitStatus
from ..types import UNSET, Unset

T = TypeVar("T", bound="CircuitView")


@_attrs_define
class CircuitView:
    """One circuit as `GET /api/v1/circuits` lists it.

    Attributes:
        changed_at (datetime.datetime):
        code (str): The code that opened it last (`quota_limited`).
        label (str): The resource in words for people ("Anthropic account team-a").
        openings (int): Openings in a row since the last successful probe.
        resource (str): The resource's stable, non-secret name (`anthropic/team-a`).
        routes_waiting (int): Routes whose pending schedule waits for this circuit.
        scope (CircuitScope): What kind of resource a circuit guards.
        state (CircuitStatus): Where a circuit is.
        probe_holder (None | str | Unset): Probing: the route whose attempt is the probe…
        probe_until (datetime.datetime | None | Unset): …and when its lease ends (another route may probe after that).
        until (datetime.datetime | None | Unset): Open: until when candidates on it are ineligible.
    """

    changed_at: datetime.datetime
    code: str
    label: str
    openings: int
    resource: str
    routes_waiting: int
    scope: CircuitScope
    state: CircuitStatus
    probe_holder: None | str | Unset = UNSET
    probe_until: datetime.datetime | None | Unset = UNSET
    until: datetime.datetime | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        changed_at = self.changed_at.isoformat()

        code = self.code

        label = self.label

        openings = self.openings

        resource = self.resource

        routes_waiting = self.routes_waiting

        scope = self.scope.value

        state = self.state.value

        probe_holder: None | str | Unset
        if isinstance(self.probe_holder, Unset):
            probe_holder = UNSET
        else:
            probe_holder = self.probe_holder

        probe_until: None | str | Unset
        if isinstance(self.probe_until, Unset):
            probe_until = UNSET
        elif isinstance(self.probe_until, datetime.datetime):
            probe_until = self.probe_until.isoformat()
        else:
            probe_until = self.probe_until

        until: None | str | Unset
        if isinstance(self.until, Unset):
            until = UNSET
        elif isinstance(self.until, datetime.datetime):
            until = self.until.isoformat()
        else:
            until = self.until

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "changed_at": changed_at,
                "code": code,
                "label": label,
                "openings": openings,
                "resource": resource,
                "routes_waiting": routes_waiting,
                "scope": scope,
                "state": state,
            }
        )
        if probe_holder is not UNSET:
            field_dict["probe_holder"] = probe_holder
        if probe_until is not UNSET:
            field_dict["probe_until"] = probe_until
        if until is not UNSET:
            field_dict["until"] = until

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        changed_at = datetime.datetime.fromisoformat(d.pop("changed_at"))

        code = d.pop("code")

        label = d.pop("label")

        openings = d.pop("openings")

        resource = d.pop("resource")

        routes_waiting = d.pop("routes_waiting")

        scope = CircuitScope(d.pop("scope"))

        state = CircuitStatus(d.pop("state"))

        def _parse_probe_holder(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        probe_holder = _parse_probe_holder(d.pop("probe_holder", UNSET))

        def _parse_probe_until(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                probe_until_type_0 = datetime.datetime.fromisoformat(data)

                return probe_until_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        probe_until = _parse_probe_until(d.pop("probe_until", UNSET))

        def _parse_until(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                until_type_0 = datetime.datetime.fromisoformat(data)

                return until_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        until = _parse_until(d.pop("until", UNSET))

        circuit_view = cls(
            changed_at=changed_at,
            code=code,
            label=label,
            openings=openings,
            resource=resource,
            routes_waiting=routes_waiting,
            scope=scope,
            state=state,
            probe_holder=probe_holder,
            probe_until=probe_until,
            until=until,
        )

        circuit_view.additional_properties = d
        return circuit_view

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
