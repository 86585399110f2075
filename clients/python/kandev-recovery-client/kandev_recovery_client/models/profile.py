from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.prefer import Prefer
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.candidate import Candidate
    from ..models.configuration_error import ConfigurationError


T = TypeVar("T", bound="Profile")


@_attrs_define
class Profile:
    """A dynamic profile as the API returns it.

    Attributes:
        candidates (list[Candidate]):
        created_at (datetime.datetime):
        id (str):
        name (str):
        prefer (Prefer): Where a route's next invocation goes once a prompt succeeded.
        revision (int): Increases by one on every update; `PUT` must send the one it read.
        updated_at (datetime.datetime):
        configuration_error (ConfigurationError | None | Unset):
    """

    candidates: list[Candidate]
    created_at: datetime.datetime
    id: str
    name: str
    prefer: Prefer
    revision: int
    updated_at: datetime.datetime
    configuration_error: ConfigurationError | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.configuration_error import ConfigurationError  # noqa: PLC0415

        candidates = []
        for candidates_item_data in self.candidates:
            candidates_item = candidates_item_data.to_dict()
            candidates.append(candidates_item)

        created_at = self.created_at.isoformat()

        id = self.id

        name = self.name

        prefer = self.prefer.value

        revision = self.revision

        updated_at = self.updated_at.isoformat()

        configuration_error: dict[str, Any] | None | Unset
        if isinstance(self.configuration_error, Unset):
            configuration_error = UNSET
        elif isinstance(self.configuration_error, ConfigurationError):
            configuration_error = self.configuration_error.to_dict()
        else:
            configuration_error = self.configuration_error

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "candidates": candidates,
                "created_at": created_at,
                "id": id,
                "name": name,
                "prefer": prefer,
                "revision": revision,
                "updated_at": updated_at,
            }
        )
        if configuration_error is not UNSET:
            field_dict["configuration_error"] = configuration_error

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.candidate import Candidate  # noqa: PLC0415
        from ..models.configuration_error import ConfigurationError  # noqa: PLC0415

        d = dict(src_dict)
        candidates = []
        _candidates = d.pop("candidates")
        for candidates_item_data in _candidates:
            candidates_item = Candidate.from_dict(candidates_item_data)

            candidates.append(candidates_item)

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        id = d.pop("id")

        name = d.pop("name")

        prefer = Prefer(d.pop("prefer"))

        revision = d.pop("revision")

        updated_at = datetime.datetime.fromisoformat(d.pop("updated_at"))

        def _parse_configuration_error(data: object) -> ConfigurationError | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                configuration_error_type_1 = ConfigurationError.from_dict(data)

                return configuration_error_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(ConfigurationError | None | Unset, data)

        configuration_error = _parse_configuration_error(d.pop("configuration_error", UNSET))

        profile = cls(
            candidates=candidates,
            created_at=created_at,
            id=id,
            name=name,
            prefer=prefer,
            revision=revision,
            updated_at=updated_at,
            configuration_error=configuration_error,
        )

        profile.additional_properties = d
        return profile

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
