"""Tool-call recorders that make a run's artifacts deterministic and resumable.

``RunContext.search`` calls ``record(step, tool, raw, tool_input=, perspective=)`` on the context's
``recorder`` (``RunContext.recording``), else on its ``ArtifactStore``. These recorders:

* ``KeyedRecorder`` gives every call an id ``{prefix}.{n}`` (n = 1, 2… in call order), so a
  call repeated after a crash reuses its stored record and file instead of writing ``__2``.
* ``DeferredRecorder`` compresses at once but writes nothing until ``commit()``; parallel
  conversations commit their turns in perspective order, so file names, the cards list and the
  events do not depend on thread timing. With an engine whose ``compress_in_background`` is
  true (compression is a model call) it compresses in background threads: the conversation
  goes on (its next question is asked) while the turn's cards are being made, and ``commit()``
  waits for them, in call order.
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from research.artifacts import ArtifactStore, PreparedCall
from research.models import ArtifactRecord, Step


class KeyedRecorder:
    """Records through ``store`` with call ids ``{prefix}.1``, ``{prefix}.2``…"""

    def __init__(self, store: ArtifactStore, prefix: str) -> None:
        self.store, self.prefix, self.n = store, prefix, 0

    def record(
        self,
        step: Step,
        tool_name: str,
        raw_output: Any,
        *,
        tool_input: str = "",
        perspective: str = "",
        **_: Any,
    ) -> tuple[ArtifactRecord, dict | None]:
        """Same contract as ``ArtifactStore.record``; idempotent per call id."""
        self.n += 1
        return self.store.record(
            step,
            tool_name,
            raw_output,
            tool_input=tool_input,
            perspective=perspective,
            call_id=f"{self.prefix}.{self.n}",
        )

    def __getattr__(self, name: str) -> Any:  # plan_title, root… of the wrapped store
        return getattr(self.store, name)


class DeferredRecorder:
    """Compresses now, writes on ``commit()`` with call ids ``{prefix}.{n}``.

    ``record`` returns ``(None, message)``: ``message`` is a dict (filled in on commit with the
    docs/design.md § Working memory: context message) when the card is useful, else None. In the background mode
    (module doc) usefulness is not known yet: ``message`` is always a dict, left with empty
    ``content`` on commit when the card is not useful (``useful_messages`` drops those).
    """

    BACKGROUND_THREADS = 3  # a turn's searches (≤ 3) compress at once

    def __init__(self, store: ArtifactStore, prefix: str) -> None:
        self.store, self.prefix = store, prefix
        self.background = bool(getattr(store.engine, "compress_in_background", False))
        self._pending: list[tuple[Future[PreparedCall], dict | None]] = []
        self._pool: ThreadPoolExecutor | None = None

    @property
    def calls(self) -> list[tuple[PreparedCall, dict | None]]:
        """The queued calls with their cards, in call order (waits for cards in flight)."""
        return [(f.result(), m) for f, m in self._pending]

    def record(
        self,
        step: Step,
        tool_name: str,
        raw_output: Any,
        *,
        tool_input: str = "",
        perspective: str = "",
        **_: Any,
    ) -> tuple[None, dict | None]:
        """Compress ``raw_output`` (engine call; in the background mode, in a worker thread)
        and queue it."""
        if self.background:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(
                    self.BACKGROUND_THREADS, thread_name_prefix=f"compress-{self.prefix}"
                )
            message: dict | None = {"role": "assistant", "content": ""}
            future = self._pool.submit(
                self.store.prepare,
                step,
                tool_name,
                raw_output,
                tool_input=tool_input,
                perspective=perspective,
            )
            self._pending.append((future, message))
            return None, message
        call = self.store.prepare(
            step, tool_name, raw_output, tool_input=tool_input, perspective=perspective
        )
        message = {"role": "assistant", "content": ""} if call.card.is_useful else None
        done: Future[PreparedCall] = Future()
        done.set_result(call)
        self._pending.append((done, message))
        return None, message

    def commit(self) -> list[ArtifactRecord]:
        """Write the queued calls in call order (idempotent per call id), each once its card is
        made; returns their records. A compression that raised raises here, in call order."""
        records = []
        try:
            for n, (call, message) in enumerate(self.calls, start=1):
                record, final = self.store.commit(call, f"{self.prefix}.{n}")
                if message is not None and final is not None:
                    message.update(final)
                records.append(record)
        finally:
            if self._pool is not None:
                self._pool.shutdown(wait=False)
        return records


def useful_messages(memory: list[dict]) -> list[dict]:
    """The working-memory messages of useful cards (a background-mode placeholder whose card was
    not useful stays empty after commit)."""
    return [m for m in memory if m.get("content")]

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)
