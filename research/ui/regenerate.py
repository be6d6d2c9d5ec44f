"""Regenerate a section with an instruction, in the desk's Edit mode: pick the section, say how
("shorter", "only phase III trials"), optionally research more first; the candidate is computed
in the background (``research.jobs.regenerations``), shown as a side-by-side diff against the
current version, and stored as a new version only on **Accept** (**Discard** drops it)."""

from __future__ import annotations

import streamlit as st

from research.desk.diff import side_by_side_html
from research.desk.edit import part_names, replace_part
from research.desk.regenerate import MAX_INSTRUCTION_CHARS, Candidate, accept
from research.errors import ResearchError
from research.jobs.regenerations import forget, poll, submit_regenerate
from research.models import RunState
from research.store.runs import RunStore
from research.store.versions import VersionStore
from research.ui.citations import plain

POLL_S = 1.0  # s between checks while a candidate is computed


def _job_key(run_id: str) -> str:
    return f"regen_job_{run_id}"


def render_regenerate(store: RunStore, state: RunState, author: str, saved_key: str) -> None:
    """The Regenerate control (module doc) for the current version of ``state``'s report;
    after Accept, ``st.session_state[saved_key]`` holds ``(message, uncited, version number)``
    for the editor to show after the rerun."""
    current = VersionStore(store).get(state.run_id)
    if current is None or not current.report.sections:
        return
    st.subheader("Regenerate a section", anchor=False)
    key = _job_key(state.run_id)
    job = st.session_state.get(key)
    if job:
        _candidate_view(store, state.run_id, job, author, saved_key)
        return
    names = part_names(current.report)[1:]
    with st.form(f"regen_form_{state.run_id}", border=True):
        heading = st.selectbox("Section", names, key=f"regen_section_{state.run_id}")
        instruction = st.text_input(
            "Instruction",
            placeholder="shorter · only phase III trials · focus on elderly patients",
            max_chars=MAX_INSTRUCTION_CHARS,
            key=f"regen_instruction_{state.run_id}",
        )
        research = st.checkbox(
            "Research more first",
            help="One Analyst follow-up dialogue turn on the run's backends (stored as a "
            "follow-up); the sources its answer cites may then be cited.",
            key=f"regen_research_{state.run_id}",
        )
        go = st.form_submit_button("Regenerate", icon=":material/autorenew:", type="primary")
    if go:
        try:
            st.session_state[key] = submit_regenerate(
                store, state.run_id, heading, instruction, research=research
            )
        except ResearchError as exc:
            st.error(plain(exc.message), icon=":material/error:")
            return
        st.rerun()


def _candidate_view(store: RunStore, run_id: str, job: str, author: str, saved_key: str) -> None:
    try:
        candidate = poll(job)
    except ResearchError as exc:
        _drop(run_id, job)
        st.error(plain(exc.message), icon=":material/error:")
        return
    except Exception as exc:  # noqa: BLE001 - a failed job's error is shown, never raised on the page
        _drop(run_id, job)
        st.error(
            plain(f"Regenerating failed: {type(exc).__name__}: {exc}"), icon=":material/error:"
        )
        return
    if candidate is None:
        _wait(job)
        return
    _show(store, candidate, author, job, saved_key)


@st.fragment(run_every=POLL_S)
def _wait(job: str) -> None:
    """Shown while the candidate is computed; reruns the page once it is ready."""
    st.info("Regenerating the section…", icon=":material/hourglass_top:")
    try:
        done = poll(job) is not None
    except Exception:  # noqa: BLE001 - the full rerun shows the error
        done = True
    if done:
        st.rerun(scope="app")


def _show(store: RunStore, c: Candidate, author: str, job: str, saved_key: str) -> None:
    current = VersionStore(store).get(c.run_id)
    if current is None:
        _drop(c.run_id, job)
        return
    new = replace_part(current.report, c.part, c.new_text)
    st.caption(
        plain(
            f"“{c.heading}” with “{c.instruction}” · {c.engine_label}"
            + (f" · research more saved {c.sources_added} new source(s)" if c.followup_id else "")
        )
    )
    st.html(
        side_by_side_html(
            current.report, new, f"Version {current.number}", "Regenerated (not saved)"
        )
    )
    ok_col, no_col = st.columns(2)
    if ok_col.button(
        "Accept as a new version", icon=":material/check:", type="primary", key=f"regen_ok_{job}"
    ):
        try:
            outcome = accept(store, c, author=author)
        except ResearchError as exc:
            st.error(plain(exc.message), icon=":material/error:")
            return
        _drop(c.run_id, job)
        st.session_state[saved_key] = (
            outcome.message(),
            outcome.uncited,
            outcome.version.number,
        )
        st.rerun()
    if no_col.button("Discard", icon=":material/close:", key=f"regen_no_{job}"):
        _drop(c.run_id, job)
        st.rerun()


def _drop(run_id: str, job: str) -> None:
    forget(job)
    st.session_state.pop(_job_key(run_id), None)
