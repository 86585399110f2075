from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.field_error import FieldError
    from ..models.profile import Profile
    from ..models.route_snapshot import RouteSnapshot


T = TypeVar("T", bound="ApiError")


@_attrs_define
class ApiError:
    """The error body every API failure answers with.

    Attributes:
        error (str): Machine-readable kind: `validation_failed`, `malformed_json`,
            `not_found`, `stale_revision`, `unavailable`, `payload_too_large`,
            `internal`, … Example: validation_failed.
        message (str): A sentence a person can act on.
        errors (list[FieldError] | Unset): Field errors (with `validation_failed`).
        profile (None | Profile | Unset):
        route (None | RouteSnapshot | Unset):
    """

    error: str
    message: str
    errors: list[FieldError] | Unset = UNSET
    profile: None | Profile | Unset = UNSET
    route: None | RouteSnapshot | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.profile import Profile  # noqa: PLC0415
        from ..models.route_snapshot import RouteSnapshot  # noqa: PLC0415

        error = self.error

        message = self.message

        errors: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.errors, Unset):
            errors = []
            for errors_item_data in self.errors:
                errors_item = errors_item_data.to_dict()
                errors.append(errors_item)

        profile: dict[str, Any] | None | Unset
        if isinstance(self.profile, Unset):
            profile = UNSET
        elif isinstance(self.profile, Profile):
            profile = self.profile.to_dict()
        else:
            profile = self.profile

        route: dict[str, Any] | None | Unset
        if isinstance(self.route, Unset):
            route = UNSET
        elif isinstance(self.route, RouteSnapshot):
            route = self.route.to_dict()
        else:
            route = self.route

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "error": error,
                "message": message,
            }
        )
        if errors is not UNSET:
            field_dict["errors"] = errors
        if profile is not UNSET:
            field_dict["profile"] = profile
        if route is not UNSET:
            field_dict["route"] = route

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.field_error import FieldError  # noqa: PLC0415
        from ..models.profile import Profile  # noqa: PLC0415
        from ..models.route_snapshot import RouteSnapshot  # noqa: PLC0415

        d = dict(src_dict)
        error = d.pop("error")

        message = d.pop("message")

        _errors = d.pop("errors", UNSET)
        errors: list[FieldError] | Unset = UNSET
        if _errors is not UNSET:
            errors = []
            for errors_item_data in _errors:
                errors_item = FieldError.from_dict(errors_item_data)

                errors.append(errors_item)

        def _parse_profile(data: object) -> None | Profile | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                profile_type_1 = Profile.from_dict(data)

                return profile_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Profile | Unset, data)

        profile = _parse_profile(d.pop("profile", UNSET))

        def _parse_route(data: object) -> None | RouteSnapshot | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                route_type_1 = RouteSnapshot.from_dict(data)

                return route_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | RouteSnapshot | Unset, data)

        route = _parse_route(d.pop("route", UNSET))

        api_error = cls(
            error=error,
            message=message,
            errors=errors,
            profile=profile,
            route=route,
        )

        api_error.additional_properties = d
        return api_error

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
