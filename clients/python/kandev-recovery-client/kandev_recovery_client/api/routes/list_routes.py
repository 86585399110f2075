from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.api_error import ApiError
from ...models.route_snapshot import RouteSnapshot
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    profile_id: str | Unset = UNSET,
    state: str | Unset = UNSET,
    caller_kind: str | Unset = UNSET,
    caller_ref: str | Unset = UNSET,
    after: str | Unset = UNSET,
    limit: int | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["profile_id"] = profile_id

    params["state"] = state

    params["caller_kind"] = caller_kind

    params["caller_ref"] = caller_ref

    params["after"] = after

    params["limit"] = limit

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/api/v1/routes",
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ApiError | list[RouteSnapshot] | None:
    if response.status_code == 200:
        response_200 = []
        _response_200 = response.json()
        for response_200_item_data in _response_200:
            response_200_item = RouteSnapshot.from_dict(response_200_item_data)

            response_200.append(response_200_item)

        return response_200

    if response.status_code == 400:
        response_400 = ApiError.from_dict(response.json())

        return response_400

    if response.status_code == 401:
        response_401 = ApiError.from_dict(response.json())

        return response_401

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


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[ApiError | list[RouteSnapshot]]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    profile_id: str | Unset = UNSET,
    state: str | Unset = UNSET,
    caller_kind: str | Unset = UNSET,
    caller_ref: str | Unset = UNSET,
    after: str | Unset = UNSET,
    limit: int | Unset = UNSET,
) -> Response[ApiError | list[RouteSnapshot]]:
    """List routes, newest first (by creation, then id). Pages with a cursor:
    `after` the last route id of a page reads the next page; routes opened
    meanwhile never shift it, so no route is seen twice or missed.

    Args:
        profile_id (str | Unset):
        state (str | Unset):
        caller_kind (str | Unset):
        caller_ref (str | Unset):
        after (str | Unset):
        limit (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ApiError | list[RouteSnapshot]]
    """

    kwargs = _get_kwargs(
        profile_id=profile_id,
        state=state,
        caller_kind=caller_kind,
        caller_ref=caller_ref,
        after=after,
        limit=limit,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient | Client,
    profile_id: str | Unset = UNSET,
    state: str | Unset = UNSET,
    caller_kind: str | Unset = UNSET,
    caller_ref: str | Unset = UNSET,
    after: str | Unset = UNSET,
    limit: int | Unset = UNSET,
) -> ApiError | list[RouteSnapshot] | None:
    """List routes, newest first (by creation, then id). Pages with a cursor:
    `after` the last route id of a page reads the next page; routes opened
    meanwhile never shift it, so no route is seen twice or missed.

    Args:
        profile_id (str | Unset):
        state (str | Unset):
        caller_kind (str | Unset):
        caller_ref (str | Unset):
        after (str | Unset):
        limit (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ApiError | list[RouteSnapshot]
    """

    return sync_detailed(
        client=client,
        profile_id=profile_id,
        state=state,
        caller_kind=caller_kind,
        caller_ref=caller_ref,
        after=after,
        limit=limit,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    profile_id: str | Unset = UNSET,
    state: str | Unset = UNSET,
    caller_kind: str | Unset = UNSET,
    caller_ref: str | Unset = UNSET,
    after: str | Unset = UNSET,
    limit: int | Unset = UNSET,
) -> Response[ApiError | list[RouteSnapshot]]:
    """List routes, newest first (by creation, then id). Pages with a cursor:
    `after` the last route id of a page reads the next page; routes opened
    meanwhile never shift it, so no route is seen twice or missed.

    Args:
        profile_id (str | Unset):
        state (str | Unset):
        caller_kind (str | Unset):
        caller_ref (str | Unset):
        after (str | Unset):
        limit (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ApiError | list[RouteSnapshot]]
    """

    kwargs = _get_kwargs(
        profile_id=profile_id,
        state=state,
        caller_kind=caller_kind,
        caller_ref=caller_ref,
        after=after,
        limit=limit,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    profile_id: str | Unset = UNSET,
    state: str | Unset = UNSET,
    caller_kind: str | Unset = UNSET,
    caller_ref: str | Unset = UNSET,
    after: str | Unset = UNSET,
    limit: int | Unset = UNSET,
) -> ApiError | list[RouteSnapshot] | None:
    """List routes, newest first (by creation, then id). Pages with a cursor:
    `after` the last route id of a page reads the next page; routes opened
    meanwhile never shift it, so no route is seen twice or missed.

    Args:
        profile_id (str | Unset):
        state (str | Unset):
        caller_kind (str | Unset):
        caller_ref (str | Unset):
        after (str | Unset):
        limit (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ApiError | list[RouteSnapshot]
    """

    return (
        await asyncio_detailed(
            client=client,
            profile_id=profile_id,
            state=state,
            caller_kind=caller_kind,
            caller_ref=caller_ref,
            after=after,
            limit=limit,
        )
    ).parsed
