"""Shared HTTP plumbing of the web search backends: one httpx client factory, per-backend rate
limits, tenacity retries that honour ``Retry-After``, env-overridable base URLs, and the
``BackendError`` every backend raises.

* Timeouts: ``RESEARCH_HTTP_TIMEOUT`` seconds (default 15 s read, 5 s connect).
* Retries: ``RESEARCH_HTTP_RETRIES`` attempts in all (default 3) on transport errors, timeouts,
  HTTP 429 and 5xx. The wait is the server's ``Retry-After`` (seconds or an HTTP date, capped at
  30 s) when given, else exponential back-off with jitter (0.5 s, 1 s, 2 s ..., max 8 s).
* Rate limits (requests/s, per backend, process-wide): NCBI E-utilities 3/s without
  ``NCBI_API_KEY`` and 10/s with one (NCBI "API Keys" policy); other backends 5/s; at most that
  many requests in any one-second window (``research.net.ratelimit``, pyrate-limiter).
* Base URLs: ``RESEARCH_<BACKEND>_URL`` (e.g. ``RESEARCH_PUBMED_URL``) replaces a backend's
  default base URL, so tests point backends at a loopback server.

API keys are passed only in request headers/params and never appear in errors or logs:
``BackendError`` messages carry the backend, HTTP status and a short body excerpt, never the URL
query string.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import httpx
from tenacity import (
    RetryCallState,
    Retrying,
    retry_if_exception_type,
    retry_if_result,
    stop_after_attempt,
    wait_exponential_jitter,
)

from research.config import backend_url_overrides, env_value, load_settings
from research.errors import InputError, ResearchError
from research.net.ratelimit import acquire
from research.net.retry_after import parse_retry_after

USER_AGENT = "ResearchDesk/0.1 (+https://github.com/; research tool)"
MAX_RETRY_AFTER_S = 30.0
DEFAULT_RATE = 5.0  # requests/s for backends without a published limit


class BackendError(ResearchError):
    """A search backend failed. ``reason`` is one of ``missing_key``, ``timeout``, ``quota``
    (HTTP 429/402 or a quota message), ``http_error`` (other 4xx/5xx), ``network``,
    ``bad_response`` (unparseable body), ``not_configured``. ``backend`` names the backend."""

    code = "search_backend_error"

    def __init__(
        self, backend: str, reason: str, message: str, *, status: int | None = None
    ) -> None:
        super().__init__(f"{backend}: {message}")
        self.backend, self.reason, self.status = backend, reason, status


def env_url(backend: str, default: str) -> str:
    """Base URL of ``backend``: ``RESEARCH_<BACKEND>_URL`` when set, else ``default`` (no
    trailing slash)."""
    return (backend_url_overrides().get(backend.lower()) or default).rstrip("/")


def require_key(backend: str, var: str) -> str:
    """The API key in environment variable ``var``.

    Raises:
        BackendError (reason ``missing_key``): the variable is unset or empty; the message
            names the variable to set.
    """

    value = (env_value(var) or "").strip()
    if not value:
        raise BackendError(
            backend,
            "missing_key",
            f"the {backend} backend needs an API key: set the environment variable {var}",
        )
    return value


def timeout() -> httpx.Timeout:
    """Request timeout: ``RESEARCH_HTTP_TIMEOUT`` seconds (default 15), connect at most 5 s."""
    total = load_settings().http_timeout_s
    return httpx.Timeout(total, connect=min(5.0, total))


def make_client(**kwargs) -> httpx.Client:
    """A new ``httpx.Client`` with the shared timeout and user agent (``kwargs`` override).
    Thread-safe; close it (or use ``with``) when done."""
    opts: dict[str, Any] = {
        "timeout": timeout(),
        "headers": {"User-Agent": USER_AGENT},
        "follow_redirects": True,
    }
    opts.update(kwargs)
    return httpx.Client(**opts)


_CLIENT: httpx.Client | None = None
_CLIENT_LOCK = threading.Lock()


def shared_client() -> httpx.Client:
    """The process-wide API client (connection pooling across backends and threads)."""
    global _CLIENT
    with _CLIENT_LOCK:
        if _CLIENT is None or _CLIENT.is_closed:
            _CLIENT = make_client()
        return _CLIENT


# ---------------------------------------------------------------- rate limits
def rate_for(backend: str) -> float:
    """Requests/s allowed for ``backend`` (NCBI: 10 with ``NCBI_API_KEY``, else 3)."""
    if backend == "pubmed":
        return 10.0 if load_settings().ncbi_api_key else 3.0
    return DEFAULT_RATE


def wait_turn(backend: str) -> None:
    """Block until ``backend``'s process-wide limit (``rate_for``, requests/s) lets one more
    request start (``research.net.ratelimit``, pyrate-limiter: at most that many in any second)."""
    acquire(f"search:{backend}", rate_for(backend), 1.0)


# ---------------------------------------------------------------- requests with retries
def _attempts() -> int:
    return max(1, load_settings().http_retries)


def retry_after_s(response: httpx.Response) -> float | None:
    """Seconds from a ``Retry-After`` header (delta-seconds or HTTP date), capped at 30 s;
    None when absent or unreadable."""
    secs = parse_retry_after(response.headers.get("Retry-After"))
    return None if secs is None else min(MAX_RETRY_AFTER_S, secs)


def _retryable(response: httpx.Response) -> bool:
    return response.status_code == 429 or response.status_code >= 500


_backoff = wait_exponential_jitter(multiplier=0.5, max=8.0, jitter=0.25)


def _wait(state: RetryCallState) -> float:
    outcome = state.outcome
    if outcome is not None and not outcome.failed:
        after = retry_after_s(outcome.result())
        if after is not None:
            return after
    return _backoff(state)


def request(
    backend: str,
    method: str,
    url: str,
    *,
    client: httpx.Client | None = None,
    on_retry: Callable[[RetryCallState], None] | None = None,
    **kwargs,
) -> httpx.Response:
    """Send one API request with the backend's rate limit and retries; returns a 2xx/3xx
    response.

    Raises:
        BackendError: ``timeout`` (every attempt timed out), ``network`` (connection errors),
            ``quota`` (429 after retries, or 402), ``http_error`` (other status ≥ 400; the
            message carries the status and ≤ 200 chars of the body).
    """
    client = client or shared_client()

    def send() -> httpx.Response:
        wait_turn(backend)
        return client.request(method, url, **kwargs)

    retrying = Retrying(
        stop=stop_after_attempt(_attempts()),
        wait=_wait,
        reraise=True,
        retry=retry_if_exception_type(httpx.TransportError) | retry_if_result(_retryable),
        before_sleep=on_retry,
        retry_error_callback=lambda state: state.outcome.result() if state.outcome else None,
    )  # last 429/5xx response (or re-raise)
    try:
        response = retrying(send)
    except httpx.TimeoutException as exc:
        raise BackendError(
            backend, "timeout", f"timed out after {_attempts()} attempts ({type(exc).__name__})"
        ) from None
    except httpx.TransportError as exc:
        raise BackendError(
            backend, "network", f"cannot reach the service ({type(exc).__name__})"
        ) from None
    if response.status_code >= 400:
        body = " ".join(response.text[:200].split())
        reason = "quota" if response.status_code in (402, 429) else "http_error"
        raise BackendError(
            backend, reason, f"HTTP {response.status_code}: {body}", status=response.status_code
        )
    return response


def get_json(backend: str, url: str, *, method: str = "GET", **kwargs) -> object:
    """``request(backend, method, url, ...)`` decoded as JSON.

    Raises:
        BackendError: as ``request``; ``bad_response`` when the body is not JSON.
    """
    response = request(backend, method, url, **kwargs)
    try:
        return response.json()
    except ValueError:
        raise BackendError(
            backend,
            "bad_response",
            f"expected JSON, got {response.headers.get('content-type', '?')}",
        ) from None


def clean_query(query: object) -> str:
    """``query`` with whitespace collapsed, as every backend sends it.

    Raises:
        InputError: the query is not a string or is blank.
    """
    if not isinstance(query, str) or not query.strip():
        raise InputError("search query is empty: type some words to search for")
    return " ".join(query.split())
