"""Coordinator and planner (docs/design.md § Coordinator and planner) and perspective discovery
(docs/design.md § Perspective discovery).

The coordinator only routes (no tools, no reasoning). The planner turns the topic into a plan
``{plan_title, steps}`` and the run's question syllabus (docs/design.md § Source collector). Perspectives come from a
related-topic survey through search (STORM FindRelatedTopic) and persona generation (GenPersona),
always with a Basic Fact Writer.

With ``template = "auto"`` the plan starts from the template of the topic's kind and,
once the survey is in, ``fit_syllabus`` replaces it with questions fitted to the query (engine
step ``fit_syllabus``), re-plans the steps for them and re-initialises the collector (no source is
saved before the conversations, so the switch is allowed). The survey document is stored only
after the fitted syllabus, so a run interrupted in between redoes the (deterministic) fit: stored
documents still skip their phases on resume.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

from research.artifacts import ArtifactStore
from research.engines.base import (
    FitInput,
    PersonaInput,
    PlanInput,
    QueryList,
    RelatedInput,
    SurveyInput,
)
from research.errors import InputError, InvariantError
from research.models import Perspective, Plan, Syllabus, TopicOutline
from research.pipeline.context import RunContext
from research.pipeline.recorders import DeferredRecorder
from research.planning.edit import check_questions
from research.planning.syllabus import AUTO, base_template
from research.text.frame_match import anchor_queries

SURVEY_WORKERS = 5  # related-topic outlines asked at once (the model client caps calls at once)

BASIC_FACT_WRITER = Perspective(
    name="Basic Fact Writer",
    focus="Basic, fundamental facts about the topic: definitions, key entities, dates and figures.",
    questions=[],
)


def coordinate(ctx: RunContext) -> str:
    """Seed 001 §3.1: the entry point; routes the query to the planner unchanged."""
    ctx.emit("coordinator.routed", {"to": "planner"})
    return ctx.config.topic


def plan(ctx: RunContext, topic: str) -> RunContext:
    """Make the plan and syllabus, store both, initialise the collector; returns the context
    with the plan, the syllabus and the run's artifact store. The syllabus is
    ``research.planning.syllabus.base_template`` (for ``auto``: the topic kind's template,
    fitted after the survey by ``fit_syllabus``)."""
    syllabus = base_template(ctx.config.template, topic)
    result = ctx.engine.plan(PlanInput(topic=topic, syllabus=syllabus))
    if not result.steps:
        raise ValueError("the planner returned no steps")
    ctx.store.put_doc(ctx.run_id, "plan", result)
    ctx.store.put_doc(ctx.run_id, "syllabus", syllabus)
    ctx.collector.init(syllabus)
    planned = ctx.planned(result, syllabus, _artifact_store(ctx, result))
    ctx.emit(
        "plan.ready",
        {"plan_title": result.plan_title, "steps": len(result.steps), "questions": syllabus.keys()},
    )
    return planned


def _artifact_store(ctx: RunContext, plan: Plan) -> ArtifactStore:
    return ArtifactStore(ctx.run_id, plan.plan_title, ctx.engine, ctx.store, ctx.settings)


def restore_plan(ctx: RunContext) -> RunContext | None:
    """The context with the stored plan + syllabus (collector initialised, artifact store made)
    so a resumed run (STORM or Co-STORM) never calls the planner again; None when the run has
    none yet."""
    plan = ctx.store.get_doc(ctx.run_id, "plan", Plan)
    syllabus = ctx.store.get_doc(ctx.run_id, "syllabus", Syllabus)
    if plan is None or syllabus is None:
        return None
    ctx.collector.init(syllabus)  # idempotent
    return ctx.planned(plan, syllabus, _artifact_store(ctx, plan))


def plan_or_restore(ctx: RunContext, topic: str) -> RunContext:
    """The context with the run's plan: the stored one when there is one (a resumed run), else
    a new one."""
    return restore_plan(ctx) or plan(ctx, topic)


def survey_queries(ctx: RunContext, topic: str) -> QueryList:
    """Seed 002 §1.1: the related-topic queries of the survey (engine ``survey_queries``)."""
    return ctx.engine.survey_queries(SurveyInput(topic=topic))


def survey(
    ctx: RunContext, topic: str, queries: QueryList | None = None
) -> tuple[list[TopicOutline], RunContext]:
    """Seed 002 §1.1: related-topic queries → searches (tool calls) → topic outlines.
    ``queries``: the survey's queries when already asked (:func:`survey_queries`).

    Returns the outlines and the context the run goes on with: for the ``auto`` template the
    one with the fitted syllabus and plan (:func:`fit_syllabus`), else ``ctx``."""
    if ctx.plan is None:
        raise InvariantError("Planning.plan ran first")
    step = ctx.plan.steps[0]
    found: list[RelatedInput] = []
    asked = anchor_queries((queries or survey_queries(ctx, topic)).queries[:5], topic)
    ctx.prime_searches(asked)
    for query in asked:
        ctx.check_cancel()  # in query order: tool calls are numbered as they are made
        results = ctx.search(query, step, perspective="survey")
        if results:
            found.append(RelatedInput(topic=topic, query=query, results=results))
    # each outline call depends on its own search alone: asked together, they cost one model
    # round trip instead of one per query, and come back in query order
    with ThreadPoolExecutor(
        max_workers=max(1, min(SURVEY_WORKERS, len(found))), thread_name_prefix="survey"
    ) as pool:
        outlines: list[TopicOutline] = list(pool.map(ctx.engine.related_outline, found))
    fitted = (
        fit_syllabus(ctx, topic, outlines) if ctx.config.template.strip().lower() == AUTO else ctx
    )
    if isinstance(ctx.recorder, DeferredRecorder):  # cards made in the background: stored now
        ctx.recorder.commit()
    ctx.store.put_doc(ctx.run_id, "survey", outlines)
    ctx.emit("survey.done", {"queries": len(outlines)})
    return outlines, fitted


def fit_syllabus(ctx: RunContext, topic: str, related: list[TopicOutline]) -> RunContext:
    """The syllabus fitted to the query from the survey (engine ``fit_syllabus``), then
    the plan's steps made again for it (same plan title, so artifact paths do not move); both are
    stored and the collector re-initialised. Emits ``syllabus.fitted`` with the question keys.
    Returns the context with the fitted plan and syllabus.

    An engine answer the collector cannot use (``research.planning.edit`` rules) keeps the template
    (``ctx`` is returned) and emits ``syllabus.fallback`` with the reason.
    """

    if ctx.plan is None or ctx.syllabus is None:
        raise InvariantError("Planning.plan ran first")
    base = base_template(ctx.config.template, topic)
    fitted = ctx.engine.fit_syllabus(FitInput(topic=topic, syllabus=base, related=related))
    errors: list[str] = []
    questions = check_questions([q.model_dump() for q in fitted.questions], errors)
    if errors or not 1 <= len(questions) <= 8:
        ctx.emit(
            "syllabus.fallback",
            {
                "reason": "; ".join(errors)[:500] or f"{len(questions)} questions",
                "template": base.name,
            },
        )
        return ctx
    syllabus = Syllabus(name=base.name, questions=questions)
    steps = ctx.engine.plan(PlanInput(topic=topic, syllabus=syllabus)).steps or ctx.plan.steps
    try:
        ctx.collector.init(syllabus)
    except InputError as exc:  # sources already saved under the template: keep it
        ctx.emit("syllabus.fallback", {"reason": exc.message[:500], "template": base.name})
        return ctx
    plan = Plan(plan_title=ctx.plan.plan_title, steps=steps)
    ctx.store.put_doc(ctx.run_id, "plan", plan)
    ctx.store.put_doc(ctx.run_id, "syllabus", syllabus)
    ctx.emit(
        "syllabus.fitted",
        {
            "template": base.name,
            "questions": syllabus.keys(),
            "labels": [q.label for q in syllabus.questions],
        },
    )
    return replace(ctx, plan=plan, syllabus=syllabus)


def discover_perspectives(
    ctx: RunContext, topic: str, related: list[TopicOutline]
) -> list[Perspective]:
    """Seed 002 §1.2 (GenPersona): personas informed by the survey; Basic Fact Writer first.

    At most ``config.max_perspectives``; names are made unique.
    """
    found = ctx.engine.personas(
        PersonaInput(
            topic=topic,
            related=related,
            syllabus=ctx.syllabus,
            max_perspectives=ctx.config.max_perspectives,
        )
    ).perspectives
    result: list[Perspective] = []
    names: set[str] = set()
    basic = next(
        (p for p in found if p.name.strip().lower() == "basic fact writer"), BASIC_FACT_WRITER
    )
    for p in [basic, *found]:
        key = p.name.strip().lower()
        if key in names or not key:
            continue
        names.add(key)
        result.append(p)
        if len(result) >= ctx.config.max_perspectives:
            break
    ctx.store.put_doc(ctx.run_id, "perspectives", result)
    ctx.emit("perspectives.ready", {"names": [p.name for p in result]})
    return result
