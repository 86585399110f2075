from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="Resume")


@_attrs_define
class Resume:
    """Where a resumed attempt continues: the provider-native session and the
    provider-side generation (turn) it resumes. A dispatch that carries it
    tells the caller to resume that session (Claude Code `--resume`, Codex
    `exec resume`, ACP `session/load`), not to send the prompt again.

        Attributes:
            generation (int):
            provider_session_id (str):
    """

    generation: int
    provider_session_id: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        generation = self.generation

        provider_session_id = self.provider_session_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "generation": generation,
                "provider_session_id": provider_session_id,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        generation = d.pop("generation")

        provider_session_id = d.pop("provider_session_id")

        resume = cls(
            generation=generation,
            provider_session_id=provider_session_id,
        )

        resume.additional_properties = d
        return resume

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
