"""Mind map (Co-STORM runs): the concepts learned, as a treemap; pick a concept to see its information and sources."""

import streamlit as st

from research.costorm import get_meta, get_mindmap
from research.models import RunState
from research.ui import context
from research.ui.citations import plain, safe_url
from research.ui.costorm_views import (
    clicked_node,
    mindmap_figure,
    node_items,
    node_label,
    node_options,
)

store = context.get_store()
state = context.select_run(store)


def render(state: RunState) -> None:
    context.run_header(store, state, page_key="mindmap")
    if state.mode != "costorm":
        st.info(
            "This run is in STORM mode; the mind map exists only for Co-STORM runs.",
            icon=":material/info:",
        )
        return
    context.engine_banner(state)
    mm = get_mindmap(store, state.run_id)
    if mm is None or not mm.items:
        st.info(
            "The mind map is empty so far: it fills as the round-table finds information.",
            icon=":material/hourglass_top:",
        )
        return
    meta = get_meta(store, state.run_id)
    cols = st.columns(4)
    cols[0].metric("Concepts", len(node_options(mm)))
    cols[1].metric("Pieces of information", len(mm.items))
    cols[2].metric("Depth", mm.depth())
    cols[3].metric("Search queries", f"{meta.queries_used} / {state.config.costorm.query_budget}")
    st.caption("Click a concept in the map (or pick it below) to see its information and sources.")
    options = node_options(mm)
    key, gen_key = f"mm_node_{state.run_id}", f"mm_chart_gen_{state.run_id}"
    chart_key = f"mindmap_{state.run_id}_{st.session_state.get(gen_key, 0)}"
    clicked = clicked_node(st.session_state.get(chart_key), options)
    if (
        clicked
    ):  # a click in the map selects that concept; a fresh chart key drops plotly's click-zoom
        st.session_state[key] = clicked
        st.session_state[gen_key] = st.session_state.get(gen_key, 0) + 1
        chart_key = f"mindmap_{state.run_id}_{st.session_state[gen_key]}"
    if st.session_state.get(key) not in options:
        st.session_state[key] = max(options, key=lambda p: mm.find(p).total_items())
    st.plotly_chart(
        mindmap_figure(mm, selected=st.session_state[key]),
        key=chart_key,
        on_select="rerun",
        selection_mode=("points",),
        config={"displayModeBar": False},
    )
    path = st.selectbox("Concept", options, key=key, format_func=lambda p: node_label(mm, p))
    rows = node_items(mm, path)
    st.subheader(
        f"{plain(path.split(' > ')[-1])} · {len(rows)} pieces of information", anchor=False
    )
    for row in rows:
        url = safe_url(row["url"])
        src = f"[{plain(row['source'])}]({url})" if url else plain(row["source"])
        when = "background search" if row["turn"] == 0 else f"turn {row['turn']}"
        st.markdown(
            f"- {plain(row['information'])}  \n  :gray[{plain(row['concept'])} · {when} · "
            f"{row['source_id']} ·] {src}"
        )


if state:
    context.live(store, state, render)
