from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define

from ..models.prefer import Prefer
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.candidate_write import CandidateWrite


T = TypeVar("T", bound="ProfileWrite")


@_attrs_define
class ProfileWrite:
    """A profile as clients send it to create, update or validate. `revision`
    is required on update; candidate `id`s are optional on create.

        Attributes:
            candidates (list[CandidateWrite]):
            name (str):
            prefer (None | Prefer | Unset):
            revision (int | None | Unset):
    """

    candidates: list[CandidateWrite]
    name: str
    prefer: None | Prefer | Unset = UNSET
    revision: int | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        candidates = []
        for candidates_item_data in self.candidates:
            candidates_item = candidates_item_data.to_dict()
            candidates.append(candidates_item)

        name = self.name

        prefer: None | str | Unset
        if isinstance(self.prefer, Unset):
            prefer = UNSET
        elif isinstance(self.prefer, Prefer):
            prefer = self.prefer.value
        else:
            prefer = self.prefer

        revision: int | None | Unset
        if isinstance(self.revision, Unset):
            revision = UNSET
        else:
            revision = self.revision

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "candidates": candidates,
                "name": name,
            }
        )
        if prefer is not UNSET:
            field_dict["prefer"] = prefer
        if revision is not UNSET:
            field_dict["revision"] = revision

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.candidate_write import CandidateWrite  # noqa: PLC0415

        d = dict(src_dict)
        candidates = []
        _candidates = d.pop("candidates")
        for candidates_item_data in _candidates:
            candidates_item = CandidateWrite.from_dict(candidates_item_data)

            candidates.append(candidates_item)

        name = d.pop("name")

        def _parse_prefer(data: object) -> None | Prefer | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                prefer_type_1 = Prefer(data)

                return prefer_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Prefer | Unset, data)

        prefer = _parse_prefer(d.pop("prefer", UNSET))

        def _parse_revision(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        revision = _parse_revision(d.pop("revision", UNSET))

        profile_write = cls(
            candidates=candidates,
            name=name,
            prefer=prefer,
            revision=revision,
        )

        return profile_write
