"""Citation audit: how well does each cited source back the sentence citing it?

For a cited sentence ``s`` and its cited source (its sentences from the run's evidence,
``research.followup.corpus``), every passage ``p`` (one sentence, or two adjacent ones) gets

    cosine(s, p)  MiniLM all-MiniLM-L6-v2, L2-normalised vectors (Reimers & Gurevych 2019)
    overlap(s, p) content-word recall: share of s's content words (``content_words``,
                  ``word_key``: case, hyphens, possessives folded) that occur in p
    score         = W_COSINE * cosine + (1 - W_COSINE) * overlap

and the best-scoring passage is the one shown. Verdict: ``supported`` when score >= SUPPORTED,
``weak`` when score >= WEAK, else ``unsupported``.

Thresholds and their precision, measured on a labelled sample from the shared data
(``bench/audit_calibration.py``; SciFact train claims in ``shared/data/beir/scifact``, Wadden et
al. 2020; result file ``bench/results/audit_calibration.json``):
  * positives: 300 (claim, cited abstract) pairs labelled SUPPORT by SciFact's annotators (the
    claim is an expert's paraphrase, so harder than a sentence copied from its source);
  * negatives: the same 300 claims each paired with the abstract sharing the most content words
    with it among the other claims' evidence abstracts (a plausible but wrong citation);
  * separately, 150 CONTRADICT pairs (on-point source that disagrees), reported, not tuned on.
  The claims were split in two halves (seed 13); the tune half picked, over a grid,
  W_COSINE = 0.8 and the highest-recall SUPPORTED threshold with precision >= 0.95, then the
  highest WEAK threshold with unsupported-precision >= 0.9. On the held-out half
  (147 positive, 147 wrong-source pairs):
    - ``supported`` precision 0.960 (recall 0.646: a third of true paraphrased support is
      reported as weak, never hidden);
    - ``unsupported`` precision 0.859 (share of unsupported verdicts that really are wrong
      sources); 97.3 % of wrong-source citations are flagged weak or unsupported;
    - limitation: 66.3 % of CONTRADICT pairs score ``supported`` -- the audit measures whether
      the source talks about what the sentence says, not whether it agrees (no entailment model).
  On the shared corpus's drug extractive report every citation scores ``supported`` (its sentences are
  quoted from their sources; tests/test_followup.py).

A cited number that does not resolve is impossible by construction (``research.pipeline
.citations.check_integrity`` and ``research.followup.answer`` only cite references of the run);
the audit reports a check for every resolvable citation only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from research.citations import cited_spans
from research.followup.corpus import EvidenceDoc, embed, passages
from research.models import Report
from research.store.followup_models import AuditSummary, CitationCheck, Verdict
from research.text import (
    content_words,
    mentions_topic,
    split_sentences,
    strip_citations,
    topic_words,
    word_key,
)
from research.text.frame import frame_question
from research.text.frame_match import about_question, arms_of

W_COSINE = 0.8
SUPPORTED = 0.63
WEAK = 0.52
# Held-out precision of the verdicts (bench/audit_calibration.py, see the module docstring).
PRECISION: dict[str, float] = {"supported": 0.960, "unsupported": 0.859}
PASSAGE_CHARS = 600


@dataclass
class Support:
    """Best passage of a source for a sentence: ``score``, ``cosine``, ``overlap`` in [0, 1]."""

    passage: str
    score: float
    cosine: float
    overlap: float


def verdict(score: float) -> Verdict:
    """``supported`` / ``weak`` / ``unsupported`` by the thresholds above."""
    return "supported" if score >= SUPPORTED else "weak" if score >= WEAK else "unsupported"


def _keys(text: str) -> set[str]:
    return {k for w in content_words(text) if (k := word_key(w))}


class SupportScorer:
    """Scores sentences against sources; each source's passages are embedded once.

    ``score(sentence, doc)`` → ``Support``. Cost: one MiniLM pass over a source's passages
    (~2n for n sentences) the first time it is used, one per sentence after that.
    """

    def __init__(self) -> None:
        self._cache: dict[str, tuple[list[str], np.ndarray, list[set[str]]]] = {}

    def _passages(self, doc: EvidenceDoc) -> tuple[list[str], np.ndarray, list[set[str]]]:
        sid = doc.source.source_id
        if sid not in self._cache:
            texts = [p for p, _ in passages(doc.sentences())]
            self._cache[sid] = (texts, embed(texts), [_keys(t) for t in texts])
        return self._cache[sid]

    def score_texts(
        self,
        sentence: str,
        texts: list[str],
        vectors: np.ndarray | None = None,
        keys: list[set[str]] | None = None,
    ) -> Support:
        """Best passage among ``texts`` for ``sentence`` (vectors/keys computed when not given)."""
        sentence = strip_citations(sentence)
        if not texts or not sentence:
            return Support("", 0.0, 0.0, 0.0)
        vectors = embed(texts) if vectors is None else vectors
        keys = [_keys(t) for t in texts] if keys is None else keys
        cos = np.clip(vectors @ embed([sentence])[0], 0.0, 1.0)
        want = _keys(sentence)
        ov = np.array([len(want & k) / len(want) if want else 0.0 for k in keys])
        score = W_COSINE * cos + (1.0 - W_COSINE) * ov
        best = int(np.argmax(score))
        return Support(texts[best], float(score[best]), float(cos[best]), float(ov[best]))

    def score(self, sentence: str, doc: EvidenceDoc) -> Support:
        texts, vectors, keys = self._passages(doc)
        return self.score_texts(sentence, texts, vectors, keys)


def check(
    scorer: SupportScorer, where: str, sentence: str, number: int, doc: EvidenceDoc
) -> CitationCheck:
    """One ``CitationCheck`` of ``sentence`` citing reference ``number`` (source ``doc``)."""
    s = scorer.score(sentence, doc)
    passage = s.passage if len(s.passage) <= PASSAGE_CHARS else s.passage[: PASSAGE_CHARS - 1] + "…"
    return CitationCheck(
        where=where,
        sentence=strip_citations(sentence),
        number=number,
        source_id=doc.source.source_id,
        score=round(s.score, 4),
        cosine=round(s.cosine, 4),
        overlap=round(s.overlap, 4),
        verdict=verdict(s.score),
        passage=passage,
    )


def cited_sentences(text: str) -> list[tuple[str, list[int]]]:
    """(sentence, [n, ...]) for each citation group of ``text``: the sentence that ends right
    before the markers (a span of several sentences is cited for its last one)."""
    out = []
    for span, nums in cited_spans(text):
        sents = split_sentences(span, min_words=1) or [span]
        out.append((sents[-1], nums))
    return out


def audit_texts(
    scorer: SupportScorer, where: str, texts: list[str], number_to_doc: dict[int, EvidenceDoc]
) -> list[CitationCheck]:
    """Checks for every cited sentence of ``texts`` whose numbers resolve in ``number_to_doc``."""
    checks = []
    for text in texts:
        for sentence, nums in cited_sentences(text):
            for n in dict.fromkeys(nums):
                doc = number_to_doc.get(n)
                if doc is not None:
                    checks.append(check(scorer, where, sentence, n, doc))
    return checks


def summarize(checks: list[CitationCheck]) -> AuditSummary:
    """Counts plus the checks sorted worst first (off the question, then lowest score)."""
    counts = {v: sum(c.verdict == v for c in checks) for v in ("supported", "weak", "unsupported")}
    return AuditSummary(
        total=len(checks),
        **counts,
        off_question=sum(not c.on_question for c in checks),
        checks=sorted(checks, key=lambda c: (c.on_question, c.score)),
    )


def on_question(doc: EvidenceDoc, question: str) -> bool:
    """True when the cited source is about the run's question: for a framed question (a
    comparison, an intervention, a device) it names an arm (either arm of a comparison: a trial
    of one arm alone is what a report quotes as indirect evidence, ``research.evidence.indirect``)
    and the setting (``research.text.frame_match.about_question``); otherwise it names more than
    half of the question's content words (``research.text.mentions_topic``). A sentence can
    occur verbatim in a source that answers another question; this check fails such a citation."""
    text = f"{doc.source.title}\n{doc.text}"
    frame = frame_question(question)
    if frame.framed:
        return about_question(text, frame, arms=False) and (
            not frame.arms or any(arms_of(text, frame))
        )
    return mentions_topic(text, topic_words(question))


def audit_report(
    report: Report, number_to_doc: dict[int, EvidenceDoc], scorer: SupportScorer | None = None
) -> AuditSummary:
    """The audit of a report's lead and sections."""
    texts = [report.lead, *[s.text for s in report.sections]]
    checks = audit_texts(scorer or SupportScorer(), "report", texts, number_to_doc)
    by_source = {d.source.source_id: d for d in number_to_doc.values()}
    about = {sid: on_question(d, report.title) for sid, d in by_source.items()}
    checks = [c.model_copy(update={"on_question": about.get(c.source_id, True)}) for c in checks]
    return summarize(checks)
