"""The report from the mind map (docs/design.md § Report from the mind map; Co-STORM's
article generation: traverse the mind map and write a section per concept from its
information, with its sources).

The syllabus's primary question (does it work) gets the first section: up to two results on its
own outcomes of every source the mind map cites, from the run's evidence (``_key_results``, as a
STORM report's primary section quotes them, less what a concept's section quotes). Each node
with information then gets a section written by the engine from that node's items
(``write_section``, numbered snippets → local ``[n]`` → draft ``[@src_…]``); nodes that only
group subtopics become headings; information that only says how a study was run is left out
(``findings.no_finding``); a sentence an earlier section already quotes is dropped and a
concept left with nothing is dropped with it (``dedupe.dedupe_report``: the same snippet reaches
several concepts); then a lead (``write_lead``); citations are renumbered 1..N by
first appearance into one references list with ``research.citations.renumber`` and
checked with ``check_integrity`` (no out-of-range index, no gaps). ``Report.questions`` says
which section answers each syllabus question; unanswered ones are stated in an "Open
Questions" section.
"""

from __future__ import annotations

from research import citations
from research.costorm.discourse import Table
from research.costorm.mindmap import SEP
from research.engines.base import LeadInput, LeadQuestion, PolishInput, SectionInput, Snippet
from research.errors import InputError
from research.models import OutlineSection, Reference, Report, ReportQuestion, ReportSection
from research.pipeline import answers, indirect, registrations, statements
from research.pipeline.assemble import notes, reference_lines
from research.pipeline.context import RunContext
from research.pipeline.dedupe import dedupe_report
from research.pipeline.reporter import trials_section
from research.pipeline.sections import insufficient_sentence
from research.planning.question_roles import PRIMARY
from research.planning.syllabus import asked_key
from research.text import split_sentences, strip_citations
from research.text.findings import no_finding
from research.text.frame import frame_question


def _sections(table: Table) -> list[tuple[int, ReportSection]]:
    """(depth, draft section) per mind-map node in pre-order; depth 1 = under the root."""
    ctx, mm = table.ctx, table.session.mindmap
    out: list[tuple[int, ReportSection]] = []
    for path, node in list(mm.walk())[1:]:
        ctx.check_cancel()
        depth = path.count(SEP)
        text = ""
        # information that only says how a study was run or what it set out to do is no content
        # of a concept's section (``findings.no_finding``)
        said = [(mm.items[i].source_id, _what_it_states(mm.items[i].text)) for i in node.items]
        snippets = [
            Snippet(n=n, source_id=sid, text=t)
            for n, (sid, t) in enumerate([x for x in said if x[1]], start=1)
        ]
        if snippets:
            section = OutlineSection(heading=node.name, subsections=[c.name for c in node.children])
            written = ctx.engine.write_section(
                SectionInput(topic=table.topic, section=section, snippets=snippets)
            )
            polished = ctx.engine.polish(PolishInput(topic=table.topic, text=written.text)).text
            text = citations.local_to_draft(polished, {s.n: s.source_id for s in snippets})
        if text or node.children:
            out.append((depth, ReportSection(heading=node.name, text=text)))
            ctx.emit("section.written", {"heading": node.name, "depth": depth})
    return out


def _key_results(table: Table) -> tuple[list[tuple[int, ReportSection]], list[LeadQuestion]]:
    """A section per primary syllabus question (``question_roles.PRIMARY``: does it work), headed by its
    label, quoting up to ``answers.PER_SOURCE_RESULTS`` results on its own outcomes of every
    source the mind map cites (the run's evidence for that question, ``answers.choose``), before
    the concepts' sections: what the mind map's trials found is the answer the question asks,
    whichever concept an expert's turn placed them under (depth 1, draft citations); with the
    questions as the lead sees them, so that it states their results."""
    ctx = table.ctx
    try:
        syllabus = ctx.syllabus or ctx.collector.syllabus()
    except InputError:  # a run without a syllabus: the concepts alone
        return [], []
    cited = sorted({item.source_id for item in table.session.mindmap.items})
    evidence = ctx.store.evidence(ctx.run_id).all()
    frame = frame_question(table.topic)
    share = answers.section_budget(ctx.config.depth, len(syllabus.questions), 1)[0]
    out: list[tuple[int, ReportSection]] = []
    asked: list[LeadQuestion] = []
    first = asked_key(syllabus, table.topic)  # what the analyst asked leads, as "does it work"
    for q in syllabus.questions:
        if q.key not in PRIMARY and q.key != first:
            continue
        mine = [p for sid in cited for p in evidence.get(sid, []) if p.question == q.key]
        found = answers.results_of(mine, q.key)
        n = answers.results_quota(found, answers.PRIMARY_WEIGHT * share, ctx.config.depth)
        picked = answers.choose(ctx.vectors(), found, n, [], frame if frame.arms else None)
        by_source: dict[str, list[str]] = {}
        for p in answers.reading_order(picked):
            by_source.setdefault(p.source_id, []).append(p.passage)
        snippets = [
            Snippet(n=n, source_id=sid, text=" ".join(texts))
            for n, (sid, texts) in enumerate(by_source.items(), start=1)
        ]
        # a comparison no source makes: what each arm did in trials of its own, labelled so
        own = not snippets and q.key in PRIMARY and len(frame.arms) >= 2
        if own:
            snippets = [
                Snippet(n=n, source_id=u.source_id, text=u.text)
                for n, u in enumerate(indirect.arm_units(ctx, table.topic, q), start=1)
            ]
        if not snippets:
            continue
        section = OutlineSection(heading=q.label, subsections=[])
        written = ctx.engine.write_section(
            SectionInput(topic=table.topic, section=section, snippets=snippets, question=q)
        )
        polished = ctx.engine.polish(PolishInput(topic=table.topic, text=written.text)).text
        text = citations.local_to_draft(polished, {s.n: s.source_id for s in snippets})
        if citations.DRAFT_RE.search(text):
            if own:
                said = statements.unmet_statement(q, 0, None, True, len(snippets))
                text = f"{said}\n\n{text}"
            out.append((1, ReportSection(heading=q.label, text=text)))
            asked.append(
                LeadQuestion(
                    key=q.key,
                    label=q.label,
                    description=q.description,
                    heading=q.label,
                    status="insufficient" if own else "answered",
                    sources_found=0 if own else len(snippets),
                    min_sources=q.min_sources,
                )
            )
            ctx.emit("section.written", {"heading": q.label, "depth": 1})
    return out, asked


def _what_it_states(text: str) -> str:
    """The sentences of an information item that are more than a study's conduct or aim ("" when
    none is)."""
    return " ".join(x for x in split_sentences(strip_citations(text)) if not no_finding(x))


def _keep_written(
    drafted: list[tuple[int, ReportSection]],
) -> list[tuple[int, ReportSection]]:
    """The drafted sections without those left with no text and no deeper section after them
    (a concept whose every sentence an earlier concept already quotes)."""
    out: list[tuple[int, ReportSection]] = []
    for depth, sec in reversed(drafted):  # from the end: a heading whose subsections all went
        if sec.text.strip() or (out and out[-1][0] > depth):
            out.append((depth, sec))
    return out[::-1]


def _lead(
    table: Table, sections: list[ReportSection], questions: list[LeadQuestion] | None = None
) -> str:
    """The lead from the drafted sections; engines only ever see local ``[n]`` markers. With
    ``questions`` (the primary questions of ``_key_results``) it states their results; when that
    gives nothing, the sentences closest to the topic."""
    ids = sorted({sid for s in sections for sid in citations.DRAFT_RE.findall(s.text)})
    local = {sid: i for i, sid in enumerate(ids, start=1)}
    as_local = [
        ReportSection(
            heading=s.heading,
            text=citations.DRAFT_RE.sub(lambda m: f"[{local[m.group(1)]}]", s.text),
        )
        for s in sections
        if s.text
    ]
    write = table.ctx.engine.write_lead
    lead = write(LeadInput(topic=table.topic, sections=as_local, questions=questions or [])).text
    if not lead.strip() and questions:
        lead = write(LeadInput(topic=table.topic, sections=as_local)).text
    return citations.local_to_draft(lead, {i: sid for sid, i in local.items()})


def write_report(table: Table) -> Report:
    """Sections per node → lead → renumbered references; stores ``draft_report`` and ``report``.

    Raises:
        AssertionError: the final citations fail ``check_integrity`` (a bug, never expected).
    """
    ctx = table.ctx
    results, asked = _key_results(table)
    drafted = _sections(table) + results
    # the same snippet reaches several concepts of the mind map: no sentence twice in a report.
    # The concepts keep what they quote (their citations say which question each answers); the
    # primary question's section keeps the rest of its results and is read first
    _, kept = dedupe_report(ctx.vectors(), "", [s for _, s in drafted])
    drafted = _keep_written([(d, s) for (d, _), s in zip(drafted, kept, strict=True)])
    labels = {q.heading for q in asked}
    drafted = [x for x in drafted if x[1].heading in labels] + [
        x for x in drafted if x[1].heading not in labels
    ]
    lead_draft = _lead(table, [s for _, s in drafted], asked)
    all_sources = ctx.collector.all_sources()
    trials = trials_section(ctx, table.topic, all_sources)
    if trials is not None:  # last, as in a STORM report: what is under way, after what was found
        drafted.append((1, trials))
    depths = [d for d, _ in drafted]
    lead_draft, draft_sections = dedupe_report(ctx.vectors(), lead_draft, [s for _, s in drafted])
    # a concept whose sentences the lead now quotes goes too: no heading over nothing
    drafted = _keep_written(list(zip(depths, draft_sections, strict=True)))
    depths, draft_sections = [d for d, _ in drafted], [s for _, s in drafted]
    ctx.store.put_doc(
        ctx.run_id, "draft_report", assemble(ctx, table.topic, lead_draft, drafted, [])
    )
    by_id = {s.source_id: s for s in all_sources}
    texts, order = citations.renumber([lead_draft, *[s.text for s in draft_sections]], set(by_id))
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
    final = [
        (d, ReportSection(heading=s.heading, text=t))
        for d, s, t in zip(depths, draft_sections, texts[1:], strict=True)
    ]
    questions, open_section = _questions(
        ctx, final, {sid: r.number for sid, r in zip(order, refs, strict=True)}
    )
    if open_section is not None:
        final.append((1, open_section))
    report = assemble(ctx, table.topic, texts[0], final, refs).model_copy(
        update={"questions": questions}
    )
    problems = citations.check_integrity(
        "\n\n".join([report.lead, *[s.text for s in report.sections]]), len(refs)
    )
    if problems:
        raise AssertionError(f"citation integrity failed: {problems}")
    ctx.store.put_doc(ctx.run_id, "report", report)
    ctx.emit("report.ready", {"sections": len(final), "citations": len(refs), "from": "mind map"})
    return report


OPEN_QUESTIONS = "Open Questions"


def _questions(
    ctx: RunContext, final: list[tuple[int, ReportSection]], number: dict[str, int]
) -> tuple[list[ReportQuestion], ReportSection | None]:
    """``Report.questions`` for a mind-map report: per syllabus question, the section citing
    most of the sources assigned to it (docs/design.md § Completion: ``finalize_sources``; a
    primary question's own section counts for it alone); "answered" when the question has
    ``min_sources`` sources and that section cites one, else "insufficient", stated in one
    sentence with the count in an "Open Questions" section (returned)."""
    try:
        syllabus = ctx.syllabus or ctx.collector.syllabus()
        assigned = ctx.collector.finalize_sources()["questions"]
    except InputError:  # a run without a syllabus: nothing to report per question
        return [], None
    # the primary question's own section (``_key_results``) quotes its results only: it cites
    # the mind map's sources, which other questions count too, yet answers none of them
    own = {q.label: q.key for q in syllabus.questions if q.key in PRIMARY}
    out, statements = [], []
    for q in syllabus.questions:
        srcs = [s["source_id"] for s in assigned.get(q.key, {}).get("sources", [])]
        refs = {number[sid] for sid in srcs if sid in number}
        best, best_n = None, 0
        for _, sec in final:
            # nor does the list of registered trials answer a question: it says what is planned
            if own.get(sec.heading, q.key) != q.key or sec.heading == registrations.HEADING:
                continue
            cited = {int(n) for n in citations.LOCAL_RE.findall(sec.text)} & refs
            if len(cited) > best_n:
                best, best_n = sec, len(cited)
        if best is not None and len(srcs) >= q.min_sources:
            in_order = [int(n) for n in citations.LOCAL_RE.findall(best.text) if int(n) in refs]
            out.append(
                ReportQuestion(
                    key=q.key,
                    label=q.label,
                    heading=best.heading,
                    status="answered",
                    sources=list(dict.fromkeys(in_order)),
                    sources_found=len(srcs),
                    min_sources=q.min_sources,
                )
            )
            continue
        statements.append(
            insufficient_sentence(q, len(srcs))
            if len(srcs) < q.min_sources
            else f"{q.label}: {len(srcs)} sources found ({q.min_sources} needed), but no section of the "
            "mind map cites them; the evidence found does not establish it."
        )
        out.append(
            ReportQuestion(
                key=q.key,
                label=q.label,
                heading=OPEN_QUESTIONS,
                status="insufficient",
                sources=[],
                sources_found=len(srcs),
                min_sources=q.min_sources,
            )
        )
    return out, (
        ReportSection(heading=OPEN_QUESTIONS, text=" ".join(statements)) if statements else None
    )


def assemble(
    ctx: RunContext,
    topic: str,
    lead: str,
    sections: list[tuple[int, ReportSection]],
    refs: list[Reference],
) -> Report:
    """The Report with its markdown: the title, the run's notes (``pipeline.assemble.notes``),
    the lead, a heading per section at its mind-map depth (``##`` for depth 1, ``###`` for
    depth 2, at most ``####``), and the references."""
    written = (
        " from the Co-STORM mind map: every sentence is extracted from a cited source; "
        "no language model was used."
    )
    parts = [f"# {topic}", "", *notes(ctx, written), lead, ""]
    for depth, s in sections:
        parts += [f"{'#' * min(depth + 1, 4)} {s.heading}", ""]
        if s.text:
            parts += [s.text, ""]
    parts += reference_lines(refs)
    levels = [s.model_copy(update={"level": min(max(depth, 1), 3)}) for depth, s in sections]
    return Report(
        title=topic,
        lead=lead,
        sections=levels,
        references=refs,
        markdown="\n".join(parts).strip() + "\n",
        engine_label=ctx.engine.label,
    )
