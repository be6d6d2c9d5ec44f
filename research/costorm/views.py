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
    return STOP_REASONS.get(reason, reason or "still running")


def mindmap_figure(mm: MindMap, height: int = 560) -> go.Figure:
    """Plotly treemap of the mind map: one box per concept sized by the information in its
    subtree; hover shows its own and total item counts."""
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
                               marker=dict(colorscale="Blues", colors=[p.count(SEP) for p in ids])))
    fig.update_layout(margin=dict(t=10, l=4, r=4, b=4), height=height)
    return fig


def node_options(mm: MindMap) -> list[str]:
    """Node paths (non-root) for the node picker, pre-order."""
    return [p for p, _ in mm.walk()][1:]


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
