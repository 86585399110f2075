from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.api_error import ApiError
from ...models.circuit_request import CircuitRequest
from ...models.circuit_view import CircuitView
from ...types import Response


def _get_kwargs(
    *,
    body: CircuitRequest,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/api/v1/circuits/probe",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> ApiError | CircuitView | None:
    if response.status_code == 200:
        response_200 = CircuitView.from_dict(response.json())

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
) -> Response[ApiError | CircuitView]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: CircuitRequest,
) -> Response[ApiError | CircuitView]:
    """Make a circuit probe now: it expires, and the next route to go is its
    one probe (a probe in flight is given up). Audited
    (`circuit.probed`); its event is `circuit.probe_requested`.

    Args:
        body (CircuitRequest): `POST /api/v1/circuits/release` and `POST /api/v1/circuits/probe`:
            the
            circuit an administrator acts on, named as `GET /api/v1/circuits`
            lists it.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ApiError | CircuitView]
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
    body: CircuitRequest,
) -> ApiError | CircuitView | None:
    """Make a circuit probe now: it expires, and the next route to go is its
    one probe (a probe in flight is given up). Audited
    (`circuit.probed`); its event is `circuit.probe_requested`.

    Args:
        body (CircuitRequest): `POST /api/v1/circuits/release` and `POST /api/v1/circuits/probe`:
            the
            circuit an administrator acts on, named as `GET /api/v1/circuits`
            lists it.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ApiError | CircuitView
    """

    return sync_detailed(
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: CircuitRequest,
) -> Response[ApiError | CircuitView]:
    """Make a circuit probe now: it expires, and the next route to go is its
    one probe (a probe in flight is given up). Audited
    (`circuit.probed`); its event is `circuit.probe_requested`.

    Args:
        body (CircuitRequest): `POST /api/v1/circuits/release` and `POST /api/v1/circuits/probe`:
            the
            circuit an administrator acts on, named as `GET /api/v1/circuits`
            lists it.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ApiError | CircuitView]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    body: CircuitRequest,
) -> ApiError | CircuitView | None:
    """Make a circuit probe now: it expires, and the next route to go is its
    one probe (a probe in flight is given up). Audited
    (`circuit.probed`); its event is `circuit.probe_requested`.

    Args:
        body (CircuitRequest): `POST /api/v1/circuits/release` and `POST /api/v1/circuits/probe`:
            the
            circuit an administrator acts on, named as `GET /api/v1/circuits`
            lists it.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ApiError | CircuitView
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
        )
    ).parsed
