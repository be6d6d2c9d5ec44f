"""Server-sent events for the loopback LLM server: a ``chat.completion`` body as the
``chat.completion.chunk`` stream an OpenAI-compatible server sends for ``"stream": true``.

Shape (OpenAI's streaming format, which llama.cpp's server, Ollama, LM Studio and vLLM also
send): one ``data: {chunk}`` line per piece of content (the first with ``role``), tool calls
as ``delta.tool_calls`` with their index, a last chunk with ``finish_reason``, a usage chunk
(``choices: []``) when ``stream_options.include_usage`` is set, then ``data: [DONE]``.

``endless_chunks`` is a server that never stops: after the reply it keeps sending words,
ignoring ``max_tokens``, until the client hangs up or ``limit_s`` (s) passes.
"""

from __future__ import annotations

import itertools
import json
import re
import time
from collections.abc import Callable, Iterator

FILLER = (" more", " and", " then", " also", " still", " again", " so")
FILLER_PER_CHUNK = 5  # one-token words per chunk of an endless stream
WORDS_PER_CHUNK = 12  # a chunk per few words: litellm parses every chunk, and tests make many calls
_PIECE_RE = re.compile(rf"(?:\S+\s*){{1,{WORDS_PER_CHUNK}}}|\s+")


def pieces(text: str) -> list[str]:
    """``text`` split into chunk contents of at most ``WORDS_PER_CHUNK`` words (joined back,
    they are ``text``)."""
    return _PIECE_RE.findall(text) if text else []


def _event(obj: dict | str) -> bytes:
    data = obj if isinstance(obj, str) else json.dumps(obj)
    return f"data: {data}\n\n".encode()


def stream_events(body: dict, completion: dict) -> Iterator[bytes]:
    """The SSE lines of ``completion`` (a ``chat.completion`` dict, ``completion_body``) as
    the request ``body`` asked for them (``stream_options.include_usage``)."""
    head = {k: completion[k] for k in ("id", "created", "model", "system_fingerprint")}
    head["object"] = "chat.completion.chunk"
    choice = completion["choices"][0]
    message = choice["message"]

    def chunk(delta: dict, finish: str | None = None) -> bytes:
        return _event({**head, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})

    yield chunk({"role": "assistant", "content": ""})
    for piece in pieces(message.get("content") or ""):
        yield chunk({"content": piece})
    for i, call in enumerate(message.get("tool_calls") or []):
        yield chunk(
            {
                "tool_calls": [
                    {
                        "index": i,
                        "id": call["id"],
                        "type": "function",
                        "function": {"name": call["function"]["name"], "arguments": ""},
                    }
                ]
            }
        )
        yield chunk({"tool_calls": [{"index": i, "function": call["function"]}]})
    yield chunk({}, choice["finish_reason"])
    if (body.get("stream_options") or {}).get("include_usage"):
        yield _event({**head, "choices": [], "usage": completion["usage"]})
    yield _event("[DONE]")


def endless_chunks(
    completion: dict, stopping: Callable[[], bool], limit_s: float = 60.0
) -> Iterator[bytes]:
    """A stream that does not end: the reply's content, then chunks of one-token words (``FILLER``
    in turn: litellm stops a stream that repeats one chunk) with never a ``finish_reason``, until
    ``stopping()`` or ``limit_s`` (s) have passed; the client's hang-up ends it earlier (the
    writer's BrokenPipeError)."""
    head = {k: completion[k] for k in ("id", "created", "model", "system_fingerprint")}
    head["object"] = "chat.completion.chunk"

    def chunk(text: str) -> bytes:
        return _event(
            {**head, "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]}
        )

    yield chunk("")
    for piece in pieces(completion["choices"][0]["message"].get("content") or ""):
        yield chunk(piece)
    end = time.monotonic() + limit_s
    words = itertools.cycle(FILLER)
    while not stopping() and time.monotonic() < end:
        yield chunk("".join(next(words) for _ in range(FILLER_PER_CHUNK)))
