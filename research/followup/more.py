"""Research more for a follow-up question (issue 13 §2): one new dialogue turn for an
"Analyst follow-up" perspective through the normal pipeline.

The turn is a STORM dialogue turn (seed 002 §2; ``research.pipeline.conversation``) whose
question is the analyst's own (no WikiWriter step): the engine turns it into queries
(``question_to_queries``), every query searches the run's backends as an offloaded tool call
(seed 001: raw artifact + summary card, ``RunContext.search``; URLs the run already saved are
skipped so the search brings new sources), the TopicExpert answers (``answer_question``), the
engine assigns each result to the syllabus questions it bears on (``assign_questions``, focused
on the 2 syllabus questions closest to the follow-up by MiniLM cosine) and ``commit_turn``
saves the sources (seed 000 ``save_source``: coverage counts update) and stores the turn
(event ``turn.finished``). The run's budget applies: the litellm engine stops calling models
once it is spent and answers extractively (``LLMSession``).

Idempotent per follow-up id: tool calls are keyed ``followup.{id}.n`` and ``save_source``
dedups, so a retried follow-up reuses its artifacts and saves nothing twice.
"""

from __future__ import annotations

import numpy as np

from research.engines.base import AnswerInput, AssignInput, QueryInput
from research.followup.evidence import embed
from research.models import DialogueTurn, Perspective, RunState, now
from research.store.runs import RunStore

PERSPECTIVE = "Analyst follow-up"
FOCUS_QUESTIONS = 2
MAX_QUERIES = 3


def focus_keys(syllabus, question: str, n: int = FOCUS_QUESTIONS) -> list[str]:
    """The ``n`` syllabus keys whose label + description are closest to ``question`` (cosine)."""
    if not syllabus or not syllabus.questions:
        return []
    vecs = embed([f"{q.label}. {q.description}" for q in syllabus.questions])
    sims = vecs @ embed([question])[0]
    return [syllabus.questions[i].key for i in np.argsort(-sims)[:n]]


def research_more(store: RunStore, state: RunState, question: str, followup_id: str, *, settings=None) -> int:
    """Run the Analyst follow-up dialogue turn; returns how many new sources were saved.

    Emits ``followup.research.started`` / ``followup.research.finished`` {queries, results,
    sources_added, coverage_before, coverage_after}.

    Raises:
        InputError: the run has no plan/syllabus yet (it is still planning).
    """
    from research.errors import InputError  # noqa: PLC0415
    from research.pipeline.conversation import PendingTurn, _dedupe, commit_turn  # noqa: PLC0415
    from research.pipeline.recorders import DeferredRecorder  # noqa: PLC0415
    from research.pipeline.planning import restore_plan  # noqa: PLC0415
    from research.pipeline.runner import build_context  # noqa: PLC0415

    ctx = build_context(state.run_id, settings)
    if not restore_plan(ctx):
        raise InputError(f"Run {state.run_id} is still planning; research more once its conversations started.",
                         code="not_askable")
    before_sources = len(ctx.collector.all_sources())
    before = ctx.collector.question_counts()
    perspective = Perspective(name=PERSPECTIVE, focus=question, questions=[question])
    ctx.emit("followup.research.started", {"id": followup_id, "question": question[:200]})
    started = now()
    history = [t for t in ctx.store.get_turns(state.run_id) if t.perspective == PERSPECTIVE]
    focus = focus_keys(ctx.syllabus, question)
    step = ctx.step_for(question)
    queries = ctx.engine.question_to_queries(QueryInput(topic=state.topic, question=question,
                                                        perspective=perspective)).queries[:MAX_QUERIES]
    recorder = DeferredRecorder(ctx.artifacts, f"followup.{followup_id}")
    ctx.artifacts = recorder
    seen = {s.url for s in ctx.collector.all_sources()}
    results, memory = [], []
    for q in queries:
        results += ctx.search(q, step, perspective=PERSPECTIVE, memory=memory, exclude=seen)
        seen |= {r.url for r in results}
    results = _dedupe(results)
    answer = ctx.engine.answer_question(AnswerInput(topic=state.topic, question=question, results=results))
    assigned = ctx.engine.assign_questions(AssignInput(syllabus=ctx.syllabus, question=question, focus=focus,
                                                       results=results)) if results else None
    turn = DialogueTurn(perspective=PERSPECTIVE, turn_number=len(history) + 1, question=question,
                        answer=answer.answer, search_queries=queries, focus_questions=focus,
                        started_at=started, ended_at=now())
    commit_turn(ctx, PendingTurn(turn=turn, results=results, assigned=assigned, cited=set(answer.cited),
                                 recorder=recorder, memory=memory))
    added = len(ctx.collector.all_sources()) - before_sources
    after = ctx.collector.question_counts()
    ctx.emit("followup.research.finished", {"id": followup_id, "queries": queries, "results": len(results),
                                            "sources_added": added, "coverage_before": before,
                                            "coverage_after": after})
    return added
