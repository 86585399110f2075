from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.api_error import ApiError
from ...models.evidence import Evidence
from ...models.failure_answer import FailureAnswer
from ...types import Response


def _get_kwargs(
    id: str,
    *,
    body: Evidence,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/api/v1/routes/{id}/failures".format(
            id=quote(str(id), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> ApiError | FailureAnswer | None:
    if response.status_code == 200:
        response_200 = FailureAnswer.from_dict(response.json())

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
) -> Response[ApiError | FailureAnswer]:
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
    body: Evidence,
) -> Response[ApiError | FailureAnswer]:
    """Report a failure: an evidence envelope naming the route's generation,
    invocation and prompt generation. Answers the classification, the
    decision and the route. Stale evidence changes nothing.

     **Send a `phase`.** Automatic recovery (retry, reset wait, switch)
    needs the envelope's `phase` to place the failure before any result —
    `launch`, `session_init` or `prompt` — and no output or tool activity
    (reported through `/effects` or as `acp_update` items). A missing
    phase, `stream` or `teardown` is `effect_unsafe` and stops the route
    for a person; `decision.unsafe_reason` says which rule applied
    (`boundary_unknown`, `output_started`, `at_teardown`,
    `effects_reported`, `effects_in_evidence`,
    `resume_needs_same_candidate`). The one exception is a resumable
    failure: `resumable: {"provider_session_id", "generation"}` naming the
    provider session the effects were reported under and the provider-side
    turn to resume; its retry's dispatch carries `resume`, telling the
    caller to resume that session instead of sending the prompt again.

    Args:
        id (str):
        body (Evidence): One failure report. Route identity fields are optional for
            classification.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ApiError | FailureAnswer]
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
    body: Evidence,
) -> ApiError | FailureAnswer | None:
    """Report a failure: an evidence envelope naming the route's generation,
    invocation and prompt generation. Answers the classification, the
    decision and the route. Stale evidence changes nothing.

     **Send a `phase`.** Automatic recovery (retry, reset wait, switch)
    needs the envelope's `phase` to place the failure before any result —
    `launch`, `session_init` or `prompt` — and no output or tool activity
    (reported through `/effects` or as `acp_update` items). A missing
    phase, `stream` or `teardown` is `effect_unsafe` and stops the route
    for a person; `decision.unsafe_reason` says which rule applied
    (`boundary_unknown`, `output_started`, `at_teardown`,
    `effects_reported`, `effects_in_evidence`,
    `resume_needs_same_candidate`). The one exception is a resumable
    failure: `resumable: {"provider_session_id", "generation"}` naming the
    provider session the effects were reported under and the provider-side
    turn to resume; its retry's dispatch carries `resume`, telling the
    caller to resume that session instead of sending the prompt again.

    Args:
        id (str):
        body (Evidence): One failure report. Route identity fields are optional for
            classification.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ApiError | FailureAnswer
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
    body: Evidence,
) -> Response[ApiError | FailureAnswer]:
    """Report a failure: an evidence envelope naming the route's generation,
    invocation and prompt generation. Answers the classification, the
    decision and the route. Stale evidence changes nothing.

     **Send a `phase`.** Automatic recovery (retry, reset wait, switch)
    needs the envelope's `phase` to place the failure before any result —
    `launch`, `session_init` or `prompt` — and no output or tool activity
    (reported through `/effects` or as `acp_update` items). A missing
    phase, `stream` or `teardown` is `effect_unsafe` and stops the route
    for a person; `decision.unsafe_reason` says which rule applied
    (`boundary_unknown`, `output_started`, `at_teardown`,
    `effects_reported`, `effects_in_evidence`,
    `resume_needs_same_candidate`). The one exception is a resumable
    failure: `resumable: {"provider_session_id", "generation"}` naming the
    provider session the effects were reported under and the provider-side
    turn to resume; its retry's dispatch carries `resume`, telling the
    caller to resume that session instead of sending the prompt again.

    Args:
        id (str):
        body (Evidence): One failure report. Route identity fields are optional for
            classification.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ApiError | FailureAnswer]
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
    body: Evidence,
) -> ApiError | FailureAnswer | None:
    """Report a failure: an evidence envelope naming the route's generation,
    invocation and prompt generation. Answers the classification, the
    decision and the route. Stale evidence changes nothing.

     **Send a `phase`.** Automatic recovery (retry, reset wait, switch)
    needs the envelope's `phase` to place the failure before any result —
    `launch`, `session_init` or `prompt` — and no output or tool activity
    (reported through `/effects` or as `acp_update` items). A missing
    phase, `stream` or `teardown` is `effect_unsafe` and stops the route
    for a person; `decision.unsafe_reason` says which rule applied
    (`boundary_unknown`, `output_started`, `at_teardown`,
    `effects_reported`, `effects_in_evidence`,
    `resume_needs_same_candidate`). The one exception is a resumable
    failure: `resumable: {"provider_session_id", "generation"}` naming the
    provider session the effects were reported under and the provider-side
    turn to resume; its retry's dispatch carries `resume`, telling the
    caller to resume that session instead of sending the prompt again.

    Args:
        id (str):
        body (Evidence): One failure report. Route identity fields are optional for
            classification.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ApiError | FailureAnswer
    """

    return (
        await asyncio_detailed(
            id=id,
            client=client,
            body=body,
        )
    ).parsed
