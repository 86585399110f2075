from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.phase import Phase
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.item_type_0 import ItemType0
    from ..models.item_type_1 import ItemType1
    from ..models.item_type_2 import ItemType2
    from ..models.item_type_3 import ItemType3
    from ..models.item_type_4 import ItemType4
    from ..models.item_type_5 import ItemType5
    from ..models.item_type_6 import ItemType6
    from ..models.resumable import Resumable


T = TypeVar("T", bound="Evidence")


@_attrs_define
class Evidence:
    """One failure report. Route identity fields are optional for classification.

    Attributes:
        items (list[ItemType0 | ItemType1 | ItemType2 | ItemType3 | ItemType4 | ItemType5 | ItemType6]):
        agent (None | str | Unset):
        generation (int | None | Unset):
        invocation_id (None | str | Unset):
        model_id (None | str | Unset):
        occurred_at (datetime.datetime | None | Unset):
        phase (None | Phase | Unset):
        prompt_generation (int | None | Unset):
        provider_id (None | str | Unset):
        resumable (None | Resumable | Unset):
        route_id (None | str | Unset):
    """

    items: list[ItemType0 | ItemType1 | ItemType2 | ItemType3 | ItemType4 | ItemType5 | ItemType6]
    agent: None | str | Unset = UNSET
    generation: int | None | Unset = UNSET
    invocation_id: None | str | Unset = UNSET
    model_id: None | str | Unset = UNSET
    occurred_at: datetime.datetime | None | Unset = UNSET
    phase: None | Phase | Unset = UNSET
    prompt_generation: int | None | Unset = UNSET
    provider_id: None | str | Unset = UNSET
    resumable: None | Resumable | Unset = UNSET
    route_id: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.item_type_0 import ItemType0  # noqa: PLC0415
        from ..models.item_type_1 import ItemType1  # noqa: PLC0415
        from ..models.item_type_2 import ItemType2  # noqa: PLC0415
        from ..models.item_type_3 import ItemType3  # noqa: PLC0415
        from ..models.item_type_4 import ItemType4  # noqa: PLC0415
        from ..models.item_type_5 import ItemType5  # noqa: PLC0415
        from ..models.resumable import Resumable  # noqa: PLC0415

        items = []
        for items_item_data in self.items:
            items_item: dict[str, Any]
            if isinstance(items_item_data, ItemType0):
                items_item = items_item_data.to_dict()
            elif isinstance(items_item_data, ItemType1):
                items_item = items_item_data.to_dict()
            elif isinstance(items_item_data, ItemType2):
                items_item = items_item_data.to_dict()
            elif isinstance(items_item_data, ItemType3):
                items_item = items_item_data.to_dict()
            elif isinstance(items_item_data, ItemType4):
                items_item = items_item_data.to_dict()
            elif isinstance(items_item_data, ItemType5):
                items_item = items_item_data.to_dict()
            else:
                items_item = items_item_data.to_dict()

            items.append(items_item)

        agent: None | str | Unset
        if isinstance(self.agent, Unset):
            agent = UNSET
        else:
            agent = self.agent

        generation: int | None | Unset
        if isinstance(self.generation, Unset):
            generation = UNSET
        else:
            generation = self.generation

        invocation_id: None | str | Unset
        if isinstance(self.invocation_id, Unset):
            invocation_id = UNSET
        else:
            invocation_id = self.invocation_id

        model_id: None | str | Unset
        if isinstance(self.model_id, Unset):
            model_id = UNSET
        else:
            model_id = self.model_id

        occurred_at: None | str | Unset
        if isinstance(self.occurred_at, Unset):
            occurred_at = UNSET
        elif isinstance(self.occurred_at, datetime.datetime):
            occurred_at = self.occurred_at.isoformat()
        else:
            occurred_at = self.occurred_at

        phase: None | str | Unset
        if isinstance(self.phase, Unset):
            phase = UNSET
        elif isinstance(self.phase, Phase):
            phase = self.phase.value
        else:
            phase = self.phase

        prompt_generation: int | None | Unset
        if isinstance(self.prompt_generation, Unset):
            prompt_generation = UNSET
        else:
            prompt_generation = self.prompt_generation

        provider_id: None | str | Unset
        if isinstance(self.provider_id, Unset):
            provider_id = UNSET
        else:
            provider_id = self.provider_id

        resumable: dict[str, Any] | None | Unset
        if isinstance(self.resumable, Unset):
            resumable = UNSET
        elif isinstance(self.resumable, Resumable):
            resumable = self.resumable.to_dict()
        else:
            resumable = self.resumable

        route_id: None | str | Unset
        if isinstance(self.route_id, Unset):
            route_id = UNSET
        else:
            route_id = self.route_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "items": items,
            }
        )
        if agent is not UNSET:
            field_dict["agent"] = agent
        if generation is not UNSET:
            field_dict["generation"] = generation
        if invocation_id is not UNSET:
            field_dict["invocation_id"] = invocation_id
        if model_id is not UNSET:
            field_dict["model_id"] = model_id
        if occurred_at is not UNSET:
            field_dict["occurred_at"] = occurred_at
        if phase is not UNSET:
            field_dict["phase"] = phase
        if prompt_generation is not UNSET:
            field_dict["prompt_generation"] = prompt_generation
        if provider_id is not UNSET:
            field_dict["provider_id"] = provider_id
        if resumable is not UNSET:
            field_dict["resumable"] = resumable
        if route_id is not UNSET:
            field_dict["route_id"] = route_id

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.item_type_0 import ItemType0  # noqa: PLC0415
        from ..models.item_type_1 import ItemType1  # noqa: PLC0415
        from ..models.item_type_2 import ItemType2  # noqa: PLC0415
        from ..models.item_type_3 import ItemType3  # noqa: PLC0415
        from ..models.item_type_4 import ItemType4  # noqa: PLC0415
        from ..models.item_type_5 import ItemType5  # noqa: PLC0415
        from ..models.item_type_6 import ItemType6  # noqa: PLC0415
        from ..models.resumable import Resumable  # noqa: PLC0415

        d = dict(src_dict)
        items = []
        _items = d.pop("items")
        for items_item_data in _items:

            def _parse_items_item(
                data: object,
            ) -> ItemType0 | ItemType1 | ItemType2 | ItemType3 | ItemType4 | ItemType5 | ItemType6:
                try:
                    if not isinstance(data, dict):
                        raise TypeError()
                    componentsschemas_item_type_0 = ItemType0.from_dict(data)

                    return componentsschemas_item_type_0
                except (TypeError, ValueError, AttributeError, KeyError):
                    pass
                try:
                    if not isinstance(data, dict):
                        raise TypeError()
                    componentsschemas_item_type_1 = ItemType1.from_dict(data)

                    return componentsschemas_item_type_1
                except (TypeError, ValueError, AttributeError, KeyError):
                    pass
                try:
                    if not isinstance(data, dict):
                        raise TypeError()
                    componentsschemas_item_type_2 = ItemType2.from_dict(data)

                    return componentsschemas_item_type_2
                except (TypeError, ValueError, AttributeError, KeyError):
                    pass
                try:
                    if not isinstance(data, dict):
                        raise TypeError()
                    componentsschemas_item_type_3 = ItemType3.from_dict(data)

                    return componentsschemas_item_type_3
                except (TypeError, ValueError, AttributeError, KeyError):
                    pass
                try:
                    if not isinstance(data, dict):
                        raise TypeError()
                    componentsschemas_item_type_4 = ItemType4.from_dict(data)

                    return componentsschemas_item_type_4
                except (TypeError, ValueError, AttributeError, KeyError):
                    pass
                try:
                    if not isinstance(data, dict):
                        raise TypeError()
                    componentsschemas_item_type_5 = ItemType5.from_dict(data)

                    return componentsschemas_item_type_5
                except (TypeError, ValueError, AttributeError, KeyError):
                    pass
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_item_type_6 = ItemType6.from_dict(data)

                return componentsschemas_item_type_6

            items_item = _parse_items_item(items_item_data)

            items.append(items_item)

        def _parse_agent(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        agent = _parse_agent(d.pop("agent", UNSET))

        def _parse_generation(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        generation = _parse_generation(d.pop("generation", UNSET))

        def _parse_invocation_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        invocation_id = _parse_invocation_id(d.pop("invocation_id", UNSET))

        def _parse_model_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        model_id = _parse_model_id(d.pop("model_id", UNSET))

        def _parse_occurred_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                occurred_at_type_0 = datetime.datetime.fromisoformat(data)

                return occurred_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        occurred_at = _parse_occurred_at(d.pop("occurred_at", UNSET))

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

        def _parse_prompt_generation(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        prompt_generation = _parse_prompt_generation(d.pop("prompt_generation", UNSET))

        def _parse_provider_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        provider_id = _parse_provider_id(d.pop("provider_id", UNSET))

        def _parse_resumable(data: object) -> None | Resumable | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                resumable_type_1 = Resumable.from_dict(data)

                return resumable_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Resumable | Unset, data)

        resumable = _parse_resumable(d.pop("resumable", UNSET))

        def _parse_route_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        route_id = _parse_route_id(d.pop("route_id", UNSET))

        evidence = cls(
            items=items,
            agent=agent,
            generation=generation,
            invocation_id=invocation_id,
            model_id=model_id,
            occurred_at=occurred_at,
            phase=phase,
            prompt_generation=prompt_generation,
            provider_id=provider_id,
            resumable=resumable,
            route_id=route_id,
        )

        evidence.additional_properties = d
        return evidence

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
