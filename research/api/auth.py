"""Bearer-token authentication and the per-token rate limit of the HTTP API.

Every endpoint but ``/health`` depends on :func:`require_token`: the ``Authorization: Bearer
<token>`` header is checked against the tokens in Redis (``research.store.tokens``: the
SHA-256 digest is looked up, the token itself is never stored), and each token may make
``RESEARCH_API_RATE_PER_MIN`` requests per minute (``research.net.ratelimit``, the project's one
limiter; 0 = no limit). A missing, unknown or revoked token is a 401 with
``WWW-Authenticate: Bearer``; a token past its rate is a 429 with ``Retry-After`` (whole
seconds). A server-sent event stream counts as one request however long it lasts.

Scopes (``research.store.tokens.SCOPES``): each endpoint depends on :func:`needs` with the
least scope it takes — ``read`` to list, show and download, ``run`` to start runs and to ask,
approve and cancel the runs the token started (:func:`check_own`), ``admin`` to delete runs, act
on any run and manage corpora. A token without the scope gets 403 (code ``insufficient_scope``,
or ``not_your_run``) saying which scope the request needs.
"""

from __future__ import annotations

import math
from typing import Annotated, Any

from fastapi import Depends, HTTPException, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from research.config import load_settings
from research.net.ratelimit import take_or_wait
from research.store import open_store
from research.store.tokens import DEFAULT_SCOPE, allows

RATE_WINDOW_S = 60.0
bearer = HTTPBearer(
    auto_error=False,
    scheme_name="token",
    description="An API token from `research token create NAME`.",
)


class ApiError(HTTPException):
    """An HTTP error with a stable ``code`` in its body (``{"detail", "code"}``)."""

    def __init__(
        self, status_code: int, detail: str, code: str, headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(status_code=status_code, detail=detail, headers=headers)
        self.code = code


def _unauthorized(detail: str) -> ApiError:
    return ApiError(401, detail, "unauthorized", headers={"WWW-Authenticate": "Bearer"})


def check_rate(name: str) -> None:
    """Take one request of token ``name``'s per-minute allowance.

    Raises:
        ApiError: 429 (code ``rate_limited``) with ``Retry-After`` when it is used up.
    """
    rate = load_settings().api_rate_per_min
    wait_s = take_or_wait(f"api-token:{name}", rate, RATE_WINDOW_S)
    if wait_s > 0:
        retry = max(1, math.ceil(wait_s))
        raise ApiError(
            429,
            f"Token '{name}' made more than {rate:g} requests in a minute; retry in {retry} s "
            "(RESEARCH_API_RATE_PER_MIN sets the limit).",
            "rate_limited",
            headers={"Retry-After": str(retry)},
        )


def require_token(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
) -> str:
    """The name of the request's valid token (also kept on ``request.state.token_name``).

    Raises:
        ApiError: 401 without a bearer token or with one that does not exist (never created, or
            revoked); 429 past the token's rate (see :func:`check_rate`).
        StoreError: Redis unreachable (a 503).
    """
    if credentials is None or credentials.scheme.lower() != "bearer":
        raise _unauthorized(
            "Missing bearer token: send 'Authorization: Bearer <token>' "
            "(create one with `research token create NAME`)."
        )
    tokens = open_store().tokens
    name = tokens.verify(credentials.credentials.strip())
    if name is None:
        raise _unauthorized(
            "Invalid or revoked token: create a new one with `research token create NAME`."
        )
    check_rate(name)
    request.state.token_name = name
    request.state.token_scope = tokens.scope(name) or DEFAULT_SCOPE
    return name


def _scope_error(request: Request, needed: str, what: str) -> ApiError:
    name = getattr(request.state, "token_name", "?")
    scope = getattr(request.state, "token_scope", "?")
    return ApiError(
        403,
        f"Token '{name}' has scope {scope}; {what} needs scope {needed}"
        f"{' or admin' if needed != 'admin' else ''} "
        f"(research token create NAME --scope {needed}).",
        "insufficient_scope",
    )


def needs(scope: str, what: str) -> Any:
    """A dependency that lets the request through only for a token of ``scope`` or above.

    Args:
        scope: ``read``, ``run`` or ``admin``.
        what: the action in words, for the 403's message ("starting a run").
    Raises (from the dependency):
        ApiError: 403 (code ``insufficient_scope``).
    """

    def dependency(request: Request, _: Annotated[str, Depends(require_token)]) -> None:
        if not allows(request.state.token_scope, scope):
            raise _scope_error(request, scope, what)

    return Depends(dependency)


def check_own(request: Request, run_id: str, what: str) -> None:
    """Let a ``run`` token act only on the runs it started (an ``admin`` token on any).

    Raises:
        ApiError: 403, code ``not_your_run``.
    """
    if allows(getattr(request.state, "token_scope", "read"), "admin"):
        return
    name = getattr(request.state, "token_name", None)
    if open_store().tokens.owner(run_id) != name:
        raise ApiError(
            403,
            f"Run {run_id} was not started by token '{name}'; {what} a run another token (or "
            "the dashboard, or the CLI) started needs an admin token.",
            "not_your_run",
        )
