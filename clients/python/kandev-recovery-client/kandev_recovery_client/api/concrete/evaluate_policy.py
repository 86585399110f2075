from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.api_error import ApiError
from ...models.evaluate_answer import EvaluateAnswer
from ...models.evaluate_request import EvaluateRequest
from ...types import Response


def _get_kwargs(
    *,
    body: EvaluateRequest,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/api/v1/policies/evaluate",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ApiError | EvaluateAnswer | None:
    if response.status_code == 200:
        response_200 = EvaluateAnswer.from_dict(response.json())

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

    if response.status_code == 413:
        response_413 = ApiError.from_dict(response.json())

        return response_413

    if response.status_code == 422:
        response_422 = ApiError.from_dict(response.json())

        return response_422

    if response.status_code == 429:
        response_429 = ApiError.from_dict(response.json())

        return response_429

    if response.status_code == 503:
        response_503 = ApiError.from_dict(response.json())

        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[ApiError | EvaluateAnswer]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: EvaluateRequest,
) -> Response[ApiError | EvaluateAnswer]:
    """The decision the evaluator would take for a concrete session's
    failure: one candidate's policy document (version 1, validated as a
    profile's would be), the evidence envelope, and what this cycle
    already used per class (default: nothing). The effect-safety gate
    applies: the envelope's `phase` must be `launch`, `session_init` or
    `prompt` and it must carry no output or tool activity, or the answer
    is `effect_unsafe`. Nothing is stored or scheduled; the answer's
    `cycle` is what to send with the next failure of the same cycle.

    Args:
        body (EvaluateRequest): `POST /policies/evaluate` body.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ApiError | EvaluateAnswer]
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
    body: EvaluateRequest,
) -> ApiError | EvaluateAnswer | None:
    """The decision the evaluator would take for a concrete session's
    failure: one candidate's policy document (version 1, validated as a
    profile's would be), the evidence envelope, and what this cycle
    already used per class (default: nothing). The effect-safety gate
    applies: the envelope's `phase` must be `launch`, `session_init` or
    `prompt` and it must carry no output or tool activity, or the answer
    is `effect_unsafe`. Nothing is stored or scheduled; the answer's
    `cycle` is what to send with the next failure of the same cycle.

    Args:
        body (EvaluateRequest): `POST /policies/evaluate` body.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ApiError | EvaluateAnswer
    """

    return sync_detailed(
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: EvaluateRequest,
) -> Response[ApiError | EvaluateAnswer]:
    """The decision the evaluator would take for a concrete session's
    failure: one candidate's policy document (version 1, validated as a
    profile's would be), the evidence envelope, and what this cycle
    already used per class (default: nothing). The effect-safety gate
    applies: the envelope's `phase` must be `launch`, `session_init` or
    `prompt` and it must carry no output or tool activity, or the answer
    is `effect_unsafe`. Nothing is stored or scheduled; the answer's
    `cycle` is what to send with the next failure of the same cycle.

    Args:
        body (EvaluateRequest): `POST /policies/evaluate` body.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ApiError | EvaluateAnswer]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    body: EvaluateRequest,
) -> ApiError | EvaluateAnswer | None:
    """The decision the evaluator would take for a concrete session's
    failure: one candidate's policy document (version 1, validated as a
    profile's would be), the evidence envelope, and what this cycle
    already used per class (default: nothing). The effect-safety gate
    applies: the envelope's `phase` must be `launch`, `session_init` or
    `prompt` and it must carry no output or tool activity, or the answer
    is `effect_unsafe`. Nothing is stored or scheduled; the answer's
    `cycle` is what to send with the next failure of the same cycle.

    Args:
        body (EvaluateRequest): `POST /policies/evaluate` body.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ApiError | EvaluateAnswer
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
        )
    ).parsed
