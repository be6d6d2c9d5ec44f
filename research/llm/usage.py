"""A run's LLM usage report (``research show --json`` → ``llm``; the Cost page).

Context efficiency (docs/design.md § Context reduction): ``tool_tokens_sent`` = tokens of tool output (numbered
snippets, summary cards, read_artifact results) actually placed in in-context prompts;
``raw_tool_tokens`` = tokens of every raw tool output (the artifacts) that would have been
injected without compression/offload. ``context_reduction_pct`` = 100 × (1 − sent / raw).
``prompt_tokens_sent`` = prompt tokens of in-context calls (the out-of-band compressor
excluded); ``prompt_tokens_without_offload`` = that − sent + raw; ``overall_reduction_pct`` is
their ratio. Units: tokens, USD.
"""

from __future__ import annotations

from typing import Any

from research.store.runs import RunStore


def models_by_role(role_model: dict[str, dict[str, Any]]) -> dict[str, list[str]]:
    """``{role: [model, …]}`` (most calls first) from the ``role:model`` breakdown."""
    out: dict[str, list[tuple[int, str]]] = {}
    for key, row in role_model.items():
        role, _, model = key.partition(":")
        out.setdefault(role, []).append((-int(row.get("calls", 0)), model))
    return {role: [m for _, m in sorted(rows)] for role, rows in out.items()}


def usage_report(store: RunStore, run_id: str) -> dict[str, Any]:
    """``{llm_calls, prompt_tokens, completion_tokens, cached_prompt_tokens (of prompt_tokens,
    from the provider's prompt cache), total_tokens, cost_usd, retries,
    by_phase, by_role, by_model, by_step, models_by_role ({role: [model, …]}: e.g. which model
    made the cards), budget_exhausted, fallbacks ({step: n} answered offline: a reply still
    invalid or weak after its re-ask, or a provider failing after its retries),
    offline_by_design ({step: n} answered offline as planned, not for a failed reply: a local
    model's summary cards, ``RESEARCH_LOCAL_COMPRESS``), local_models
    (models served locally and priced at zero: "local model, no charge"), queued (calls of the
    run's model waiting for a slot now), context: {...}}`` (module doc)."""
    t = store.usage_totals(run_id)
    by = store.usage_breakdown(run_id)
    cards = store.get_cards(run_id)
    raw = sum(c.raw_tokens for c in cards)
    sent = int(t.get("tool_tokens", 0))
    ctx_prompt = int(t.get("context_tokens", 0))
    without = ctx_prompt - sent + raw
    state = store.get_run(run_id)
    for dim in by.values():
        for row in dim.values():
            row["cost_usd"] = round(row.get("cost_usd", 0.0), 8)
    return {
        "llm_calls": int(t.get("llm_calls", 0)),
        "prompt_tokens": int(t.get("prompt_tokens", 0)),
        "completion_tokens": int(t.get("completion_tokens", 0)),
        "cached_prompt_tokens": int(t.get("cached_prompt_tokens", 0)),
        "total_tokens": int(t.get("prompt_tokens", 0)) + int(t.get("completion_tokens", 0)),
        "cost_usd": round(float(t.get("cost_usd", 0.0)), 8),
        "retries": int(t.get("retries", 0)),
        "by_phase": by.get("phase", {}),
        "by_role": by.get("role", {}),
        "by_model": by.get("model", {}),
        "by_step": by.get("step", {}),
        "models_by_role": models_by_role(by.get("role_model", {})),
        "budget_exhausted": state.budget_exhausted,
        "fallbacks": _step_calls(by.get("fallback", {})),
        "offline_by_design": _step_calls(by.get("offline", {})),
        "local_models": sorted(m for m, row in by.get("model", {}).items() if row.get("local")),
        "queued": state.llm_queued,
        "budget_usd": state.config.budget_usd,
        "budget_tokens": state.config.budget_tokens,
        "context": {
            "tool_calls": len(cards),
            "raw_tool_tokens": raw,
            "tool_tokens_sent": sent,
            "context_reduction_pct": round(100.0 * (1 - sent / raw), 1)
            if raw and t.get("llm_calls")
            else None,
            "prompt_tokens_sent": ctx_prompt,
            "prompt_tokens_without_offload": without,
            "overall_reduction_pct": round(100.0 * (1 - ctx_prompt / without), 1)
            if without > 0 and ctx_prompt
            else None,
        },
    }


def _step_calls(rows: dict[str, dict[str, Any]]) -> dict[str, int]:
    """``{step: calls}`` of one kind of ``usage_breakdown`` rows (``fallback``, ``offline``)."""
    return {step: int(row.get("calls", 0)) for step, row in rows.items()}
