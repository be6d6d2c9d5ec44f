"""Co-STORM mode (docs/design.md § Co-STORM round-table; Co-STORM paper §3): plan → warm start →
round-table → report from the mind map. Called by ``research.pipeline.runner.execute`` for runs
with ``mode="costorm"``.

Warm start: a background search on the topic, N experts generated from it, an initial mind
map from the background's cited information, then one answer turn per expert. Round-table:
at each turn boundary a queued analyst message goes first; else the moderator speaks after L
consecutive answer turns; else the next expert (round robin) chooses its intent. It stops when
every syllabus question is covered (collector ``check_completion`` ready), at the query budget,
or at the turn cap — the reason goes to ``RunState.stop_reason`` and a ``costorm.stopped`` event.

State is committed to Redis after every step (``research.costorm.state``), and loaded at the
start, so a restarted run continues after its last committed turn.
"""

from __future__ import annotations

from research.costorm import discourse, moderator, state
from research.costorm.discourse import Table
from research.costorm.report import write_report
from research.engines.costorm_steps import ExpertsInput, IntentInput
from research.engines.factory import costorm_steps
from research.errors import InvariantError
from research.models import QUESTION_INTENTS, CoStormTurn, Perspective, Report
from research.pipeline import planning
from research.pipeline.context import RunContext
from research.text.vectors import Vectors

STOP_COVERAGE, STOP_BUDGET, STOP_TURNS = "coverage_complete", "query_budget", "turn_cap"


def run_costorm(ctx: RunContext) -> Report:
    """Run (or resume) a Co-STORM run; sets the phase statuses; returns the stored report."""
    topic = planning.coordinate(ctx)
    ctx = planning.plan_or_restore(
        ctx, topic
    )  # a resumed run keeps its plan (no second planner call)
    steps = costorm_steps(ctx.engine)
    vectors = getattr(steps, "vectors", None) or Vectors()
    session = state.load(ctx.store, ctx.run_id, topic)
    if session.turns or session.meta.background_done:
        ctx.emit(
            "costorm.resumed",
            {"turns": len(session.turns), "queries_used": session.meta.queries_used},
        )
    table = Table(ctx=ctx, steps=steps, vectors=vectors, session=session)
    ctx.check_cancel()
    ctx.store.set_status(ctx.run_id, "conversations")
    warm_start(table)
    roundtable(table)
    ctx.check_cancel()
    ctx.store.set_status(ctx.run_id, "synthesizing")
    return write_report(table)


def _commit(table: Table, turn: CoStormTurn | None = None, pop_inbox: bool = False) -> None:
    state.commit(table.ctx.store, table.ctx.run_id, table.session, turn, pop_inbox=pop_inbox)
    if turn is not None:
        table.ctx.emit(
            "turn.finished",
            {
                "perspective": turn.role,
                "turn": turn.turn_number,
                "intent": turn.intent,
                "question": turn.utterance[:200],
                "sources": len(turn.sources),
            },
        )


def warm_start(table: Table) -> None:
    """Background search → experts → initial mind map (from the results on the question,
    ``discourse.on_question``) → one turn per expert (resumable)."""
    ctx, s = table.ctx, table.session
    if ctx.plan is None:
        raise InvariantError("Planned before the warm start")
    if not s.meta.background_done:
        background = ctx.search(table.topic, ctx.plan.steps[0], perspective="warm start")
        s.meta.queries_used += 1
        s.meta.experts = steps_experts(table, background)
        # the experts are drawn from everything the search found; the first answer speaks only
        # from what is on the question, as every later expert turn does
        background = discourse.on_question(ctx, background, table.topic)
        general = s.meta.experts[0]
        answer = table.steps.expert_answer(
            discourse.ExpertAnswerInput(
                topic=table.topic,
                expert=general,
                intent="potential_answer",
                question=table.topic,
                history=[],
                results=background,
            )
        )
        cited = {int(n) for n in discourse.citations.LOCAL_RE.findall(answer.answer)}
        sources = discourse.save_sources(ctx, table.topic, background, cited)
        text = discourse._resolve(answer.answer, sources)
        discourse._pool_unused(table, background, cited, table.topic, 0)
        discourse.insert_cited(table, text, sources, table.topic, 0)
        s.meta.background_done = True
        _commit(table)
        ctx.emit(
            "costorm.warm_start",
            {"experts": [e.name for e in s.meta.experts], "mind_map_items": len(s.mindmap.items)},
        )
    done = sum(1 for t in s.turns if t.warm_start)
    for expert in s.meta.experts[done:]:
        ctx.check_cancel()
        question = next(
            (q for q in expert.questions if q.strip()), f"What do sources say about {expert.focus}?"
        )
        _commit(
            table, discourse.answer_turn(table, expert, "potential_answer", question, warm=True)
        )


def steps_experts(table: Table, background) -> list[Perspective]:
    """N experts from the background results, names made unique."""
    found = table.steps.generate_experts(
        ExpertsInput(topic=table.topic, background=background, n=table.settings.experts)
    ).perspectives
    out, names = [], set()
    for p in found:
        if p.name.strip().lower() not in names and p.name.strip():
            names.add(p.name.strip().lower())
            out.append(p)
    if not out:
        out = [Perspective(name="General Expert", focus=f"Key facts about {table.topic}")]
    return out[: table.settings.experts]


def stop_reason(table: Table) -> str:
    """The reason the round-table stops now ('' = go on): coverage, query budget, turn cap."""
    s, cfg = table.session, table.settings
    if table.ctx.collector.check_completion(min_databases=table.ctx.config.min_databases).get(
        "ready"
    ):
        return STOP_COVERAGE
    if s.meta.queries_used >= cfg.query_budget:
        return STOP_BUDGET
    if s.roundtable_turns() >= cfg.max_turns:
        return STOP_TURNS
    return ""


def next_expert(table: Table) -> Perspective:
    """Round robin: the expert after the last expert who spoke (the first one otherwise)."""
    experts = table.session.meta.experts
    names = [e.name for e in experts]
    last = next((t.role for t in reversed(table.session.turns) if t.kind == "expert"), None)
    return experts[(names.index(last) + 1) % len(experts)] if last in names else experts[0]


def roundtable(table: Table) -> None:
    """Turns until a stop condition holds (see module docstring); one commit per turn."""
    ctx, s = table.ctx, table.session
    while True:
        ctx.check_cancel()
        reason = stop_reason(table)
        if reason:
            s.meta.stop_reason = reason
            _commit(table)
            ctx.store.set_fields(ctx.run_id, stop_reason=reason)
            ctx.emit(
                "costorm.stopped",
                {"reason": reason, "turns": len(s.turns), "queries_used": s.meta.queries_used},
            )
            return
        message = state.next_message(ctx.store, ctx.run_id)
        if message:
            _commit(table, discourse.analyst_turn(table, message), pop_inbox=True)
            continue
        if moderator.should_speak(s.turns, table.settings.moderator_after):
            _commit(table, discourse.moderator_turn(table))
            continue
        expert = next_expert(table)
        intent = table.steps.choose_intent(
            IntentInput(topic=table.topic, expert=expert, history=s.turns)
        ).intent
        if intent in QUESTION_INTENTS:
            turn = discourse.question_turn(table, expert, intent)
        else:
            turn = discourse.answer_turn(table, expert, intent, discourse.last_question(s))
        _commit(table, turn)
