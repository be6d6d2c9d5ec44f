"""Coverage data and figures (docs/design.md § Source collector: per-question source counts vs ``min_sources``).

Input everywhere is the collector's ``finalize_sources()`` dict::

    {"questions": {key: {"label", "min_sources", "sources": [{"source_type", ...}, ...]}},
     "sources": [...], "total": n}

Counts are sources per question (a source assigned to two questions counts in both).
"""

from __future__ import annotations

from collections import Counter

import pandas as pd
import plotly.graph_objects as go

OK_MARK = "✓"
WARN_MARK = "⚠"
_TYPE_COLORS = [
    "#1f5fbf",
    "#e07b39",
    "#3a9d5d",
    "#8e5cc4",
    "#c9a227",
    "#d64550",
    "#5aa9c9",
    "#7f7f7f",
]


def _questions(finalized: dict) -> list[tuple[str, dict]]:
    qs = (finalized or {}).get("questions") or {}
    return list(qs.items())


def coverage_long(finalized: dict) -> pd.DataFrame:
    """One row per (question, source_type): columns ``key, label, source_type, count``.

    Questions with no sources get no rows. Order: syllabus order, then source types by name.
    """
    rows = []
    for key, q in _questions(finalized):
        counts = Counter((s.get("source_type") or "unknown") for s in q.get("sources", []))
        for stype in sorted(counts):
            rows.append(
                {
                    "key": key,
                    "label": q.get("label", key),
                    "source_type": stype,
                    "count": counts[stype],
                }
            )
    return pd.DataFrame(rows, columns=["key", "label", "source_type", "count"])


def coverage_table(finalized: dict) -> pd.DataFrame:
    """One row per syllabus question: ``status, key, label, sources, min_sources, missing``.

    ``status`` is ✓ when ``sources >= min_sources`` else ⚠; ``missing`` = max(0, min − sources).
    """
    rows = []
    for key, q in _questions(finalized):
        n = len(q.get("sources", []))
        need = int(q.get("min_sources", 1))
        rows.append(
            {
                "status": OK_MARK if n >= need else WARN_MARK,
                "key": key,
                "label": q.get("label", key),
                "sources": n,
                "min_sources": need,
                "missing": max(0, need - n),
            }
        )
    return pd.DataFrame(
        rows, columns=["status", "key", "label", "sources", "min_sources", "missing"]
    )


def coverage_figure(finalized: dict) -> go.Figure:
    """Stacked bars of sources per question by ``source_type`` plus a ``min_sources`` marker.

    x: question label; y: number of sources. One ``go.Bar`` trace per source type (stacked),
    one ``go.Scatter`` trace named "min sources" drawn as a horizontal tick per question.
    """
    table = coverage_table(finalized)
    long = coverage_long(finalized)
    labels, keys = list(table["label"]), list(table["key"])
    fig = go.Figure()
    for i, stype in enumerate(sorted(set(long["source_type"]))):
        sub = dict(long[long["source_type"] == stype][["key", "count"]].itertuples(index=False))
        fig.add_trace(
            go.Bar(
                name=stype,
                x=labels,
                y=[int(sub.get(k, 0)) for k in keys],
                marker_color=_TYPE_COLORS[i % len(_TYPE_COLORS)],
                hovertemplate="%{x}<br>" + stype + ": %{y}<extra></extra>",
            )
        )
    fig.add_trace(
        go.Scatter(
            name="min sources",
            x=labels,
            y=list(table["min_sources"]),
            mode="markers",
            marker=dict(symbol="line-ew", size=40, line=dict(width=3, color="#222")),
            hovertemplate="%{x}<br>min sources: %{y}<extra></extra>",
        )
    )
    fig.update_layout(
        barmode="stack",
        height=380,
        margin=dict(l=10, r=10, t=30, b=10),
        legend=dict(orientation="h", y=1.12),
        yaxis_title="sources",
        xaxis_title=None,
    )
    return fig
