from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.delivery_state import DeliveryState
from ..models.webhook_event import WebhookEvent
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.delivery_body import DeliveryBody


T = TypeVar("T", bound="Delivery")


@_attrs_define
class Delivery:
    """One delivery of a subscription's log, newest first.

    Attributes:
        attempts (int):
        body (DeliveryBody): The body posted, exactly as signed.
        created_at (datetime.datetime):
        event (WebhookEvent): What a webhook can be told about.
        id (str):
        state (DeliveryState): Where one delivery is.
        last_error (None | str | Unset):
        last_status (int | None | Unset): The receiver's last HTTP status, if it answered at all.
        next_attempt_at (datetime.datetime | None | Unset): When the next attempt is due (pending deliveries).
    """

    attempts: int
    body: DeliveryBody
    created_at: datetime.datetime
    event: WebhookEvent
    id: str
    state: DeliveryState
    last_error: None | str | Unset = UNSET
    last_status: int | None | Unset = UNSET
    next_attempt_at: datetime.datetime | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        attempts = self.attempts

        body = self.body.to_dict()

        created_at = self.created_at.isoformat()

        event = self.event.value

        id = self.id

        state = self.state.value

        last_error: None | str | Unset
        if isinstance(self.last_error, Unset):
            last_error = UNSET
        else:
            last_error = self.last_error

        last_status: int | None | Unset
        if isinstance(self.last_status, Unset):
            last_status = UNSET
        else:
            last_status = self.last_status

        next_attempt_at: None | str | Unset
        if isinstance(self.next_attempt_at, Unset):
            next_attempt_at = UNSET
        elif isinstance(self.next_attempt_at, datetime.datetime):
            next_attempt_at = self.next_attempt_at.isoformat()
        else:
            next_attempt_at = self.next_attempt_at

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "attempts": attempts,
                "body": body,
                "created_at": created_at,
                "event": event,
                "id": id,
                "state": state,
            }
        )
        if last_error is not UNSET:
            field_dict["last_error"] = last_error
        if last_status is not UNSET:
            field_dict["last_status"] = last_status
        if next_attempt_at is not UNSET:
            field_dict["next_attempt_at"] = next_attempt_at

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.delivery_body import DeliveryBody  # noqa: PLC0415

        d = dict(src_dict)
        attempts = d.pop("attempts")

        body = DeliveryBody.from_dict(d.pop("body"))

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        event = WebhookEvent(d.pop("event"))

        id = d.pop("id")

        state = DeliveryState(d.pop("state"))

        def _parse_last_error(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        last_error = _parse_last_error(d.pop("last_error", UNSET))

        def _parse_last_status(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        last_status = _parse_last_status(d.pop("last_status", UNSET))

        def _parse_next_attempt_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                next_attempt_at_type_0 = datetime.datetime.fromisoformat(data)

                return next_attempt_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        next_attempt_at = _parse_next_attempt_at(d.pop("next_attempt_at", UNSET))

        delivery = cls(
            attempts=attempts,
            body=body,
            created_at=created_at,
            event=event,
            id=id,
            state=state,
            last_error=last_error,
            last_status=last_status,
            next_attempt_at=next_attempt_at,
        )

        delivery.additional_properties = d
        return delivery

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
