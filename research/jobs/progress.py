"""A run's progress and coverage as plain JSON-able data, for callers outside the dashboard: the
MCP server's ``get_run``, batch status (``research batch status``, the Launch page's Batch tab).

The dashboard's own progress panel (``research.ui.progress``) draws more (phase stepper, cost,
index bar); this is the compact form: one number in [0, 1] and the phase, plus per-question
source counts against their targets.
"""

from __future__ import annotations

from typing import Any

from research.errors import InputError
from research.models import ACTIVE_STATUSES, PHASES, Perspective, Report, RunState, Syllabus
from research.store.runs import RunStore

# Share of the whole run each phase ends at: the conversations fill their span turn by turn.
_PHASE_END = {"planning": 0.1, "conversations": 0.7, "analyzing": 0.8, "synthesizing": 0.95}
_EVENT_SCAN = 200  # newest events searched for the phase a stopped run reached


def reached_phase(store: RunStore, state: RunState) -> str:
    """The last working phase the run entered (its status while working; else from its newest
    ``status`` events; ``planning`` when none is found)."""
    if state.status in PHASES:
        return state.status
    for ev in reversed(store.tail_events(state.run_id, _EVENT_SCAN)):
        if ev.type == "status" and ev.data.get("status") in PHASES:
            return str(ev.data["status"])
    return "planning"


def turn_counts(store: RunStore, state: RunState) -> tuple[int, int]:
    """``(turns done, turns planned)``: STORM dialogue turns against perspectives × max_turns,
    Co-STORM round-table turns against its turn cap (planned is at least 1)."""
    cfg = state.config
    if cfg.mode == "costorm":
        return len(store.costorm.turns(state.run_id)), max(1, cfg.costorm.max_turns)
    perspectives = store.get_doc_list(state.run_id, "perspectives", Perspective)
    planned = (len(perspectives) or cfg.max_perspectives) * cfg.max_turns
    return store.count_turns(state.run_id), max(1, planned)


def run_progress(store: RunStore, state: RunState) -> dict[str, Any]:
    """``{phase, fraction, turns_done, turns_planned, active}``.

    ``fraction`` in [0, 1]: 1.0 once complete; a stopped run keeps the share it reached;
    during the conversations it grows with the turns done. ``phase`` is the status while the
    run works, else the phase it reached (``complete`` when done).
    """
    done, planned = turn_counts(store, state)
    if state.status == "complete":
        return {
            "phase": "complete",
            "fraction": 1.0,
            "turns_done": done,
            "turns_planned": max(planned, done),
            "active": False,
        }
    phase = "planning" if state.status == "pending" else reached_phase(store, state)
    start = 0.0
    for name, end in _PHASE_END.items():
        if name == phase:
            break
        start = end
    end = _PHASE_END.get(phase, start)
    share = min(1.0, done / planned) if phase == "conversations" else 0.0
    fraction = 0.0 if state.status == "pending" else start + (end - start) * share
    return {
        "phase": phase,
        "fraction": round(fraction, 3),
        "turns_done": done,
        "turns_planned": planned,
        "active": state.status in ACTIVE_STATUSES,
    }


def coverage_summary(store: RunStore, run_id: str) -> list[dict[str, Any]]:
    """Per syllabus question, in syllabus order: ``{key, label, sources, target, covered}``
    (``covered``: at least ``target`` sources, the ``min_sources`` (docs/design.md § Question
    syllabus)), plus ``answer`` (``answered`` / ``insufficient``) once the report says how its section answers it.
    [] before the syllabus exists."""
    syllabus = store.get_doc(run_id, "syllabus", Syllabus)
    if syllabus is None:
        return []
    try:
        counts = store.collector(run_id).question_counts()
    except InputError:  # the collector is initialised just after the syllabus is stored
        counts = {}
    report = store.get_doc(run_id, "report", Report)
    answers = {q.key: q.status for q in report.questions} if report else {}
    out = []
    for q in syllabus.questions:
        n = int(counts.get(q.key, 0))
        row: dict[str, Any] = {
            "key": q.key,
            "label": q.label,
            "sources": n,
            "target": q.min_sources,
            "covered": n >= q.min_sources,
        }
        if q.key in answers:
            row["answer"] = answers[q.key]
        out.append(row)
    return out
