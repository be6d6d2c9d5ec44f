"""The Resume control for an interrupted run (issue 7). Pages call ``resume_control(state)``
(e.g. from the run header); it renders nothing unless the run can be resumed."""

from __future__ import annotations

import streamlit as st

from research.errors import ResearchError
from research.models import RunState
from research.ui.citations import plain

RESUMABLE = ("interrupted", "failed")


def resume_control(state: RunState) -> None:
    """For an ``interrupted`` (or ``failed``) run: a Resume button that continues it from its
    stored state in the background (``research.jobs.resume_run``); the run header shows the
    notice itself."""
    if state.status not in RESUMABLE:
        return
    if st.button("Resume run", key=f"resume_{state.run_id}", icon=":material/play_circle:"):
        from research import jobs  # noqa: PLC0415 - pulls in the pipeline

        try:
            jobs.resume_run(state.run_id, by="dashboard")
        except ResearchError as exc:
            st.error(f"Cannot resume: {plain(exc.message)}", icon=":material/error:")
            return
        st.toast("Run resumed: it continues from its stored state; finished turns are not redone.")
        st.rerun()
