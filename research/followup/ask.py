"""Ask a run a follow-up question; audit its citations (issue 13 §1, §3, §4, §6).

``ask`` validates (nothing is stored for bad input), optionally researches more
(``research.followup.more``), answers from the run's evidence (``research.followup.answer``),
audits the answer's citations and stores the ``Followup`` with the run (events
``followup.asked`` / ``followup.answered``). ``audit_run`` audits the report's citations and
stores the result (event ``audit.finished``).
"""

from __future__ import annotations

import secrets

from research.errors import InputError
from research.followup.answer import NOT_FOUND, Numbering, extractive_answer, llm_answer, retrieve
from research.followup.audit import SupportScorer, audit_report, audit_texts, summarize
from research.followup.evidence import EvidenceIndex, load_evidence
from research.followup.models import MAX_QUESTION_CHARS, AuditSummary, Followup
from research.models import Report, RunState, now
from research.store.followups import FollowupStore
from research.store.keys import check_run_id
from research.store.runs import RunStore

NOT_ASKABLE = {
    "failed": "Run {id} failed ({error}); it has no trustworthy evidence to answer from. Resume it "
              "(`research resume {id}`) or start a new run.",
    "cancelled": "Run {id} was cancelled; follow-up questions are answered only for runs that finished "
                 "or are still running. Start a new run on this topic to ask it questions.",
}


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
    """The run, if follow-ups can be asked of it (complete, interrupted or running with sources).

    Raises:
        InputError: malformed id; a failed or cancelled run (code ``not_askable``); a run with no
            saved source yet (code ``no_evidence``). RunNotFoundError: no such run.
    """
    state = store.get_run(check_run_id(run_id.strip() if isinstance(run_id, str) else run_id))
    if state.status in NOT_ASKABLE:
        raise InputError(NOT_ASKABLE[state.status].format(id=state.run_id, error=state.error or "no error stored"),
                         code="not_askable")
    if not store.collector(state.run_id).all_sources():
        raise InputError(f"Run {state.run_id} has no saved source yet ({state.status}); ask again once its "
                         "conversations have found sources.", code="no_evidence")
    return state


def _queries(store: RunStore, run_id: str) -> dict[str, str]:
    """source id → a search query that found it (so litellm's ``read_artifact`` sees its card)."""
    out: dict[str, str] = {}
    for turn in store.get_turns(run_id):
        for s in turn.sources:
            if turn.search_queries:
                out.setdefault(s.source_id, turn.search_queries[0])
    return out


def ask(run_id: str, question: str, *, research: bool = False, store: RunStore | None = None,
        settings=None, on_progress=None) -> Followup:
    """Answer ``question`` from the run's evidence and store it with the run.

    ``research``: first run one research-more dialogue turn (``research.followup.more``).
    ``on_progress``: optional ``callable(str)`` told each stage (for the CLI / job progress).

    Returns:
        The stored ``Followup`` (answer, cited numbers, new references, audit of its citations).

    Raises:
        InputError / RunNotFoundError: see ``validate_question`` and ``check_askable``.
    """
    from research.store import open_store  # noqa: PLC0415

    store = store or open_store()
    question = validate_question(question)
    state = check_askable(store, run_id)
    run_id = state.run_id
    fs = FollowupStore(store)
    say = on_progress or (lambda _msg: None)
    fid = secrets.token_hex(6)
    asked_at = now()
    with fs.lock(run_id):
        store.emit(run_id, "followup.asked", {"id": fid, "question": question[:200], "research": research})
        try:
            followup = _answer(store, state, fs, fid, question, research, asked_at, settings, say)
        except Exception as exc:
            code = getattr(exc, "code", "internal_error")
            message = getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}"
            store.emit(run_id, "followup.failed", {"id": fid, "question": question[:200], "code": code,
                                                   "message": str(message)[:500]})
            raise
    return followup


def _answer(store: RunStore, state: RunState, fs: FollowupStore, fid: str, question: str, research: bool,
            asked_at: float, settings, say) -> Followup:
    """The body of ``ask`` (under the run's follow-up lock): research, retrieve, answer, audit, store."""
    run_id = state.run_id
    added = 0
    if research:
        from research.followup.more import research_more  # noqa: PLC0415

        say("researching more: one Analyst follow-up dialogue turn")
        added = research_more(store, state, question, fid, settings=settings)
    say("retrieving from the run's evidence")
    index = EvidenceIndex(store, run_id, settings)
    report = store.get_doc(run_id, "report", Report)
    numbering = Numbering(fs.references(run_id, report))
    ranked = retrieve(index, question)
    extractive = state.config.engine != "litellm"
    if extractive:
        text, cited, docs = extractive_answer(question, ranked, numbering)
        label = "offline extractive mode"
    else:
        from research.engines.factory import make_engine  # noqa: PLC0415

        engine = make_engine(state.config, run_id, store, settings)
        text, cited, docs = llm_answer(engine, state.topic, question, ranked, numbering, _queries(store, run_id))
        label = getattr(engine, "label", "litellm")
    found = bool(cited)
    if not found:
        text, numbering.new = NOT_FOUND.format(n=len(index.docs)), []
    say("auditing the answer's citations")
    checks = audit_texts(SupportScorer(), fid, [text], docs) if found else []
    followup = Followup(id=fid, question=question, answer=text, citations=cited,
                        new_references=[r for r in numbering.new if r.number in cited], sources_added=added,
                        researched=research, found=found, engine_label=label, extractive=extractive,
                        audit=checks, asked_at=asked_at, answered_at=now())
    fs.append(run_id, followup)
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
