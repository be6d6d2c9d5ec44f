"""Ask a run a follow-up question; audit its citations.

``ask`` validates (nothing is stored for bad input), stores the follow-up pending and answers it
in this process (``research.followup.execute``: optional research-more, the answer from the
run's evidence, the audit of its citations; events ``followup.asked`` / ``followup.answered``).
The dashboard and RQ workers run the same job in the background (``research.jobs.followups``).
``audit_run`` audits the report's citations and
stores the result (event ``audit.finished``).
"""

from __future__ import annotations

from research.errors import InputError
from research.followup.audit import audit_report, summarize
from research.followup.checks import check_askable, validate_question
from research.followup.corpus import load_evidence
from research.followup.execute import execute, new_pending
from research.models import Report
from research.store import open_store
from research.store.followup_models import AuditSummary, Followup
from research.store.followups import FollowupStore
from research.store.keys import check_run_id
from research.store.runs import RunStore


def ask(
    run_id: str,
    question: str,
    *,
    research: bool = False,
    store: RunStore | None = None,
    settings=None,
    on_progress=None,
) -> Followup:
    """Answer ``question`` from the run's evidence in this process and store it with the run.

    The follow-up is stored pending first (``research.followup.execute.new_pending``) and
    answered under its lease (``execute``), so a process killed mid-answer leaves a follow-up
    that ``research resume RUN`` (or a worker / the dashboard starting) finishes.
    ``research``: first run one research-more dialogue turn (``research.followup.more``).
    ``on_progress``: optional ``callable(str)`` told each stage (for the CLI / job progress).

    Returns:
        The stored ``Followup`` (answer, cited numbers, new references, audit of its citations).

    Raises:
        InputError / RunNotFoundError: see ``validate_question`` and ``check_askable``
            (nothing stored).
    """

    store = store or open_store()
    question = validate_question(question)
    state = check_askable(store, run_id)
    pending = new_pending(store, state, question, research)
    followup = execute(store, state.run_id, pending.id, settings=settings, on_progress=on_progress)
    if followup is None:  # cannot happen for a new id: no other job knows it
        raise InputError(
            f"Follow-up {pending.id} on run {state.run_id} is being answered by another job.",
            code="followup_busy",
        )
    return followup


def audit_run(
    run_id: str, *, store: RunStore | None = None, settings=None, refresh: bool = False
) -> AuditSummary:
    """The citation audit of the run's report (stored; recomputed when ``refresh``, when none is
    stored, or when the run finished after the stored one was made).

    Raises:
        InputError (code ``report_not_ready``): the run has no report yet. RunNotFoundError.
    """

    store = store or open_store()
    state = store.get_run(check_run_id(run_id.strip() if isinstance(run_id, str) else run_id))
    fs = FollowupStore(store)
    stored = fs.get_audit(state.run_id)
    if stored is not None and not refresh and stored.created_at >= (state.finished_at or 0):
        return stored
    report = store.get_doc(state.run_id, "report", Report)
    if report is None:
        raise InputError(
            f"Run {state.run_id} has no report yet ({state.status}); audit it once it is complete.",
            code="report_not_ready",
        )
    index_docs = {d.source.source_id: d for d in load_evidence(store, state.run_id, settings)}
    by_number = {
        r.number: index_docs[r.source_id] for r in report.references if r.source_id in index_docs
    }
    audit = audit_report(report, by_number)
    fs.put_audit(state.run_id, audit)
    return audit


def combined_audit(report_audit: AuditSummary | None, followups: list[Followup]) -> AuditSummary:
    """The report's checks plus every follow-up's, summarised together."""
    checks = list(report_audit.checks if report_audit else [])
    for f in followups:
        checks += f.audit
    return summarize(checks)
