"""The follow-ups appendix of a report's exports: Markdown shared by the md, HTML,
PDF, DOCX exports and the run zip.

Shape::

    ## Appendix: follow-up questions

    **Q1. question**  (engine label; researched more: k new sources)

    answer with [n] citations into the run's reference list

    ### Follow-up references
    - [n] title — type · id — url      (references the follow-ups added, numbered after the report's)
"""

from __future__ import annotations

from research.engines.labels import OFFLINE_LABEL
from research.models import Reference
from research.store.followup_models import Followup

HEADING = "Appendix: follow-up questions"
REFS_HEADING = "Follow-up references"


def new_references(followups: list[Followup]) -> list[Reference]:
    """Every reference the follow-ups added, in number order."""
    return sorted((r for f in followups for r in f.new_references), key=lambda r: r.number)


def _label(f: Followup) -> str:
    bits = [OFFLINE_LABEL if f.extractive else (f.engine_label or "litellm")]
    if f.researched:
        bits.append(f"researched more: {f.sources_added} new source(s)")
    return "; ".join(bits)


def appendix_markdown(followups: list[Followup], *, with_references: bool = True) -> str:
    """The appendix as Markdown ('' when there is no follow-up). Question text is escaped for
    Markdown emphasis; answers keep their ``[n]`` citations."""
    if not followups:
        return ""
    parts = [f"## {HEADING}"]
    for i, f in enumerate(followups, start=1):
        q = f.question.replace("*", "\\*").replace("_", "\\_")
        parts.append(f"**Q{i}. {q}** ({_label(f)})")
        parts.append(f.answer)
    refs = new_references(followups)
    if with_references and refs:
        parts.append(f"### {REFS_HEADING}")
        parts.append(
            "\n".join(
                f"- [{r.number}] {r.title} — {' · '.join(x for x in (r.source_type, r.external_id) if x)}"
                f" — {r.url}"
                for r in refs
            )
        )
    return "\n\n".join(parts)


def with_appendix(markdown: str, followups: list[Followup]) -> str:
    """The report's Markdown with the appendix after it (unchanged when there is none)."""
    extra = appendix_markdown(followups)
    return f"{markdown.rstrip()}\n\n{extra}\n" if extra else markdown
