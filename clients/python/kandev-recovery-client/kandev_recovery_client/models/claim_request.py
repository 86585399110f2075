from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

from ..models.caller_kind import CallerKind
from ..types import UNSET, Unset

T = TypeVar("T", bound="ClaimRequest")


@_attrs_define
class ClaimRequest:
    """`POST /dispatches/claim` body.

    Attributes:
        lease_seconds (int):
        caller_kind (CallerKind | None | Unset):
        route_id (None | str | Unset):
        wait_seconds (int | Unset):
    """

    lease_seconds: int
    caller_kind: CallerKind | None | Unset = UNSET
    route_id: None | str | Unset = UNSET
    wait_seconds: int | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        lease_seconds = self.lease_seconds

        caller_kind: None | str | Unset
        if isinstance(self.caller_kind, Unset):
            caller_kind = UNSET
        elif isinstance(self.caller_kind, CallerKind):
            caller_kind = self.caller_kind.value
        else:
            caller_kind = self.caller_kind

        route_id: None | str | Unset
        if isinstance(self.route_id, Unset):
            route_id = UNSET
        else:
            route_id = self.route_id

        wait_seconds = self.wait_seconds

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "lease_seconds": lease_seconds,
            }
        )
        if caller_kind is not UNSET:
            field_dict["caller_kind"] = caller_kind
        if route_id is not UNSET:
            field_dict["route_id"] = route_id
        if wait_seconds is not UNSET:
            field_dict["wait_seconds"] = wait_seconds

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        lease_seconds = d.pop("lease_seconds")

        def _parse_caller_kind(data: object) -> CallerKind | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                caller_kind_type_1 = CallerKind(data)

                return caller_kind_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(CallerKind | None | Unset, data)

        caller_kind = _parse_caller_kind(d.pop("caller_kind", UNSET))

        def _parse_route_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        route_id = _parse_route_id(d.pop("route_id", UNSET))

        wait_seconds = d.pop("wait_seconds", UNSET)

        claim_request = cls(
            lease_seconds=lease_seconds,
            caller_kind=caller_kind,
            route_id=route_id,
            wait_seconds=wait_seconds,
        )

        return claim_request
