from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.phase import Phase
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.skeleton_item import SkeletonItem


T = TypeVar("T", bound="EvidenceSkeleton")


@_attrs_define
class EvidenceSkeleton:
    """What an unrecognised failure looked like, without anything secret: the
    shape of its evidence envelope, kept with each unknown-log entry so a
    fixture can be written from it (`catalogue fixture-from-unknown`) and a
    newer catalogue tried on it (`catalogue reclassify-unknown`). Every text
    is the classifier's sanitiser's bounded excerpt; header values are
    dropped, only their names kept.

        Attributes:
            items (list[SkeletonItem]): The envelope's items, in order.
            agent (None | str | Unset):
            model_id (None | str | Unset):
            phase (None | Phase | Unset):
            provider_id (None | str | Unset):
    """

    items: list[SkeletonItem]
    agent: None | str | Unset = UNSET
    model_id: None | str | Unset = UNSET
    phase: None | Phase | Unset = UNSET
    provider_id: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        items = []
        for items_item_data in self.items:
            items_item = items_item_data.to_dict()
            items.append(items_item)

        agent: None | str | Unset
        if isinstance(self.agent, Unset):
            agent = UNSET
        else:
            agent = self.agent

        model_id: None | str | Unset
        if isinstance(self.model_id, Unset):
            model_id = UNSET
        else:
            model_id = self.model_id

        phase: None | str | Unset
        if isinstance(self.phase, Unset):
            phase = UNSET
        elif isinstance(self.phase, Phase):
            phase = self.phase.value
        else:
            phase = self.phase

        provider_id: None | str | Unset
        if isinstance(self.provider_id, Unset):
            provider_id = UNSET
        else:
            provider_id = self.provider_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "items": items,
            }
        )
        if agent is not UNSET:
            field_dict["agent"] = agent
        if model_id is not UNSET:
            field_dict["model_id"] = model_id
        if phase is not UNSET:
            field_dict["phase"] = phase
        if provider_id is not UNSET:
            field_dict["provider_id"] = provider_id

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.skeleton_item import SkeletonItem  # noqa: PLC0415

        d = dict(src_dict)
        items = []
        _items = d.pop("items")
        for items_item_data in _items:
            items_item = SkeletonItem.from_dict(items_item_data)

            items.append(items_item)

        def _parse_agent(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        agent = _parse_agent(d.pop("agent", UNSET))

        def _parse_model_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        model_id = _parse_model_id(d.pop("model_id", UNSET))

        def _parse_phase(data: object) -> None | Phase | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                phase_type_1 = Phase(data)

                return phase_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Phase | Unset, data)

        phase = _parse_phase(d.pop("phase", UNSET))

        def _parse_provider_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        provider_id = _parse_provider_id(d.pop("provider_id", UNSET))

        evidence_skeleton = cls(
            items=items,
            agent=agent,
            model_id=model_id,
            phase=phase,
            provider_id=provider_id,
        )

        evidence_skeleton.additional_properties = d
        return evidence_skeleton

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
