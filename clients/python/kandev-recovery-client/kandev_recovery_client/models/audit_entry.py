from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.audit_action import AuditAction
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.actor import Actor
    from ..models.audit_entry_detail_type_0 import AuditEntryDetailType0


T = TypeVar("T", bound="AuditEntry")


@_attrs_define
class AuditEntry:
    """One entry of the audit trail (`GET /api/v1/audit`), oldest first.

    Attributes:
        action (AuditAction): What an audited change was.
        actor (Actor): Who did something. `id` and `name` name the person, the token or the
            host user; a timer has neither.
        at (datetime.datetime):
        id (int):
        subject (str): The id or name of what changed (a route, profile, token, person,
            circuit or webhook).
        detail (AuditEntryDetailType0 | None | Unset): What changed, where it says more than the action (the manual
            action and its generation, a profile's new revision, a person's
            permissions).
    """

    action: AuditAction
    actor: Actor
    at: datetime.datetime
    id: int
    subject: str
    detail: AuditEntryDetailType0 | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.audit_entry_detail_type_0 import AuditEntryDetailType0  # noqa: PLC0415

        action = self.action.value

        actor = self.actor.to_dict()

        at = self.at.isoformat()

        id = self.id

        subject = self.subject

        detail: dict[str, Any] | None | Unset
        if isinstance(self.detail, Unset):
            detail = UNSET
        elif isinstance(self.detail, AuditEntryDetailType0):
            detail = self.detail.to_dict()
        else:
            detail = self.detail

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "action": action,
                "actor": actor,
                "at": at,
                "id": id,
                "subject": subject,
            }
        )
        if detail is not UNSET:
            field_dict["detail"] = detail

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.actor import Actor  # noqa: PLC0415
        from ..models.audit_entry_detail_type_0 import AuditEntryDetailType0  # noqa: PLC0415

        d = dict(src_dict)
        action = AuditAction(d.pop("action"))

        actor = Actor.from_dict(d.pop("actor"))

        at = datetime.datetime.fromisoformat(d.pop("at"))

        id = d.pop("id")

        subject = d.pop("subject")

        def _parse_detail(data: object) -> AuditEntryDetailType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                detail_type_0 = AuditEntryDetailType0.from_dict(data)

                return detail_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(AuditEntryDetailType0 | None | Unset, data)

        detail = _parse_detail(d.pop("detail", UNSET))

        audit_entry = cls(
            action=action,
            actor=actor,
            at=at,
            id=id,
            subject=subject,
            detail=detail,
        )

        audit_entry.additional_properties = d
        return audit_entry

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
