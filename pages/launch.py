"""Launch: start a run (form → jobs.start_run) and browse the run history."""

import streamlit as st

from research import jobs
from research.config import load_settings
from research.errors import ResearchError
from research.syllabus import template_names
from research.ui import context, nav
from research.ui.history import history_rows, is_active, run_label, source_counts

store = context.get_store()
settings = load_settings()

st.title("Launch a research run", anchor=False)
templates = template_names()
engines = ["extractive"] + (["litellm"] if settings.llm_model else [])

with st.form("launch"):
    topic = st.text_area("Research question", placeholder="e.g. Trastuzumab in HER2-positive breast cancer",
                         height=90)
    c1, c2 = st.columns([3, 1])
    corpus = c1.text_input("Corpus (JSONL file or folder of documents)", value=str(settings.default_corpus))
    template = c2.selectbox("Question template", templates,
                            index=templates.index("general") if "general" in templates else 0)
    c3, c4, c5 = st.columns(3)
    max_perspectives = c3.number_input("Max perspectives", min_value=1, max_value=12, value=4)
    max_turns = c4.number_input("Max turns per conversation", min_value=1, max_value=10, value=3)
    engine = c5.selectbox("Engine", engines, format_func=lambda e: "offline extractive mode" if e == "extractive"
                          else f"litellm ({settings.llm_model})")
    submitted = st.form_submit_button("Start run", type="primary", icon=":material/play_arrow:")

if submitted:
    try:
        config = jobs.make_config(topic, corpus=corpus, template=template, max_perspectives=int(max_perspectives),
                                  max_turns=int(max_turns), engine=engine)
        st.session_state["launched_run"] = jobs.start_run(config)
    except ResearchError as exc:
        st.error(exc.message, icon=":material/error:")

if launched := st.session_state.get("launched_run"):
    st.success(f"Run `{launched}` started. It keeps running if you close this tab; follow it here:",
               icon=":material/check_circle:")
    nav.run_page_links(launched)

polling = any(is_active(r.status) for r in store.list_runs(limit=100))


@st.fragment(run_every=context.POLL_S if polling else None)
def history() -> None:
    st.subheader("Run history", anchor=False)
    current = store.list_runs(limit=100)
    if polling and not any(is_active(r.status) for r in current):
        st.rerun()  # the last active run finished: redraw once without polling
    if not current:
        st.caption("No runs yet.")
        return
    rows = history_rows(current, source_counts(store, [r.run_id for r in current]))
    st.dataframe(rows, hide_index=True, width="stretch",
                 column_order=["topic", "status", "sources", "created", "duration", "plan", "report", "run_id"],
                 column_config={
                     "topic": st.column_config.TextColumn("Topic", width="large"),
                     "sources": st.column_config.NumberColumn("Sources"),
                     "plan": st.column_config.LinkColumn("Plan", display_text="open plan"),
                     "report": st.column_config.LinkColumn("Report", display_text="open report"),
                     "run_id": st.column_config.TextColumn("Run id"),
                 })
    labels = {r.run_id: run_label(r) for r in current}
    pick = st.selectbox("Open a run", list(labels), index=None, format_func=labels.get,
                        placeholder="Choose a run to open its pages")
    if pick:
        nav.run_page_links(pick)


history()
