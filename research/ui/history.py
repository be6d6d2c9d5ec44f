"""Run-history rows for the Launch page and short labels for run pickers."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from datetime import datetime

from research.config import load_settings
from research.models import ACTIVE_STATUSES, RunState

STATUS_ICONS = {
    "pending": "⏳",
    "planning": "🧭",
    "awaiting_review": "📝",
    "conversations": "💬",
    "analyzing": "🔬",
    "synthesizing": "✍️",
    "complete": "✅",
    "failed": "❌",
    "cancelled": "⏹️",
    "interrupted": "⚠️",
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


def eta_text(seconds: float | None) -> str:
    """Suffix for a progress label: ``" · about 25 s left"`` (5 s steps from 10 s),
    ``" · about 2 min left"`` from 90 s; ``""`` when ``seconds`` is None (no estimate yet)."""
    if seconds is None:
        return ""
    if seconds >= 90:
        return f" · about {round(seconds / 60)} min left"
    shown = round(seconds / 5) * 5 if seconds >= 10 else max(1, round(seconds))
    return f" · about {shown} s left"


def format_time(ts: float) -> str:
    """Local ``YYYY-MM-DD HH:MM`` for Unix seconds."""
    return datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M")


def run_label(state: RunState, max_topic: int = 60) -> str:
    """Picker label: ``✅ topic (shortened) · 2026-11-20 14:03 · 1a2b3c4d``."""
    topic = state.topic if len(state.topic) <= max_topic else state.topic[: max_topic - 1] + "…"
    icon = STATUS_ICONS.get(state.status, "")
    return f"{icon} {topic} · {format_time(state.created_at)} · {state.run_id[:8]}".strip()


def source_counts(store, run_ids: Sequence[str]) -> dict[str, int]:
    """``run_id → number of sources`` saved by the collector (docs/design.md § Source collector: list
    ``source_collection:{run_id}:sources``), in one pipelined round trip; 0 when unreadable.

    Args:
        store: a ``RunStore``.
    """
    return store.source_counts(run_ids)


def run_stats(store, run_ids: Sequence[str]) -> dict[str, dict]:
    """``run_id → {sources, citations, cost_usd}`` in one pipelined round trip.

    ``sources``: collector list length (docs/design.md § Source collector); ``citations``: references of the stored
    report (0 without one); ``cost_usd``: the run's usage hash (USD, 0.0 when absent).
    """

    out = {}
    for rid, (n, cost, report) in zip(run_ids, store.run_stats_raw(run_ids), strict=True):
        try:
            cites = len(json.loads(report).get("references", [])) if isinstance(report, str) else 0
        except ValueError:
            cites = 0
        try:
            cost_usd = float(cost) if isinstance(cost, str) else 0.0
        except ValueError:
            cost_usd = 0.0
        out[rid] = {
            "sources": 0 if isinstance(n, Exception) else int(n),
            "citations": cites,
            "cost_usd": cost_usd,
        }
    return out


def history_rows(
    runs: Sequence[RunState],
    source_counts: Mapping[str, int],
    *,
    now: float | None = None,
    stats: Mapping[str, dict] | None = None,
) -> list[dict]:
    """Rows for the run-history table, in the given order (newest first from ``list_runs``).

    Each row: ``topic, mode, status, sources`` (int, from ``source_counts`` by run id, 0 when
    absent), ``citations`` and ``cost_usd`` (from ``stats`` of :func:`run_stats`, else 0),
    ``created`` (local time text), ``duration`` (text) and ``duration_s`` (s), ``run_id``, and
    relative page URLs ``plan?run=<id>`` / ``report?run=<id>`` / ``coverage?run=<id>`` /
    ``artifacts?run=<id>`` for link columns.
    """
    rows = []
    stats = stats or {}
    for st in runs:
        extra = stats.get(st.run_id, {})
        secs = duration_s(st, now)
        rows.append(
            {
                "topic": st.topic,
                "mode": st.mode,
                "status": f"{STATUS_ICONS.get(st.status, '')} {st.status}".strip(),
                "sources": int(source_counts.get(st.run_id, 0)),
                "citations": int(extra.get("citations", 0)),
                "cost_usd": float(extra.get("cost_usd", 0.0)),
                "created": format_time(st.created_at),
                "duration": format_duration(secs),
                "duration_s": round(secs, 1),
                "run_id": st.run_id,
                "plan": f"plan?run={st.run_id}",
                "report": f"report?run={st.run_id}",
                "coverage": f"coverage?run={st.run_id}",
                "artifacts": f"artifacts?run={st.run_id}",
            }
        )
    return rows


def filter_rows(rows: Sequence[dict], query: str = "", statuses: Sequence[str] = ()) -> list[dict]:
    """Rows whose topic, run id or mode contains ``query`` (case-insensitive) and, when
    ``statuses`` is given, whose status (without its icon) is one of them."""
    q = (query or "").strip().lower()
    wanted = set(statuses or ())
    out = []
    for row in rows:
        if (
            q
            and q not in row["topic"].lower()
            and q not in row["run_id"]
            and q not in row.get("mode", "")
        ):
            continue
        if wanted and row["status"].split()[-1] not in wanted:
            continue
        out.append(row)
    return out


def delete_run_everywhere(store, run_id: str, settings=None) -> list[str]:
    """Delete a run everywhere (``RunStore.delete_run_everywhere``: Redis keys, artifacts dir,
    report dir). Returns the paths removed.

    Raises:
        InputError: ill-formed run id. StoreError: Redis unreachable.
    """

    return store.delete_run_everywhere(run_id, settings or load_settings())
