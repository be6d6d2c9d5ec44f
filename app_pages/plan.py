"""Plan: the plan and its steps, the question syllabus, perspectives and the related-topic survey;
for a run awaiting review an editor with Approve / Cancel (research.ui.plan_editor)."""

import streamlit as st

from research.models import Perspective, Plan, RunState, Syllabus, TopicOutline
from research.ui import context
from research.ui.citations import plain
from research.ui.plan_editor import render_editor
from research.ui.views import perspective_card, syllabus_rows
from research.ui.warnings import render_search_warnings

store = context.get_store()
state = context.select_run(store)


def render(state: RunState) -> None:
    context.run_header(store, state, page_key="plan")
    render_search_warnings(store, state.run_id)
    plan = store.get_doc(state.run_id, "plan", Plan)
    if plan is None:
        st.info("The plan is not ready yet.", icon=":material/hourglass_top:")
        return
    if state.status == "awaiting_review":
        render_editor(store, state.run_id)
        render_survey(state)
        return
    st.subheader(plain(plan.plan_title), anchor=False)
    st.markdown(
        "\n".join(f"{s.step_id}. **{plain(s.title)}** — {plain(s.description)}" for s in plan.steps)
    )

    syllabus = store.get_doc(state.run_id, "syllabus", Syllabus)
    st.subheader(
        "Question syllabus" + (f" · {plain(syllabus.name)}" if syllabus else ""), anchor=False
    )
    if syllabus:
        st.dataframe(syllabus_rows(syllabus), hide_index=True, width="stretch")
    else:
        st.caption("No syllabus yet.")

    perspectives = store.get_doc_list(state.run_id, "perspectives", Perspective)
    st.subheader(f"Perspectives ({len(perspectives)})", anchor=False)
    cols = st.columns(min(3, max(1, len(perspectives))))
    for i, p in enumerate(perspectives):
        with cols[i % len(cols)], st.container(border=True):
            st.markdown(perspective_card(p))

    render_survey(state)


def render_survey(state: RunState) -> None:
    survey = store.get_doc_list(state.run_id, "survey", TopicOutline)
    st.subheader(f"Related-topic survey ({len(survey)} outlines)", anchor=False)
    for outline in survey:
        with st.expander(plain(outline.topic)):
            st.markdown("\n".join(f"- {plain(s)}" for s in outline.sections) or "_no sections_")
            if outline.source:
                st.caption(f"source: {plain(outline.source)}")


if state:
    context.live(store, state, render)
