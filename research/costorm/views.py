"""What the Co-STORM pages show, computed outside Streamlit (pages stay thin): transcript
badges, the mind map as a plotly treemap, a node's items with their sources, stop reasons."""

from __future__ import annotations

import plotly.graph_objects as go

from research.costorm.mindmap import SEP, MindMap
from research.models import CoStormTurn

INTENT_LABELS = {"original_question": "Original question", "information_request": "Information request",
                 "potential_answer": "Potential answer", "further_details": "Further details"}
INTENT_COLORS = {"original_question": "orange", "information_request": "blue",
                 "potential_answer": "green", "further_details": "gray"}
ROLE_COLORS = {"moderator": "violet", "analyst": "red", "expert": "primary"}
ROLE_ICONS = {"moderator": ":material/gavel:", "analyst": ":material/person:", "expert": ":material/school:"}
AVATARS = {"moderator": ":material/gavel:", "analyst": ":material/person:", "expert": ":material/school:"}
STOP_REASONS = {"coverage_complete": "every syllabus question is covered (check_completion ready)",
                "query_budget": "the query budget was reached", "turn_cap": "the turn cap was reached"}


def _badge_text(text: str) -> str:
    """Text safe inside a ``:color-badge[...]`` directive (no brackets, no Markdown specials)."""
    return "".join(c for c in " ".join(str(text).split()) if c not in "[]*_`\\<>$|~#")[:60]


def intent_badge(intent: str) -> str:
    """Streamlit Markdown badge for an intent, e.g. ``:green-badge[Potential answer]``."""
    return f":{INTENT_COLORS.get(intent, 'gray')}-badge[{INTENT_LABELS.get(intent, _badge_text(intent))}]"


def role_badge(turn: CoStormTurn) -> str:
    """Badge with the speaker: violet for the Moderator, red for the Analyst, blue for experts."""
    return f":{ROLE_COLORS[turn.kind]}-badge[{ROLE_ICONS[turn.kind]} {_badge_text(turn.role)}]"


def turn_caption(turn: CoStormTurn) -> str:
    """``role badge · intent badge · turn n`` (+ warm start)."""
    bits = [role_badge(turn), intent_badge(turn.intent), f"turn {turn.turn_number}"]
    if turn.warm_start:
        bits.append(":gray-badge[warm start]")
    return " ".join(bits)


def intent_counts(turns: list[CoStormTurn]) -> dict[str, int]:
    """Turns per intent, in the four intents' order."""
    return {k: sum(t.intent == k for t in turns) for k in INTENT_LABELS}


def stop_reason_text(reason: str) -> str:
    """Plain-words reason the round-table ended (``"still running"`` for '')."""
    return STOP_REASONS.get(reason, reason or "still running")


def stop_line(reason: str, *, queries_used: int, query_budget: int, turns: int, max_turns: int) -> str:
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


def summary(turns: list[CoStormTurn], mm: MindMap | None, meta_queries: int, meta_stop: str,
            settings_dump: dict) -> dict:
    """JSON-able summary of a Co-STORM run (``research show --json`` → ``costorm``): turns by
    intent and by speaker kind, per-speaker counts, moderator turns, warm-start turns, queries
    used vs budget, mind-map depth / node / item counts, and the stop reason with its line."""
    roundtable = sum(not t.warm_start for t in turns)
    by_role: dict[str, int] = {}
    for t in turns:
        by_role[t.role] = by_role.get(t.role, 0) + 1
    nodes = len(node_options(mm)) if mm else 0
    return {
        "turns": len(turns), "warm_start_turns": len(turns) - roundtable, "roundtable_turns": roundtable,
        "max_turns": settings_dump.get("max_turns"), "by_intent": intent_counts(turns),
        "by_kind": role_counts(turns), "by_role": by_role,
        "moderator_turns": sum(t.kind == "moderator" for t in turns),
        "queries_used": meta_queries, "query_budget": settings_dump.get("query_budget"),
        "mindmap": {"depth": mm.depth() if mm else 0, "nodes": nodes, "items": len(mm.items) if mm else 0},
        "stop_reason": meta_stop,
        "stop_line": stop_line(meta_stop, queries_used=meta_queries, query_budget=settings_dump.get("query_budget", 0),
                               turns=roundtable, max_turns=settings_dump.get("max_turns", 0)),
        "settings": settings_dump,
    }


def mindmap_figure(mm: MindMap, height: int = 560, selected: str | None = None) -> go.Figure:
    """Plotly treemap of the mind map: one box per concept sized by the information in its
    subtree; hover shows its own and total item counts; the ``selected`` node path (if any) gets
    a thick orange outline."""
    ids, labels, parents, values, hover = [], [], [], [], []
    for path, node in mm.walk():
        ids.append(path)
        labels.append(node.name if node is not mm.root else f"{node.name}")
        parents.append(path.rsplit(SEP, 1)[0] if SEP in path else "")
        values.append(max(node.total_items(), 1 if node is mm.root else 0))
        hover.append(f"{len(node.items)} own items · {node.total_items()} in subtree")
    fig = go.Figure(go.Treemap(ids=ids, labels=labels, parents=parents, values=values, branchvalues="total",
                               customdata=hover, hovertemplate="<b>%{label}</b><br>%{customdata}<extra></extra>",
                               textinfo="label+value", maxdepth=4, root_color="#f3f4f6",
                               marker=dict(colorscale="Blues", colors=[p.count(SEP) for p in ids],
                                           line=dict(width=[4 if p == selected else 1 for p in ids],
                                                     color=["#f97316" if p == selected else "white" for p in ids]))))
    fig.update_layout(margin=dict(t=10, l=4, r=4, b=4), height=height)
    return fig


def node_options(mm: MindMap) -> list[str]:
    """Node paths (non-root) for the node picker, pre-order."""
    return [p for p, _ in mm.walk()][1:]


def clicked_node(event: object, options: list[str]) -> str | None:
    """The node path the analyst clicked in the treemap, from ``st.plotly_chart(...,
    on_select="rerun", selection_mode=("points",))``'s return value (Streamlit reports a treemap
    click as ``selection.points[0]`` with the clicked box's ``id`` = its path); None when nothing
    (or the root, which has no items of its own) was clicked."""
    try:
        points = event["selection"]["points"]  # type: ignore[index]
    except (KeyError, TypeError, AttributeError):
        return None
    for point in points or []:
        pid = point.get("id") if isinstance(point, dict) else None
        if pid in options:
            return pid
    return None


def node_label(mm: MindMap, path: str) -> str:
    """Picker label: indented name with its item count."""
    node = mm.find(path)
    depth = path.count(SEP)
    return f"{'  ' * (depth - 1)}{node.name if node else path} ({node.total_items() if node else 0} items)"


def node_items(mm: MindMap, path: str, subtree: bool = True) -> list[dict]:
    """Rows for a node's information: concept, text, source title, url, source id, turn."""
    node = mm.find(path)
    if node is None:
        return []
    rows = []
    walk = mm.walk(node, path.rsplit(SEP, 1)[0] if SEP in path else "") if subtree else [(path, node)]
    for p, n in walk:
        for i in n.items:
            it = mm.items[i]
            rows.append({"concept": p.split(SEP)[-1], "information": it.text, "source": it.title or it.source_id,
                         "url": it.url, "source_id": it.source_id, "turn": it.turn})
    return rows


def run_summary(r, state) -> dict:  # noqa: ANN001 - redis.Redis, research.models.RunState
    """:func:`summary` of a stored Co-STORM run read from Redis (``research.costorm`` readers),
    plus ``experts`` (names); the stop reason is ``RunState.stop_reason``, else the round-table's."""
    from research.costorm.state import get_meta, get_mindmap, get_turns  # noqa: PLC0415

    meta = get_meta(r, state.run_id)
    out = summary(get_turns(r, state.run_id), get_mindmap(r, state.run_id), meta.queries_used,
                  state.stop_reason or meta.stop_reason, state.config.costorm.model_dump())
    out["experts"] = [e.name for e in meta.experts]
    return out
