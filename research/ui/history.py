"""Run-history rows for the Launch page and short labels for run pickers."""

from __future__ import annotations

import time
from datetime import datetime
from typing import Mapping, Sequence

from research.models import ACTIVE_STATUSES, RunState
from research.store import keys

STATUS_ICONS = {
    "pending": "⏳", "planning": "🧭", "conversations": "💬", "analyzing": "🔬", "synthesizing": "✍️",
    "complete": "✅", "failed": "❌", "cancelled": "⏹️",
}


def is_active(status: str) -> bool:
    """True while a run is pending or in a working phase (``models.ACTIVE_STATUSES``)."""
    return status in ACTIVE_STATUSES


def duration_s(state: RunState, now: float | None = None) -> float:
    """Seconds the run took (finished) or has taken so far (active): ``finished_at`` (or ``now``
    when still active, or ``updated_at`` otherwise) minus ``created_at``; never negative."""
    if state.finished_at:
        end = state.finished_at
    elif is_active(state.status):
        end = time.time() if now is None else now
    else:
        end = state.updated_at
    return max(0.0, end - state.created_at)


def format_duration(seconds: float) -> str:
    """``42 s``, ``3 min 05 s``, ``1 h 02 min``."""
    s = int(round(max(0.0, seconds)))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {(s % 3600) // 60:02d} min"


def format_time(ts: float) -> str:
    """Local ``YYYY-MM-DD HH:MM`` for Unix seconds."""
    return datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M")


def run_label(state: RunState, max_topic: int = 60) -> str:
    """Picker label: ``✅ topic (shortened) · 2026-11-20 14:03 · 1a2b3c4d``."""
    topic = state.topic if len(state.topic) <= max_topic else state.topic[: max_topic - 1] + "…"
    icon = STATUS_ICONS.get(state.status, "")
    return f"{icon} {topic} · {format_time(state.created_at)} · {state.run_id[:8]}".strip()


def source_counts(store, run_ids: Sequence[str]) -> dict[str, int]:
    """``run_id → number of sources`` saved by the collector (seed 000 list
    ``source_collection:{run_id}:sources``), in one pipelined round trip; 0 when unreadable.

    Args:
        store: a ``RunStore`` (its ``r`` client is used).
    """
    pipe = store.r.pipeline(transaction=False)
    for run_id in run_ids:
        pipe.llen(keys.sources(run_id))
    results = pipe.execute(raise_on_error=False)
    return {rid: (0 if isinstance(n, Exception) else int(n))
            for rid, n in zip(run_ids, results)}


def history_rows(runs: Sequence[RunState], source_counts: Mapping[str, int], *,
                 now: float | None = None) -> list[dict]:
    """Rows for the run-history table, in the given order (newest first from ``list_runs``).

    Each row: ``topic, status, sources`` (int, from ``source_counts`` by run id, 0 when absent),
    ``created`` (local time text), ``duration`` (text), ``run_id``, ``plan`` and ``report``
    (relative page URLs ``plan?run=<id>`` / ``report?run=<id>`` for link columns).
    """
    rows = []
    for st in runs:
        rows.append({
            "topic": st.topic,
            "status": f"{STATUS_ICONS.get(st.status, '')} {st.status}".strip(),
            "sources": int(source_counts.get(st.run_id, 0)),
            "created": format_time(st.created_at),
            "duration": format_duration(duration_s(st, now)),
            "run_id": st.run_id,
            "plan": f"plan?run={st.run_id}",
            "report": f"report?run={st.run_id}",
        })
    return rows
