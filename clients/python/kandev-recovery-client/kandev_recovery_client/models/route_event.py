from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.event_kind import EventKind

if TYPE_CHECKING:
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
    """

    id: int
    kind: EventKind
    route: RouteSnapshot
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        kind = self.kind.value

        route = self.route.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "kind": kind,
                "route": route,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.route_snapshot import RouteSnapshot  # noqa: PLC0415

        d = dict(src_dict)
        id = d.pop("id")

        kind = EventKind(d.pop("kind"))

        route = RouteSnapshot.from_dict(d.pop("route"))

        route_event = cls(
            id=id,
            kind=kind,
            route=route,
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
