"""Answers to a follow-up question from a run's evidence.

Retrieval: ``EvidenceIndex.top_sources`` (hybrid BM25 + MiniLM over the run's sources, full
texts from its raw artifacts) → the ``TOP_SOURCES`` best sources → their sentences.

* Extractive engine (labelled wherever shown): every sentence of those sources is scored
  ``0.6 * cosine(question, sentence) + 0.4 * recall of the question's content words`` (the
  question's own topic words count too), and the best 2-6 whole sentences with score >=
  ``RELEVANT`` are the answer, at most ``PER_SOURCE`` per source, near-duplicates dropped, each
  cited ``[n]``. Below that: no answer, ``found=False`` (the analyst is offered research-more).
* litellm engine: the pipeline's own ``answer_question`` step (prompt
  ``engines/litellm/prompts/answer_question.md``: 2-6 sentences, only the numbered results,
  validated structured output with one re-ask, ``read_artifact`` over the cards of the searches
  that found them); its local ``[n]`` are mapped to the run's reference numbers. The passages
  it sees are the extractive ranking's best sentences of each source.

Reference numbers: a source already in the run's references keeps its number; another one gets
the next number and joins the run's references (``Followup.new_references``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from research.engines.base import AnswerInput
from research.engines.litellm.sanitise import CITE_RE
from research.followup.corpus import EvidenceDoc, EvidenceIndex, embed
from research.models import Reference, SearchResult
from research.text import content_words, ensure_period, overlap, word_key

TOP_SOURCES = 8
RELEVANT = 0.42  # sentence score for an answer sentence (see module docstring)
MAX_SENTENCES = 5
MIN_SENTENCES = 2
PER_SOURCE = 2
DUPLICATE = 0.6  # content-word Jaccard above which a sentence repeats an earlier one
NOT_FOUND = (
    "The run's sources do not answer this question: none of its {n} saved sources has a "
    "passage on it. Research more to search for new sources."
)


@dataclass
class Picked:
    """An answer sentence and the source it comes from."""

    sentence: str
    doc: EvidenceDoc
    score: float


def _keys(text: str) -> set[str]:
    return {k for w in content_words(text) if (k := word_key(w))}


def rank_sentences(question: str, docs: list[EvidenceDoc]) -> list[Picked]:
    """Every sentence of ``docs`` scored against ``question``, best first."""
    items = [(s, d) for d in docs for s in d.sentences()]
    if not items:
        return []
    vecs = embed([s for s, _ in items])
    cos = np.clip(vecs @ embed([question])[0], 0.0, 1.0)
    want = _keys(question)
    out = []
    for (s, d), c in zip(items, cos, strict=True):
        rec = len(want & _keys(s)) / len(want) if want else 0.0
        out.append(Picked(s, d, float(0.6 * c + 0.4 * rec)))
    return sorted(out, key=lambda p: -p.score)


def select(ranked: list[Picked]) -> list[Picked]:
    """2-6 answer sentences (see module docstring); [] when nothing reaches ``RELEVANT``."""
    chosen: list[Picked] = []
    per: dict[str, int] = {}
    for p in ranked:
        if len(chosen) == MAX_SENTENCES or (p.score < RELEVANT and len(chosen) >= MIN_SENTENCES):
            break
        if p.score < RELEVANT and not chosen:
            break
        if p.score < RELEVANT * 0.85:  # a second sentence may be a little weaker, not unrelated
            break
        sid = p.doc.source.source_id
        if per.get(sid, 0) >= PER_SOURCE or len(p.sentence.split()) < 5:
            continue
        if any(overlap(p.sentence, c.sentence) >= DUPLICATE for c in chosen):
            continue
        chosen.append(p)
        per[sid] = per.get(sid, 0) + 1
    return chosen


class Numbering:
    """Reference numbers for cited sources: existing references keep theirs, new sources get
    the next ones (``new`` collects the new ``Reference`` objects in order)."""

    def __init__(self, refs: list[Reference]) -> None:
        self.by_source = {r.source_id: r.number for r in refs}
        self.next = max((r.number for r in refs), default=0) + 1
        self.new: list[Reference] = []

    def number(self, doc: EvidenceDoc) -> int:
        sid = doc.source.source_id
        if sid not in self.by_source:
            s = doc.source
            self.new.append(
                Reference(
                    number=self.next,
                    source_id=sid,
                    title=s.title,
                    url=s.url,
                    source_type=s.source_type,
                    external_id=s.external_id,
                )
            )
            self.by_source[sid] = self.next
            self.next += 1
        return self.by_source[sid]


def extractive_answer(
    question: str, ranked: list[Picked], numbering: Numbering
) -> tuple[str, list[int], dict[int, EvidenceDoc]]:
    """(answer text with ``[n]``, cited numbers in order, number → source) from the selection."""
    parts, cited, docs = [], [], {}
    for p in select(ranked):
        n = numbering.number(p.doc)
        parts.append(f"{ensure_period(p.sentence.rstrip())} [{n}]")
        cited.append(n)
        docs[n] = p.doc
    return " ".join(parts), list(dict.fromkeys(cited)), docs


def llm_answer(
    engine,
    topic: str,
    question: str,
    ranked: list[Picked],
    numbering: Numbering,
    queries: dict[str, str],
) -> tuple[str, list[int], dict[int, EvidenceDoc]]:
    """The litellm engine's ``answer_question`` over the top sources (local [k] → run [n])."""

    order: list[EvidenceDoc] = []
    best: dict[str, list[str]] = {}
    for p in ranked:
        sid = p.doc.source.source_id
        if sid not in best:
            order.append(p.doc)
        if len(best.setdefault(sid, [])) < 3:
            best[sid].append(p.sentence)
    order = order[:TOP_SOURCES]
    results = [
        SearchResult(
            url=d.source.url,
            title=d.source.title,
            snippets=best[d.source.source_id],
            text=d.text,
            source_type=d.source.source_type,
            external_id=d.source.external_id,
            doc_id=d.source.source_id,
            query=queries.get(d.source.source_id, ""),
        )
        for d in order
    ]
    out = engine.answer_question(AnswerInput(topic=topic, question=question, results=results))
    docs: dict[int, EvidenceDoc] = {}

    def sub(m) -> str:
        k = int(m.group(1))
        if not 1 <= k <= len(order):
            return ""
        n = numbering.number(order[k - 1])
        docs[n] = order[k - 1]
        return f"[{n}]"

    text = CITE_RE.sub(sub, out.answer).strip()
    cited = [int(x) for x in CITE_RE.findall(text)]
    return text, list(dict.fromkeys(cited)), docs


def retrieve(index: EvidenceIndex, question: str) -> list[Picked]:
    """Sentences of the ``TOP_SOURCES`` best sources, scored and sorted best first."""
    return rank_sentences(question, [d for d, _ in index.top_sources(question, TOP_SOURCES)])
