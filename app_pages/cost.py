"""Cost: a run's LLM calls, tokens and USD by phase, role and model; context reduction; budget."""

import streamlit as st

from research.engines.labels import OFFLINE_LABEL
from research.llm.usage import usage_report
from research.models import RunState
from research.ui import context
from research.ui.cost import (
    breakdown_rows,
    cards_caption,
    column_config,
    context_figure,
    cost_figure,
    local_caption,
    tokens_figure,
)

store = context.get_store()
state = context.select_run(store)


def render(state: RunState) -> None:
    context.run_header(store, state, page_key="cost")
    context.engine_banner(state)
    rep = usage_report(store, state.run_id)
    if state.config.engine != "litellm" and not rep["llm_calls"]:
        st.info(f"This run ran in {OFFLINE_LABEL}: no LLM calls, no cost.", icon=":material/info:")
    if rep["budget_exhausted"]:
        st.warning(
            f"Budget exhausted (budget: ${rep['budget_usd']} / {rep['budget_tokens']} tokens): the run "
            "finished its remaining steps without LLM calls.",
            icon=":material/savings:",
        )
    c = st.columns(6)
    c[0].metric("LLM calls", rep["llm_calls"])
    c[1].metric("Tokens", f"{rep['total_tokens']:,}")
    c[2].metric(
        "Cached tokens",
        f"{rep['cached_prompt_tokens']:,}",
        help="Prompt tokens the provider served from its prompt cache (as litellm reports them).",
    )
    c[3].metric("Cost", f"${rep['cost_usd']:.4f}")
    c[4].metric("Retries", rep["retries"])
    pct = rep["context"]["context_reduction_pct"]
    c[5].metric("Context reduction", f"{pct}%" if pct is not None else "–")
    local = local_caption(rep)
    if local:
        st.caption(f":material/computer: {local}")
    cards = cards_caption(rep)
    if cards:
        st.caption(cards)
    if rep["budget_usd"] or rep["budget_tokens"]:
        st.caption(
            f"Budget: {'$' + format(rep['budget_usd'], 'g') if rep['budget_usd'] else 'no USD cap'} · "
            f"{format(rep['budget_tokens'], ',') + ' tokens' if rep['budget_tokens'] else 'no token cap'}"
        )
    for dim, tab in zip(
        ("phase", "role", "model"), st.tabs(["By phase", "By role", "By model"]), strict=True
    ):
        with tab:
            left, right = st.columns(2)
            left.plotly_chart(tokens_figure(rep, dim), width="stretch", key=f"tokens_{dim}")
            right.plotly_chart(cost_figure(rep, dim), width="stretch", key=f"cost_{dim}")
            st.dataframe(
                breakdown_rows(rep, dim),
                hide_index=True,
                width="stretch",
                column_config=column_config(dim),
            )
    fig = context_figure(rep)
    if fig is not None:
        st.plotly_chart(fig, width="stretch")
    st.caption(
        "Context reduction (docs/design.md § Context reduction) = 1 − tool tokens sent / raw tool-output tokens. "
        f"Prompt tokens sent in context: {rep['context']['prompt_tokens_sent']:,}; without offload they "
        f"would have been {rep['context']['prompt_tokens_without_offload']:,}."
    )


if state:
    context.live(store, state, render)
