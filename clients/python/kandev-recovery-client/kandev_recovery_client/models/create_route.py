from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.caller import Caller


T = TypeVar("T", bound="CreateRoute")


@_attrs_define
class CreateRoute:
    """`POST /routes` body.

    Attributes:
        caller (Caller):
        profile_id (str):
    """

    caller: Caller
    profile_id: str

    def to_dict(self) -> dict[str, Any]:
        caller = self.caller.to_dict()

        profile_id = self.profile_id

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "caller": caller,
                "profile_id": profile_id,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.caller import Caller  # noqa: PLC0415

        d = dict(src_dict)
        caller = Caller.from_dict(d.pop("caller"))

        profile_id = d.pop("profile_id")

        create_route = cls(
            caller=caller,
            profile_id=profile_id,
        )

        return create_route
