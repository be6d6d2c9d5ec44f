"""A report put together (docs/design.md § Coordinator and planner): its markdown from the lead,
the sections and the references (``assemble``), and ``Report.questions``, each syllabus
question's section, status, references, evidence and why research on it stopped
(``report_questions``)."""

from __future__ import annotations

from research import citations
from research.engines.labels import fallback_line, planned_line
from research.models import (
    EvidencePassage,
    QuestionStop,
    Reference,
    Report,
    ReportQuestion,
    ReportSection,
)
from research.pipeline import sections
from research.pipeline.context import RunContext


def report_questions(
    plans: list[sections.SectionPlan],
    final_sections: list[ReportSection],
    counted: dict[str, list[EvidencePassage]],
    stops: dict[str, QuestionStop],
) -> list[ReportQuestion]:
    """``Report.questions``: per syllabus question its section heading, status (answered exactly
    when met on the coverage chart), the reference numbers its section cites, every evidence
    passage that counts for it and why research on it stopped."""
    out = []
    text_of = {id(p): s.text for p, s in zip(plans, final_sections, strict=True)}
    for plan, sec in zip(plans, final_sections, strict=True):
        if plan.question is None:
            continue
        body = " ".join(
            [sec.text, *[text_of[id(c)] for c in plans if c.parent is plan and id(c) in text_of]]
        )
        refs = list(dict.fromkeys(int(n) for n in citations.LOCAL_RE.findall(body)))
        status = "answered" if plan.status == "answered" else "insufficient"
        stop = stops.get(plan.question.key)
        out.append(
            ReportQuestion(
                key=plan.question.key,
                label=plan.question.label,
                heading=sec.heading,
                status=status,
                sources=refs,
                sources_found=len(plan.sources or []),
                min_sources=plan.question.min_sources,
                evidence=counted.get(plan.question.key, []),
                stop_reason=stop.reason if stop else "",
            )
        )
    return out


def report_body(report: Report) -> str:
    """The report's lead and section texts, blank-line separated (what its citations are in)."""
    return "\n\n".join([report.lead, *[s.text for s in report.sections]])


def notes(ctx: RunContext, written: str) -> list[str]:
    """The markdown lines under a report's title: the offline engine's label (``written``: how
    the text was made, after "Written in <label>"), the search backends that failed during the
    run, and the parts a weak or a local model left to the offline engine; each a quote line
    followed by a blank one."""
    parts: list[str] = []
    if ctx.engine.extractive:
        parts += [f"> Written in **{ctx.engine.label}**{written}", ""]
    failed = ctx.failed_backends() if hasattr(ctx, "failed_backends") else {}
    if failed:  # a failing backend is visible, never a silently thin report
        listed = ", ".join(
            f"{name} ({', '.join(v['reasons'])}, {v['failures']}×)" for name, v in failed.items()
        )
        parts += [
            f"> ⚠ Search backends that failed during this run: {listed}. Sources from them may be "
            "missing from this report.",
            "",
        ]
    fell_back = fallback_line(ctx.engine.fallbacks())
    if fell_back:  # which parts a weak model did not write
        parts += [f"> {fell_back}", ""]
    planned = planned_line(ctx.store.offline_steps(ctx.run_id))
    if planned:  # which parts a local model leaves to the offline engine by design
        parts += [f"> {planned}", ""]
    return parts


def reference_lines(refs: list[Reference]) -> list[str]:
    """The "## References" block: one numbered markdown link per reference with its source
    type and identifier; [] without references."""
    if not refs:
        return []
    parts = ["## References", ""]
    for ref in refs:
        ident = (
            f" ({ref.source_type}: {ref.external_id})"
            if ref.external_id
            else f" ({ref.source_type})"
        )
        parts.append(f"{ref.number}. [{ref.title}]({ref.url}){ident}")
    return parts


def assemble(
    ctx: RunContext,
    topic: str,
    lead: str,
    sections: list[ReportSection],
    refs: list[Reference],
    questions: list[ReportQuestion] | None = None,
) -> Report:
    """The ``Report`` of ``topic``: its markdown is the title, the run's ``notes``, the lead,
    the sections at their levels and the numbered references (``reference_lines``)."""
    written = ": every sentence is extracted from a cited source; no language model was used."
    parts = [f"# {topic}", "", *notes(ctx, written), lead, ""]
    for s in sections:
        parts += [f"{'#' * (s.level + 1)} {s.heading}", "", s.text, ""]
    parts += reference_lines(refs)
    return Report(
        title=topic,
        lead=lead,
        sections=sections,
        references=refs,
        markdown="\n".join(parts).strip() + "\n",
        engine_label=ctx.engine.label,
        questions=questions or [],
    )
