"""Record / replay of LLM calls.

A cassette is a JSONL file, one line per call: ``{"key", "semantic", "request", "response"}``
where ``request`` is ``{model, messages, response_format, tools}`` (no key, no api_base) and
``response`` is ``CallResult.to_dict()``. ``key`` = sha256 of the canonical request JSON.

Replay answers from the cassette with no network: first by exact ``key``, else by the
engine's ``semantic`` key (step + the parts of the input that do not depend on thread
timing, e.g. perspective and turn for a question) so that parallel conversations whose prompts
differ only by scheduling still get their recorded answers. Each recorded answer is used once,
in recorded order; a request with no answer raises ``LLMError(code="cassette_miss")``. (Which of
two parallel searches cards a shared result first also depends on timing, so a replay may ask
for a summary card its recording never made: the litellm engine makes that one card offline,
``research.engines.litellm.runner.REPLAY_MAY_MISS``.)
"""

from __future__ import annotations

import hashlib
import json
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from research.llm.client import CallResult
from research.llm.errors import LLMError

if TYPE_CHECKING:
    from collections.abc import Callable


def request_key(request: dict[str, Any]) -> str:
    """sha256 hex of the canonical JSON of ``request`` (sorted keys, no whitespace)."""
    return hashlib.sha256(
        json.dumps(request, sort_keys=True, separators=(",", ":"), default=str).encode()
    ).hexdigest()


class Cassette:
    """One cassette file in ``mode`` "record" (appends; the file is truncated on open) or
    "replay" (loads all lines). Thread-safe."""

    def __init__(self, path: str | Path, mode: str) -> None:
        if mode not in ("record", "replay"):
            raise ValueError("mode must be 'record' or 'replay'")
        self.path, self.mode = Path(path), mode
        self._lock = threading.Lock()
        self._entries: list[dict[str, Any]] = []
        self._used: set[int] = set()
        if mode == "record":
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_text("", encoding="utf-8")
        else:
            if not self.path.is_file():
                raise LLMError(
                    f"Cassette '{self.path}' does not exist; record one with --record.",
                    code="cassette_miss",
                )
            self._entries = [
                json.loads(line)
                for line in self.path.read_text(encoding="utf-8").splitlines()
                if line.strip()
            ]

    def record(self, request: dict[str, Any], semantic: str, result: CallResult) -> None:
        """Append one call."""
        line = json.dumps(
            {
                "key": request_key(request),
                "semantic": semantic,
                "request": request,
                "response": result.to_dict(),
            },
            ensure_ascii=False,
            default=str,
        )
        with self._lock, self.path.open("a", encoding="utf-8") as fh:
            fh.write(line + "\n")

    def replay(self, request: dict[str, Any], semantic: str) -> CallResult:
        """The recorded answer for ``request`` (module doc). Raises LLMError(cassette_miss)."""
        key = request_key(request)
        with self._lock:
            idx = self._find(lambda e: e["key"] == key)
            if idx is None:
                idx = self._find(lambda e: e.get("semantic") == semantic)
            if idx is None:
                raise LLMError(
                    f"The cassette {self.path.name} has no recorded answer for this "
                    f"{semantic.split('|', 1)[0]} call; re-record it.",
                    code="cassette_miss",
                )
            self._used.add(idx)
            resp: dict[str, Any] = self._entries[idx]["response"]
        return CallResult(**resp)

    def _find(self, pred: Callable[[dict[str, Any]], bool]) -> int | None:
        for i, e in enumerate(self._entries):
            if i not in self._used and pred(e):
                return i
        return None
