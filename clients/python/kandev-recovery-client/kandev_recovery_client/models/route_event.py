from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.event_kind import EventKind
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.actor import Actor
    from ..models.route_snapshot import RouteSnapshot


T = TypeVar("T", bound="RouteEvent")


@_attrs_define
class RouteEvent:
    """A committed transition, as `GET /api/v1/events` streams it.

    Attributes:
        id (int):
        kind (EventKind): Event kinds (the SSE `event:` field). Browsers only receive named
            events they listen for, so this list is the one both sides use.
        route (RouteSnapshot): The authoritative state of a route, as every route endpoint answers it.
        actor (Actor | None | Unset):
    """

    id: int
    kind: EventKind
    route: RouteSnapshot
    actor: Actor | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.actor import Actor  # noqa: PLC0415

        id = self.id

        kind = self.kind.value

        route = self.route.to_dict()

        actor: dict[str, Any] | None | Unset
        if isinstance(self.actor, Unset):
            actor = UNSET
        elif isinstance(self.actor, Actor):
            actor = self.actor.to_dict()
        else:
            actor = self.actor

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "kind": kind,
                "route": route,
            }
        )
        if actor is not UNSET:
            field_dict["actor"] = actor

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.actor import Actor  # noqa: PLC0415
        from ..models.route_snapshot import RouteSnapshot  # noqa: PLC0415

        d = dict(src_dict)
        id = d.pop("id")

        kind = EventKind(d.pop("kind"))

        route = RouteSnapshot.from_dict(d.pop("route"))

        def _parse_actor(data: object) -> Actor | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                actor_type_1 = Actor.from_dict(data)

                return actor_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(Actor | None | Unset, data)

        actor = _parse_actor(d.pop("actor", UNSET))

        route_event = cls(
            id=id,
            kind=kind,
            route=route,
            actor=actor,
        )

        route_event.additional_properties = d
        return route_event

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
