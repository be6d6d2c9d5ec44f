"""Report: the cited report (hover a [n] for the source, click to jump to it), references linked to
their URL and artifact, downloads in every format, the analysis beside the text; the analyst's
desk (Edit, Versions, Comments: ``research.ui.desk``). ``&view=read`` gives a clean read-only view
for sharing (no editor); ``&version=N`` shows version N instead of the current one."""

import streamlit as st

from research.costorm.summary import INTENT_LABELS, run_summary
from research.export.bundle import ReportBundle, load_bundle
from research.models import Analysis, Report, RunState
from research.ui import context, desk, nav, report_view
from research.ui.citations import anchor_html, plain, report_body_markdown
from research.ui.followups import render_audit, render_followups
from research.ui.views import claims_markdown, contradictions_markdown, source_numbers
from research.ui.warnings import render_search_warnings

store = context.get_store()
read_only = st.query_params.get("view") == "read"
if read_only:
    report_view.hide_chrome()
    state, error = context.resolve_run(store, st.query_params.get("run"))
    if error or state is None:
        st.error(f"Cannot open run: {plain(error or 'no run given')}", icon=":material/error:")
        st.stop()
else:
    state = context.select_run(store)


def roundtable_panel(state: RunState) -> None:
    """Co-STORM runs have no STORM analysis: show what the report was written from."""
    st.subheader("Round-table", anchor=False)
    info = run_summary(store, state)
    a, b = st.columns(2)
    a.metric(
        "Turns",
        info["turns"],
        help=f"{info['warm_start_turns']} warm start + {info['roundtable_turns']} "
        f"round-table (cap {info['max_turns']})",
    )
    b.metric("Moderator turns", info["moderator_turns"])
    a.metric("Mind-map concepts", info["mindmap"]["nodes"])
    b.metric("Mind-map depth", info["mindmap"]["depth"])
    st.caption(
        f"Sections follow the mind map: one per concept with information, nested by depth. "
        f"{info['queries_used']} / {info['query_budget']} search queries"
        + (f" · {plain(info['stop_line'])}" if info["stop_line"] else "")
    )
    st.markdown("\n".join(f"- {INTENT_LABELS[k]}: {v}" for k, v in info["by_intent"].items()))
    nav.page_link("mindmap", label="Open the mind map", run_id=state.run_id)


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
    st.caption(
        f"LLM calls {usage.llm_calls} · tokens {usage.prompt_tokens + usage.completion_tokens:,} · "
        f"cost ${usage.cost_usd:.4f}".replace("$", "\\$")
    )


def questions_table(run_id: str, report: Report) -> None:
    """How the report answers each syllabus question (links to sections and Coverage)."""
    table = report_view.questions_markdown(report)
    if not table:
        return
    answered = sum(q.status == "answered" for q in report.questions)
    st.subheader(f"Questions ({answered} of {len(report.questions)} answered)", anchor=False)
    st.markdown(table)
    if not read_only:
        nav.page_link("coverage", label="Sources per question on the Coverage page", run_id=run_id)


def report_text(bundle: ReportBundle, report: Report, *, title: bool) -> None:
    if title:
        st.title(plain(report.title), anchor=False)
    questions_table(bundle.state.run_id, report)
    st.markdown(report_body_markdown(report, bundle.tooltips()))
    st.subheader(f"References ({len(report.references)})", anchor=False)
    with st.container(gap=None):
        for ref in report.references:
            st.markdown(anchor_html(ref.number), unsafe_allow_html=True)  # id only, no source text
            st.markdown(report_view.reference_line(bundle, ref, links=not read_only))


def version_line(bundle: ReportBundle) -> None:
    shown, problem = desk.shown_version(store, bundle.state.run_id)
    if problem:
        st.warning(plain(problem) + " Showing the current version.", icon=":material/history:")
    if shown is not None:
        st.caption(plain(desk.version_caption(shown, bundle.versions)))
    if bundle.header:
        st.caption(plain(bundle.header))


def render(state: RunState) -> None:
    shown, _ = desk.shown_version(store, state.run_id)
    version = shown.number if shown and desk.requested_version() else None
    if read_only:
        bundle = load_bundle(store, state.run_id, version=version)
        if bundle.report is None:
            st.info("This run has no report yet.", icon=":material/hourglass_top:")
            return
        context.engine_banner(state)
        version_line(bundle)
        report_text(bundle, bundle.report, title=True)
        render_followups(store, state, bundle.report.references, bundle.tooltips(), read_only=True)
        desk.comments_readonly(store, state.run_id)
        return
    context.run_header(store, state, page_key="report")
    context.engine_banner(state)
    render_search_warnings(store, state.run_id)
    bundle = load_bundle(store, state.run_id, version=version)
    report = bundle.report
    if report is None:
        st.info(
            "The report is written in the last phase (synthesizing); it appears here when ready.",
            icon=":material/hourglass_top:",
        )
        report_view.download_buttons(store, state, with_report=False)
        return
    mode = desk.mode_picker(state.run_id)
    if mode != "Read":
        desk.render_mode(store, state, mode, report, bundle.version)
        return
    main, side = st.columns([3, 1.3], gap="large")
    with main:
        with_comments = st.toggle("Comments appendix in downloads", key="dl_comments")
        report_view.download_buttons(
            store, state, with_report=True, version=version, comments=with_comments
        )
        version_line(bundle)
        st.caption(
            "Hover a citation for its source and the cited passage; click it to jump to the reference."
        )
        report_text(
            bundle, report, title=report.title != state.topic
        )  # the header already shows the topic
        render_followups(store, state, report.references, bundle.tooltips())
        desk.comments_readonly(store, state.run_id)
    with side:
        if state.status == "complete":
            render_audit(store, state)
        if state.mode == "costorm":
            roundtable_panel(state)
        else:
            analysis_panel(state.run_id, report)


if state:
    context.live(store, state, render)
