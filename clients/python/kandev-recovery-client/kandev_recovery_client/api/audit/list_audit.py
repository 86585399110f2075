from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.api_error import ApiError
from ...models.audit_entry import AuditEntry
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    after: int | Unset = UNSET,
    subject: str | Unset = UNSET,
    limit: int | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["after"] = after

    params["subject"] = subject

    params["limit"] = limit

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/api/v1/audit",
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ApiError | list[AuditEntry] | None:
    if response.status_code == 200:
        response_200 = []
        _response_200 = response.json()
        for response_200_item_data in _response_200:
            response_200_item = AuditEntry.from_dict(response_200_item_data)

            response_200.append(response_200_item)

        return response_200

    if response.status_code == 400:
        response_400 = ApiError.from_dict(response.json())

        return response_400

    if response.status_code == 401:
        response_401 = ApiError.from_dict(response.json())

        return response_401

    if response.status_code == 403:
        response_403 = ApiError.from_dict(response.json())

        return response_403

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
) -> Response[ApiError | list[AuditEntry]]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    after: int | Unset = UNSET,
    subject: str | Unset = UNSET,
    limit: int | Unset = UNSET,
) -> Response[ApiError | list[AuditEntry]]:
    """The audit trail, oldest first: every manual action, profile change,
    token and person change, circuit release and webhook change, with who
    made it and when. Page with `after` (the last `id` seen).

    Args:
        after (int | Unset):
        subject (str | Unset):
        limit (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ApiError | list[AuditEntry]]
    """

    kwargs = _get_kwargs(
        after=after,
        subject=subject,
        limit=limit,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient | Client,
    after: int | Unset = UNSET,
    subject: str | Unset = UNSET,
    limit: int | Unset = UNSET,
) -> ApiError | list[AuditEntry] | None:
    """The audit trail, oldest first: every manual action, profile change,
    token and person change, circuit release and webhook change, with who
    made it and when. Page with `after` (the last `id` seen).

    Args:
        after (int | Unset):
        subject (str | Unset):
        limit (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ApiError | list[AuditEntry]
    """

    return sync_detailed(
        client=client,
        after=after,
        subject=subject,
        limit=limit,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    after: int | Unset = UNSET,
    subject: str | Unset = UNSET,
    limit: int | Unset = UNSET,
) -> Response[ApiError | list[AuditEntry]]:
    """The audit trail, oldest first: every manual action, profile change,
    token and person change, circuit release and webhook change, with who
    made it and when. Page with `after` (the last `id` seen).

    Args:
        after (int | Unset):
        subject (str | Unset):
        limit (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ApiError | list[AuditEntry]]
    """

    kwargs = _get_kwargs(
        after=after,
        subject=subject,
        limit=limit,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    after: int | Unset = UNSET,
    subject: str | Unset = UNSET,
    limit: int | Unset = UNSET,
) -> ApiError | list[AuditEntry] | None:
    """The audit trail, oldest first: every manual action, profile change,
    token and person change, circuit release and webhook change, with who
    made it and when. Page with `after` (the last `id` seen).

    Args:
        after (int | Unset):
        subject (str | Unset):
        limit (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ApiError | list[AuditEntry]
    """

    return (
        await asyncio_detailed(
            client=client,
            after=after,
            subject=subject,
            limit=limit,
        )
    ).parsed
