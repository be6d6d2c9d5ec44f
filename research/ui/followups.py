"""Report page: follow-up chat, research-more, and the citation audit.

``render_followups`` draws the stored follow-ups as a chat (``st.chat_message``) under the report
with citations linked to the reference anchors (``#ref-n``; references a follow-up added are
listed with their own anchors), a research-more button on each answer, and, unless read-only,
``st.chat_input``. Answers run as background jobs (``research.jobs.followups``: a thread or an RQ
worker); while one is pending (asked in this session or stored pending, e.g. after the tab was
closed) the chat polls the stored records every ``POLL_S`` s. ``render_audit`` shows the audit summary
("41 of 43 citations supported; 2 weak") with a filter to the weak / unsupported ones, each
with its best-matching passage. Logic lives in ``research.followup``; this only renders.
"""

from __future__ import annotations

import streamlit as st

from research.engines.labels import offline_label
from research.errors import InputError, RunNotFoundError
from research.followup.ask import combined_audit
from research.jobs.followups import ensure_audit, failures, pending, resume_followups, submit_ask
from research.models import Reference, RunState
from research.store.followup_models import AuditSummary, CitationCheck, Followup
from research.store.followups import FollowupStore
from research.store.runs import RunStore
from research.ui.citations import (
    anchor_html,
    link_citations,
    plain,
    reference_markdown,
    safe_markdown,
)

POLL_S = 2
VERDICT_ICONS = {
    "supported": ":material/check_circle:",
    "weak": ":material/help:",
    "unsupported": ":material/cancel:",
}
EXTRACTIVE_LABEL = offline_label(with_note=True)


def answer_markdown(f: Followup, n_refs: int, titles: dict[int, str]) -> str:
    """A follow-up answer as safe Markdown with ``[n]`` linked to ``#ref-n``."""
    return link_citations(safe_markdown(f.answer), n_refs, titles=titles)


def check_line(c: CitationCheck) -> str:
    """``[n] weak · score 0.52 (cosine 0.61, word overlap 0.40)``."""
    return (
        f"\\[{c.number}\\] **{c.verdict}** · score {c.score:.2f} (cosine {c.cosine:.2f}, "
        f"word overlap {c.overlap:.2f})"
    )


def _followup(
    store: RunStore,
    state: RunState,
    f: Followup,
    n_refs: int,
    titles: dict[int, str],
    read_only: bool,
) -> None:
    with st.chat_message("user"):
        st.markdown(plain(f.question))
    with st.chat_message("assistant"):
        st.markdown(answer_markdown(f, n_refs, titles))
        bits = [EXTRACTIVE_LABEL if f.extractive else f"written by {plain(f.engine_label)}"]
        if f.researched:
            bits.append(f"researched more: {f.sources_added} new source(s) saved")
        if f.audit:
            ok = sum(c.verdict == "supported" for c in f.audit)
            bits.append(f"audit: {ok} of {len(f.audit)} citations supported")
        st.caption(" · ".join(bits))
        for ref in f.new_references:
            st.markdown(anchor_html(ref.number), unsafe_allow_html=True)
            st.markdown(reference_markdown(ref) + " _(new reference from this answer)_")
        if f.audit:
            with st.expander("Cited passages"):
                for c in f.audit:
                    st.markdown(f"{check_line(c)}  \n_“{plain(c.passage)}”_")
        if not read_only and state.status == "complete" and not f.researched:
            if st.button(
                "Research more",
                key=f"more-{f.id}",
                icon=":material/travel_explore:",
                help="Run one Analyst follow-up dialogue turn: new searches, new sources, then answer again",
            ):
                _submit(store, state, f.question, research=True)


def _submit(store: RunStore, state: RunState, question: str, *, research: bool) -> None:

    try:
        submit_ask(store, state.run_id, question, research=research)
        st.session_state[f"followup-waiting-{state.run_id}"] = True
        st.rerun()
    except (InputError, RunNotFoundError) as exc:
        st.error(exc.message, icon=":material/error:")


def _resume(store: RunStore, state: RunState) -> None:
    """Resume the run's interrupted follow-ups on the job backend (``resume_followups``)."""

    resume_followups(store, [state.run_id], by="dashboard")
    st.session_state[f"followup-waiting-{state.run_id}"] = True
    st.rerun()


def render_followups(
    store: RunStore,
    state: RunState,
    report_refs: list[Reference],
    titles: dict[int, str],
    *,
    read_only: bool = False,
) -> None:
    """The follow-up chat under the report (see module docstring)."""

    st.subheader("Follow-up questions", anchor=False)
    fs = FollowupStore(store)
    waiting_key = f"followup-waiting-{state.run_id}"
    alive = not read_only and any(p["alive"] for p in pending(store, state.run_id))
    busy = st.session_state.get(waiting_key) or alive

    @st.fragment(run_every=POLL_S if busy else None)
    def chat() -> None:
        followups = fs.list(state.run_id)
        n_refs = len(report_refs) + sum(len(f.new_references) for f in followups)
        if not followups and read_only:
            st.caption("No follow-up questions were asked of this run.")
        for f in followups:
            _followup(store, state, f, n_refs, titles, read_only)
        if read_only:
            return
        waiting = pending(store, state.run_id)
        for p in waiting:
            with st.chat_message("user"):
                st.markdown(plain(p["question"]))
            with st.chat_message("assistant"):
                st.caption(f"{p['stage']}…" if p["alive"] else p["stage"])
                if not p["alive"] and st.button(
                    "Resume follow-up",
                    key=f"resume-followup-{p['id']}",
                    icon=":material/play_circle:",
                ):
                    _resume(store, state)
        for fail in failures(store, state.run_id, 1) if not waiting else []:
            st.caption(f"Last failed follow-up: {plain(fail.get('message', ''))}")
        if not any(p["alive"] for p in waiting) and st.session_state.get(waiting_key):
            st.session_state[waiting_key] = False
            st.rerun()

    chat()
    if read_only:
        return
    if not FollowupStore(store).list(state.run_id):
        st.caption(
            "Ask what the report leaves open: answers come from this run's own sources, with citations "
            "into its reference list."
        )
    question = st.chat_input(
        "Ask this run a follow-up question", max_chars=1000, key=f"ask-{state.run_id}"
    )
    if question is not None:
        _submit(store, state, question, research=False)


def render_audit(store: RunStore, state: RunState) -> None:
    """The audit summary line, counts and (filterable) checks. A missing audit is computed in the
    background (``research.jobs.followups.ensure_audit``); the panel polls until it is stored."""

    st.subheader("Citation audit", anchor=False)
    report_audit = ensure_audit(store, state.run_id)
    if report_audit is None:

        @st.fragment(run_every=POLL_S)
        def wait() -> None:
            if ensure_audit(store, state.run_id) is not None:
                st.rerun()
            st.caption("Auditing every citation against its source…")

        wait()
        return
    audit: AuditSummary = combined_audit(report_audit, FollowupStore(store).list(state.run_id))
    st.markdown(f"**{audit.line()}**")
    st.caption(
        "Each cited sentence against the best-matching passage of its cited source "
        "(MiniLM cosine + content-word overlap)."
    )
    only_weak = st.toggle("Only weak / unsupported", value=False, key=f"audit-weak-{state.run_id}")
    checks = [c for c in audit.checks if c.verdict != "supported"] if only_weak else audit.checks
    if only_weak and not checks:
        st.caption("None: every citation is supported.")
    for c in checks[:200]:
        where = "report" if c.where == "report" else "follow-up"
        with st.expander(
            f"[{c.number}] {c.verdict} · {c.score:.2f} · {where}", icon=VERDICT_ICONS[c.verdict]
        ):
            st.markdown(f"**Sentence:** {plain(c.sentence)}")
            st.markdown(f"**Best passage of the source:** _“{plain(c.passage)}”_")
            st.caption(check_line(c))
