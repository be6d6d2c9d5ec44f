"""Follow-ups as jobs like any other work.

The dashboard submits a question (``submit_ask``) and returns at once: the follow-up is stored
pending in Redis and its job (``research.followup.execute.execute``) runs on the configured job
backend (``research.config.job_backend``, ``RESEARCH_JOB_BACKEND``): a thread of this process
(``thread``, default) or the RQ queue that ``research worker`` processes consume (``rq``;
``research.jobs.workers``). Closing the tab stops nothing; the Report page shows progress from the
stored record and events (``pending``), never from the thread. A follow-up whose job died
(no lease, not queued) is resumed by ``resume_followups`` — called where interrupted runs are
resumed: worker start and dashboard start (``research.jobs.resume_interrupted``) and
``research resume RUN`` (``research.jobs.resume_run``).
"""

from __future__ import annotations

import logging
from concurrent.futures import Future, ThreadPoolExecutor

import redis

from research.config import job_backend
from research.errors import InputError, ResearchError
from research.followup.ask import audit_run
from research.followup.checks import check_askable, validate_question
from research.followup.execute import execute, new_pending
from research.jobs import workers
from research.store import open_store
from research.store.followup_models import PendingFollowup
from research.store.followups import FollowupStore
from research.store.keys import check_followup_id
from research.store.runs import RunStore

log = logging.getLogger(__name__)
_POOL = ThreadPoolExecutor(max_workers=2, thread_name_prefix="followup")
FUTURES: dict[str, Future] = {}
QUEUED_MARKER_TTL_S = 7 * 24 * 3600  # as research.jobs.workers: outlives any sane queue wait
THREAD_QUEUED_TTL_S = 120  # s: a thread job waits for a free pool thread at most about this long
STAGES = {"queued": "queued", "researching": "researching more", "answering": "answering"}
INTERRUPTED = (
    "interrupted: its job stopped. Resume it here; it also resumes when a worker or the dashboard "
    "starts, or with `research resume {run_id}`"
)


def submit_ask(
    store: RunStore,
    run_id: str,
    question: str,
    *,
    research: bool = False,
    backend: str | None = None,
) -> str:
    """Validate now (bad input raises, nothing stored), store the follow-up pending and start
    its job on ``backend`` ("thread" or "rq"; default ``research.config.job_backend()``).

    Returns:
        The follow-up id.

    Raises:
        InputError / RunNotFoundError: as ``research.followup.ask.ask``'s checks; InputError
            (code ``invalid_config``) for an unknown job backend.
    """

    question = validate_question(question)
    state = check_askable(store, run_id)
    backend = backend or job_backend()  # a bad backend fails before anything is stored
    pending = new_pending(store, state, question, research)
    dispatch(store, state.run_id, pending.id, backend)
    return pending.id


def dispatch(store: RunStore, run_id: str, followup_id: str, backend: str) -> None:
    """Start the job of a pending follow-up: a thread here, or a job on the RQ queue. Either way
    it is marked queued until the job takes its lease (so it is not taken for a dead one while it
    waits; a thread's marker lasts ``THREAD_QUEUED_TTL_S`` s, as its process may die)."""
    fs = FollowupStore(store)
    if backend == "rq":
        fs.mark_queued(run_id, followup_id, QUEUED_MARKER_TTL_S)
        workers.queue().enqueue(
            "research.jobs.followups.followup_job",
            run_id,
            followup_id,
            job_timeout=-1,
            result_ttl=24 * 3600,
            failure_ttl=7 * 24 * 3600,
            description=f"follow-up {followup_id} on run {run_id}",
        )
        return
    fs.mark_queued(run_id, followup_id, THREAD_QUEUED_TTL_S)
    FUTURES[followup_id] = _POOL.submit(_run, store, run_id, followup_id)


def _run(store: RunStore, run_id: str, followup_id: str) -> str:
    """Execute one follow-up job; returns ``answered``, ``skipped`` (another job has it or it is
    no longer pending), ``failed`` (recorded on the run) or ``interrupted`` (Redis lost)."""

    try:
        return "answered" if execute(store, run_id, followup_id) is not None else "skipped"
    except redis.RedisError as exc:
        log.warning(
            "follow-up %s on run %s stopped (Redis unreachable; it resumes later): %s",
            followup_id,
            run_id,
            exc,
        )
        return "interrupted"
    except ResearchError as exc:  # recorded on the run (event followup.failed)
        log.warning("follow-up %s on run %s failed: %s", followup_id, run_id, exc.message)
        return "failed"
    except Exception:
        log.exception("follow-up %s on run %s failed", followup_id, run_id)
        return "failed"


def followup_job(run_id: str, followup_id: str) -> str:
    """The RQ job body (``research worker``): answer or resume one follow-up; returns the outcome
    of ``_run``."""

    return _run(open_store(), run_id, followup_id)


def resume_followups(
    store: RunStore,
    run_ids: list[str] | None = None,
    *,
    by: str = "worker",
    backend: str | None = None,
    foreground: bool = False,
) -> list[str]:
    """Resume every pending follow-up whose job died (``FollowupStore.dead_pending``) on the
    runs ``run_ids`` (default: every run): in this thread when ``foreground``, else on
    ``backend`` (default ``job_backend()``). Emits ``followup.resume.requested`` {id, by} each.

    Returns:
        The ids of the follow-ups resumed.
    """

    fs = FollowupStore(store)
    ids = [s.run_id for s in store.list_runs(limit=10_000)] if run_ids is None else run_ids
    resumed = []
    for run_id in fs.runs_with_pending(ids):
        for p in fs.dead_pending(run_id):
            store.emit(
                run_id, "followup.resume.requested", {"id": p.id, "by": by, "stage": p.stage}
            )
            if foreground:
                _run(store, run_id, p.id)
            else:
                dispatch(store, run_id, p.id, backend or job_backend())
            resumed.append(p.id)
    return resumed


def pending(store: RunStore, run_id: str) -> list[dict]:
    """Follow-ups asked but not yet answered or failed, from their stored records (oldest
    first): ``[{id, question, research, stage, alive}]``; ``alive`` is False (and ``stage`` says
    ``interrupted``) when the job died."""
    fs = FollowupStore(store)
    dead = {p.id for p in fs.dead_pending(run_id)}
    out = []
    for p in fs.list_pending(run_id):
        stage = INTERRUPTED.format(run_id=run_id) if p.id in dead else _stage(p)
        out.append(
            {
                "id": p.id,
                "question": p.question,
                "research": p.research,
                "stage": stage,
                "alive": p.id not in dead,
            }
        )
    return out


def _stage(p: PendingFollowup) -> str:
    label = STAGES[p.stage]
    return f"{label} (resumed, attempt {p.attempts})" if p.attempts > 1 else label


def failures(store: RunStore, run_id: str, limit: int = 3) -> list[dict]:
    """The last ``limit`` ``followup.failed`` event payloads (question, code, message)."""
    return [ev.data for ev in store.events(run_id) if ev.type == "followup.failed"][-limit:]


_AUDITS: dict[str, Future] = {}


def ensure_audit(store: RunStore, run_id: str):
    """The run's stored, up-to-date report audit, or None while it is being computed: a missing
    or stale audit is started in the background (one job per run per process) so a page never
    embeds passages in its script thread. A failed job is retried on the next call.

    Returns:
        ``AuditSummary`` or None.
    """

    state = store.get_run(run_id)
    audit = FollowupStore(store).get_audit(run_id)
    if audit is not None and audit.created_at >= (state.finished_at or 0):
        return audit
    fut = _AUDITS.get(run_id)
    if (
        fut is None
        or (fut.done() and fut.exception() is not None)
        or (fut.done() and audit is None)
    ):
        _AUDITS[run_id] = _POOL.submit(audit_run, run_id, store=store)
    return None


def followup_status(store: RunStore, run_id: str, followup_id: str) -> dict:
    """Where follow-up ``followup_id`` of the run stands, from its stored records:

    - ``{status: "answered", followup_id, question, answer, citations, new_references,
      sources_added, found, engine_label, extractive}`` once answered;
    - ``{status: "pending", followup_id, question, stage}`` while its job works (``stage``
      says ``interrupted`` when the job died; it resumes as ``pending`` describes);
    - ``{status: "failed", followup_id, question, code, message}`` from its ``followup.failed``
      event.

    Raises:
        InputError: malformed ids, or no follow-up with this id on the run (code
            ``no_such_followup``). RunNotFoundError: no such run.
    """
    run_id = store.get_run(run_id).run_id
    check_followup_id(followup_id)
    fs = FollowupStore(store)
    for attempt in (1, 2):  # read again once: the answer may land between the reads below
        answered = fs.answered(run_id, followup_id)
        if answered is not None:
            out = answered.cli_dict()
            out.pop("audit", None)  # long citation checks; callers read the answer and sources
            return {"status": "answered", "followup_id": out.pop("id"), **out}
        if attempt == 2:
            break
        if (found := _pending_or_failed(store, run_id, followup_id)) is not None:
            return found
    raise InputError(
        f"Run {run_id} has no follow-up '{followup_id}'; ask_run returns the ids.",
        code="no_such_followup",
    )


def _pending_or_failed(store: RunStore, run_id: str, followup_id: str) -> dict | None:
    for p in pending(store, run_id):
        if p["id"] == followup_id:
            return {
                "status": "pending",
                "followup_id": followup_id,
                "question": p["question"],
                "stage": p["stage"],
            }
    for ev in reversed(store.events(run_id)):
        if ev.type == "followup.failed" and ev.data.get("id") == followup_id:
            return {
                "status": "failed",
                "followup_id": followup_id,
                "question": ev.data.get("question", ""),
                "code": ev.data.get("code", ""),
                "message": ev.data.get("message", ""),
            }
    return None
