"""The body of a follow-up job: answer one pending follow-up under its lease,
resumable after a crash.

A follow-up is stored ``pending`` when it is asked (``new_pending``: a ``PendingFollowup`` in
``run:{id}:followups:pending``, event ``followup.asked``), then ``execute`` answers it — in the
asking process (``research ask``), a thread of the dashboard or an RQ worker
(``research.jobs.followups``). ``execute`` holds the follow-up's lease (``research.store.lease``,
the same heartbeat-renewed SET NX PX lease as runs) and the run's follow-up lock
(reference numbers are handed out in order). Its progress is stored on the record (``stage``)
and in the run's events (``followup.research.*`` → ``followup.answered``, or
``followup.failed``); nothing depends on the process that asked.

Resuming: a job that dies leaves the record pending with no lease; ``research.jobs.followups.
resume_followups`` starts ``execute`` again (worker start, dashboard start, ``research resume``).
A research-more turn that was stored before the crash is found (``more.stored_turn``: the
reserved turn number and the question) and not searched again; an interrupted one is searched
again excluding the same URLs, its tool calls reuse their artifact files (stable call ids
``followup.{id}.n``) and ``save_source`` deduplicates, so a resumed follow-up is answered once,
stores one turn and no source twice. The answer is appended atomically in place of the record
(``FollowupStore.append``).
"""

from __future__ import annotations

import secrets

import redis

from research.engines.factory import make_engine
from research.engines.labels import OFFLINE_LABEL
from research.followup import more
from research.followup.answer import NOT_FOUND, Numbering, extractive_answer, llm_answer, retrieve
from research.followup.audit import SupportScorer, audit_texts
from research.followup.checks import check_askable, search_queries
from research.followup.corpus import EvidenceIndex
from research.models import Report, RunState, now
from research.store.followup_models import Followup, PendingFollowup
from research.store.followups import FollowupStore
from research.store.runs import RunStore

EXTRACTIVE = OFFLINE_LABEL  # the one label of the offline engine (research/engines/labels.py)


def new_pending(store: RunStore, state: RunState, question: str, research: bool) -> PendingFollowup:
    """Store a new pending follow-up (stage ``queued``) and emit ``followup.asked``. The caller
    validated ``question`` and the run (``research.followup.ask``)."""
    pending = PendingFollowup(id=secrets.token_hex(6), question=question, research=research)
    FollowupStore(store).put_pending(state.run_id, pending)
    store.emit(
        state.run_id,
        "followup.asked",
        {"id": pending.id, "question": question[:200], "research": research},
    )
    return pending


def execute(
    store: RunStore, run_id: str, followup_id: str, *, settings=None, on_progress=None
) -> Followup | None:
    """Answer pending follow-up ``followup_id`` (or resume it) under its lease.

    ``on_progress``: optional ``callable(str)`` told each stage.

    Returns:
        The stored ``Followup``; None when another job holds its lease or it is no longer
        pending (answered follow-ups are returned as stored).

    Raises:
        ResearchError / any error of the answer: recorded first (event ``followup.failed``,
            the record dropped: it is not resumed). redis.RedisError: the record stays pending
            (the follow-up resumes later).
    """
    fs = FollowupStore(store)
    lease = fs.lease(run_id, followup_id)
    if not lease.acquire():
        return None
    try:
        fs.clear_queued(run_id, followup_id)
        with fs.lock(run_id):
            done = fs.answered(run_id, followup_id)
            pending = fs.get_pending(run_id, followup_id)
            if done is not None or pending is None:
                if done is not None:
                    fs.drop_pending(run_id, followup_id)
                return done
            return _attempt(
                store, fs, run_id, pending, settings, on_progress or (lambda _msg: None)
            )
    finally:
        lease.release()


def _attempt(
    store: RunStore, fs: FollowupStore, run_id: str, pending: PendingFollowup, settings, say
) -> Followup:
    """One attempt at a pending follow-up (under its lease and the run's follow-up lock)."""

    pending.attempts += 1
    if pending.attempts > 1:
        store.emit(
            run_id,
            "followup.resumed",
            {"id": pending.id, "attempt": pending.attempts, "stage": pending.stage},
        )
    fs.put_pending(run_id, pending)
    try:
        state = check_askable(
            store, run_id
        )  # the run may have been cancelled or lost its report meanwhile
        return _answer(store, state, fs, pending, settings, say)
    except redis.RedisError:
        raise  # Redis is gone: the record stays pending and the follow-up resumes later
    except Exception as exc:
        code = str(
            getattr(exc, "code", None) or "internal_error"
        )  # a declared str (research/events.py)
        message = getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}"
        fs.drop_pending(run_id, pending.id)
        store.emit(
            run_id,
            "followup.failed",
            {
                "id": pending.id,
                "question": pending.question[:200],
                "code": code,
                "message": str(message)[:500],
            },
        )
        raise


def _research(
    store: RunStore, state: RunState, fs: FollowupStore, pending: PendingFollowup, settings, say
) -> int:
    """The research-more turn of ``pending`` (reused when it was stored); new sources it saved."""

    run_id = state.run_id
    if pending.sources_before is None:
        pending.sources_before = len(store.collector(run_id).all_sources())
    turn = more.stored_turn(store, run_id, pending.question, pending.turn_number)
    if turn is None:
        pending.turn_number = more.next_turn_number(store, run_id)
        pending.stage = "researching"
        fs.put_pending(
            run_id, pending
        )  # reserved before the turn is stored: a resumed job finds it
        say("researching more: one Analyst follow-up dialogue turn")
        return more.research_more(
            store,
            state,
            pending.question,
            pending.id,
            settings=settings,
            before=pending.sources_before,
            turn_number=pending.turn_number,
        )
    say("reusing the research-more turn stored before the interruption")
    added = more.added_by(store, run_id, turn, pending.sources_before)
    store.emit(
        run_id,
        "followup.research.finished",
        {
            "id": pending.id,
            "queries": turn.search_queries,
            "results": len(turn.sources),
            "sources_added": added,
            "reused": True,
        },
    )
    return added


def _compose(
    store: RunStore, state: RunState, question: str, ranked, numbering: Numbering, settings
):
    """``(text, cited numbers, number → EvidenceDoc, engine label)``: the litellm engine's answer,
    or the extractive one (labelled ``EXTRACTIVE``) for an extractive run and for a litellm run
    whose LLM budget is spent (no model is called: the run's budget holds for follow-ups too)."""
    if state.config.engine == "litellm":
        engine = make_engine(state.config, state.run_id, store, settings)
        spent = (
            "reached during the run"
            if state.budget_exhausted
            else (engine.session.budget.exhausted() if hasattr(engine, "session") else "")
        )
        if not spent:
            text, cited, docs = llm_answer(
                engine,
                state.topic,
                question,
                ranked,
                numbering,
                search_queries(store, state.run_id),
            )
            return text, cited, docs, getattr(engine, "label", "litellm")
        text, cited, docs = extractive_answer(question, ranked, numbering)
        return text, cited, docs, f"{EXTRACTIVE} (the run's LLM budget is spent: {spent})"
    text, cited, docs = extractive_answer(question, ranked, numbering)
    return text, cited, docs, EXTRACTIVE


def _answer(
    store: RunStore, state: RunState, fs: FollowupStore, pending: PendingFollowup, settings, say
) -> Followup:
    """Research (optional), retrieve, answer, audit, store in place of the pending record."""
    run_id = state.run_id
    added = _research(store, state, fs, pending, settings, say) if pending.research else 0
    pending.stage = "answering"
    fs.put_pending(run_id, pending)
    say("retrieving from the run's evidence")
    index = EvidenceIndex(store, run_id, settings)
    report = store.get_doc(run_id, "report", Report)
    numbering = Numbering(fs.references(run_id, report))
    ranked = retrieve(index, pending.question)
    text, cited, docs, label = _compose(store, state, pending.question, ranked, numbering, settings)
    extractive = label.startswith(EXTRACTIVE)
    found = bool(cited)
    if not found:
        text, numbering.new = NOT_FOUND.format(n=len(index.docs)), []
    say("auditing the answer's citations")
    checks = audit_texts(SupportScorer(), pending.id, [text], docs) if found else []
    followup = Followup(
        id=pending.id,
        question=pending.question,
        answer=text,
        citations=cited,
        new_references=[r for r in numbering.new if r.number in cited],
        sources_added=added,
        researched=pending.research,
        found=found,
        engine_label=label,
        extractive=extractive,
        audit=checks,
        asked_at=pending.asked_at,
        answered_at=now(),
    )
    if not fs.append(run_id, followup):
        return fs.answered(run_id, pending.id) or followup
    return followup
