"""A run's event stream in Redis: ``run:{id}:events``, every event declared in
``research.events`` (docs/design.md § State in Redis).

``RunEvents`` is the base of ``research.store.runs.RunStore``: the other parts of the run store
emit through it.
"""

from __future__ import annotations

import json
from typing import Any, cast

from research.events import EventType, check_event
from research.models import Event
from research.store import keys
from research.store.connection import TextRedis

EVENT_STREAM_MAXLEN = 100_000


class RunEvents:
    """Append to and read a run's event stream (``r``: a Redis with ``decode_responses=True``)."""

    r: TextRedis

    # ------------------------------------------------------------------ events
    def emit(self, run_id: str, type_: EventType, data: dict[str, Any] | None = None) -> str:
        """Append a declared event (``research/events.py``) to the run's stream; returns the
        stream id. Raises InvariantError (nothing written) for an undeclared type or a payload
        with a missing or undeclared field."""
        check_event(type_, data or {})
        ev = Event(type=type_, data=data or {})
        return cast(
            str,
            self.r.xadd(
                keys.run_events(run_id),
                {"ts": ev.ts, "type": ev.type, "data": json.dumps(ev.data)},
                maxlen=EVENT_STREAM_MAXLEN,
                approximate=True,
            ),
        )

    def events(self, run_id: str, *, after: str = "-", count: int | None = None) -> list[Event]:
        """Events oldest first, after stream id ``after`` (exclusive when not '-')."""
        start = f"({after}" if after != "-" else "-"
        rows = self.r.xrange(keys.run_events(run_id), min=start, max="+", count=count)
        return [
            Event(id=i, ts=float(f["ts"]), type=f["type"], data=json.loads(f["data"]))
            for i, f in rows
        ]

    def tail_events(self, run_id: str, count: int = 20) -> list[Event]:
        """Last ``count`` events, oldest first."""
        rows = self.r.xrevrange(keys.run_events(run_id), count=count)
        return [
            Event(id=i, ts=float(f["ts"]), type=f["type"], data=json.loads(f["data"]))
            for i, f in reversed(rows)
        ]
