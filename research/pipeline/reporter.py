"""Outline (docs/design.md § Two-phase outline: draft from the topic → refine with the conversations) and the
Reporter (docs/design.md § Coordinator and planner, STORM paper §3.3): a report organised by the syllabus questions
(``sections.plan_sections``), each section written from whole sentences of its sources
(``evidence``, ``sections.allocate``), a lead with the key finding per question, no sentence
twice (``dedupe.dedupe_report``), and a references list with citations renumbered 1..N
(``assemble``)."""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor

from research import citations
from research.engines.base import (
    LeadInput,
    LeadQuestion,
    OutlineInput,
    PolishInput,
    RefineInput,
    SectionInput,
    Snippet,
)
from research.errors import EngineError, InvariantError
from research.evidence.passages import FOUND, REGISTRY, about_topic
from research.models import (
    ConversationResult,
    GapReport,
    Outline,
    OutlineSection,
    QuestionStop,
    Reference,
    Report,
    ReportSection,
    SourceRecord,
)
from research.pipeline import answers, indirect, material, registrations, sections, statements
from research.pipeline.assemble import assemble, report_body, report_questions
from research.pipeline.context import RunContext
from research.pipeline.dedupe import dedupe_report
from research.text import artifact_text
from research.text.frame import frame_question

SECTION_WORKERS = 4  # sections written at once (the model client caps calls at once too)


def draft_outline(ctx: RunContext) -> Outline:
    """Seed 002 §3.3, phase one: the outline drafted from the topic alone (no conversation
    read, so it can be asked while the conversations run)."""
    return ctx.engine.draft_outline(OutlineInput(topic=ctx.config.topic))


def make_outline(
    ctx: RunContext,
    conversations: list[ConversationResult],
    drafted: Future[Outline] | None = None,
) -> Outline:
    """Two-phase outline (docs/design.md § Two-phase outline); falls back to the draft if refining fails with the
    engine's typed error (``EngineError``: provider error, invalid output, budget...), recorded as
    event ``outline.refine_failed {error, code, fallback: "draft"}``, or returns no sections. Any
    other exception is a bug and propagates. ``drafted``: the draft already asked for
    (:func:`draft_outline`), else it is drafted here."""
    draft = drafted.result() if drafted else draft_outline(ctx)
    ctx.store.put_doc(ctx.run_id, "draft_outline", draft)
    try:
        refined = ctx.engine.refine_outline(
            RefineInput(topic=ctx.config.topic, draft=draft, conversations=conversations)
        )
    except EngineError as exc:  # docs/design.md § Two-phase outline: "Fall back to draft"
        ctx.emit(
            "outline.refine_failed",
            {"error": exc.message[:300], "code": exc.code, "fallback": "draft"},
        )
        refined = draft
    outline = refined if refined.sections else draft
    ctx.store.put_doc(ctx.run_id, "outline", outline)
    ctx.emit("outline.ready", {"sections": [s.heading for s in outline.sections]})
    return outline


def report_units(ctx: RunContext, conversations: list[ConversationResult]) -> list[material.Unit]:
    """The report's material: every usable sentence of the run's on-topic sources
    (``artifact_text.source_texts`` → ``material.units_for``). It depends only on the topic, the saved
    sources and the conversations' artifacts, not on the outline, so the runner computes it in a
    background thread while the analysis and outline calls wait on the model (~1.3 s of
    CPU on the 4×3 drug run that sat on the critical path). Redis: one read of the saved sources."""
    vectors = ctx.vectors()
    sources = ctx.collector.all_sources()
    texts = artifact_text.source_texts(ctx.run_id, conversations, sources, ctx.settings)
    return material.units_for(vectors, ctx.config.topic, sources, texts)


def write_report(
    ctx: RunContext,
    outline: Outline,
    conversations: list[ConversationResult] | None = None,
    units: list[material.Unit] | None = None,
) -> Report:
    """Sections (one per outline section, plus one per syllabus question the outline lacks) →
    lead → dedupe → renumbered references; stores the draft and the final report.

    Material: whole sentences from the full text of the run's on-topic sources
    (``evidence``), assigned globally to the section whose heading fits them best, a question's
    section taking only sentences of the sources assigned to that question (``sections``).
    ``units``: ``report_units(ctx, conversations)`` when the caller computed it already.
    Returns the stored report; ``Report.questions`` has one entry per syllabus question.
    """
    topic = ctx.config.topic
    vectors = ctx.vectors()
    sources = ctx.collector.all_sources()
    syllabus = ctx.syllabus or ctx.collector.syllabus()
    if units is None:
        units = report_units(ctx, conversations or [])
    plans = sections.plan_sections(
        vectors,
        topic,
        outline,
        syllabus,
        ctx.collector.finalize_sources(),
        questions_only=frame_question(topic).framed,
    )
    sections.allocate(vectors, topic, plans, units)
    counts = ctx.collector.question_counts()
    titles = {s.source_id: s.title for s in sources}
    # the registrations of trials on the question: an open results question names them
    registrations = sorted(
        s.external_id for s in sources if s.source_type == REGISTRY and about_topic(s.title, topic)
    )
    counted = answers.fill(
        vectors,
        plans,
        ctx.store.evidence(ctx.run_id).all(),
        counts,
        ctx.config.depth,
        topic,
        titles,
    )
    # a comparison no source makes: what each arm did in trials of its own, labelled so
    if indirect.add_arm_results(ctx, topic, plans):
        sources = ctx.collector.all_sources()
        titles = {s.source_id: s.title for s in sources}
    stops = answers.stops_by_key(ctx.store.get_doc(ctx.run_id, "gaps", GapReport))
    written: list[tuple[sections.SectionPlan, ReportSection]] = []
    reading = sections.reading_order(plans)
    ctx.check_cancel()
    # each section is written from its own sentences alone, so the calls go out together (as
    # STORM's article generation writes its sections concurrently) and are read back in order
    pool = ThreadPoolExecutor(
        max_workers=max(1, min(SECTION_WORKERS, len(reading))), thread_name_prefix="section"
    )
    try:
        futures = [
            pool.submit(_write_section, ctx, topic, p, titles, stops, registrations)
            for p, _ in reading
        ]
        drafts: list[str] = []
        for fut in futures:
            ctx.check_cancel()
            drafts.append(fut.result())
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    for (plan, level), text in zip(reading, drafts, strict=True):
        nested = any(c.parent is plan and c.units for c in plans)
        if not text.strip() and not nested and plan.question is None:
            ctx.emit("section.skipped", {"heading": plan.heading, "reason": "no usable sentence"})
            continue
        written.append((plan, ReportSection(heading=plan.heading, text=text, level=level)))
        ctx.emit("section.written", {"heading": plan.heading})
    draft_sections = [s for _, s in written]
    lead_draft = _write_lead(ctx, topic, [p for p, _ in written], draft_sections, titles)
    trials = trials_section(ctx, topic, sources)
    if trials is not None:  # last: what is under way, after what was found
        written.append((sections.SectionPlan(heading=trials.heading), trials))
        draft_sections.append(trials)
    lead_draft, draft_sections = dedupe_report(vectors, lead_draft, draft_sections)
    written, draft_sections = _drop_empty(written, draft_sections)

    draft = assemble(ctx, topic, lead_draft, draft_sections, [])
    ctx.store.put_doc(ctx.run_id, "draft_report", draft)

    valid = {s.source_id for s in sources}
    texts_final, order = citations.renumber([lead_draft, *[s.text for s in draft_sections]], valid)
    by_id = {s.source_id: s for s in sources}
    refs = [
        Reference(
            number=i,
            source_id=sid,
            title=by_id[sid].title,
            url=by_id[sid].url,
            source_type=by_id[sid].source_type,
            external_id=by_id[sid].external_id,
        )
        for i, sid in enumerate(order, start=1)
    ]
    final_sections = [
        ReportSection(heading=s.heading, text=t, level=s.level)
        for s, t in zip(draft_sections, texts_final[1:], strict=True)
    ]
    questions = report_questions([p for p, _ in written], final_sections, counted, stops)
    report = assemble(ctx, topic, texts_final[0], final_sections, refs, questions)
    problems = citations.check_integrity(report_body(report), len(refs))
    if problems:
        raise InvariantError(f"Citation integrity failed: {problems}")
    ctx.store.put_doc(ctx.run_id, "report", report)
    ctx.emit(
        "report.ready",
        {
            "sections": len(final_sections),
            "citations": len(refs),
            "questions": {q.key: q.status for q in questions},
        },
    )
    return report


def trials_section(
    ctx: RunContext,
    topic: str,
    sources: list[SourceRecord],
) -> ReportSection | None:
    """The section on the run's trial registrations without results (``registrations``), or
    None when the run saved none on the question. Reads their records' text from the run's
    artifacts. The last section of a STORM report and of a Co-STORM one."""
    regs = registrations.registry_sources(sources)
    if not regs:
        return None
    # every artifact of the run, not only the conversations' turns: a registration the survey
    # or a gap round found has its record there
    by_url = artifact_text.artifact_texts(ctx.run_id, ctx.settings)
    texts = {s.source_id: by_url.get(s.url, "") for s in regs}
    vectors = ctx.vectors()
    text = registrations.section_text(
        registrations.on_question(vectors, topic, regs, texts), vectors
    )
    if not text:
        return None
    ctx.emit("section.written", {"heading": registrations.HEADING})
    return ReportSection(heading=registrations.HEADING, text=text, level=1)


def _drop_empty(
    written: list[tuple[sections.SectionPlan, ReportSection]], drafts: list[ReportSection]
) -> tuple[list[tuple[sections.SectionPlan, ReportSection]], list[ReportSection]]:
    """Drop the outline sections that dedupe left without text and without subsections under
    them (a question's section always stays: it states its status)."""
    keep = [
        i
        for i, (plan, sec) in enumerate(zip([p for p, _ in written], drafts, strict=True))
        if sec.text.strip()
        or plan.question is not None
        or (i + 1 < len(drafts) and drafts[i + 1].level > sec.level)
    ]
    return [(written[i][0], drafts[i]) for i in keep], [drafts[i] for i in keep]


def _write_section(
    ctx: RunContext,
    topic: str,
    plan: sections.SectionPlan,
    titles: dict[str, str],
    stops: dict[str, QuestionStop],
    registrations: list[str],
) -> str:
    """Draft text (``[@src_…]`` citations) of one section: the engine writes from the section's
    sentences grouped by source (one numbered snippet per source); an unmet question's section
    opens with the statement of what was searched and found (``statements.unmet_statement``), and
    an unmet question on what was found names the trial ``registrations`` of the run (external
    ids: they hold no results yet, ``statements.registrations_note``)."""
    by_source: dict[str, list[str]] = {}
    for u in plan.units:
        by_source.setdefault(u.source_id, []).append(u.text)
    snippets = [
        Snippet(n=i, source_id=sid, text=" ".join(sents), title=titles.get(sid, ""))
        for i, (sid, sents) in enumerate(by_source.items(), start=1)
    ]
    text = ""
    if snippets:
        out = ctx.engine.write_section(
            SectionInput(
                topic=topic,
                snippets=snippets,
                question=plan.question,
                section=OutlineSection(heading=plan.heading, subsections=plan.subsections),
            )
        )
        polished = ctx.engine.polish(PolishInput(topic=topic, text=out.text)).text
        text = citations.local_to_draft(polished, {s.n: s.source_id for s in snippets})
        if not citations.DRAFT_RE.search(text):
            text = ""
    q = plan.question
    if q is not None and plan.status == "answered" and not text and plan.conduct_only:
        text = statements.conduct_statement(q, plan.conduct_only)
    elif q is not None and plan.status == "answered" and not text and plan.elsewhere:
        text = statements.quoted_under(q, plan.elsewhere, plan.elsewhere_sources)
    if q is not None and plan.status != "answered":
        found = len(plan.sources or [])
        statement = statements.unmet_statement(
            q, found, stops.get(q.key), bool(text.strip()), len(snippets) if plan.indirect else 0
        )
        if q.key in FOUND:
            note = statements.registrations_note(registrations)
            statement = " ".join(x for x in [statement, note] if x)
        text = "\n\n".join(x for x in [statement, text] if x.strip())
    return text


def _write_lead(
    ctx: RunContext,
    topic: str,
    plans: list[sections.SectionPlan],
    draft_sections: list[ReportSection],
    titles: dict[str, str],
) -> str:
    """The lead: the engine sees local ``[n]`` numbers only, mapped through the draft ids, with
    each source's closeness to the question by its title (``titles``: source id → title)."""
    ids = sorted({sid for s in draft_sections for sid in citations.DRAFT_RE.findall(s.text)})
    local = {sid: i for i, sid in enumerate(ids, start=1)}
    by_plan = {id(p): s for p, s in zip(plans, draft_sections, strict=True)}
    merged = [
        " ".join(
            [s.text, *[by_plan[id(c)].text for c in plans if c.parent is p and id(c) in by_plan]]
        )
        for p, s in zip(plans, draft_sections, strict=True)
    ]  # a question's section with its nested sections
    as_local = [
        ReportSection(
            heading=s.heading, text=citations.DRAFT_RE.sub(lambda m: f"[{local[m.group(1)]}]", t)
        )
        for s, t in zip(draft_sections, merged, strict=True)
    ]
    questions = [
        LeadQuestion(
            key=p.question.key,
            label=p.question.label,
            description=p.question.description,
            heading=p.heading,
            status=p.status or "insufficient",
            sources_found=len(p.sources or []),
            min_sources=p.question.min_sources,
        )
        for p in plans
        if p.question is not None
    ]
    rel = answers.relevance(ctx.vectors(), topic, titles)
    lead_local = ctx.engine.write_lead(
        LeadInput(
            topic=topic,
            sections=as_local,
            questions=questions,
            relevance={i: rel.get(sid, 0.0) for sid, i in local.items()},
        )
    ).text
    return citations.local_to_draft(lead_local, {i: sid for sid, i in local.items()})
