from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="InvocationReport")


@_attrs_define
class InvocationReport:
    """Identity of the invocation a report is about.

    Attributes:
        generation (int):
        invocation_id (str):
        prompt_generation (int):
    """

    generation: int
    invocation_id: str
    prompt_generation: int

    def to_dict(self) -> dict[str, Any]:
        generation = self.generation

        invocation_id = self.invocation_id

        prompt_generation = self.prompt_generation

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "generation": generation,
                "invocation_id": invocation_id,
                "prompt_generation": prompt_generation,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        generation = d.pop("generation")

        invocation_id = d.pop("invocation_id")

        prompt_generation = d.pop("prompt_generation")

        invocation_report = cls(
            generation=generation,
            invocation_id=invocation_id,
            prompt_generation=prompt_generation,
        )

        return invocation_report
