from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..models.webhook_event import WebhookEvent

T = TypeVar("T", bound="WebhookWrite")


@_attrs_define
class WebhookWrite:
    """`POST /api/v1/webhooks`.

    Attributes:
        events (list[WebhookEvent]): What to deliver (at least one).
        secret (str): The signing secret (16 to 256 characters): each delivery carries
            an HMAC-SHA256 of its timestamp and body under it.
        url (str): Where deliveries are posted: `http` or `https`.
    """

    events: list[WebhookEvent]
    secret: str
    url: str

    def to_dict(self) -> dict[str, Any]:
        events = []
        for events_item_data in self.events:
            events_item = events_item_data.value
            events.append(events_item)

        secret = self.secret

        url = self.url

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "events": events,
                "secret": secret,
                "url": url,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        events = []
        _events = d.pop("events")
        for events_item_data in _events:
            events_item = WebhookEvent(events_item_data)

            events.append(events_item)

        secret = d.pop("secret")

        url = d.pop("url")

        webhook_write = cls(
            events=events,
            secret=secret,
            url=url,
        )

        return webhook_write
