"""A loopback OpenAI-compatible chat-completions server for tests and benchmarks.

Real HTTP on ``127.0.0.1`` (random port), stdlib ``ThreadingHTTPServer`` in a daemon thread.
Serves ``POST /v1/chat/completions`` and ``POST /chat/completions`` with ``chat.completion``
bodies shaped like the real payloads in ``shared/data/api_fixtures/openai/extracted/`` (id,
object, created, model, system_fingerprint, usage with prompt/completion tokens and details,
``choices[0].message`` with ``content`` or ``tool_calls``, ``finish_reason``).

API (stable; benchmarks import it)::

    from research.devtools.loopback_llm import LoopbackLLM, Faults
    srv = LoopbackLLM(latency_ms=0, faults=Faults(rate=0.2, kinds=("429", "500"), seed=7,
                      retry_after_s=0.05)).start()
    srv.url          # "http://127.0.0.1:PORT/v1"  → OPENAI_API_BASE / api_base
    srv.requests     # count of POSTs received (faulted ones included)
    srv.ok           # replies delivered with HTTP 200 (bad_json/truncated included, hung ones not)
    srv.faults_sent  # {"429": n, ...}
    srv.stats()      # {"requests": n, "ok": n, "faults": {...}, "by_step": {...}}
    srv.cached_tokens  # prompt tokens reported as cache hits (with cache_min_tokens set)
    srv.stop()
    # or:  with LoopbackLLM() as srv: ...

``responder(request_body: dict) -> Reply`` decides each reply; the default
(``research.devtools.loopback_responder.default_responder``) recognises each engine step by
the ``[step: NAME]`` marker in the system prompt and builds valid JSON for the
step's schema from the ``<material>`` JSON in the user prompt, so a whole pipeline runs offline.

Fault kinds (``Faults.kinds``), drawn per request with a seeded ``random.Random``:
``"429"`` (a real OpenAI 429 body + ``Retry-After``), ``"500"``, ``"timeout"`` (hangs
``hang_s`` seconds before answering; clients must time out), ``"malformed"`` (HTTP 200 with a
body that is not JSON), ``"bad_json"`` (a valid completion whose content is not JSON),
``"truncated"`` (content cut in half, ``finish_reason: "length"``).

A request with ``"stream": true`` is answered as server-sent events
(``research.devtools.loopback_stream``). ``slots=N`` answers at most N requests at once, the
others waiting in the server's queue before any byte is sent (llama.cpp's server with one slot);
``endless=True`` never ends a streamed reply (it ignores ``max_tokens``), so only the client
can bound it. ``refuse_formats=("json_object",)`` answers a request whose ``response_format``
has one of those types with HTTP 400 and OpenAI's error body (a server that takes only
``json_schema``), and counts it in ``refused``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import random
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from research.devtools.loopback_responder import Reply, default_responder, step_of
from research.devtools.loopback_stream import endless_chunks, stream_events
from research.llm.tokens import count_tokens

__all__ = [
    "FAULT_KINDS",
    "Faults",
    "LoopbackLLM",
    "Reply",
    "completion_body",
    "prompt_text",
    "real_429_body",
]

FIXTURES = Path(__file__).resolve().parents[3] / "shared" / "data" / "api_fixtures" / "openai"
_FALLBACK_429 = {
    "error": {
        "message": "Rate limit reached for gpt-4o-mini in organization org-********** on "
        "tokens per min (TPM): Limit 10000, Used 9348, Requested 5086. Please try again "
        "in 26.604s.",
        "type": "tokens",
        "param": None,
        "code": "rate_limit_exceeded",
    }
}
FAULT_KINDS = ("429", "500", "timeout", "malformed", "bad_json", "truncated")


def real_429_body() -> dict:
    """The real OpenAI 429 body (``errors/openai_429_rate_limit_exceeded_tpm_2024.json``) when
    the shared fixtures are present, else an identical copy of its text."""
    path = FIXTURES / "errors" / "openai_429_rate_limit_exceeded_tpm_2024.json"
    try:
        return json.loads(path.read_text(encoding="utf-8"))["body"]
    except (OSError, ValueError, KeyError):
        return _FALLBACK_429


@dataclass
class Faults:
    """Fault injection: each request fails with probability ``rate`` with a kind drawn from
    ``kinds``; ``seed`` makes the sequence reproducible. ``retry_after_s`` is the 429's
    ``Retry-After`` (s, may be fractional); ``hang_s`` how long a ``timeout`` fault stalls (s)."""

    rate: float = 0.0
    kinds: tuple[str, ...] = ("429", "500", "timeout", "bad_json")
    seed: int = 0
    retry_after_s: float = 0.05
    hang_s: float = 3.0

    def __post_init__(self) -> None:
        unknown = set(self.kinds) - set(FAULT_KINDS)
        if unknown:
            raise ValueError(f"unknown fault kinds {sorted(unknown)}; use {FAULT_KINDS}")


def _count(text: str) -> int:
    """Token count reported in ``usage`` (cl100k_base, the same counter as the accounting)."""

    return max(1, count_tokens(text))


def common_prefix_len(a: str, b: str) -> int:
    """Length (characters) of the longest common prefix of ``a`` and ``b`` (binary search over
    slice comparisons)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def completion_body(model: str, reply: Reply, prompt_tokens: int, cached_tokens: int = 0) -> dict:
    """A ``chat.completion`` object shaped like the recorded OpenAI payloads (``cached_tokens``:
    the prompt tokens reported in ``usage.prompt_tokens_details.cached_tokens``)."""
    message: dict = {
        "role": "assistant",
        "content": reply.content,
        "refusal": None,
        "annotations": [],
    }
    out_text = reply.content or ""
    if reply.tool_calls:
        message["tool_calls"] = [
            {
                "id": f"call_{uuid.uuid4().hex[:24]}",
                "type": "function",
                "function": {"name": c["name"], "arguments": json.dumps(c.get("arguments", {}))},
            }
            for c in reply.tool_calls
        ]
        out_text += json.dumps(message["tool_calls"])
    finish = reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop")
    completion_tokens = _count(out_text)
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:29]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "service_tier": "default",
        "system_fingerprint": "fp_loopback",
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
            "prompt_tokens_details": {"cached_tokens": cached_tokens, "audio_tokens": 0},
            "completion_tokens_details": {
                "reasoning_tokens": 0,
                "audio_tokens": 0,
                "accepted_prediction_tokens": 0,
                "rejected_prediction_tokens": 0,
            },
        },
    }


def prompt_text(body: dict) -> str:
    """All message text of a request (for token counting and responders)."""
    parts = []
    for msg in body.get("messages", []):
        content = msg.get("content")
        if isinstance(content, list):
            content = " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
        parts.append(str(content or ""))
        for call in msg.get("tool_calls") or []:
            parts.append(json.dumps(call.get("function", {})))
    return "\n".join(parts)


class LoopbackLLM:
    """The server. Args: ``responder`` (request body → Reply; default: the engine responder),
    ``latency_ms`` (delay before every reply, ms), ``latency_sigma`` (0: the delay is fixed;
    > 0: lognormal with median ``latency_ms`` and shape σ, i.e. ``latency_ms · exp(σ·Z)``,
    Z ~ N(0, 1) drawn from ``latency_seed`` and the request's messages, so a given call gets the
    same delay whatever the order calls arrive in), ``faults`` (Faults or None), ``model``
    (reported model name; default: the request's). Thread-safe counters.

    Prompt caching (off by default: ``cached_tokens`` 0, as before): with ``cache_min_tokens``
    set, a request whose messages share a prefix with an earlier request of the same step is
    reported with that prefix's tokens as ``cached_tokens`` when they reach
    ``cache_min_tokens``, rounded down to ``cache_block_tokens`` — OpenAI's rule (automatic
    caching of prompts ≥ 1024 tokens in 128-token steps) with both numbers settable."""

    def __init__(
        self,
        responder: Callable[[dict], Reply] | None = None,
        *,
        latency_ms: float = 0.0,
        latency_sigma: float = 0.0,
        latency_seed: int = 0,
        faults: Faults | None = None,
        model: str | None = None,
        cache_min_tokens: int | None = None,
        cache_block_tokens: int = 128,
        slots: int | None = None,
        endless: bool = False,
        refuse_formats: tuple[str, ...] = (),
    ) -> None:
        self.responder = responder or default_responder
        self.refuse_formats = refuse_formats
        self.refused = 0  # requests answered 400 for their response_format
        self.latency_ms = latency_ms
        self.latency_sigma = latency_sigma
        self.latency_seed = latency_seed
        self.faults = faults or Faults()
        self.model = model
        self.cache_min_tokens = cache_min_tokens
        self.cache_block_tokens = cache_block_tokens
        self.slots = threading.Semaphore(slots) if slots else None
        self.endless = endless
        self.busy = 0  # requests being answered now
        self.max_busy = 0  # the most answered at once
        self.cached_tokens = 0
        self._seen: dict[str, list[str]] = {}  # step → earlier prompts (for prompt caching)
        self._rng = random.Random(self.faults.seed)
        self._lock = threading.Lock()
        self.requests = 0
        self.ok = 0
        self.faults_sent: dict[str, int] = {}
        self.by_step: dict[str, int] = {}
        self.bodies: list[dict] = []
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> LoopbackLLM:
        """Bind 127.0.0.1 on a free port and serve in a daemon thread. Returns self."""
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self._stopping.clear()
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="loopback-llm", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket (hanging requests are released)."""
        self._stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> LoopbackLLM:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("start() the server first")
        return self._server.server_address[1]

    @property
    def url(self) -> str:
        """Base URL for OpenAI clients: ``http://127.0.0.1:PORT/v1``."""
        return f"http://127.0.0.1:{self.port}/v1"

    def stats(self) -> dict:
        """``{"requests", "ok", "faults": {kind: n}, "by_step": {step: n}}``."""
        with self._lock:
            return {
                "requests": self.requests,
                "ok": self.ok,
                "faults": dict(self.faults_sent),
                "by_step": dict(self.by_step),
            }

    def reset_counts(self) -> None:
        with self._lock:
            self.requests, self.ok = 0, 0
            self.cached_tokens = 0
            self._seen.clear()
            self.faults_sent.clear()
            self.by_step.clear()
            self.bodies.clear()

    # ------------------------------------------------------------------ per request
    def delay_s(self, body: dict) -> float:
        """Seconds to wait before answering ``body``: ``latency_ms`` / 1000, or with
        ``latency_sigma`` > 0 a lognormal draw keyed by the seed and the request's messages."""
        base = self.latency_ms / 1000
        if self.latency_sigma <= 0:
            return base
        key = hashlib.sha256(f"{self.latency_seed}\n{prompt_text(body)}".encode()).digest()
        z = random.Random(int.from_bytes(key[:8], "big")).gauss(0.0, 1.0)
        return base * math.exp(self.latency_sigma * z)

    def _cached(self, step: str, text: str) -> int:
        """Prompt tokens of ``text`` to report as cache hits (class doc); 0 with caching off."""
        if self.cache_min_tokens is None:
            return 0
        with self._lock:
            earlier = list(self._seen.get(step, ()))
            self._seen.setdefault(step, []).append(text)
        best = max((common_prefix_len(text, e) for e in earlier), default=0)
        tokens = _count(text[:best]) if best else 0
        if tokens < self.cache_min_tokens:
            return 0
        block = max(1, self.cache_block_tokens)
        tokens -= tokens % block
        with self._lock:
            self.cached_tokens += tokens
        return tokens

    def _draw_fault(self) -> str | None:
        with self._lock:
            self.requests += 1
            if self.faults.rate > 0 and self._rng.random() < self.faults.rate:
                kind = self._rng.choice(self.faults.kinds)
                self.faults_sent[kind] = self.faults_sent.get(kind, 0) + 1
                return kind
        return None

    @contextlib.contextmanager
    def slot(self) -> Iterator[None]:
        """Hold one of the server's slots while a request is answered and sent (class doc)."""
        if self.slots is not None:
            self.slots.acquire()
        with self._lock:
            self.busy += 1
            self.max_busy = max(self.max_busy, self.busy)
        try:
            yield
        finally:
            with self._lock:
                self.busy -= 1
            if self.slots is not None:
                self.slots.release()

    def answer(self, body: dict) -> tuple[int, dict[str, str], bytes | Iterator[bytes]]:
        """``handle``, as server-sent events when the request asked for ``"stream": true``
        (an endless stream is an iterator, the others whole bytes); used by the HTTP handler."""
        status, headers, payload = self.handle(body)
        if status != 200 or not body.get("stream"):
            return status, headers, payload
        sse = {"Content-Type": "text/event-stream"}
        try:
            completion = json.loads(payload)
        except ValueError:  # the "malformed" fault: a broken event, then the end
            return 200, sse, b"data: " + payload + b"\n\n"
        if self.endless:
            return 200, sse, endless_chunks(completion, self._stopping.is_set)
        return 200, sse, b"".join(stream_events(body, completion))

    def handle(self, body: dict) -> tuple[int, dict[str, str], bytes]:
        """(status, headers, payload) for one request body (a plain ``chat.completion``)."""
        json_h = {"Content-Type": "application/json"}
        fmt = body.get("response_format")
        if isinstance(fmt, dict) and fmt.get("type") in self.refuse_formats:
            with self._lock:
                self.refused += 1
            err = {
                "error": {
                    "message": f"'response_format.type' must be 'json_schema' or 'text', not "
                    f"{fmt.get('type')!r}",
                    "type": "invalid_request_error",
                    "param": "response_format",
                    "code": None,
                }
            }
            return 400, json_h, json.dumps(err).encode()
        fault = self._draw_fault()
        if self.latency_ms:
            time.sleep(self.delay_s(body))
        if fault == "429":
            return (
                429,
                {**json_h, "Retry-After": f"{self.faults.retry_after_s:g}"},
                json.dumps(real_429_body()).encode(),
            )
        if fault == "500":
            err = {
                "error": {
                    "message": "The server had an error while processing your request. Sorry about that!",
                    "type": "server_error",
                    "param": None,
                    "code": None,
                }
            }
            return 500, json_h, json.dumps(err).encode()
        if fault == "timeout":
            self._stopping.wait(self.faults.hang_s)
        if fault == "malformed":
            return (
                200,
                json_h,
                b'{"id": "chatcmpl-broken", "object": "chat.completion", "choices": [{"ind',
            )
        reply = self.responder(body)
        if fault == "bad_json":
            reply = Reply(
                content="Sure! Here is what you asked for: {not json", finish_reason="stop"
            )
        elif fault == "truncated" and reply.content:
            reply = Reply(
                content=reply.content[: max(1, len(reply.content) // 2)], finish_reason="length"
            )
        step = step_of(body) or "unknown"
        with self._lock:
            if fault != "timeout":  # the client gave up on a hung request: not a delivered reply
                self.ok += 1
                self.by_step[step] = self.by_step.get(step, 0) + 1
            self.bodies.append(body)
        model = self.model or str(body.get("model", "gpt-4o-mini"))
        text = prompt_text(body)
        out = completion_body(model, reply, _count(text), self._cached(step, text))
        return 200, json_h, json.dumps(out).encode()


def _handler_for(server: LoopbackLLM) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args) -> None:  # silence stderr
            pass

        def do_POST(self) -> None:
            if self.path.rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
                self._send(
                    404,
                    {"Content-Type": "application/json"},
                    b'{"error": {"message": "Unknown path", "type": "invalid_request_error"}}',
                )
                return
            length = int(self.headers.get("Content-Length") or 0)
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
            except ValueError:
                self._send(
                    400,
                    {"Content-Type": "application/json"},
                    b'{"error": {"message": "request body is not JSON", "type": "invalid_request_error"}}',
                )
                return
            with server.slot():
                status, headers, payload = server.answer(body)
                self._send(status, headers, payload)

        def _send(
            self, status: int, headers: dict[str, str], payload: bytes | Iterator[bytes]
        ) -> None:
            try:
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                if isinstance(payload, bytes):
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                    return
                self.send_header("Connection", "close")  # the end of the stream ends the body
                self.close_connection = True
                self.end_headers()
                for part in payload:
                    self.wfile.write(part)
                    self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout fault)
                pass

    return Handler
