"""Ask a run a follow-up question; audit its citations (issue 13 §1, §3, §4, §6).

``ask`` validates (nothing is stored for bad input), stores the follow-up pending and answers it
in this process (``research.followup.execute``: optional research-more, the answer from the
run's evidence, the audit of its citations; events ``followup.asked`` / ``followup.answered``).
The dashboard and RQ workers run the same job in the background (``research.followup.jobs``). ``audit_run`` audits the report's citations and
stores the result (event ``audit.finished``).
"""

from __future__ import annotations

from research.errors import InputError
from research.followup.audit import audit_report, summarize
from research.followup.evidence import load_evidence
from research.followup.models import MAX_QUESTION_CHARS, AuditSummary, Followup
from research.models import Report, RunState
from research.store.followups import FollowupStore
from research.store.keys import check_run_id
from research.store.runs import RunStore

NOT_ASKABLE = {
    "failed": "Run {id} failed ({error}); it has no trustworthy evidence to answer from. Resume it "
              "(`research resume {id}`) or start a new run.",
    "cancelled": "Run {id} was cancelled; follow-up questions are answered only for runs that wrote their "
                 "report. Start a new run on this topic to ask it questions.",
}


NO_REPORT = ("Run {id} has no report yet ({status}). Follow-up answers cite into the report's reference list, "
             "whose numbers exist only once the report is written; ask again when the run is complete.")


def validate_question(question: object) -> str:
    """The question with whitespace collapsed.

    Raises:
        InputError (code ``invalid_question``): not text, empty, or longer than
            ``MAX_QUESTION_CHARS`` (1,000) characters.
    """
    if not isinstance(question, str) or not question.strip():
        raise InputError("The question is empty: type what you want to know about this run's topic.",
                         code="invalid_question")
    text = " ".join(question.split())
    if len(text) > MAX_QUESTION_CHARS:
        raise InputError(f"The question is {len(text):,} characters long; keep it under {MAX_QUESTION_CHARS:,} "
                         "(ask one question at a time).", code="invalid_question")
    return text


def check_askable(store: RunStore, run_id: str) -> RunState:
    """The run, if follow-ups can be asked of it: it has its report (so a follow-up's new
    references are numbered after the report's and no number ever means two sources) and
    saved sources, and it did not fail or get cancelled.

    Raises:
        InputError: malformed id; a failed or cancelled run (code ``not_askable``); a run whose
            report is not written yet (code ``report_not_ready``); a run with no saved source
            (code ``no_evidence``). RunNotFoundError: no such run.
    """
    state = store.get_run(check_run_id(run_id.strip() if isinstance(run_id, str) else run_id))
    if state.status in NOT_ASKABLE:
        raise InputError(NOT_ASKABLE[state.status].format(id=state.run_id, error=state.error or "no error stored"),
                         code="not_askable")
    if not store.has_doc(state.run_id, "report"):
        raise InputError(NO_REPORT.format(id=state.run_id, status=state.status), code="report_not_ready")
    if not store.collector(state.run_id).all_sources():
        raise InputError(f"Run {state.run_id} has no saved source yet ({state.status}); ask again once its "
                         "conversations have found sources.", code="no_evidence")
    return state


def search_queries(store: RunStore, run_id: str) -> dict[str, str]:
    """source id → a search query that found it (so litellm's ``read_artifact`` sees its card)."""
    out: dict[str, str] = {}
    for turn in store.get_turns(run_id):
        for s in turn.sources:
            if turn.search_queries:
                out.setdefault(s.source_id, turn.search_queries[0])
    return out


def ask(run_id: str, question: str, *, research: bool = False, store: RunStore | None = None,
        settings=None, on_progress=None) -> Followup:
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
    from research.followup.execute import execute, new_pending  # noqa: PLC0415 - execute imports this module
    from research.store import open_store  # noqa: PLC0415

    store = store or open_store()
    question = validate_question(question)
    state = check_askable(store, run_id)
    pending = new_pending(store, state, question, research)
    followup = execute(store, state.run_id, pending.id, settings=settings, on_progress=on_progress)
    if followup is None:  # cannot happen for a new id: no other job knows it
        raise InputError(f"Follow-up {pending.id} on run {state.run_id} is being answered by another job.",
                         code="followup_busy")
    return followup


def audit_run(run_id: str, *, store: RunStore | None = None, settings=None, refresh: bool = False) -> AuditSummary:
    """The citation audit of the run's report (stored; recomputed when ``refresh``, when none is
    stored, or when the run finished after the stored one was made).

    Raises:
        InputError (code ``report_not_ready``): the run has no report yet. RunNotFoundError.
    """
    from research.store import open_store  # noqa: PLC0415

    store = store or open_store()
    state = store.get_run(check_run_id(run_id.strip() if isinstance(run_id, str) else run_id))
    fs = FollowupStore(store)
    stored = fs.get_audit(state.run_id)
    if stored is not None and not refresh and stored.created_at >= (state.finished_at or 0):
        return stored
    report = store.get_doc(state.run_id, "report", Report)
    if report is None:
        raise InputError(f"Run {state.run_id} has no report yet ({state.status}); audit it once it is complete.",
                         code="report_not_ready")
    index_docs = {d.source.source_id: d for d in load_evidence(store, state.run_id, settings)}
    by_number = {r.number: index_docs[r.source_id] for r in report.references if r.source_id in index_docs}
    audit = audit_report(report, by_number)
    fs.put_audit(state.run_id, audit)
    return audit


def combined_audit(report_audit: AuditSummary | None, followups: list[Followup]) -> AuditSummary:
    """The report's checks plus every follow-up's, summarised together."""
    checks = list(report_audit.checks if report_audit else [])
    for f in followups:
        checks += f.audit
    return summarize(checks)
