"""One LLM call through ``litellm.completion`` that never waits forever.

- per-attempt timeout ``RESEARCH_LLM_TIMEOUT_S`` (s, default 60);
- retries with exponential backoff + jitter (tenacity ``wait_exponential_jitter``, initial
  ``RESEARCH_LLM_BACKOFF_S`` s, default 1, capped at 30 s) on 429, 5xx, timeouts, connection
  errors and malformed provider replies; a provider's ``Retry-After`` replaces the backoff
  (capped at 60 s); at most ``RESEARCH_LLM_MAX_ATTEMPTS`` attempts (default 6) and
  ``RESEARCH_LLM_DEADLINE_S`` s in all (default 600);
- one process-wide requests-per-minute limit per model (``RESEARCH_LLM_RPM``, default 500;
  0 = off; ``research.net.ratelimit``, pyrate-limiter), shared by every run in the process;
- the caller's semaphore (the per-run concurrency limit) is held only while a request is in
  flight, never while backing off.

The provider's own client never retries (``max_retries=0``): tenacity does, so retries are
counted. Keys: litellm reads the provider env var at call time; ``api_key`` is only passed
when it came from secrets.toml (``models.api_key_for``).
"""

from __future__ import annotations

import random
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from tenacity import (
    RetryCallState,
    Retrying,
    retry_if_exception,
    stop_after_attempt,
    stop_after_delay,
)

from research.config import load_settings
from research.llm.errors import LLMError, map_exception
from research.llm.model_map import litellm as load_litellm
from research.net.ratelimit import acquire


@dataclass
class CallResult:
    """A finished call. Units: tokens; ``latency_s`` wall seconds of the successful attempt."""

    content: str
    # [{"id", "name", "arguments": str}]
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    finish_reason: str = "stop"
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_prompt_tokens: int = 0  # of prompt_tokens, served from the provider's prompt cache
    latency_s: float = 0.0
    retries: int = 0
    model: str = ""
    errors: list[str] = field(default_factory=list)  # codes of failed attempts

    def to_dict(self) -> dict[str, Any]:
        return {
            "content": self.content,
            "tool_calls": self.tool_calls,
            "finish_reason": self.finish_reason,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cached_prompt_tokens": self.cached_prompt_tokens,
            "model": self.model,
        }


def acquire_rpm(model: str, deadline: float) -> None:
    """Take one of ``model``'s call starts under the process-wide requests-per-minute limit
    (``RESEARCH_LLM_RPM``; 0 = off) through ``research.net.ratelimit`` (pyrate-limiter), waiting
    at most until ``deadline`` (monotonic s).

    Raises:
        LLMError (code ``rate_limited``): no start was free before the deadline.
    """
    rpm = load_settings().llm_rpm
    if not acquire(f"llm:{model}", rpm, 60.0, timeout_s=deadline - time.monotonic()):
        raise LLMError(
            f"The requests-per-minute limit ({rpm:g}/min) would delay this call past its "
            "deadline; raise RESEARCH_LLM_RPM or lower concurrency.",
            code="rate_limited",
        )


def _wait(state: RetryCallState) -> float:
    """Backoff: Retry-After when given (≤ 60 s, plus ≤ 10 % jitter), else exponential + jitter."""
    exc = state.outcome.exception() if state.outcome else None
    ra: float | None = getattr(exc, "retry_after_s", None)  # LLMError.retry_after_s
    if ra is not None:
        ra = min(ra, 60.0)
        return ra + random.uniform(0, 0.1 * ra)
    base = load_settings().llm_backoff_s
    exp: float = min(30.0, base * (2 ** (state.attempt_number - 1)))
    return exp + random.uniform(0, base)


def _parse(resp: Any, model: str) -> CallResult:
    choice = resp.choices[0]
    msg = choice.message
    calls = [
        {"id": c.id, "name": c.function.name, "arguments": c.function.arguments or "{}"}
        for c in (getattr(msg, "tool_calls", None) or [])
    ]
    usage = getattr(resp, "usage", None)
    return CallResult(
        content=msg.content or "",
        tool_calls=calls,
        finish_reason=choice.finish_reason or "stop",
        prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
        completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
        cached_prompt_tokens=cached_tokens(usage),
        model=model,
    )


def cached_tokens(usage: Any) -> int:
    """Prompt tokens the provider served from its prompt cache, as litellm reports them:
    ``usage.prompt_tokens_details.cached_tokens`` (OpenAI, Gemini, and Anthropic's
    ``cache_read_input_tokens`` mapped there by litellm), else ``cache_read_input_tokens``; 0
    when the provider says nothing."""
    details = getattr(usage, "prompt_tokens_details", None)
    if isinstance(details, dict):
        n = details.get("cached_tokens")
    else:
        n = getattr(details, "cached_tokens", None)
    if not n:
        n = getattr(usage, "cache_read_input_tokens", None)
    try:
        return max(0, int(n or 0))
    except (TypeError, ValueError):
        return 0


def complete(
    model: str,
    messages: list[dict[str, Any]],
    *,
    response_format: Any = None,
    tools: list[dict[str, Any]] | None = None,
    max_tokens: int | None = None,
    semaphore: threading.Semaphore | None = None,
    api_key: str | None = None,
) -> CallResult:
    """Call ``litellm.completion`` with retries (module doc). Returns the parsed result with
    ``retries`` (failed attempts) and ``latency_s``.

    Raises:
        LLMError: the mapped error of the last attempt (non-retryable at once; retryable after
            the attempts/deadline run out); ``.retries`` holds the failed attempts.
    """
    litellm = load_litellm()
    settings = load_settings()
    timeout_s, deadline_s, attempts = (
        settings.llm_timeout_s,
        settings.llm_deadline_s,
        settings.llm_max_attempts,
    )
    deadline = time.monotonic() + deadline_s
    errors: list[str] = []
    kwargs: dict[str, Any] = {
        "model": model,
        "messages": messages,
        "timeout": timeout_s,
        "max_retries": 0,
    }
    if response_format is not None:
        kwargs["response_format"] = response_format
    if tools:
        kwargs["tools"] = tools
    if max_tokens:
        kwargs["max_tokens"] = max_tokens
    if api_key:
        kwargs["api_key"] = api_key

    def attempt() -> CallResult:
        acquire_rpm(model, deadline)
        if semaphore is not None and not semaphore.acquire(
            timeout=max(0.1, deadline - time.monotonic())
        ):
            raise LLMError(
                "No free LLM slot before the call's deadline (per-run concurrency limit).",
                code="timeout",
            )
        t0 = time.monotonic()
        try:
            resp = litellm.completion(**kwargs)
        except Exception as exc:
            err = map_exception(exc, model)
            errors.append(err.code)
            raise err from exc
        finally:
            if semaphore is not None:
                semaphore.release()
        try:
            result = _parse(resp, model)
        except (AttributeError, IndexError, TypeError) as exc:
            errors.append("provider_error")
            raise LLMError(
                f"Malformed reply from {model}: {exc}", code="provider_error", retryable=True
            ) from exc
        result.latency_s = round(time.monotonic() - t0, 4)
        return result

    retrying = Retrying(
        retry=retry_if_exception(lambda e: isinstance(e, LLMError) and e.retryable),
        stop=stop_after_attempt(max(1, attempts)) | stop_after_delay(deadline_s),
        wait=_wait,
        reraise=True,
    )
    try:
        result = retrying(attempt)
    except LLMError as exc:
        exc.retries = len(errors) - 1 if errors else 0  # type: ignore[attr-defined]  # read by the accounting
        exc.errors = list(errors)  # type: ignore[attr-defined]  # read by the accounting
        raise
    result.retries = len(errors)
    result.errors = errors
    return result
