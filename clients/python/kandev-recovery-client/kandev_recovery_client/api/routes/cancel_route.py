from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.api_error import ApiError
from ...models.end_request import EndRequest
from ...models.route_snapshot import RouteSnapshot
from ...types import Response


def _get_kwargs(
    id: str,
    *,
    body: EndRequest,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/api/v1/routes/{id}/cancel".format(
            id=quote(str(id), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ApiError | RouteSnapshot | None:
    if response.status_code == 200:
        response_200 = RouteSnapshot.from_dict(response.json())

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

    if response.status_code == 404:
        response_404 = ApiError.from_dict(response.json())

        return response_404

    if response.status_code == 409:
        response_409 = ApiError.from_dict(response.json())

        return response_409

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


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[ApiError | RouteSnapshot]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    id: str,
    *,
    client: AuthenticatedClient | Client,
    body: EndRequest,
) -> Response[ApiError | RouteSnapshot]:
    """Cancel the route: it is given up. The route ends (`cancelled`) with
    the generation the caller saw; its armed schedules and open dispatches
    are voided with it. Cancelling a cancelled route answers it as it is.
    (The `cancel` action of `/actions` is another thing: it cancels a wait
    and stops the route for a person.)

    Args:
        id (str):
        body (EndRequest): `POST /routes/{id}/complete` and `/cancel` body: the generation the
            caller saw, fencing the end like every transition.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ApiError | RouteSnapshot]
    """

    kwargs = _get_kwargs(
        id=id,
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    id: str,
    *,
    client: AuthenticatedClient | Client,
    body: EndRequest,
) -> ApiError | RouteSnapshot | None:
    """Cancel the route: it is given up. The route ends (`cancelled`) with
    the generation the caller saw; its armed schedules and open dispatches
    are voided with it. Cancelling a cancelled route answers it as it is.
    (The `cancel` action of `/actions` is another thing: it cancels a wait
    and stops the route for a person.)

    Args:
        id (str):
        body (EndRequest): `POST /routes/{id}/complete` and `/cancel` body: the generation the
            caller saw, fencing the end like every transition.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ApiError | RouteSnapshot
    """

    return sync_detailed(
        id=id,
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    id: str,
    *,
    client: AuthenticatedClient | Client,
    body: EndRequest,
) -> Response[ApiError | RouteSnapshot]:
    """Cancel the route: it is given up. The route ends (`cancelled`) with
    the generation the caller saw; its armed schedules and open dispatches
    are voided with it. Cancelling a cancelled route answers it as it is.
    (The `cancel` action of `/actions` is another thing: it cancels a wait
    and stops the route for a person.)

    Args:
        id (str):
        body (EndRequest): `POST /routes/{id}/complete` and `/cancel` body: the generation the
            caller saw, fencing the end like every transition.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ApiError | RouteSnapshot]
    """

    kwargs = _get_kwargs(
        id=id,
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    id: str,
    *,
    client: AuthenticatedClient | Client,
    body: EndRequest,
) -> ApiError | RouteSnapshot | None:
    """Cancel the route: it is given up. The route ends (`cancelled`) with
    the generation the caller saw; its armed schedules and open dispatches
    are voided with it. Cancelling a cancelled route answers it as it is.
    (The `cancel` action of `/actions` is another thing: it cancels a wait
    and stops the route for a person.)

    Args:
        id (str):
        body (EndRequest): `POST /routes/{id}/complete` and `/cancel` body: the generation the
            caller saw, fencing the end like every transition.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ApiError | RouteSnapshot
    """

    return (
        await asyncio_detailed(
            id=id,
            client=client,
            body=body,
        )
    ).parsed
