"""Conversations: one tab per perspective, WikiWriter ↔ TopicExpert turns with their searches and sources."""

import streamlit as st

from research.models import Perspective, RunState
from research.ui import context
from research.ui.citations import answer_markdown, code, plain, source_markdown
from research.ui.views import group_turns, tab_label

store = context.get_store()
state = context.select_run(store)


def render(state: RunState) -> None:
    context.run_header(store, state, page_key="conversations")
    context.engine_banner(state)
    groups = group_turns(store.get_turns(state.run_id),
                         store.get_doc_list(state.run_id, "perspectives", Perspective))
    if not groups:
        st.info("No conversations yet.", icon=":material/hourglass_top:")
        return
    for tab, (name, turns) in zip(st.tabs([tab_label(n, len(t)) for n, t in groups.items()]), groups.items()):
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
                        st.markdown("\n".join(f"- {source_markdown(s)}" for s in turn.sources) or "_none_")


if state:
    context.live(store, state, render)
