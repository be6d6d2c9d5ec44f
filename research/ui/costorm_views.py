"""What the Co-STORM pages show, computed outside Streamlit (pages stay thin): transcript
badges, the mind map as a Plotly treemap, a node's items with their sources. The run summary and
stop reasons (no Plotly; also used by the CLI) are in ``research.costorm.summary``."""

from __future__ import annotations

import plotly.graph_objects as go

from research.costorm.mindmap import SEP, MindMap
from research.costorm.summary import INTENT_LABELS
from research.models import CoStormTurn

INTENT_COLORS = {
    "original_question": "orange",
    "information_request": "blue",
    "potential_answer": "green",
    "further_details": "gray",
}
ROLE_COLORS = {"moderator": "violet", "analyst": "red", "expert": "primary"}
ROLE_ICONS = {
    "moderator": ":material/gavel:",
    "analyst": ":material/person:",
    "expert": ":material/school:",
}
AVATARS = {
    "moderator": ":material/gavel:",
    "analyst": ":material/person:",
    "expert": ":material/school:",
}


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
    fig = go.Figure(
        go.Treemap(
            ids=ids,
            labels=labels,
            parents=parents,
            values=values,
            branchvalues="total",
            customdata=hover,
            hovertemplate="<b>%{label}</b><br>%{customdata}<extra></extra>",
            textinfo="label+value",
            maxdepth=4,
            root_color="#f3f4f6",
            marker=dict(
                colorscale="Blues",
                colors=[p.count(SEP) for p in ids],
                line=dict(
                    width=[4 if p == selected else 1 for p in ids],
                    color=["#f97316" if p == selected else "white" for p in ids],
                ),
            ),
        )
    )
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
        points = event["selection"]["points"]  # type: ignore[index]  # Streamlit types the event loosely
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
    walk = (
        mm.walk(node, path.rsplit(SEP, 1)[0] if SEP in path else "") if subtree else [(path, node)]
    )
    for p, n in walk:
        for i in n.items:
            it = mm.items[i]
            rows.append(
                {
                    "concept": p.split(SEP)[-1],
                    "information": it.text,
                    "source": it.title or it.source_id,
                    "url": it.url,
                    "source_id": it.source_id,
                    "turn": it.turn,
                }
            )
    return rows
