from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.confidence import Confidence
from ..models.phase import Phase
from ..models.scope import Scope
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.explain import Explain


T = TypeVar("T", bound="Classification")


@_attrs_define
class Classification:
    """The classifier's answer, as the API answers it and every attempt records it.

    Attributes:
        catalogue_version (str):
        class_ (str): `transient`, `hard`, `not_provider` or `unclassified`. Example: transient.
        classifier_rule (str): Stable id of the rule that decided (`fallback.*` when none did).
        code (str): Stable semantic cause, e.g. `provider_overloaded`.
        confidence (Confidence): How sure a rule is. Recovering codes need `medium` or `high`.
        occurred_at (datetime.datetime): The reference time: the envelope's, or the classifier's clock.
        safe_excerpt (str): At most 240 characters, secrets and identities redacted.
        explain (Explain | None | Unset):
        model_id (None | str | Unset):
        phase (None | Phase | Unset):
        provider_id (None | str | Unset):
        reset_at (datetime.datetime | None | Unset): `occurred_at + retry_after_seconds`, RFC 3339 UTC.
        retry_after_seconds (float | None | Unset): Validated wait from `occurred_at`, in seconds (millisecond
            precision).
        scope (None | Scope | Unset):
    """

    catalogue_version: str
    class_: str
    classifier_rule: str
    code: str
    confidence: Confidence
    occurred_at: datetime.datetime
    safe_excerpt: str
    explain: Explain | None | Unset = UNSET
    model_id: None | str | Unset = UNSET
    phase: None | Phase | Unset = UNSET
    provider_id: None | str | Unset = UNSET
    reset_at: datetime.datetime | None | Unset = UNSET
    retry_after_seconds: float | None | Unset = UNSET
    scope: None | Scope | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.explain import Explain  # noqa: PLC0415

        catalogue_version = self.catalogue_version

        class_ = self.class_

        classifier_rule = self.classifier_rule

        code = self.code

        confidence = self.confidence.value

        occurred_at = self.occurred_at.isoformat()

        safe_excerpt = self.safe_excerpt

        explain: dict[str, Any] | None | Unset
        if isinstance(self.explain, Unset):
            explain = UNSET
        elif isinstance(self.explain, Explain):
            explain = self.explain.to_dict()
        else:
            explain = self.explain

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

        reset_at: None | str | Unset
        if isinstance(self.reset_at, Unset):
            reset_at = UNSET
        elif isinstance(self.reset_at, datetime.datetime):
            reset_at = self.reset_at.isoformat()
        else:
            reset_at = self.reset_at

        retry_after_seconds: float | None | Unset
        if isinstance(self.retry_after_seconds, Unset):
            retry_after_seconds = UNSET
        else:
            retry_after_seconds = self.retry_after_seconds

        scope: None | str | Unset
        if isinstance(self.scope, Unset):
            scope = UNSET
        elif isinstance(self.scope, Scope):
            scope = self.scope.value
        else:
            scope = self.scope

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "catalogue_version": catalogue_version,
                "class": class_,
                "classifier_rule": classifier_rule,
                "code": code,
                "confidence": confidence,
                "occurred_at": occurred_at,
                "safe_excerpt": safe_excerpt,
            }
        )
        if explain is not UNSET:
            field_dict["explain"] = explain
        if model_id is not UNSET:
            field_dict["model_id"] = model_id
        if phase is not UNSET:
            field_dict["phase"] = phase
        if provider_id is not UNSET:
            field_dict["provider_id"] = provider_id
        if reset_at is not UNSET:
            field_dict["reset_at"] = reset_at
        if retry_after_seconds is not UNSET:
            field_dict["retry_after_seconds"] = retry_after_seconds
        if scope is not UNSET:
            field_dict["scope"] = scope

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.explain import Explain  # noqa: PLC0415

        d = dict(src_dict)
        catalogue_version = d.pop("catalogue_version")

        class_ = d.pop("class")

        classifier_rule = d.pop("classifier_rule")

        code = d.pop("code")

        confidence = Confidence(d.pop("confidence"))

        occurred_at = datetime.datetime.fromisoformat(d.pop("occurred_at"))

        safe_excerpt = d.pop("safe_excerpt")

        def _parse_explain(data: object) -> Explain | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                explain_type_1 = Explain.from_dict(data)

                return explain_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(Explain | None | Unset, data)

        explain = _parse_explain(d.pop("explain", UNSET))

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

        def _parse_reset_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                reset_at_type_0 = datetime.datetime.fromisoformat(data)

                return reset_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        reset_at = _parse_reset_at(d.pop("reset_at", UNSET))

        def _parse_retry_after_seconds(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        retry_after_seconds = _parse_retry_after_seconds(d.pop("retry_after_seconds", UNSET))

        def _parse_scope(data: object) -> None | Scope | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                scope_type_1 = Scope(data)

                return scope_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Scope | Unset, data)

        scope = _parse_scope(d.pop("scope", UNSET))

        classification = cls(
            catalogue_version=catalogue_version,
            class_=class_,
            classifier_rule=classifier_rule,
            code=code,
            confidence=confidence,
            occurred_at=occurred_at,
            safe_excerpt=safe_excerpt,
            explain=explain,
            model_id=model_id,
            phase=phase,
            provider_id=provider_id,
            reset_at=reset_at,
            retry_after_seconds=retry_after_seconds,
            scope=scope,
        )

        classification.additional_properties = d
        return classification

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
