"""Lognormal latency of the loopback LLM server (bench item 1 under realistic latency)."""

from __future__ import annotations

import math
import statistics
import time

import httpx

from research.devtools.loopback_llm import LoopbackLLM


def _body(i: int) -> dict:
    return {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": f"question {i}"}]}


def test_fixed_latency_by_default():
    srv = LoopbackLLM(latency_ms=300)
    assert {srv.delay_s(_body(i)) for i in range(20)} == {0.3}


def test_lognormal_median_shape_and_determinism():
    srv = LoopbackLLM(latency_ms=300, latency_sigma=0.8, latency_seed=14)
    draws = [srv.delay_s(_body(i)) for i in range(4000)]
    assert abs(statistics.median(draws) - 0.3) < 0.02
    logs = [math.log(d / 0.3) for d in draws]
    assert abs(statistics.pstdev(logs) - 0.8) < 0.05  # σ of log-latency
    again = LoopbackLLM(latency_ms=300, latency_sigma=0.8, latency_seed=14)
    assert [again.delay_s(_body(i)) for i in range(50)] == draws[:50]  # same call, same delay
    other = LoopbackLLM(latency_ms=300, latency_sigma=0.8, latency_seed=15)
    assert [other.delay_s(_body(i)) for i in range(50)] != draws[:50]


def test_server_waits_the_drawn_delay():
    with LoopbackLLM(latency_ms=200, latency_sigma=0.8, latency_seed=3) as srv:
        body = _body(7)
        want = srv.delay_s(body)
        t0 = time.perf_counter()
        resp = httpx.post(
            f"{srv.url}/chat/completions",
            json=body,
            timeout=30,
            headers={"Authorization": "Bearer sk-test"},
        )
        took = time.perf_counter() - t0
    assert resp.status_code == 200
    assert took >= want - 0.01
