"""Jobs: resuming runs that stopped before their end (interrupted, failed, or stuck pending) and
their follow-ups whose job died, from any process.

A run is resumed from its stored state: the pipeline skips every phase whose result is stored
(``research.pipeline.runner``). Resuming is asked for by ``research resume``, the dashboard's
Resume button, and every worker or dashboard that starts (:func:`resume_interrupted`).
"""

from __future__ import annotations

import logging

from research import models as m
from research.errors import InputError, ResearchError
from research.jobs.launch import execute, submit
from research.store import keys, open_store
from research.store.followups import FollowupStore
from research.store.runs import RunStore

log = logging.getLogger(__name__)
RESUMABLE = ("interrupted", "failed", "pending")


def resume_run(
    run_id: str, *, foreground: bool = False, by: str = "cli", backend: str | None = None
) -> str:
    """Continue an interrupted (or failed, or stuck pending) run from its stored state, and its
    follow-ups whose job died (``research.jobs.followups.resume_followups``).

    Background by default (``research.jobs.launch.submit``); ``foreground`` executes it in this
    thread. Emits ``resume.requested``; the job emits ``run.resumed`` when it starts. A run that
    cannot be resumed itself (complete, running...) but has interrupted follow-ups only resumes
    those.

    Returns:
        The run's status after the call (``pending`` when queued, the final status in the
        foreground).

    Raises:
        InputError: malformed id, the run is still running (a job holds its lease), or it
            already ended complete/cancelled (code ``not_resumable``), and it has no
            interrupted follow-up. RunNotFoundError: no such run.
    """
    store = open_store()
    run_id = keys.check_run_id(run_id.strip() if isinstance(run_id, str) else run_id)
    store.reconcile_dead_runs(
        [run_id]
    )  # a dead job's run is stored interrupted (+ run.interrupted) first
    state = store.get_run(run_id)
    if _has_dead_followups(store, run_id) and (
        store.is_held(run_id) or state.status not in RESUMABLE
    ):
        _resume_followups(store, [run_id], by, backend, foreground)
        return state.status
    if store.is_held(run_id):
        raise InputError(
            f"Run {run_id} is still running ({state.status}); wait for it or cancel it.",
            code="not_resumable",
        )
    if state.status == m.REVIEW_STATUS:
        raise InputError(
            f"Run {run_id} is waiting for plan review: approve it (research approve {run_id}, or the "
            "Plan page) or cancel it.",
            code="not_resumable",
        )
    if state.status not in RESUMABLE:
        raise InputError(
            f"Run {run_id} is {state.status}; only interrupted or failed runs can be resumed. "
            "Start a new run instead.",
            code="not_resumable",
        )
    store.set_status(run_id, "pending")
    store.emit(run_id, "resume.requested", {"from": state.status, "by": by})
    if foreground:
        status = execute(run_id)
        _resume_followups(store, [run_id], by, backend, foreground)
        return status
    submit(run_id, backend, at_front=True)  # it waited its turn once already
    _resume_followups(store, [run_id], by, backend, foreground)
    return "pending"


def _has_dead_followups(store: RunStore, run_id: str) -> bool:

    return bool(FollowupStore(store).dead_pending(run_id))


def _resume_followups(
    store: RunStore,
    run_ids: list[str] | None,
    by: str,
    backend: str | None,
    foreground: bool = False,
) -> list[str]:
    """Resume the follow-ups whose job died (``research.jobs.followups.resume_followups``)."""

    from research.jobs.followups import resume_followups  # noqa: PLC0415 - follow-up execution imports the pipeline

    return resume_followups(store, run_ids, by=by, backend=backend, foreground=foreground)


def resume_interrupted(by: str = "worker", backend: str | None = None) -> list[str]:
    """Resume (in the background: ``backend``, default ``job_backend()``) every run that is
    ``interrupted``, then every follow-up whose job died; returns the runs' ids.

    Called when a worker or the dashboard starts. Runs another process resumes first are
    skipped (the lease decides who executes); a run that cannot be resumed is logged and
    skipped, so one bad run never stops a worker."""
    store = open_store()
    store.reconcile_dead_runs()
    resumed = []
    for state in store.list_runs(limit=10_000):
        if state.status == "interrupted":
            try:
                resume_run(state.run_id, by=by, backend=backend)
                resumed.append(state.run_id)
            except InputError:
                continue
            except ResearchError as exc:
                log.warning("could not resume run %s: %s", state.run_id, exc)
    try:
        followups = _resume_followups(store, None, by, backend)
        if followups:
            log.info(
                "resumed %d interrupted follow-up(s): %s", len(followups), ", ".join(followups)
            )
    except ResearchError as exc:
        log.warning("could not resume interrupted follow-ups: %s", exc)
    return resumed
