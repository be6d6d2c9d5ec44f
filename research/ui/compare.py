"""Comparing 2–4 runs: configs, coverage, sources, cost/time, outlines and report diffs.

Everything here returns plain data or a plotly figure; ``app_pages/compare.py`` draws it.
Sources are matched across runs by the collector's dedup identity (docs/design.md § Source collector: source type +
external id when present, else the canonical URL), so the same paper found by two runs counts
once in "common".
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

import pandas as pd
import plotly.graph_objects as go

from research.errors import InputError
from research.models import Outline, Report, RunState, SourceRecord, Syllabus
from research.store.runs import RunStore
from research.store.source_input import dedup_key
from research.ui.history import duration_s, format_duration

MAX_RUNS = 4
DIFF_MAX_LINES = 2000
_COLORS = ["#1f5fbf", "#e07b39", "#3a9d5d", "#8e5cc4"]


@dataclass
class RunData:
    """What the comparison needs of one run."""

    state: RunState
    sources: list[SourceRecord]
    counts: dict[str, int]  # question key → sources
    labels: dict[str, str]  # question key → label
    outline: Outline | None
    report: Report | None

    @property
    def short(self) -> str:
        """``topic (first 30 chars) · id[:6]`` used as column and trace names."""
        t = self.state.topic if len(self.state.topic) <= 30 else self.state.topic[:29] + "…"
        return f"{t} · {self.state.run_id[:6]}"


def load_runs(store: RunStore, run_ids: list[str]) -> list[RunData]:
    """Read each run's state, sources, per-question counts, outline and report.

    Raises:
        InputError: fewer than 2 or more than ``MAX_RUNS`` ids. RunNotFoundError: unknown id.
    """
    if not 2 <= len(run_ids) <= MAX_RUNS:
        raise InputError(f"Pick 2 to {MAX_RUNS} runs to compare (got {len(run_ids)}).")
    out = []
    for rid in run_ids:
        state = store.get_run(rid)
        col = store.collector(rid)
        syllabus = store.get_doc(rid, "syllabus", Syllabus)
        try:
            counts = col.question_counts() if syllabus else {}
        except InputError:
            counts = {}
        out.append(
            RunData(
                state=state,
                sources=col.all_sources(),
                counts=counts,
                labels={q.key: q.label for q in syllabus.questions} if syllabus else {},
                outline=store.get_doc(rid, "outline", Outline),
                report=store.get_doc(rid, "report", Report),
            )
        )
    return out


def _config_fields(state: RunState) -> dict[str, str]:
    cfg = state.config.model_dump(mode="json")
    flat: dict[str, str] = {"status": state.status, "engine label": state.engine_label}
    for k, v in cfg.items():
        if isinstance(v, dict):
            for kk, vv in sorted(v.items()):
                flat[f"{k}.{kk}"] = str(vv)
            if not v:
                flat[k] = "{}"
        elif isinstance(v, list):
            flat[k] = ", ".join(map(str, v)) or "–"
        else:
            flat[k] = "–" if v is None else str(v)
    return flat


def config_table(runs: list[RunData]) -> pd.DataFrame:
    """Rows = config fields, columns = runs (``short`` names) plus ``differs`` (bool)."""
    fields = [_config_fields(r.state) for r in runs]
    names = list(dict.fromkeys(k for f in fields for k in f))
    rows = []
    for name in names:
        vals = [f.get(name, "–") for f in fields]
        rows.append(
            {
                "field": name,
                **{r.short: v for r, v in zip(runs, vals, strict=True)},
                "differs": len(set(vals)) > 1,
            }
        )
    return pd.DataFrame(rows)


def styled_config(table: pd.DataFrame):
    """The config table as a pandas Styler with differing rows highlighted (amber)."""

    def hl(row):
        return [
            "background-color: #fff3cd; font-weight: 600" if row["differs"] else "" for _ in row
        ]

    return table.style.apply(hl, axis=1)


def coverage_overlay(runs: list[RunData]) -> go.Figure:
    """Grouped bars: sources per syllabus question, one trace per run (questions of all runs)."""
    keys = list(dict.fromkeys(k for r in runs for k in r.counts))
    labels = {k: lab for r in runs for k, lab in r.labels.items()}
    fig = go.Figure()
    for i, r in enumerate(runs):
        fig.add_trace(
            go.Bar(
                name=r.short,
                x=[labels.get(k, k) for k in keys],
                y=[r.counts.get(k, 0) for k in keys],
                marker_color=_COLORS[i % len(_COLORS)],
            )
        )
    fig.update_layout(
        barmode="group",
        height=360,
        margin=dict(l=10, r=10, t=30, b=10),
        legend=dict(orientation="h", y=1.15),
        yaxis_title="sources",
    )
    return fig


def _identity(s: SourceRecord) -> str:
    return dedup_key(s.source_type, s.external_id, s.url)


def source_overlap(runs: list[RunData]) -> tuple[list[dict], list[dict]]:
    """``(counts, rows)``: per run ``{run, sources, common, unique}`` and one row per distinct
    source ``{title, type, id, url, in_runs, <run short>: bool...}`` (common first)."""
    sets = [{_identity(s): s for s in r.sources} for r in runs]
    common = set.intersection(*(set(s) for s in sets)) if sets else set()
    counts = []
    for r, s in zip(runs, sets, strict=True):
        others = set().union(*(set(o) for o in sets if o is not s))
        counts.append(
            {
                "run": r.short,
                "sources": len(s),
                "common": len(common),
                "unique": len(set(s) - others),
            }
        )
    everything: dict[str, SourceRecord] = {}
    for s in sets:
        for k, v in s.items():
            everything.setdefault(k, v)
    rows = []
    for k, v in everything.items():
        present = [k in s for s in sets]
        rows.append(
            {
                "title": v.title,
                "type": v.source_type,
                "id": v.external_id,
                "url": v.url,
                "in_runs": sum(present),
                **{r.short: p for r, p in zip(runs, present, strict=True)},
            }
        )
    rows.sort(key=lambda x: (-int(str(x["in_runs"])), str(x["title"])))
    return counts, rows


def cost_rows(store: RunStore, runs: list[RunData]) -> list[dict]:
    """Per run: ``run, status, llm_calls, tokens, cost_usd (USD), duration (text), duration_s (s),
    turns, sources, citations``."""
    out = []
    for r in runs:
        u = store.get_usage(r.state.run_id)
        secs = duration_s(r.state)
        out.append(
            {
                "run": r.short,
                "status": r.state.status,
                "llm_calls": u.llm_calls,
                "tokens": u.prompt_tokens + u.completion_tokens,
                "cost_usd": round(u.cost_usd, 6),
                "duration": format_duration(secs),
                "duration_s": round(secs, 1),
                "turns": store.count_turns(r.state.run_id),
                "sources": len(r.sources),
                "citations": len(r.report.references) if r.report else 0,
            }
        )
    return out


def outline_lines(run: RunData) -> list[str]:
    """The run's outline as plain lines (``1. Heading`` / ``   - Subsection``); falls back to
    the report's section headings; [] when neither exists."""
    if run.outline:
        lines = []
        for i, s in enumerate(run.outline.sections, 1):
            lines.append(f"{i}. {s.heading}")
            lines += [f"   - {x}" for x in s.subsections]
        return lines
    return [f"{i}. {s.heading}" for i, s in enumerate(run.report.sections, 1)] if run.report else []


def report_diff(a: RunData, b: RunData, context: int = 2) -> str:
    """Unified diff (difflib) of two reports' Markdown, at most ``DIFF_MAX_LINES`` lines; shown as
    text in ``st.code(language="diff")``, never as HTML."""
    left = (a.report.markdown if a.report else "").splitlines()
    right = (b.report.markdown if b.report else "").splitlines()
    diff = list(
        difflib.unified_diff(left, right, fromfile=a.short, tofile=b.short, n=context, lineterm="")
    )
    if len(diff) > DIFF_MAX_LINES:
        diff = diff[:DIFF_MAX_LINES] + [
            f"… {len(diff) - DIFF_MAX_LINES} more lines (export both reports to diff them)"
        ]
    return "\n".join(diff) or "(the reports are identical)"
