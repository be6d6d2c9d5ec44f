"""Human lines for run events and the phase progress of a run (DESIGN.md, States)."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Sequence

from research.models import PHASES, Event

_MAX_DETAIL = 200


def phase_progress(status: str) -> float | None:
    """Fraction of phases done, 0.0–1.0: pending/planning 0, conversations 0.25, analyzing 0.5,
    synthesizing 0.75, complete 1.0; None for failed/cancelled/unknown statuses."""
    if status == "pending":
        return 0.0
    if status not in PHASES:
        return None
    return PHASES.index(status) / (len(PHASES) - 1)


def _clip(text: str, n: int = _MAX_DETAIL) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 1] + "…"


def describe_event(ev: Event) -> str:
    """One line of plain text (not Markdown) describing an event from the run's stream."""
    d = ev.data or {}
    t = ev.type
    if t == "status":
        extra = f" — {d['error']}" if d.get("error") else ""
        return _clip(f"status → {d.get('status', '?')}{extra}")
    if t == "run.created":
        return _clip(f"run created: {d.get('topic', '')}")
    if t == "plan.ready":
        return _clip(f"plan ready: {d.get('plan_title', '')} ({d.get('steps', '?')} steps)")
    if t == "perspectives.ready":
        return _clip("perspectives: " + ", ".join(map(str, d.get("names", []))))
    if t == "turn.finished":
        return _clip(f"{d.get('perspective', '?')} · turn {d.get('turn', '?')}: {d.get('question', '')} "
                     f"({d.get('sources', 0)} sources)")
    if t == "tool.called":
        useful = "useful" if d.get("is_useful") else "not useful"
        return _clip(f"{d.get('tool', '?')} (step {d.get('step', '?')}) → {d.get('file', '')} [{useful}]")
    if t == "conversation.completed":
        return _clip(f"conversation done: {d.get('perspective', '?')} ({d.get('turns', '?')} turns)")
    if t == "coverage.checked":
        return _clip(f"coverage: {d.get('progress', '')} (ready: {d.get('ready', '?')})")
    if t == "section.written":
        return _clip(f"section written: {d.get('heading', '')}")
    if t == "report.ready":
        return _clip(f"report ready: {d.get('sections', '?')} sections, {d.get('citations', '?')} citations")
    if t == "error.traceback":
        return "error traceback recorded (see the CLI: research show --json)"
    detail = json.dumps(d, ensure_ascii=False, default=str) if d else ""
    return _clip(f"{t} {detail}".strip())


def events_rows(events: Sequence[Event]) -> list[dict]:
    """Rows ``{time, event, detail}`` (local ``HH:MM:SS``), oldest first, for ``st.dataframe``."""
    return [{"time": datetime.fromtimestamp(ev.ts).strftime("%H:%M:%S"), "event": ev.type,
             "detail": describe_event(ev)} for ev in events]
