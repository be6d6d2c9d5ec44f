"""The Co-STORM run summary (``research show --json`` → ``costorm``, the Report page's round-table
panel) and stop reasons in plain words: counts over the stored transcript and mind map, no
Plotly (the figures are in ``research.ui.costorm_views``)."""

from __future__ import annotations

from research.costorm.mindmap import MindMap
from research.costorm.state import get_meta, get_mindmap, get_turns
from research.models import CoStormTurn

INTENT_LABELS = {
    "original_question": "Original question",
    "information_request": "Information request",
    "potential_answer": "Potential answer",
    "further_details": "Further details",
}
STOP_REASONS = {
    "coverage_complete": "every syllabus question is covered (check_completion ready)",
    "query_budget": "the query budget was reached",
    "turn_cap": "the turn cap was reached",
}


def intent_counts(turns: list[CoStormTurn]) -> dict[str, int]:
    """Turns per intent, in the four intents' order."""
    return {k: sum(t.intent == k for t in turns) for k in INTENT_LABELS}


def stop_reason_text(reason: str) -> str:
    """Plain-words reason the round-table ended (``"still running"`` for '')."""
    return STOP_REASONS.get(reason, reason or "still running")


def stop_line(
    reason: str, *, queries_used: int, query_budget: int, turns: int, max_turns: int
) -> str:
    """One line saying why and where a Co-STORM run stopped ('' when it has not), e.g.
    ``"stopped: query budget reached (30/30)"`` or ``"stopped: turn cap reached (20/20 turns)"``.
    ``turns`` counts round-table turns (warm start excluded, as the turn cap does)."""
    if not reason:
        return ""
    if reason == "query_budget":
        return f"stopped: query budget reached ({queries_used}/{query_budget})"
    if reason == "turn_cap":
        return f"stopped: turn cap reached ({turns}/{max_turns} turns)"
    if reason == "coverage_complete":
        return "stopped: every syllabus question is covered (check_completion ready)"
    if reason == "budget_exhausted":
        return "stopped: LLM budget exhausted"
    return f"stopped: {reason}"


def role_counts(turns: list[CoStormTurn]) -> dict[str, int]:
    """Turns per speaker kind: ``{"expert": n, "moderator": n, "analyst": n}``."""
    return {k: sum(t.kind == k for t in turns) for k in ("expert", "moderator", "analyst")}


def summary(
    turns: list[CoStormTurn],
    mm: MindMap | None,
    meta_queries: int,
    meta_stop: str,
    settings_dump: dict,
) -> dict:
    """JSON-able summary of a Co-STORM run (``research show --json`` → ``costorm``): turns by
    intent and by speaker kind, per-speaker counts, moderator turns, warm-start turns, queries
    used vs budget, mind-map depth / node / item counts, and the stop reason with its line."""
    roundtable = sum(not t.warm_start for t in turns)
    by_role: dict[str, int] = {}
    for t in turns:
        by_role[t.role] = by_role.get(t.role, 0) + 1
    nodes = len(list(mm.walk())) - 1 if mm else 0
    return {
        "turns": len(turns),
        "warm_start_turns": len(turns) - roundtable,
        "roundtable_turns": roundtable,
        "max_turns": settings_dump.get("max_turns"),
        "by_intent": intent_counts(turns),
        "by_kind": role_counts(turns),
        "by_role": by_role,
        "moderator_turns": sum(t.kind == "moderator" for t in turns),
        "queries_used": meta_queries,
        "query_budget": settings_dump.get("query_budget"),
        "mindmap": {
            "depth": mm.depth() if mm else 0,
            "nodes": nodes,
            "items": len(mm.items) if mm else 0,
        },
        "stop_reason": meta_stop,
        "stop_line": stop_line(
            meta_stop,
            queries_used=meta_queries,
            query_budget=settings_dump.get("query_budget", 0),
            turns=roundtable,
            max_turns=settings_dump.get("max_turns", 0),
        ),
        "settings": settings_dump,
    }


def run_summary(store, state) -> dict:
    """:func:`summary` of a stored Co-STORM run read from Redis (``research.costorm`` readers),
    plus ``experts`` (names); the stop reason is ``RunState.stop_reason``, else the round-table's."""

    meta = get_meta(store, state.run_id)
    out = summary(
        get_turns(store, state.run_id),
        get_mindmap(store, state.run_id),
        meta.queries_used,
        state.stop_reason or meta.stop_reason,
        state.config.costorm.model_dump(),
    )
    out["experts"] = [e.name for e in meta.experts]
    return out
