"""One LLM call through ``litellm.completion`` that never waits forever and never reads past
its bound.

- the reply is streamed (``stream=True``) and read at most to ``max_tokens`` (tokens, the
  step's bound, ``research.llm.steps.StepSpec.max_tokens``): ``max_tokens`` is sent, and a
  server that ignores it is cut off by the client at the bound (``finish_reason`` ``"length"``,
  as a server reports it), so a rambling reply neither runs on nor holds a one-slot server;
- each wait for the server's next bytes (the first token, then each next one) is bounded by
  ``RESEARCH_LLM_TIMEOUT_S`` (s, default 60): a slow but steady reply is not a time-out;
- a call first takes one of its model's process-wide slots (``research.llm.slots``,
  ``RESEARCH_LLM_CONCURRENCY`` per model, 1 for a local endpoint): the wait for a slot costs no
  time-out and no deadline; it is bounded by ``RESEARCH_LLM_QUEUE_S`` (s, default 3600), then
  fails with code ``queue_timeout``; the slot is held only while a request is in flight;
- retries with exponential backoff + jitter (tenacity ``wait_exponential_jitter``, initial
  ``RESEARCH_LLM_BACKOFF_S`` s, default 1, capped at 30 s) on 429, 5xx, timeouts, connection
  errors and malformed provider replies; a provider's ``Retry-After`` replaces the backoff
  (capped at 60 s); at most ``RESEARCH_LLM_MAX_ATTEMPTS`` attempts (default 6) and
  ``RESEARCH_LLM_DEADLINE_S`` s in all (default 600; time queued for a slot not counted);
- one process-wide requests-per-minute limit per model (``RESEARCH_LLM_RPM``, default 500;
  0 = off; ``research.net.ratelimit``, pyrate-limiter), shared by every run in the process.

The provider's own client never retries (``max_retries=0``): tenacity does, so retries are
counted. Keys: litellm reads the provider env var at call time; ``api_key`` is only passed
when it came from secrets.toml or is the placeholder of a local model (``models.api_key_for``).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tenacity import (
    RetryCallState,
    Retrying,
    retry_if_exception,
)

from research.config import load_settings
from research.llm.errors import LLMError, map_exception
from research.llm.model_map import litellm as load_litellm
from research.llm.slots import slots
from research.llm.tokens import count_tokens
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
    max_tokens: int | None = None  # the bound the reply was read to (tokens)
    queued_s: float = 0.0  # s waited for a slot of the model (research.llm.slots)

    def to_dict(self) -> dict[str, Any]:
        return {
            "content": self.content,
            "tool_calls": self.tool_calls,
            "finish_reason": self.finish_reason,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cached_prompt_tokens": self.cached_prompt_tokens,
            "model": self.model,
            "max_tokens": self.max_tokens,
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


def _delta_text(chunk: Any) -> str:
    """The text a stream chunk adds (content and tool-call arguments), for the bound."""
    choices = getattr(chunk, "choices", None) or []
    if not choices:
        return ""
    delta = getattr(choices[0], "delta", None)
    text = str(getattr(delta, "content", None) or "")
    for call in getattr(delta, "tool_calls", None) or []:
        fn = getattr(call, "function", None)
        text += str(getattr(fn, "arguments", None) or "")
    return text


def _close(stream: Any) -> None:
    """Hang up on a stream read no further (the server sees the client leave and stops)."""
    for obj in (getattr(stream, "completion_stream", None), stream):
        close = getattr(obj, "close", None)
        if callable(close):
            try:
                close()
            except Exception:  # noqa: BLE001, S110 - the reply is already in hand
                pass
            return


def read_stream(
    stream: Any, messages: list[dict[str, Any]], model: str, max_tokens: int | None
) -> CallResult:
    """Read a ``litellm.completion(stream=True)`` reply to its end or to ``max_tokens`` (tokens,
    counted as ``research.llm.tokens.count_tokens`` counts them), whichever comes first, and
    build the result with ``litellm.stream_chunk_builder``. A reply cut at the bound has
    ``finish_reason`` ``"length"`` and ``completion_tokens`` ≤ ``max_tokens``.

    Raises:
        LLMError (``provider_error``, retryable): the stream ended with no chunk.
    """
    litellm = load_litellm()
    chunks: list[Any] = []
    counted, cut = 0, False
    try:
        for chunk in stream:
            n = count_tokens(_delta_text(chunk)) if max_tokens else 0
            if max_tokens and counted + n > max_tokens:
                cut = True
                break
            counted += n
            chunks.append(chunk)
    finally:
        if cut:
            _close(stream)
    if not chunks:
        raise LLMError(f"Empty reply stream from {model}", code="provider_error", retryable=True)
    resp = litellm.stream_chunk_builder(chunks, messages=messages)
    if resp is None:
        raise LLMError(f"Empty reply stream from {model}", code="provider_error", retryable=True)
    result = _parse(resp, model)
    if cut:
        result.finish_reason = "length"
        result.completion_tokens = counted
    if not result.prompt_tokens:
        result.prompt_tokens = count_tokens(
            "\n".join(str(m.get("content") or "") for m in messages)
        )
    result.max_tokens = max_tokens
    return result


def complete(
    model: str,
    messages: list[dict[str, Any]],
    *,
    response_format: Any = None,
    tools: list[dict[str, Any]] | None = None,
    max_tokens: int | None = None,
    on_wait: Callable[[int, int], object] | None = None,
    api_key: str | None = None,
) -> CallResult:
    """Call ``litellm.completion`` with retries, streamed and read to ``max_tokens`` (module
    doc). ``on_wait(n, change)``: called with the number of calls waiting for the model's slots
    when this call starts (+1) and stops (-1) waiting (the run page's "waiting for the model"). Returns the
    parsed result with ``retries`` (failed attempts), ``latency_s`` and ``queued_s``.

    Raises:
        LLMError: the mapped error of the last attempt (non-retryable at once; retryable after
            the attempts/deadline run out; ``queue_timeout`` when no slot came within
            ``RESEARCH_LLM_QUEUE_S``); ``.retries`` holds the failed attempts.
    """
    litellm = load_litellm()
    settings = load_settings()
    timeout_s, deadline_s, attempts, queue_s = (
        settings.llm_timeout_s,
        settings.llm_deadline_s,
        settings.llm_max_attempts,
        settings.llm_queue_s,
    )
    queued = [0.0]  # s spent waiting for a slot: not part of the deadline
    t_start = time.monotonic()

    def deadline() -> float:
        return t_start + queued[0] + deadline_s

    errors: list[str] = []
    kwargs: dict[str, Any] = {
        "model": model,
        "messages": messages,
        "timeout": timeout_s,
        "max_retries": 0,
        "stream": True,
        "stream_options": {"include_usage": True},
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
        acquire_rpm(model, deadline())
        slot = slots(model)
        t_queue = time.monotonic()
        got = slot.acquire(queue_s, on_wait)
        queued[0] += time.monotonic() - t_queue
        if not got:
            errors.append("queue_timeout")
            raise LLMError(
                f"No free slot of {model} within RESEARCH_LLM_QUEUE_S={queue_s:g} s "
                f"({slot.size} call(s) at once; RESEARCH_LLM_CONCURRENCY).",
                code="queue_timeout",
            )
        t0 = time.monotonic()
        try:
            stream = litellm.completion(**kwargs)
            result = read_stream(stream, messages, model, max_tokens)
        except LLMError as exc:
            errors.append(exc.code)
            raise
        except (AttributeError, IndexError, TypeError) as exc:
            errors.append("provider_error")
            raise LLMError(
                f"Malformed reply from {model}: {exc}", code="provider_error", retryable=True
            ) from exc
        except Exception as exc:
            err = map_exception(exc, model)
            errors.append(err.code)
            raise err from exc
        finally:
            slot.release()
        result.latency_s = round(time.monotonic() - t0, 4)
        result.queued_s = round(queued[0], 4)
        return result

    def stop(state: RetryCallState) -> bool:
        """Out of attempts, or past the deadline (queued time excluded)."""
        return state.attempt_number >= max(1, attempts) or time.monotonic() >= deadline()

    retrying = Retrying(
        retry=retry_if_exception(lambda e: isinstance(e, LLMError) and e.retryable),
        stop=stop,
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
