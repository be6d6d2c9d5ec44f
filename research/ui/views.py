"""Pure shaping of stored run documents into what the pages show (rows and safe Markdown)."""

from __future__ import annotations

from collections.abc import Sequence

from research.models import Analysis, DialogueTurn, Perspective, Reference, Report, Syllabus
from research.ui.citations import anchor_id, code, plain


def syllabus_rows(syllabus: Syllabus) -> list[dict]:
    """Rows ``{key, label, description, min_sources}`` in syllabus order."""
    return [
        {"key": q.key, "label": q.label, "description": q.description, "min_sources": q.min_sources}
        for q in syllabus.questions
    ]


def perspective_card(p: Perspective) -> str:
    """Safe Markdown: bold persona name, focus, then its questions as a bullet list."""
    lines = [f"**{plain(p.name)}**", "", plain(p.focus)]
    if p.questions:
        lines += [""] + [f"- {plain(q)}" for q in p.questions]
    return "\n".join(lines)


def group_turns(
    turns: Sequence[DialogueTurn], perspectives: Sequence[Perspective]
) -> dict[str, list[DialogueTurn]]:
    """Turns per perspective name, each list ordered by ``turn_number``.

    Keys follow the perspectives' order; perspectives without turns get an empty list and turns of a
    perspective missing from ``perspectives`` are appended under their own name.
    """
    groups: dict[str, list[DialogueTurn]] = {p.name: [] for p in perspectives}
    for t in turns:
        groups.setdefault(t.perspective, []).append(t)
    return {name: sorted(ts, key=lambda t: t.turn_number) for name, ts in groups.items()}


def tab_label(name: str, n_turns: int) -> str:
    """Tab title for a perspective: ``name (n)``, the name cut to 40 characters."""
    short = name if len(name) <= 40 else name[:39] + "…"
    return f"{short} ({n_turns})"


def source_numbers(report: Report | None) -> dict[str, int]:
    """``source_id → reference number`` for a report's references (empty without a report)."""
    return {ref.source_id: ref.number for ref in (report.references if report else [])}


def _cite(source_id: str, numbers: dict[str, int]) -> str:
    n = numbers.get(source_id)
    return f"[[{n}]](#{anchor_id(n)})" if n else code(source_id)


def claims_markdown(analysis: Analysis, numbers: dict[str, int], limit: int = 15) -> str:
    """Cross-validated claims as a bullet list; sources cited in the report link to ``#ref-n``,
    others show their source id. At most ``limit`` claims, then a count of the rest."""
    lines = []
    for c in analysis.cross_validated[:limit]:
        cites = " ".join(_cite(s, numbers) for s in c.source_ids)
        lines.append(f"- {plain(c.text)} {cites}")
    rest = len(analysis.cross_validated) - limit
    if rest > 0:
        lines.append(f"- _… and {rest} more_")
    return "\n".join(lines)


def contradictions_markdown(analysis: Analysis, numbers: dict[str, int]) -> list[str]:
    """One safe Markdown block per contradiction: subject, both statements with their sources,
    explanation."""
    blocks = []
    for c in analysis.contradictions:
        block = [
            f"**{plain(c.subject)}**",
            f"- A: {plain(c.statement_a)} {_cite(c.source_a, numbers)}",
            f"- B: {plain(c.statement_b)} {_cite(c.source_b, numbers)}",
        ]
        if c.explanation:
            block.append(f"\n_{plain(c.explanation)}_")
        blocks.append("\n".join(block))
    return blocks


def reference_rows(refs: Sequence[Reference]) -> list[dict]:
    """Rows ``{n, title, type, id, url}`` for a compact references table."""
    return [
        {"n": r.number, "title": r.title, "type": r.source_type, "id": r.external_id, "url": r.url}
        for r in refs
    ]
