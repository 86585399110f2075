from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.api_error import ApiError
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    route_id: str | Unset = UNSET,
    after: int | Unset = UNSET,
    last_event_id: int | None | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(last_event_id, Unset):
        headers["Last-Event-ID"] = last_event_id

    params: dict[str, Any] = {}

    params["route_id"] = route_id

    params["after"] = after

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/api/v1/events",
        "params": params,
    }

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> ApiError | str | None:
    if response.status_code == 200:
        response_200 = response.text
        return response_200

    if response.status_code == 400:
        response_400 = ApiError.from_dict(response.json())

        return response_400

    if response.status_code == 401:
        response_401 = ApiError.from_dict(response.json())

        return response_401

    if response.status_code == 503:
        response_503 = ApiError.from_dict(response.json())

        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[ApiError | str]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    route_id: str | Unset = UNSET,
    after: int | Unset = UNSET,
    last_event_id: int | None | Unset = UNSET,
) -> Response[ApiError | str]:
    """Server-sent events: every committed transition, with ids; reconnect with
    `Last-Event-ID` to resume without gaps. Without either, starts from now.

    Args:
        route_id (str | Unset):
        after (int | Unset):
        last_event_id (int | None | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ApiError | str]
    """

    kwargs = _get_kwargs(
        route_id=route_id,
        after=after,
        last_event_id=last_event_id,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient | Client,
    route_id: str | Unset = UNSET,
    after: int | Unset = UNSET,
    last_event_id: int | None | Unset = UNSET,
) -> ApiError | str | None:
    """Server-sent events: every committed transition, with ids; reconnect with
    `Last-Event-ID` to resume without gaps. Without either, starts from now.

    Args:
        route_id (str | Unset):
        after (int | Unset):
        last_event_id (int | None | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ApiError | str
    """

    return sync_detailed(
        client=client,
        route_id=route_id,
        after=after,
        last_event_id=last_event_id,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    route_id: str | Unset = UNSET,
    after: int | Unset = UNSET,
    last_event_id: int | None | Unset = UNSET,
) -> Response[ApiError | str]:
    """Server-sent events: every committed transition, with ids; reconnect with
    `Last-Event-ID` to resume without gaps. Without either, starts from now.

    Args:
        route_id (str | Unset):
        after (int | Unset):
        last_event_id (int | None | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ApiError | str]
    """

    kwargs = _get_kwargs(
        route_id=route_id,
        after=after,
        last_event_id=last_event_id,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    route_id: str | Unset = UNSET,
    after: int | Unset = UNSET,
    last_event_id: int | None | Unset = UNSET,
) -> ApiError | str | None:
    """Server-sent events: every committed transition, with ids; reconnect with
    `Last-Event-ID` to resume without gaps. Without either, starts from now.

    Args:
        route_id (str | Unset):
        after (int | Unset):
        last_event_id (int | None | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ApiError | str
    """

    return (
        await asyncio_detailed(
            client=client,
            route_id=route_id,
            after=after,
            last_event_id=last_event_id,
        )
    ).parsed
