from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..models.action import Action

T = TypeVar("T", bound="ActionRequest")


@_attrs_define
class ActionRequest:
    """
    Attributes:
        action (Action): A manual route action, as `POST /routes/{id}/actions` names it.
        expected_generation (int):
    """

    action: Action
    expected_generation: int

    def to_dict(self) -> dict[str, Any]:
        action = self.action.value

        expected_generation = self.expected_generation

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "action": action,
                "expected_generation": expected_generation,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        action = Action(d.pop("action"))

        expected_generation = d.pop("expected_generation")

        action_request = cls(
            action=action,
            expected_generation=expected_generation,
        )

        return action_request
