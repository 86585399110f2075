from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.api_error import ApiError
from ...models.webhook import Webhook
from ...models.webhook_write import WebhookWrite
from ...types import Response


def _get_kwargs(
    *,
    body: WebhookWrite,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/api/v1/webhooks",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> ApiError | Webhook | None:
    if response.status_code == 201:
        response_201 = Webhook.from_dict(response.json())

        return response_201

    if response.status_code == 400:
        response_400 = ApiError.from_dict(response.json())

        return response_400

    if response.status_code == 401:
        response_401 = ApiError.from_dict(response.json())

        return response_401

    if response.status_code == 403:
        response_403 = ApiError.from_dict(response.json())

        return response_403

    if response.status_code == 413:
        response_413 = ApiError.from_dict(response.json())

        return response_413

    if response.status_code == 422:
        response_422 = ApiError.from_dict(response.json())

        return response_422

    if response.status_code == 503:
        response_503 = ApiError.from_dict(response.json())

        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[ApiError | Webhook]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: WebhookWrite,
) -> Response[ApiError | Webhook]:
    """Subscribe a URL to events. Deliveries are signed with `secret`
    (`Kandev-Signature`, see docs/webhooks.md) and start with the events
    committed after this.

    Args:
        body (WebhookWrite): `POST /api/v1/webhooks`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ApiError | Webhook]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient | Client,
    body: WebhookWrite,
) -> ApiError | Webhook | None:
    """Subscribe a URL to events. Deliveries are signed with `secret`
    (`Kandev-Signature`, see docs/webhooks.md) and start with the events
    committed after this.

    Args:
        body (WebhookWrite): `POST /api/v1/webhooks`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ApiError | Webhook
    """

    return sync_detailed(
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: WebhookWrite,
) -> Response[ApiError | Webhook]:
    """Subscribe a URL to events. Deliveries are signed with `secret`
    (`Kandev-Signature`, see docs/webhooks.md) and start with the events
    committed after this.

    Args:
        body (WebhookWrite): `POST /api/v1/webhooks`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ApiError | Webhook]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    body: WebhookWrite,
) -> ApiError | Webhook | None:
    """Subscribe a URL to events. Deliveries are signed with `secret`
    (`Kandev-Signature`, see docs/webhooks.md) and start with the events
    committed after this.

    Args:
        body (WebhookWrite): `POST /api/v1/webhooks`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ApiError | Webhook
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
        )
    ).parsed
