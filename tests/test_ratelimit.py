"""The one rate-limit helper (research/net/ratelimit.py, pyrate-limiter), timed for
real: the LLM client's per-model RPM limit and the search backends' per-second limits use it."""

from __future__ import annotations

import threading
import time

import pytest

from research.llm.client import acquire_rpm
from research.llm.errors import LLMError
from research.net import ratelimit


def test_at_most_count_per_window_across_threads():
    starts: list[float] = []
    t0 = time.monotonic()

    def worker() -> None:
        ratelimit.acquire("test:threads", 5, 1.0)
        starts.append(time.monotonic() - t0)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    starts.sort()
    assert starts[4] < 0.5 and starts[5] >= 0.99  # five at once, the sixth a window later


def test_timeout_and_off():
    assert ratelimit.acquire("test:timeout", 1, 60.0, timeout_s=0)
    t0 = time.monotonic()
    assert not ratelimit.acquire(
        "test:timeout", 1, 60.0, timeout_s=0.3
    )  # the next slot is a minute away
    assert 0.25 <= time.monotonic() - t0 < 5
    assert not ratelimit.acquire("test:timeout", 1, 60.0, timeout_s=0)
    assert ratelimit.shared_limiter("test:off", 0, 60.0) is None
    assert all(ratelimit.acquire("test:off", 0, 60.0) for _ in range(100))
    assert ratelimit.shared_limiter("test:same", 2, 1.0) is ratelimit.shared_limiter(
        "test:same", 2, 1.0
    )


def test_llm_rpm_limit_raises_past_the_deadline(monkeypatch):
    monkeypatch.setenv("RESEARCH_LLM_RPM", "1")
    acquire_rpm("test/rpm-model", time.monotonic() + 5)
    with pytest.raises(LLMError) as exc:
        acquire_rpm("test/rpm-model", time.monotonic() + 0.2)
    assert exc.value.code == "rate_limited" and "RESEARCH_LLM_RPM" in exc.value.message


def test_take_or_wait_never_blocks_and_says_how_long():
    """The HTTP API's form: a free slot is taken at once (0.0); past the limit the answer is the
    wait until the oldest slot leaves the window, at once, without blocking."""
    t0 = time.monotonic()
    waits = [ratelimit.take_or_wait("test:take", 3, 2.0) for _ in range(4)]
    assert waits[:3] == [0.0, 0.0, 0.0]
    assert 1.5 < waits[3] <= 2.1 and time.monotonic() - t0 < 0.5
    assert ratelimit.take_or_wait("test:off", 0, 60.0) == 0.0  # a limit of 0 is off
