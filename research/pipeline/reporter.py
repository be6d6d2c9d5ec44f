"""Outline (seed 002 Phase 3: draft from the topic → refine with the conversations) and the
Reporter (seed 001 §3, STORM paper §3.3): sections written from the facts most relevant to each
heading, a lead, polishing, and a references list with citations renumbered 1..N."""

from __future__ import annotations

import numpy as np

from research.embeddings import get_embedder
from research.engines.base import (Fact, LeadInput, OutlineInput, PolishInput, RefineInput, SectionInput,
                                   Snippet)
from research.errors import EngineError, InvariantError
from research.models import ConversationResult, Outline, Reference, Report, ReportSection
from research.pipeline import citations
from research.pipeline.context import RunContext

SNIPPETS_PER_SECTION = 8


def make_outline(ctx: RunContext, conversations: list[ConversationResult]) -> Outline:
    """Two-phase outline (seed 002 §3.3); falls back to the draft if refining fails with the
    engine's typed error (``EngineError``: provider error, invalid output, budget...), recorded as
    event ``outline.refine_failed {error, code, fallback: "draft"}``, or returns no sections. Any
    other exception is a bug and propagates."""
    draft = ctx.engine.draft_outline(OutlineInput(topic=ctx.config.topic))
    ctx.store.put_doc(ctx.run_id, "draft_outline", draft)
    try:
        refined = ctx.engine.refine_outline(RefineInput(topic=ctx.config.topic, draft=draft,
                                                        conversations=conversations))
    except EngineError as exc:  # seed 002: "Fall back to draft"
        ctx.emit("outline.refine_failed", {"error": exc.message[:300], "code": exc.code, "fallback": "draft"})
        refined = draft
    outline = refined if refined.sections else draft
    ctx.store.put_doc(ctx.run_id, "outline", outline)
    ctx.emit("outline.ready", {"sections": [s.heading for s in outline.sections]})
    return outline


def allocate_facts(outline: Outline, facts: list[Fact], topic: str) -> list[list[Fact]]:
    """Give each section the facts closest to its heading (each fact to its best section first).

    Returns one list per section, at most ``SNIPPETS_PER_SECTION`` facts, best first. A section
    left with fewer than 2 facts borrows its nearest ones. Similarity: cosine of all-MiniLM-L6-v2
    embeddings.
    """
    unique = list({(f.text, f.source_id): f for f in facts}.values())
    if not unique or not outline.sections:
        return [[] for _ in outline.sections]
    emb = get_embedder()
    heads = [f"{topic}: {s.heading}. {' '.join(s.subsections)}" for s in outline.sections]
    sim = emb.encode([f.text for f in unique]) @ emb.encode(heads).T  # (facts, sections)
    best = sim.argmax(axis=1)
    out = []
    for j in range(len(outline.sections)):
        mine = [i for i in np.argsort(-sim[:, j]) if best[i] == j][:SNIPPETS_PER_SECTION]
        if len(mine) < 2:
            mine = list(np.argsort(-sim[:, j])[:3])
        out.append([unique[i] for i in mine])
    return out


def write_report(ctx: RunContext, outline: Outline, facts: list[Fact]) -> Report:
    """Sections → lead → polish → renumbered references; stores the draft and the final report."""
    topic = ctx.config.topic
    draft_sections: list[ReportSection] = []
    for section, chosen in zip(outline.sections, allocate_facts(outline, facts, topic)):
        ctx.check_cancel()
        snippets = [Snippet(n=i, source_id=f.source_id, text=f.text) for i, f in enumerate(chosen, start=1)]
        out = ctx.engine.write_section(SectionInput(topic=topic, section=section, snippets=snippets))
        polished = ctx.engine.polish(PolishInput(topic=topic, text=out.text)).text
        text = citations.local_to_draft(polished, {s.n: s.source_id for s in snippets})
        draft_sections.append(ReportSection(heading=section.heading, text=text))
        ctx.emit("section.written", {"heading": section.heading})
    # the lead sees draft markers; map them through local numbers so engines only ever see [n]
    ids = sorted({sid for s in draft_sections for sid in citations.DRAFT_RE.findall(s.text)})
    local = {sid: i for i, sid in enumerate(ids, start=1)}
    as_local = [ReportSection(heading=s.heading, text=citations.DRAFT_RE.sub(lambda m: f"[{local[m.group(1)]}]", s.text))
                for s in draft_sections]
    lead_local = ctx.engine.write_lead(LeadInput(topic=topic, sections=as_local)).text
    lead_draft = citations.local_to_draft(lead_local, {i: sid for sid, i in local.items()})

    draft = _assemble(ctx, topic, lead_draft, draft_sections, [])
    ctx.store.put_doc(ctx.run_id, "draft_report", draft)

    valid = {s.source_id for s in ctx.collector.all_sources()}
    texts, order = citations.renumber([lead_draft, *[s.text for s in draft_sections]], valid)
    sources = {s.source_id: s for s in ctx.collector.all_sources()}
    refs = [Reference(number=i, source_id=sid, title=sources[sid].title, url=sources[sid].url,
                      source_type=sources[sid].source_type, external_id=sources[sid].external_id)
            for i, sid in enumerate(order, start=1)]
    final_sections = [ReportSection(heading=s.heading, text=t) for s, t in zip(draft_sections, texts[1:])]
    report = _assemble(ctx, topic, texts[0], final_sections, refs)
    problems = citations.check_integrity(_body(report), len(refs))
    if problems:
        raise InvariantError(f"Citation integrity failed: {problems}")
    ctx.store.put_doc(ctx.run_id, "report", report)
    ctx.emit("report.ready", {"sections": len(final_sections), "citations": len(refs)})
    return report


def _body(report: Report) -> str:
    return "\n\n".join([report.lead, *[s.text for s in report.sections]])


def _assemble(ctx: RunContext, topic: str, lead: str, sections: list[ReportSection],
              refs: list[Reference]) -> Report:
    label = ctx.engine.label
    parts = [f"# {topic}", ""]
    if ctx.engine.name == "extractive":
        parts += [f"> Written in **{label}**: every sentence is extracted from a cited source; "
                  "no language model was used.", ""]
    failed = ctx.failed_backends() if hasattr(ctx, "failed_backends") else {}
    if failed:  # issue 5: a failing backend is visible, never a silently thin report
        notes = ", ".join(f"{name} ({', '.join(v['reasons'])}, {v['failures']}×)" for name, v in failed.items())
        parts += [f"> ⚠ Search backends that failed during this run: {notes}. Sources from them may be "
                  "missing from this report.", ""]
    parts += [lead, ""]
    for s in sections:
        parts += [f"## {s.heading}", "", s.text, ""]
    if refs:
        parts += ["## References", ""]
        for ref in refs:
            ident = f" ({ref.source_type}: {ref.external_id})" if ref.external_id else f" ({ref.source_type})"
            parts.append(f"{ref.number}. [{ref.title}]({ref.url}){ident}")
    return Report(title=topic, lead=lead, sections=sections, references=refs,
                  markdown="\n".join(parts).strip() + "\n", engine_label=label)
