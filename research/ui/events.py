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


class _Fields(dict):
    """Event data for ``str.format_map``: a missing field reads as ``?``."""

    def __missing__(self, key: str) -> str:
        return "?"


# event type → one-line template over the event's data (fields missing from the data show "?")
_TEMPLATES = {
    "run.created": "run created: {topic}",
    "plan.ready": "plan ready: {plan_title} ({steps} steps)",
    "turn.finished": "{perspective} · turn {turn}: {question} ({sources} sources)",
    "conversation.completed": "conversation done: {perspective} ({turns} turns)",
    "coverage.checked": "coverage: {progress} (ready: {ready})",
    "section.written": "section written: {heading}",
    "report.ready": "report ready: {sections} sections, {citations} citations",
}


def describe_event(ev: Event) -> str:
    """One line of plain text (not Markdown) describing an event from the run's stream: a
    template per known type (``_TEMPLATES``), else the type plus its data as JSON."""
    d = ev.data or {}
    t = ev.type
    if t in _TEMPLATES:
        return _clip(_TEMPLATES[t].format_map(_Fields(d)))
    if t == "status":
        extra = f" — {d['error']}" if d.get("error") else ""
        return _clip(f"status → {d.get('status', '?')}{extra}")
    if t == "perspectives.ready":
        return _clip("perspectives: " + ", ".join(map(str, d.get("names", []))))
    if t == "tool.called":
        useful = "useful" if d.get("is_useful") else "not useful"
        return _clip(f"{d.get('tool', '?')} (step {d.get('step', '?')}) → {d.get('file', '')} [{useful}]")
    if t == "error.traceback":
        return "error traceback recorded (see the CLI: research show --json)"
    detail = json.dumps(d, ensure_ascii=False, default=str) if d else ""
    return _clip(f"{t} {detail}".strip())


def events_rows(events: Sequence[Event]) -> list[dict]:
    """Rows ``{time, event, detail}`` (local ``HH:MM:SS``), oldest first, for ``st.dataframe``."""
    return [{"time": datetime.fromtimestamp(ev.ts).strftime("%H:%M:%S"), "event": ev.type,
             "detail": describe_event(ev)} for ev in events]
