from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.actor import Actor
    from ..models.profile_revision_document import ProfileRevisionDocument


T = TypeVar("T", bound="ProfileRevision")


@_attrs_define
class ProfileRevision:
    """A profile as it was saved at one revision, and by whom.

    Attributes:
        actor (Actor): Who did something. `id` and `name` name the person, the token or the
            host user; a timer has neither.
        at (datetime.datetime):
        document (ProfileRevisionDocument): The profile as stored: `{"prefer", "candidates"}` (a bare candidate
            list for revisions saved before the preference existed).
        name (str):
        profile_id (str):
        revision (int):
    """

    actor: Actor
    at: datetime.datetime
    document: ProfileRevisionDocument
    name: str
    profile_id: str
    revision: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        actor = self.actor.to_dict()

        at = self.at.isoformat()

        document = self.document.to_dict()

        name = self.name

        profile_id = self.profile_id

        revision = self.revision

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "actor": actor,
                "at": at,
                "document": document,
                "name": name,
                "profile_id": profile_id,
                "revision": revision,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.actor import Actor  # noqa: PLC0415
        from ..models.profile_revision_document import ProfileRevisionDocument  # noqa: PLC0415

        d = dict(src_dict)
        actor = Actor.from_dict(d.pop("actor"))

        at = datetime.datetime.fromisoformat(d.pop("at"))

        document = ProfileRevisionDocument.from_dict(d.pop("document"))

        name = d.pop("name")

        profile_id = d.pop("profile_id")

        revision = d.pop("revision")

        profile_revision = cls(
            actor=actor,
            at=at,
            document=document,
            name=name,
            profile_id=profile_id,
            revision=revision,
        )

        profile_revision.additional_properties = d
        return profile_revision

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
