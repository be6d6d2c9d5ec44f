"""The Resume control for an interrupted run. Pages call ``resume_control(state)``
(e.g. from the run header); it renders nothing unless the run can be resumed.

``resume_on_start()`` is the dashboard's start-up resume (thread backend: the server process is
the worker): it runs once per server process once it has succeeded; a failure (Redis down at
the first page load) is logged and retried on a later page load.
"""

from __future__ import annotations

import logging

import streamlit as st

from research import jobs
from research.config import job_backend, load_settings
from research.errors import ResearchError
from research.models import RunState
from research.store import open_store
from research.ui.citations import plain

RESUMABLE = ("interrupted", "failed")
log = logging.getLogger(__name__)


@st.cache_resource(show_spinner=False)
def _resume_interrupted_once() -> list[str]:
    """Resume interrupted runs (cached for the server's life only when it returns; an exception
    is not cached by ``st.cache_resource``, so the next page load tries again)."""

    open_store().reconcile_dead_runs()  # reads are pure: dead runs are stored interrupted here
    if not load_settings().auto_resume or job_backend() != "thread":
        return []
    return jobs.resume_interrupted(by="dashboard")


def resume_on_start() -> list[str]:
    """Resume the interrupted runs once per server process; returns their ids ([] when nothing
    was resumed). Never raises: the dashboard must open even when Redis is down — the failure
    is logged (warning, with the error) and retried on the next page load."""
    try:
        return _resume_interrupted_once()
    except Exception as exc:
        log.warning(
            "resume of interrupted runs at dashboard start failed (retried on the next page "
            "load): %s: %s",
            type(exc).__name__,
            exc,
        )
        return []


def resume_control(state: RunState) -> None:
    """For an ``interrupted`` (or ``failed``) run: a Resume button that continues it from its
    stored state in the background (``research.jobs.resume_run``); the run header shows the
    notice itself."""
    if state.status not in RESUMABLE:
        return
    if st.button("Resume run", key=f"resume_{state.run_id}", icon=":material/play_circle:"):
        try:
            jobs.resume_run(state.run_id, by="dashboard")
        except ResearchError as exc:
            st.error(f"Cannot resume: {plain(exc.message)}", icon=":material/error:")
            return
        st.toast("Run resumed: it continues from its stored state; finished turns are not redone.")
        st.rerun()
