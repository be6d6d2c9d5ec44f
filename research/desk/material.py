"""The material of a regenerated section (``research.desk.regenerate``): the run's evidence
passages for the section ranked by the analyst's instruction as an extra query (the one evidence
judgement, ``research.evidence.judge.score_passages``), the passages a section quotes, and how
many sentences the instruction leaves it. Scores in [0, 1]; lengths in sentences."""

from __future__ import annotations

import math
import re

from research.evidence.judge import score_passages
from research.models import EvidencePassage, Question, Report, RunState, Syllabus
from research.pipeline.answers import reading_order
from research.store.runs import RunStore
from research.text import overlap, split_sentences
from research.text.vectors import Vectors

PER_SOURCE = 2  # passages of one source in a regenerated section
DUPLICATE = 0.6  # content-word Jaccard above which a passage repeats a chosen one
MIN_SENTENCES, MAX_SENTENCES = 2, 8
SHORTER = re.compile(
    r"\b(short\w*|brie\w*|concise\w*|condense\w*|summar\w*|trim\w*|tight\w*)\b", re.I
)
LONGER = re.compile(r"\b(long\w*|expand\w*|elaborat\w*|detail\w*|more)\b", re.I)
_VECTORS = Vectors()  # one sentence-vector cache per process (thread-safe, bounded LRU)


def target_sentences(old_text: str, instruction: str) -> int:
    """How many sentences the new text gets: as many as the old one has (2–8), half of that
    for "shorter"/"brief"/"concise"…, two more for "longer"/"expand"/"more detail"…."""
    n = min(MAX_SENTENCES, max(MIN_SENTENCES, len(split_sentences(old_text))))
    if SHORTER.search(instruction):
        return max(1, math.ceil(n / 2))
    if LONGER.search(instruction):
        return min(MAX_SENTENCES + 2, n + 2)
    return n


def section_question(store: RunStore, run_id: str, report: Report, heading: str) -> Question | None:
    """The syllabus question the section ``heading`` answers (``Report.questions``), or None."""
    key = next((q.key for q in report.questions if q.heading == heading), None)
    syllabus = store.get_doc(run_id, "syllabus", Syllabus) if key else None
    return next((q for q in syllabus.questions if q.key == key), None) if syllabus else None


def rank(
    store: RunStore,
    state: RunState,
    heading: str,
    question: Question | None,
    instruction: str,
    numbers: dict[str, int],
) -> list[EvidencePassage]:
    """The run's evidence passages for the section (module doc), best first, with ``score``
    set to the mean of the section score and the instruction score; only sources in
    ``numbers`` (source id → reference number)."""
    seen: set[tuple[str, str]] = set()
    pool: list[EvidencePassage] = []
    for sid, passages in store.evidence(state.run_id).all().items():
        for p in passages:
            if sid not in numbers or (question and p.question != question.key):
                continue
            if (sid, p.passage) not in seen:
                seen.add((sid, p.passage))
                pool.append(p)
    if not pool:
        return []
    asked = Question(key="instruction", label=instruction, description="", min_sources=1)
    queries = (
        [asked]
        if question
        else [asked, Question(key="section", label=heading, description="", min_sources=1)]
    )
    scores = score_passages(queries, [p.passage for p in pool], topic=state.topic, vectors=_VECTORS)
    out = []
    for i, p in enumerate(pool):
        on_section = p.score if question else float(scores[1, i])
        out.append(p.model_copy(update={"score": round((on_section + float(scores[0, i])) / 2, 4)}))
    return sorted(out, key=lambda p: (-p.score, p.source_id, p.start))


def choose(ranked: list[EvidencePassage], n: int) -> list[EvidencePassage]:
    """Up to ``n`` passages, best first, ≤ ``PER_SOURCE`` per source, no near-duplicates,
    returned in reading order (``research.pipeline.answers.reading_order``)."""
    chosen: list[EvidencePassage] = []
    per: dict[str, int] = {}
    for p in ranked:
        if len(chosen) >= n:
            break
        if per.get(p.source_id, 0) >= PER_SOURCE:
            continue
        if any(overlap(p.passage, c.passage) >= DUPLICATE for c in chosen):
            continue
        chosen.append(p)
        per[p.source_id] = per.get(p.source_id, 0) + 1
    return reading_order(chosen)
