from http import HTTPStatus
from typing import Any, cast

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.api_error import ApiError
from ...models.sign_in_form import SignInForm
from ...types import Response


def _get_kwargs(
    *,
    body: SignInForm,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/sign-in",
    }

    _kwargs["data"] = body.to_dict()
    headers["Content-Type"] = "application/x-www-form-urlencoded"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Any | ApiError | str | None:
    if response.status_code == 303:
        response_303 = cast(Any, None)
        return response_303

    if response.status_code == 400:
        response_400 = response.text
        return response_400

    if response.status_code == 401:
        response_401 = response.text
        return response_401

    if response.status_code == 403:
        response_403 = response.text
        return response_403

    if response.status_code == 503:
        response_503 = ApiError.from_dict(response.json())

        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[Any | ApiError | str]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    body: SignInForm,
) -> Response[Any | ApiError | str]:
    """`POST /sign-in` (the sign-in page's button, `code=…` as a form): uses
    up the link, opens a session and goes to the profiles. Refused from
    another site (`Sec-Fetch-Site`, `Origin`): a page elsewhere could
    otherwise sign a visitor in as its own author (login CSRF).

    Args:
        body (SignInForm):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | ApiError | str]
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
    client: AuthenticatedClient,
    body: SignInForm,
) -> Any | ApiError | str | None:
    """`POST /sign-in` (the sign-in page's button, `code=…` as a form): uses
    up the link, opens a session and goes to the profiles. Refused from
    another site (`Sec-Fetch-Site`, `Origin`): a page elsewhere could
    otherwise sign a visitor in as its own author (login CSRF).

    Args:
        body (SignInForm):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | ApiError | str
    """

    return sync_detailed(
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    body: SignInForm,
) -> Response[Any | ApiError | str]:
    """`POST /sign-in` (the sign-in page's button, `code=…` as a form): uses
    up the link, opens a session and goes to the profiles. Refused from
    another site (`Sec-Fetch-Site`, `Origin`): a page elsewhere could
    otherwise sign a visitor in as its own author (login CSRF).

    Args:
        body (SignInForm):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | ApiError | str]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
    body: SignInForm,
) -> Any | ApiError | str | None:
    """`POST /sign-in` (the sign-in page's button, `code=…` as a form): uses
    up the link, opens a session and goes to the profiles. Refused from
    another site (`Sec-Fetch-Site`, `Origin`): a page elsewhere could
    otherwise sign a visitor in as its own author (login CSRF).

    Args:
        body (SignInForm):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | ApiError | str
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
        )
    ).parsed
