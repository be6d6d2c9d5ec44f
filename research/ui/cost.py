"""Cost page helpers: plotly figures and tables of a run's LLM usage report
(``research.llm.usage.usage_report``): tokens and USD by phase, role and model, and the
context reduction (docs/design.md § Context reduction). Pure functions of the report dict; the page only renders."""

from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

from research.engines.labels import planned_line

DIMS = {"phase": "by_phase", "role": "by_role", "model": "by_model"}
_LEGEND = dict(orientation="h", yanchor="bottom", y=1.0, xanchor="right", x=1.0)


def breakdown_rows(report: dict, dim: str) -> list[dict]:
    """Rows ``{dim, [model,] calls, prompt_tokens, cached_prompt_tokens, completion_tokens,
    cost_usd, retries}`` for ``dim`` in phase/role/model, most expensive first; by role, ``model``
    names the model(s) that answered the role (``usage_report``'s ``models_by_role``)."""
    models = report.get("models_by_role", {}) if dim == "role" else {}
    rows = [
        {
            dim: name,
            **({"model": ", ".join(models.get(name, []))} if dim == "role" else {}),
            "calls": v.get("calls", 0),
            "prompt_tokens": v.get("prompt_tokens", 0),
            "cached_prompt_tokens": v.get("cached_prompt_tokens", 0),
            "completion_tokens": v.get("completion_tokens", 0),
            "cost_usd": round(v.get("cost_usd", 0.0), 6),
            "retries": v.get("retries", 0),
        }
        for name, v in report.get(DIMS[dim], {}).items()
    ]
    return sorted(rows, key=lambda r: (-r["cost_usd"], str(r[dim])))


def cards_caption(report: dict) -> str | None:
    """Which model made the summary cards (the compressor role), e.g. ``"Summary cards made by
    openai/gpt-4o-mini (39 calls)."``, or for a local model's cards made offline by design
    ``research.engines.labels.planned_line``; None when no card was made by a model."""
    models = report.get("models_by_role", {}).get("compressor")
    calls = report.get("by_role", {}).get("compressor", {}).get("calls", 0)
    offline = {k: v for k, v in (report.get("offline_by_design") or {}).items() if k == "compress"}
    if offline:  # a local model's cards, made offline by design
        return planned_line(offline)
    if not models:
        return None
    return f"Summary cards made by {', '.join(models)} ({calls} calls)."


def local_caption(report: dict) -> str | None:
    """``"openai/smollm2: local model, no charge."`` for the models served locally at no price
    (``usage_report``'s ``local_models``); None when there are none."""
    models = report.get("local_models") or []
    if not models:
        return None
    return " ".join(f"{m}: local model, no charge." for m in models)


def tokens_figure(report: dict, dim: str) -> go.Figure:
    """Stacked bars of prompt and completion tokens per ``dim`` value."""
    rows = breakdown_rows(report, dim)
    names = [str(r[dim]) for r in rows]
    fig = go.Figure(
        [
            go.Bar(name="prompt tokens", x=names, y=[r["prompt_tokens"] for r in rows]),
            go.Bar(name="completion tokens", x=names, y=[r["completion_tokens"] for r in rows]),
        ]
    )
    fig.update_layout(
        barmode="stack",
        title=f"Tokens by {dim}",
        height=320,
        margin=dict(t=60, b=20, l=20, r=20),
        yaxis_title="tokens",
        legend=_LEGEND,
    )
    return fig


def cost_figure(report: dict, dim: str) -> go.Figure:
    """Bars of USD per ``dim`` value."""
    rows = breakdown_rows(report, dim)
    fig = go.Figure(
        go.Bar(
            x=[str(r[dim]) for r in rows],
            y=[r["cost_usd"] for r in rows],
            text=[f"${r['cost_usd']:.4f}" for r in rows],
            textposition="outside",
            textangle=0,
            cliponaxis=False,
        )
    )
    fig.update_layout(
        title=f"Cost (USD) by {dim}",
        height=320,
        margin=dict(t=60, b=20, l=20, r=20),
        yaxis_title="USD",
        uniformtext=dict(minsize=9, mode="hide"),
    )
    return fig


def column_config(dim: str) -> dict:
    """``st.dataframe`` column labels and formats for ``breakdown_rows(report, dim)``: tokens
    with thousands separators, USD to 4 decimals."""
    return {
        dim: st.column_config.TextColumn(dim.capitalize()),
        "calls": st.column_config.NumberColumn("LLM calls", format="%d"),
        "model": st.column_config.TextColumn("Model"),
        "prompt_tokens": st.column_config.NumberColumn("Prompt tokens", format="localized"),
        "cached_prompt_tokens": st.column_config.NumberColumn(
            "Cached prompt tokens", format="localized"
        ),
        "completion_tokens": st.column_config.NumberColumn("Completion tokens", format="localized"),
        "cost_usd": st.column_config.NumberColumn("Cost (USD)", format="$%.4f"),
        "retries": st.column_config.NumberColumn("Retries", format="%d"),
    }


def context_figure(report: dict) -> go.Figure | None:
    """Raw tool-output tokens vs the tool tokens actually sent (None before any tool call)."""
    ctx = report.get("context") or {}
    if not ctx.get("raw_tool_tokens"):
        return None
    vals = [ctx["tool_tokens_sent"], ctx["raw_tool_tokens"]]
    fig = go.Figure(
        go.Bar(
            y=["sent to the model (snippets + cards)", "raw tool outputs (if injected)"],
            x=vals,
            orientation="h",
            text=[f"{v:,} tokens" for v in vals],
            textposition="auto",
        )
    )
    pct = ctx.get("context_reduction_pct")
    fig.update_layout(
        title=f"Context reduction: {pct}%" if pct is not None else "Context",
        height=220,
        margin=dict(t=40, b=20, l=20, r=20),
        xaxis_title="tokens",
    )
    return fig
