"""Conversations: STORM runs show one tab per perspective (WikiWriter ↔ TopicExpert turns);
Co-STORM runs show the round-table transcript with role and intent badges and, while the run is
active, the analyst's message box."""

import streamlit as st

from research.costorm import get_meta, get_turns, pending_messages, post_analyst_message
from research.costorm.summary import INTENT_LABELS, intent_counts
from research.errors import ResearchError
from research.models import ACTIVE_STATUSES, Perspective, RunState
from research.ui import context
from research.ui.citations import answer_markdown, code, plain, source_markdown
from research.ui.costorm_views import AVATARS, turn_caption
from research.ui.views import group_turns, tab_label

store = context.get_store()
state = context.select_run(store)


def render_storm(state: RunState) -> None:
    groups = group_turns(
        store.get_turns(state.run_id), store.get_doc_list(state.run_id, "perspectives", Perspective)
    )
    if not groups:
        st.info("No conversations yet.", icon=":material/hourglass_top:")
        return
    for tab, (name, turns) in zip(
        st.tabs([tab_label(n, len(t)) for n, t in groups.items()]), groups.items(), strict=True
    ):
        with tab:
            if not turns:
                st.caption("No finished turns yet for this perspective.")
            for turn in turns:
                with st.chat_message("user"):
                    st.caption(f"WikiWriter · {plain(name)} · turn {turn.turn_number}")
                    st.markdown(plain(turn.question))
                with st.chat_message("assistant"):
                    st.caption("TopicExpert")
                    st.markdown(answer_markdown(turn.answer) or "_no answer_")
                    if turn.search_queries:
                        st.caption("Searched: " + " · ".join(code(q) for q in turn.search_queries))
                    with st.expander(f"Sources ({len(turn.sources)})"):
                        st.markdown(
                            "\n".join(f"- {source_markdown(s)}" for s in turn.sources) or "_none_"
                        )


def analyst_box(state: RunState) -> None:
    with st.form(f"analyst_{state.run_id}", clear_on_submit=True, border=True):
        text = st.text_area(
            "Join the round-table as the analyst",
            max_chars=1000,
            height=80,
            placeholder="Ask a question or steer the experts; it enters at the next turn.",
        )
        if st.form_submit_button("Post to the round-table", icon=":material/send:"):
            try:
                n = post_analyst_message(store, state.run_id, text)
                st.toast(f"Queued ({n} waiting); it joins at the next turn.")
            except ResearchError as exc:
                st.error(plain(exc.message), icon=":material/error:")
    waiting = pending_messages(store, state.run_id)
    if waiting:
        st.caption(f"Waiting to join: {len(waiting)} message(s).")


def render_costorm(state: RunState) -> None:
    turns = get_turns(store, state.run_id)
    meta = get_meta(store, state.run_id)
    if state.status in ACTIVE_STATUSES:
        analyst_box(state)
    if meta.experts:
        st.markdown("**Experts:** " + " · ".join(f"{plain(e.name)}" for e in meta.experts))
    counts = intent_counts(turns)
    warm = sum(t.warm_start for t in turns)
    moderator = sum(t.kind == "moderator" for t in turns)
    st.caption(
        f"{len(turns)} turns ({warm} warm start, {moderator} moderator) · "
        + " · ".join(f"{INTENT_LABELS[k]}: {v}" for k, v in counts.items())
    )
    if not turns:
        st.info(
            "The round-table has not started yet (warm start: background search and experts).",
            icon=":material/hourglass_top:",
        )
        return
    for turn in turns:
        with st.chat_message(turn.kind, avatar=AVATARS[turn.kind]):
            st.markdown(turn_caption(turn))
            body = answer_markdown(turn.utterance) or "_no answer_"
            if turn.kind == "moderator":
                st.info(body, icon=":material/gavel:")
            else:
                st.markdown(body)
            if turn.question and turn.kind == "expert":
                st.caption(f"Answering: {plain(turn.question)}")
            if turn.queries:
                st.caption("Searched: " + " · ".join(code(q) for q in turn.queries))
            if turn.sources:
                with st.expander(f"Sources ({len(turn.sources)})"):
                    st.markdown("\n".join(f"- {source_markdown(s)}" for s in turn.sources))


def render(state: RunState) -> None:
    context.run_header(store, state, page_key="conversations")
    context.engine_banner(state)
    if state.mode == "costorm":
        render_costorm(state)
    else:
        render_storm(state)


if state:
    context.live(store, state, render)
