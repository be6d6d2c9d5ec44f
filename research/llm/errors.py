"""The ONE place that maps litellm / openai / httpx exceptions to ``research.errors`` types.

Codes: ``rate_limited`` (429), ``provider_error`` (5xx, malformed provider reply, connection
error), ``timeout``, ``auth_error`` (401/403), ``bad_request`` (400/404/422),
``context_window`` (prompt too long), ``budget_exhausted``, ``invalid_output`` (reply fails
the step's schema after one re-ask), ``cassette_miss`` (replay has no answer for a request).
``LLMError.retryable`` says whether the client retries; ``retry_after_s`` carries the
provider's ``Retry-After`` (s) when it sent one.
"""

from __future__ import annotations

from research.errors import EngineError
from research.llm.model_map import litellm as load_litellm
from research.net.retry_after import parse_retry_after  # noqa: F401 - the one parser (re-exported)


class LLMError(EngineError):
    """An LLM call failed. Attributes: ``code``, ``retryable`` (bool), ``retry_after_s`` (s or
    None), ``status`` (HTTP status or None)."""

    code = "provider_error"

    def __init__(
        self,
        message: str,
        *,
        code: str | None = None,
        retryable: bool = False,
        retry_after_s: float | None = None,
        status: int | None = None,
    ) -> None:
        super().__init__(message, code=code)
        self.retryable = retryable
        self.retry_after_s = retry_after_s
        self.status = status


class BudgetExhausted(LLMError):
    """The run's USD or token budget is spent; no new call starts."""

    code = "budget_exhausted"


class InvalidOutput(LLMError):
    """The model's reply did not validate against the step's schema (after one re-ask)."""

    code = "invalid_output"


def _headers(exc: BaseException) -> dict[str, str]:
    for attr in ("litellm_response_headers", "headers"):
        h = getattr(exc, attr, None)
        if h:
            return {str(k).lower(): str(v) for k, v in dict(h).items()}
    resp = getattr(exc, "response", None)
    h = getattr(resp, "headers", None)
    return {str(k).lower(): str(v) for k, v in dict(h).items()} if h else {}


def retry_after_of(exc: BaseException) -> float | None:
    """Seconds the provider asked us to wait (``retry-after-ms`` or ``retry-after``), or None."""
    h = _headers(exc)
    if "retry-after-ms" in h:
        try:
            return max(0.0, float(h["retry-after-ms"]) / 1000)
        except ValueError:
            pass
    return parse_retry_after(h.get("retry-after"))


def map_exception(exc: BaseException, model: str = "") -> LLMError:
    """Map any exception raised by ``litellm.completion`` to an ``LLMError`` with a code.

    Order matters: litellm's classes subclass openai's, and ContextWindowExceededError
    subclasses BadRequestError.
    """
    litellm = load_litellm()
    if isinstance(exc, LLMError):
        return exc
    status = getattr(exc, "status_code", None)
    text = str(exc)[:500]
    who = f" from {model}" if model else ""
    if isinstance(exc, litellm.ContextWindowExceededError):
        return LLMError(
            f"The prompt is longer than {model or 'the model'}'s context window: {text}",
            code="context_window",
            status=status,
        )
    if isinstance(exc, (litellm.AuthenticationError, litellm.PermissionDeniedError)):
        return LLMError(
            f"The provider rejected the API key{who}; set the provider's key env var "
            f"(e.g. OPENAI_API_KEY) to a valid key.",
            code="auth_error",
            status=status,
        )
    if isinstance(exc, litellm.RateLimitError):
        return LLMError(
            f"Rate limited{who}: {text}",
            code="rate_limited",
            retryable=True,
            retry_after_s=retry_after_of(exc),
            status=429,
        )
    if isinstance(exc, litellm.Timeout):
        return LLMError(
            f"The call{who} timed out: {text}", code="timeout", retryable=True, status=status
        )
    if isinstance(exc, litellm.APIConnectionError):
        return LLMError(
            f"Could not reach the provider{who}: {text}",
            code="provider_error",
            retryable=True,
            status=status,
        )
    if isinstance(
        exc,
        (
            litellm.InternalServerError,
            litellm.ServiceUnavailableError,
            litellm.BadGatewayError,
            litellm.APIResponseValidationError,
        ),
    ):
        return LLMError(
            f"Provider error{who}: {text}",
            code="provider_error",
            retryable=True,
            retry_after_s=retry_after_of(exc),
            status=status,
        )
    if isinstance(
        exc,
        (
            litellm.BadRequestError,
            litellm.NotFoundError,
            litellm.UnprocessableEntityError,
            litellm.UnsupportedParamsError,
        ),
    ):
        return LLMError(
            f"The provider refused the request{who}: {text}", code="bad_request", status=status
        )
    if isinstance(exc, litellm.APIError) or (status is not None and status >= 500):
        return LLMError(
            f"Provider error{who}: {text}",
            code="provider_error",
            retryable=True,
            retry_after_s=retry_after_of(exc),
            status=status,
        )
    if isinstance(exc, (TimeoutError,)):
        return LLMError(f"The call{who} timed out: {text}", code="timeout", retryable=True)
    if isinstance(exc, (ConnectionError, ValueError)):  # json decode of a broken body, resets
        return LLMError(
            f"Provider error{who}: {type(exc).__name__}: {text}",
            code="provider_error",
            retryable=True,
        )
    return LLMError(f"LLM call failed{who}: {type(exc).__name__}: {text}", code="provider_error")
