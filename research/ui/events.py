"""Human lines for run events (docs/design.md, "Run states")."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime

from research.events import event_line
from research.models import Event

_MAX_DETAIL = 200


def _clip(text: str, n: int = _MAX_DETAIL) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 1] + "…"


def describe_event(ev: Event) -> str:
    """One line of plain text (not Markdown) describing an event from the run's stream, clipped
    to 200 characters: the event's declared line (``research/events.py``), else — for a type not
    declared (an older version's event) — the type plus its data as JSON."""
    d = ev.data or {}
    line = event_line(ev.type, d)
    if line is not None:
        return _clip(line)
    detail = json.dumps(d, ensure_ascii=False, default=str) if d else ""
    return _clip(f"{ev.type} {detail}".strip())


def events_rows(events: Sequence[Event]) -> list[dict]:
    """Rows ``{time, event, detail}`` (local ``HH:MM:SS``), oldest first, for ``st.dataframe``."""
    return [
        {
            "time": datetime.fromtimestamp(ev.ts).strftime("%H:%M:%S"),
            "event": ev.type,
            "detail": describe_event(ev),
        }
        for ev in events
    ]
