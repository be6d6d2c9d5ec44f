"""The Coverage page's evidence view: per syllabus question, the passages that count for it
(docs/design.md § Terms: evidence) with their source, score and links, and why research on the
question stopped. Pure data → safe Markdown; the page only renders."""

from __future__ import annotations

from dataclasses import dataclass, field

from research.errors import InputError
from research.export.bundle import turn_sources
from research.models import EvidencePassage, GapReport, SourceRecord
from research.store.runs import RunStore
from research.ui.citations import plain
from research.ui.report_view import artifact_url


@dataclass
class QuestionEvidence:
    """One question's row of the evidence view: ``found`` sources with evidence of ``needed``,
    its passages best first, and the stop reason ("" while the run is still researching)."""

    key: str
    label: str
    found: int
    needed: int
    stop_reason: str = ""
    passages: list[EvidencePassage] = field(default_factory=list)

    @property
    def met(self) -> bool:
        """Met on the chart: at least ``needed`` sources with evidence."""
        return self.found >= self.needed

    def title(self) -> str:
        """Expander title, e.g. "✓ Clinical Efficacy — 7 sources with evidence (5 needed)"."""
        mark = "✓" if self.met else "⚠"
        noun = "source" if self.found == 1 else "sources"
        tail = f" · {self.stop_reason}" if self.stop_reason else ""
        return (
            f"{mark} {self.label} — {self.found} {noun} with evidence ({self.needed} needed){tail}"
        )


def question_evidence(store: RunStore, run_id: str) -> list[QuestionEvidence]:
    """Every syllabus question of the run with its counted evidence, in syllabus order.

    Raises:
        InputError: the run has no syllabus yet (the collector is not initialised).
    """
    collector = store.collector(run_id)
    syllabus = collector.syllabus()
    counts = collector.question_counts()
    finalized = collector.finalize_sources()["questions"]
    evidence = store.evidence(run_id).all()
    gaps = store.get_doc(run_id, "gaps", GapReport)
    stops = {s.key: s.reason for s in gaps.questions} if gaps else {}
    out = []
    for q in syllabus.questions:
        ids = [s["source_id"] for s in finalized.get(q.key, {}).get("sources", [])]
        mine = [p for sid in ids for p in evidence.get(sid, []) if p.question == q.key]
        out.append(
            QuestionEvidence(
                key=q.key,
                label=q.label,
                found=counts.get(q.key, 0),
                needed=q.min_sources,
                stop_reason=stops.get(q.key, ""),
                passages=sorted(mine, key=lambda p: (-p.score, p.source_id, p.start)),
            )
        )
    return out


def link_maps(store: RunStore, run_id: str) -> tuple[dict[str, SourceRecord], dict[str, str]]:
    """``(source id → SourceRecord, source id → raw artifact file)`` of the run, read once per
    render for ``passage_lines``."""
    try:
        sources = {s.source_id: s for s in store.collector(run_id).all_sources()}
    except InputError:
        sources = {}
    return sources, turn_sources(store, run_id)[0]


def passage_lines(
    run_id: str,
    passages: list[EvidencePassage],
    sources: dict[str, SourceRecord],
    artifacts: dict[str, str],
) -> list[str]:
    """Safe Markdown, one line per passage: ``**#12** · 0.82 · “passage” — [title](url) ·
    [artifact](artifacts?run=…)`` (maps from ``link_maps``). Source text is escaped (``plain``)."""
    return [
        _line(p, sources.get(p.source_id), artifacts.get(p.source_id), run_id) for p in passages
    ]


def _line(p: EvidencePassage, src: SourceRecord | None, art: str | None, run_id: str) -> str:
    num = int(p.source_id[4:]) if p.source_id.startswith("src_") else p.source_id
    line = f"**#{num}** · {p.score:.2f} · “{plain(p.passage)}”"
    if src is not None:
        title = plain(src.title or src.url)
        line += f" — [{title}]({src.url})" if src.url.startswith("http") else f" — {title}"
    if art:
        line += f" · [artifact]({artifact_url(run_id, art)})"
    return line
