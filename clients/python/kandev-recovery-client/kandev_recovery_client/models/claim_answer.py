from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.dispatch import Dispatch


T = TypeVar("T", bound="ClaimAnswer")


@_attrs_define
class ClaimAnswer:
    """`POST /dispatches/claim` answer: the dispatches claimed (none when
    nothing fell due within `wait_seconds`).

        Attributes:
            dispatches (list[Dispatch]):
    """

    dispatches: list[Dispatch]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        dispatches = []
        for dispatches_item_data in self.dispatches:
            dispatches_item = dispatches_item_data.to_dict()
            dispatches.append(dispatches_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "dispatches": dispatches,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.dispatch import Dispatch  # noqa: PLC0415

        d = dict(src_dict)
        dispatches = []
        _dispatches = d.pop("dispatches")
        for dispatches_item_data in _dispatches:
            dispatches_item = Dispatch.from_dict(dispatches_item_data)

            dispatches.append(dispatches_item)

        claim_answer = cls(
            dispatches=dispatches,
        )

        claim_answer.additional_properties = d
        return claim_answer

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
