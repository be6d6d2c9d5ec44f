"""Tool-call recorders that make a run's artifacts deterministic and resumable.

``RunContext.search`` calls ``ctx.artifacts.record(step, tool, raw, tool_input=, perspective=)``.
These stand in for the ``ArtifactStore`` there:

* ``KeyedRecorder`` gives every call an id ``{prefix}.{n}`` (n = 1, 2… in call order), so a
  call repeated after a crash reuses its stored record and file instead of writing ``__2``.
* ``DeferredRecorder`` compresses at once (in the calling thread) but writes nothing until
  ``commit()``; parallel conversations commit their turns in perspective order, so file names,
  the cards list and the events do not depend on thread timing.
"""

from __future__ import annotations

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
    seed 001 §6.1 context message) when the card is useful, else None.
    """

    def __init__(self, store: ArtifactStore, prefix: str) -> None:
        self.store, self.prefix = store, prefix
        self.calls: list[tuple[PreparedCall, dict | None]] = []

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
        """Compress ``raw_output`` (engine call) and queue it."""
        call = self.store.prepare(
            step, tool_name, raw_output, tool_input=tool_input, perspective=perspective
        )
        message = {"role": "assistant", "content": ""} if call.card.is_useful else None
        self.calls.append((call, message))
        return None, message

    def commit(self) -> list[ArtifactRecord]:
        """Write the queued calls in call order (idempotent per call id); returns their records."""
        records = []
        for n, (call, message) in enumerate(self.calls, start=1):
            record, final = self.store.commit(call, f"{self.prefix}.{n}")
            if message is not None and final is not None:
                message.update(final)
            records.append(record)
        return records

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)
