"""Follow-ups as background jobs (issue 13 §2): the dashboard submits a question and returns at
once; the answer (and any research-more) runs in a thread of the server process, like a run
with the ``thread`` job backend (``research.jobs``), so closing the tab does not stop it. Its
progress is the run's event stream (``followup.asked`` → ``followup.research.*`` →
``followup.answered``, or ``followup.failed`` with the message)."""

from __future__ import annotations

import logging
import secrets
from concurrent.futures import Future, ThreadPoolExecutor

from research.errors import ResearchError
from research.store.runs import RunStore

log = logging.getLogger(__name__)
_POOL = ThreadPoolExecutor(max_workers=2, thread_name_prefix="followup")
FUTURES: dict[str, Future] = {}


def submit_ask(store: RunStore, run_id: str, question: str, *, research: bool = False) -> str:
    """Validate now (bad input raises, nothing stored), then answer in the background.

    Returns:
        A ticket id (the job's key in ``FUTURES``).

    Raises:
        InputError / RunNotFoundError: as ``research.followup.ask.ask``'s checks.
    """
    from research.followup.ask import ask, check_askable, validate_question  # noqa: PLC0415

    question = validate_question(question)
    run_id = check_askable(store, run_id).run_id
    ticket = secrets.token_hex(6)

    def job() -> None:
        try:
            ask(run_id, question, research=research, store=store)
        except ResearchError as exc:  # ask recorded it on the run (event followup.failed)
            log.warning("follow-up on run %s failed: %s", run_id, exc.message)
        except Exception:  # noqa: BLE001 - recorded on the run by ask; logged here with the traceback
            log.exception("follow-up on run %s failed", run_id)

    FUTURES[ticket] = _POOL.submit(job)
    return ticket


def pending(store: RunStore, run_id: str) -> list[dict]:
    """Follow-ups asked but not yet answered or failed: ``[{question, research, stage}]`` from
    the run's events (oldest first). ``stage`` is the last progress event's type."""
    open_: dict[str, dict] = {}
    for ev in store.events(run_id):
        fid = ev.data.get("id")
        if ev.type == "followup.asked":
            open_[fid] = {"question": ev.data.get("question", ""), "research": ev.data.get("research", False),
                          "stage": "answering"}
        elif ev.type == "followup.research.started" and fid in open_:
            open_[fid]["stage"] = "researching more"
        elif ev.type == "followup.research.finished" and fid in open_:
            open_[fid]["stage"] = f"answering ({ev.data.get('sources_added', 0)} new sources)"
        elif ev.type == "followup.answered":
            open_.pop(fid, None)
        elif ev.type == "followup.failed":
            open_.pop(fid, None)
    return list(open_.values())


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
    from research.followup.ask import audit_run  # noqa: PLC0415
    from research.store.followups import FollowupStore  # noqa: PLC0415

    state = store.get_run(run_id)
    audit = FollowupStore(store).get_audit(run_id)
    if audit is not None and audit.created_at >= (state.finished_at or 0):
        return audit
    fut = _AUDITS.get(run_id)
    if fut is None or (fut.done() and fut.exception() is not None) or (fut.done() and audit is None):
        _AUDITS[run_id] = _POOL.submit(audit_run, run_id, store=store)
    return None
