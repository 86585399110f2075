from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.unknown_attempt import UnknownAttempt


T = TypeVar("T", bound="UnknownEntry")


@_attrs_define
class UnknownEntry:
    """One distinct unrecognised failure: every sighting whose sanitised
    excerpt is the same once digit runs are folded (`exit code 1` and
    `exit code 2` are one entry).

        Attributes:
            catalogue_version (str):
            classifier_rule (str): `fallback.unmatched`, `fallback.conflict` or an explicit near-miss rule.
            count (int):
            first_seen (datetime.datetime):
            id (str): The entry's signature: a stable short hash of its folded excerpt,
                the id `GET /catalogue/unknown/{id}` and `catalogue
                fixture-from-unknown` take.
            last_seen (datetime.datetime):
            safe_excerpt (str):
            agent (None | str | Unset): The agent of the latest sighting, when the envelope named one.
            attempts (list[UnknownAttempt] | Unset): The route attempts it was seen in, newest first (the latest few;
                sightings outside a route, `POST /classify`, have none; attempts
                of routes retention pruned are left out).
            model_id (None | str | Unset):
            provider_id (None | str | Unset):
    """

    catalogue_version: str
    classifier_rule: str
    count: int
    first_seen: datetime.datetime
    id: str
    last_seen: datetime.datetime
    safe_excerpt: str
    agent: None | str | Unset = UNSET
    attempts: list[UnknownAttempt] | Unset = UNSET
    model_id: None | str | Unset = UNSET
    provider_id: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        catalogue_version = self.catalogue_version

        classifier_rule = self.classifier_rule

        count = self.count

        first_seen = self.first_seen.isoformat()

        id = self.id

        last_seen = self.last_seen.isoformat()

        safe_excerpt = self.safe_excerpt

        agent: None | str | Unset
        if isinstance(self.agent, Unset):
            agent = UNSET
        else:
            agent = self.agent

        attempts: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.attempts, Unset):
            attempts = []
            for attempts_item_data in self.attempts:
                attempts_item = attempts_item_data.to_dict()
                attempts.append(attempts_item)

        model_id: None | str | Unset
        if isinstance(self.model_id, Unset):
            model_id = UNSET
        else:
            model_id = self.model_id

        provider_id: None | str | Unset
        if isinstance(self.provider_id, Unset):
            provider_id = UNSET
        else:
            provider_id = self.provider_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "catalogue_version": catalogue_version,
                "classifier_rule": classifier_rule,
                "count": count,
                "first_seen": first_seen,
                "id": id,
                "last_seen": last_seen,
                "safe_excerpt": safe_excerpt,
            }
        )
        if agent is not UNSET:
            field_dict["agent"] = agent
        if attempts is not UNSET:
            field_dict["attempts"] = attempts
        if model_id is not UNSET:
            field_dict["model_id"] = model_id
        if provider_id is not UNSET:
            field_dict["provider_id"] = provider_id

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.unknown_attempt import UnknownAttempt  # noqa: PLC0415

        d = dict(src_dict)
        catalogue_version = d.pop("catalogue_version")

        classifier_rule = d.pop("classifier_rule")

        count = d.pop("count")

        first_seen = datetime.datetime.fromisoformat(d.pop("first_seen"))

        id = d.pop("id")

        last_seen = datetime.datetime.fromisoformat(d.pop("last_seen"))

        safe_excerpt = d.pop("safe_excerpt")

        def _parse_agent(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        agent = _parse_agent(d.pop("agent", UNSET))

        _attempts = d.pop("attempts", UNSET)
        attempts: list[UnknownAttempt] | Unset = UNSET
        if _attempts is not UNSET:
            attempts = []
            for attempts_item_data in _attempts:
                attempts_item = UnknownAttempt.from_dict(attempts_item_data)

                attempts.append(attempts_item)

        def _parse_model_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        model_id = _parse_model_id(d.pop("model_id", UNSET))

        def _parse_provider_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        provider_id = _parse_provider_id(d.pop("provider_id", UNSET))

        unknown_entry = cls(
            catalogue_version=catalogue_version,
            classifier_rule=classifier_rule,
            count=count,
            first_seen=first_seen,
            id=id,
            last_seen=last_seen,
            safe_excerpt=safe_excerpt,
            agent=agent,
            attempts=attempts,
            model_id=model_id,
            provider_id=provider_id,
        )

        unknown_entry.additional_properties = d
        return unknown_entry

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
