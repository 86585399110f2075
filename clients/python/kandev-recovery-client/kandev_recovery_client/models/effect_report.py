from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="EffectReport")


@_attrs_define
class EffectReport:
    """`POST /routes/{id}/effects` body: the agent produced output or touched tools.

    Attributes:
        generation (int):
        invocation_id (str):
        kind (str): What the agent did (`agent_message_chunk`, `tool_call`,
            `tool_call_update`, `partial_result`; another name counts as an
            effect too). Example: tool_call.
        prompt_generation (int):
        provider_session_id (None | str | Unset): The provider-native session, for resumable retries.
    """

    generation: int
    invocation_id: str
    kind: str
    prompt_generation: int
    provider_session_id: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        generation = self.generation

        invocation_id = self.invocation_id

        kind = self.kind

        prompt_generation = self.prompt_generation

        provider_session_id: None | str | Unset
        if isinstance(self.provider_session_id, Unset):
            provider_session_id = UNSET
        else:
            provider_session_id = self.provider_session_id

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "generation": generation,
                "invocation_id": invocation_id,
                "kind": kind,
                "prompt_generation": prompt_generation,
            }
        )
        if provider_session_id is not UNSET:
            field_dict["provider_session_id"] = provider_session_id

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        generation = d.pop("generation")

        invocation_id = d.pop("invocation_id")

        kind = d.pop("kind")

        prompt_generation = d.pop("prompt_generation")

        def _parse_provider_session_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        provider_session_id = _parse_provider_session_id(d.pop("provider_session_id", UNSET))

        effect_report = cls(
            generation=generation,
            invocation_id=invocation_id,
            kind=kind,
            prompt_generation=prompt_generation,
            provider_session_id=provider_session_id,
        )

        return effect_report
