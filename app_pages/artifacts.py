"""Artifacts: summary cards of every tool call (docs/design.md § Tool-result compression) → their
raw files, shown and downloadable."""

from pathlib import PurePosixPath

import streamlit as st

from research.errors import ArtifactError
from research.models import ArtifactRecord, RunState
from research.ui import context
from research.ui.cards import (
    DISPLAY_MAX_CHARS,
    USEFULNESS,
    filter_cards,
    human_size,
    load_raw,
    mime_type,
    paginate,
    raw_bytes,
    reduction_pct,
    tool_names,
)
from research.ui.citations import code, plain, safe_markdown

PER_PAGE = 15
store = context.get_store()
state = context.select_run(store)


def show_card(run_id: str, rec: ArtifactRecord) -> None:
    with st.container(border=True):
        head, badge = st.columns([6, 1])
        head.markdown(f"**{plain(rec.card.summary_title) or 'untitled'}**")
        with badge:
            if rec.card.is_useful:
                st.badge("useful", icon=":material/check:", color="green")
            else:
                st.badge("not useful", icon=":material/block:", color="gray")
        who = f" · {plain(rec.perspective)}" if rec.perspective else ""
        st.caption(
            f"{plain(rec.tool_name)} · step {rec.step_id}: {plain(rec.step_title)}{who} · "
            f"{rec.raw_chars:,} raw chars ({rec.raw_tokens:,} tokens) → {rec.card_tokens:,} tokens in context"
        )
        if rec.tool_input:
            st.caption(f"input: {code(rec.tool_input)}")
        st.markdown(safe_markdown(rec.card.summary))
        if rec.card.extraction:
            st.markdown("\n".join(f"- {plain(x)}" for x in rec.card.extraction))
        with st.expander(f"Raw file · {plain(rec.artifact_file)}"):
            try:
                view = load_raw(run_id, rec.artifact_file)
            except ArtifactError as exc:
                st.error(exc.message, icon=":material/error:")
                return
            if view.parsed is not None:
                st.json(view.parsed, expanded=2)
            else:
                st.code(view.text, language=view.language, wrap_lines=True)
            if view.truncated:
                st.caption(
                    f"Showing the first {DISPLAY_MAX_CHARS:,} characters of {human_size(view.size_bytes)}; "
                    "download the file for all of it."
                )
            st.download_button(
                "Download raw file",
                data=lambda f=rec.artifact_file: raw_bytes(run_id, f),
                file_name=PurePosixPath(rec.artifact_file).name,
                mime=mime_type(rec.artifact_file),
                key=f"dl_{rec.artifact_file}",
                icon=":material/download:",
                on_click="ignore",
            )


def render(state: RunState) -> None:
    context.run_header(store, state, page_key="artifacts")
    context.engine_banner(state)
    cards = store.get_cards(state.run_id)
    if not cards:
        st.info("No tool calls recorded yet.", icon=":material/hourglass_top:")
        return
    m1, m2, m3 = st.columns(3)
    m1.metric("Tool calls", len(cards))
    m2.metric("Useful cards", sum(c.card.is_useful for c in cards))
    pct = reduction_pct(cards)
    m3.metric("Context reduction", f"{pct}%" if pct is not None else "–")
    f1, f2 = st.columns([1, 2])
    usefulness = f1.segmented_control("Show", USEFULNESS, default="all", key="art_useful") or "all"
    tools = f2.multiselect("Tools", tool_names(cards), key="art_tools")
    chosen = filter_cards(cards, usefulness, tools)
    if only := st.query_params.get("artifact"):  # a reference's "artifact" link on the Report page
        chosen = [c for c in cards if c.artifact_file == only]
        st.info(f"Showing the artifact {code(only)} cited in the report.", icon=":material/link:")
        if st.button("Show all artifacts", icon=":material/list:"):
            del st.query_params["artifact"]
            st.rerun()
    if not chosen:
        st.caption("No cards match the filters.")
        return
    pages = -(-len(chosen) // PER_PAGE)
    page = st.number_input(f"Page (of {pages})", 1, pages, 1) if pages > 1 else 1
    shown, _ = paginate(chosen, page, PER_PAGE)
    st.caption(f"{len(chosen)} cards match; showing {len(shown)}.")
    for rec in shown:
        show_card(state.run_id, rec)


if state:
    context.live(store, state, render)
