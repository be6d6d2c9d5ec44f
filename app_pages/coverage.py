"""Coverage: sources per syllabus question vs min_sources (docs/design.md § Completion), progress and completion."""

import streamlit as st

from research.errors import InputError
from research.models import RunState
from research.ui import context
from research.ui.charts import coverage_figure, coverage_table
from research.ui.citations import code, plain
from research.ui.coverage_view import link_maps, passage_lines, question_evidence

store = context.get_store()
state = context.select_run(store)


def render(state: RunState) -> None:
    context.run_header(store, state, page_key="coverage")
    collector = store.collector(state.run_id)
    try:
        finalized = collector.finalize_sources()
        progress = collector.get_progress()
        completion = collector.check_completion(min_databases=state.config.min_databases)
    except InputError:  # the planner has not stored the syllabus yet
        st.info("The question syllabus is not ready yet.", icon=":material/hourglass_top:")
        return

    c1, c2, c3 = st.columns(3)
    c1.metric("Sources", finalized.get("total", 0))
    table = coverage_table(finalized)
    c2.metric("Questions covered", f"{int((table['status'] == '✓').sum())}/{len(table)}")
    c3.metric("Ready", "yes" if completion.get("ready") else "not yet")
    st.plotly_chart(coverage_figure(finalized), width="stretch")
    st.dataframe(table, hide_index=True, width="stretch")

    st.subheader("Progress", anchor=False)
    st.markdown(plain(progress.get("summary", "")))
    if progress.get("next_focus"):
        st.markdown("**Next focus:** " + ", ".join(code(k) for k in progress["next_focus"]))
    st.subheader("Completion check", anchor=False)
    if completion.get("ready"):
        st.success(plain(completion.get("progress", "")), icon=":material/task_alt:")
    else:
        st.warning(plain(completion.get("progress", "")), icon=":material/warning:")
    if completion.get("databases"):  # the run asked for sources from several databases
        st.markdown(f"**Databases:** {plain(completion['databases'])}")
    for key, msg in (completion.get("missing") or {}).items():
        st.markdown(f"- {code(key)}: {plain(msg)}")
    if completion.get("suggestion"):
        st.caption(plain(completion["suggestion"]))

    st.subheader("Evidence per question", anchor=False)
    st.caption(
        "A source counts for a question only with a passage that answers it; these are the "
        "passages, best first, with their evidence score (0–1)."
    )
    sources, artifacts = link_maps(store, state.run_id)
    for row in question_evidence(store, state.run_id):
        with st.expander(row.title(), expanded=not row.met):
            if not row.passages:
                st.markdown("No passage of a saved source answers this question yet.")
            for line in passage_lines(state.run_id, row.passages, sources, artifacts):
                st.markdown(line)


if state:
    context.live(store, state, render)
