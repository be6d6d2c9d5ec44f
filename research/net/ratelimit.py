"""Process-wide rate limits, one library for all of them: pyrate-limiter.

Three callers share it: the LLM client (``RESEARCH_LLM_RPM`` call starts per minute per model,
``research.llm.client``) and the web search backends (requests per second per backend; NCBI
E-utilities 3/s without a key and 10/s with one, ``research.search.http``) and the HTTP API
(``RESEARCH_API_RATE_PER_MIN`` requests per minute per token, ``research.api.auth``, which
refuses at once with the wait from :func:`take_or_wait` instead of blocking). Each named limit is
one pyrate-limiter ``Limiter`` kept for the process (thread-safe, in memory), so every run and
thread in the process shares it.

Semantics (pyrate-limiter's leaky bucket over a sliding window): at most ``count`` acquisitions
in any ``per_s``-second window; a caller blocks until it fits, or up to ``timeout_s`` seconds
and then gets False. A non-integer ``count`` becomes one acquisition per ``per_s / count`` s.
A ``count`` ≤ 0 is no limit.
"""

from __future__ import annotations

import threading

from pyrate_limiter import Limiter, Rate, RateItem

_LIMITERS: dict[tuple[str, float, float], Limiter] = {}
_LOCK = threading.Lock()


def _rate(count: float, per_s: float) -> Rate:
    if float(count).is_integer():
        return Rate(int(count), max(1, round(per_s * 1000)))
    return Rate(1, max(1, round(per_s * 1000 / count)))


def shared_limiter(name: str, count: float, per_s: float) -> Limiter | None:
    """The process-wide limiter ``name`` allowing ``count`` acquisitions per ``per_s`` seconds
    (created on first use; a new one when the rate changes), or None when ``count`` ≤ 0 (off)."""
    if count <= 0:
        return None
    with _LOCK:
        key = (name, float(count), float(per_s))
        if key not in _LIMITERS:
            _LIMITERS[key] = Limiter(_rate(count, per_s))
        return _LIMITERS[key]


def acquire(name: str, count: float, per_s: float, *, timeout_s: float | None = None) -> bool:
    """Take one slot of limit ``name`` (``count`` per ``per_s`` s), blocking until it is free.

    Args:
        timeout_s: give up after this many seconds (≤ 0: only take a slot free now); None waits
            as long as needed.

    Returns:
        True when a slot was taken (always for a limit that is off), False on timeout.
    """
    limiter = shared_limiter(name, count, per_s)
    if limiter is None:
        return True
    if timeout_s is None:
        return bool(limiter.try_acquire(name))
    if timeout_s <= 0:
        return bool(limiter.try_acquire(name, blocking=False))
    return bool(limiter.try_acquire(name, timeout=timeout_s))


def take_or_wait(name: str, count: float, per_s: float) -> float:
    """Take one slot of limit ``name`` (``count`` per ``per_s`` s) if one is free now, without
    blocking.

    Returns:
        0.0 when a slot was taken (always for a limit that is off); else the seconds until a
        slot frees up (> 0; for an HTTP ``Retry-After``).
    """
    limiter = shared_limiter(name, count, per_s)
    if limiter is None or limiter.try_acquire(name, blocking=False):
        return 0.0
    try:
        # the failed put above recorded which rate failed: the bucket knows the wait
        bucket = limiter.buckets()[0]
        item = limiter.bucket_factory.wrap_item(name, 1)
        wait_ms = bucket.waiting(item) if isinstance(item, RateItem) else None
        if isinstance(wait_ms, int) and wait_ms > 0:
            return wait_ms / 1000
    except (IndexError, AttributeError, TypeError):
        pass
    return per_s / count  # one slot's share of the window: a lower bound of the wait
