"""Research more for a follow-up question: one new dialogue turn for an
"Analyst follow-up" perspective through the normal pipeline.

The turn is a STORM dialogue turn (docs/design.md § Simulated conversations; ``research.pipeline.conversation``) whose
question is the analyst's own (no WikiWriter step): the engine turns it into queries
(``question_to_queries``), every query searches the run's backends as an offloaded tool call
(docs/design.md § Tool-result compression: raw artifact + summary card, ``RunContext.search``; URLs
the run already saved are skipped so the search brings new sources), the TopicExpert answers and
the engine assigns each result to the syllabus questions it bears on in one step (``answer_and_assign``;
focused on the 2 syllabus questions closest to the follow-up by MiniLM cosine) and ``commit_turn``
saves the sources (docs/design.md § Collector tools: ``save_source``: coverage counts update) and stores the turn
(event ``turn.finished``). The run's budget applies: the litellm engine stops calling models
once it is spent and answers extractively (``LLMSession``).

Idempotent per follow-up id: tool calls are keyed ``followup.{id}.n`` and ``save_source``
dedups, so a retried follow-up reuses its artifacts and saves nothing twice. A resumed job
(``research.followup.execute``) passes the collector size it started from (``before``) so its
searches exclude the same URLs as the interrupted attempt (sources that attempt saved are found
again and deduplicated, not skipped), and the turn number it reserved; a turn it finds stored
(``stored_turn``) is not searched again.
"""

from __future__ import annotations

import numpy as np

from research.engines.base import AnswerAssignInput, AnswerInput, QueryInput
from research.errors import InputError
from research.evidence.passages import result_evidence
from research.followup.corpus import embed
from research.models import DialogueTurn, Perspective, RunState, now
from research.pipeline.conversation import PendingTurn, _dedupe, commit_turn, turn_cards
from research.pipeline.planning import restore_plan
from research.pipeline.recorders import DeferredRecorder
from research.pipeline.runner import build_context
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


def stored_turn(
    store: RunStore, run_id: str, question: str, turn_number: int | None
) -> DialogueTurn | None:
    """The stored Analyst follow-up turn number ``turn_number`` asking ``question``, or None."""
    if turn_number is None:
        return None
    return next(
        (
            t
            for t in store.get_turns(run_id)
            if t.perspective == PERSPECTIVE
            and t.turn_number == turn_number
            and t.question == question
        ),
        None,
    )


def next_turn_number(store: RunStore, run_id: str) -> int:
    """1 + the number of Analyst follow-up turns stored on the run."""
    return 1 + sum(t.perspective == PERSPECTIVE for t in store.get_turns(run_id))


def added_by(store: RunStore, run_id: str, turn: DialogueTurn, before: int) -> int:
    """How many of ``turn``'s sources are new in the collector since it held ``before`` sources."""
    new_ids = {s.source_id for s in store.collector(run_id).all_sources()[before:]}
    return len({s.source_id for s in turn.sources} & new_ids)


def research_more(
    store: RunStore,
    state: RunState,
    question: str,
    followup_id: str,
    *,
    settings=None,
    before: int | None = None,
    turn_number: int | None = None,
) -> int:
    """Run the Analyst follow-up dialogue turn; returns how many new sources were saved.

    ``before``: exclude the URLs of the collector's first ``before`` sources (default: all it
    holds now); ``turn_number``: the turn's number (default ``next_turn_number``).

    Emits ``followup.research.started`` / ``followup.research.finished`` {queries, results,
    sources_added, coverage_before, coverage_after}.

    Raises:
        InputError: the run has no plan/syllabus yet (it is still planning).
    """

    ctx = restore_plan(build_context(state.run_id, settings))
    if ctx is None:
        raise InputError(
            f"Run {state.run_id} is still planning; research more once its conversations started.",
            code="not_askable",
        )
    saved = ctx.collector.all_sources()
    before_sources = len(saved) if before is None else before
    coverage_before = ctx.collector.question_counts()
    perspective = Perspective(name=PERSPECTIVE, focus=question, questions=[question])
    ctx.emit("followup.research.started", {"id": followup_id, "question": question[:200]})
    started = now()
    focus = focus_keys(ctx.syllabus, question)
    step = ctx.step_for(question)
    queries = ctx.engine.question_to_queries(
        QueryInput(topic=state.topic, question=question, perspective=perspective)
    ).queries[:MAX_QUERIES]
    recorder = DeferredRecorder(ctx.need_artifacts(), f"followup.{followup_id}")
    ctx = ctx.recording(recorder)  # the turn's tool calls: compressed now, written on commit
    seen = {s.url for s in saved[:before_sources]}
    results: list = []
    memory: list = []
    for q in queries:
        results += ctx.search(q, step, perspective=PERSPECTIVE, memory=memory, exclude=seen)
        seen |= {r.url for r in results}
    results = _dedupe(results)
    out = ctx.engine.answer_and_assign(
        AnswerAssignInput(
            answer=AnswerInput(
                topic=state.topic,
                question=question,
                results=results,
                turn_cards=turn_cards(recorder),
            ),
            syllabus=ctx.syllabus,
            focus=focus,
        )
    )
    answer, assigned = out.answer, out.assigned
    turn = DialogueTurn(
        perspective=PERSPECTIVE,
        turn_number=turn_number or next_turn_number(store, state.run_id),
        question=question,
        answer=answer.answer,
        search_queries=queries,
        focus_questions=focus,
        started_at=started,
        ended_at=now(),
    )
    stored = commit_turn(
        ctx,
        PendingTurn(
            turn=turn,
            results=results,
            assigned=assigned,
            cited=set(answer.cited),
            recorder=recorder,
            memory=memory,
            # the one evidence judgement: a found source counts for a question with a passage
            evidence=result_evidence(
                ctx.vectors(), ctx.need_syllabus().questions, state.topic, results
            ),
            # the analyst asked for more research: what the engine found relevant is kept as a
            # source of the run (it counts for a question only with a passage)
            keep_assigned=True,
        ),
    )
    added = added_by(store, state.run_id, stored, before_sources)
    after = ctx.collector.question_counts()
    ctx.emit(
        "followup.research.finished",
        {
            "id": followup_id,
            "queries": queries,
            "results": len(results),
            "sources_added": added,
            "coverage_before": coverage_before,
            "coverage_after": after,
        },
    )
    return added
