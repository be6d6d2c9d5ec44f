"""Report: the cited report ([n] → references anchors), Markdown download, analysis side panel."""

import streamlit as st

from research.export import safe_filename
from research.models import Analysis, Report, RunState
from research.ui import context
from research.ui.citations import anchor_html, plain, reference_markdown, report_body_markdown
from research.ui.views import claims_markdown, contradictions_markdown, source_numbers

store = context.get_store()
state = context.select_run(store)


def analysis_panel(run_id: str, report: Report) -> None:
    st.subheader("Analysis", anchor=False)
    analysis = store.get_doc(run_id, "analysis", Analysis)
    if analysis is None:
        st.caption("No analysis stored for this run.")
        return
    a, b = st.columns(2)
    a.metric("Facts", analysis.facts_total)
    b.metric("Single-source", analysis.single_source)
    a.metric("Cross-validated", len(analysis.cross_validated))
    b.metric("Contradictions", len(analysis.contradictions))
    numbers = source_numbers(report)
    st.markdown("**Cross-validated claims** (≥ 2 sources)")
    st.markdown(claims_markdown(analysis, numbers) or "_none found_")
    st.markdown("**Contradictions**")
    blocks = contradictions_markdown(analysis, numbers)
    for block in blocks:
        with st.container(border=True):
            st.markdown(block)
    if not blocks:
        st.caption("None found.")
    usage = store.get_usage(run_id)
    st.caption(f"LLM calls {usage.llm_calls} · tokens {usage.prompt_tokens + usage.completion_tokens:,} · "
               f"cost ${usage.cost_usd:.4f}".replace("$", "\\$"))


def render(state: RunState) -> None:
    context.run_header(store, state, page_key="report")
    context.engine_banner(state)
    report = store.get_doc(state.run_id, "report", Report)
    if report is None:
        st.info("The report is written in the last phase (synthesizing); it appears here when ready.",
                icon=":material/hourglass_top:")
        return
    main, side = st.columns([3, 1.3], gap="large")
    with main:
        st.download_button("Download report (.md)", data=report.markdown, file_name=safe_filename(report.title, "md"),
                           mime="text/markdown", icon=":material/download:", on_click="ignore")
        if report.title != state.topic:  # the run header already shows the topic as the page title
            st.title(plain(report.title), anchor=False)
        st.markdown(report_body_markdown(report))
        st.subheader(f"References ({len(report.references)})", anchor=False)
        with st.container(gap=None):
            for ref in report.references:
                st.markdown(anchor_html(ref.number), unsafe_allow_html=True)  # id only, no source text
                st.markdown(reference_markdown(ref))
    with side:
        analysis_panel(state.run_id, report)


if state:
    context.live(store, state, render)
