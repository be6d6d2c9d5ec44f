"""Analysis agent without a model (docs/design.md § Analysis: cross-validation and
contradiction detection).

Heuristics (simple and stated, not a substitute for reading the sources):

- **Cross-validation.** Facts are embedded and grouped by average-linkage agglomerative
  clustering on cosine distance, cut at similarity ``SAME_CLAIM`` (0.88; all-MiniLM-L6-v2 puts
  unrelated sentences of one field at 0.8–0.9). A cluster whose facts come from ≥ 2 distinct
  ``source_id`` is a cross-validated ``Claim``; its text is the member closest to the cluster
  centroid. ``single_source`` counts clusters backed by one source.
- **Contradictions.** Two facts from different sources that are highly similar (cosine ≥
  ``CONTRA_SIM``, 0.85) and share most of their words (Jaccard overlap of content words ≥
  ``MIN_OVERLAP``, 0.4), and either (a) one carries a negation cue (not, never, failed to,
  no significant/difference/benefit..., see ``text.is_negated``) and the other does not, or
  (b) both give numbers after the same quantity words (e.g. "response rate ... 51%" vs
  "response rate ... 40%") with different values. Different trials legitimately report
  different numbers, so the explanation says what differed and asks the reader to check.
"""

from __future__ import annotations

import re

import numpy as np
from sklearn.cluster import AgglomerativeClustering

from research.engines.base import Fact
from research.models import Analysis, Claim, Contradiction
from research.text import CITE, STOP, clean, content_words, is_negated, overlap
from research.text.vectors import Vectors, rank

SAME_CLAIM = 0.88
CONTRA_SIM = 0.85
NUMBER_SIM = 0.85
MIN_OVERLAP = 0.40
MAX_CONTRADICTIONS = 12
_QUANTITY = re.compile(
    r"([A-Za-z][A-Za-z-]+(?:\s+[A-Za-z][A-Za-z-]+)?)\s*(?:of|was|were|is|=|:|,)?\s*"
    r"(?:about|approximately|~)?\s*(\d+(?:\.\d+)?)\s*(%|percent|months|years|weeks|days|"
    r"patients|mg|ml|cases)?",
    re.I,
)


def _quantities(text: str) -> dict[str, str]:
    """``{quantity words: value}``: each number keyed by the (non-stop) words just before it
    plus its unit, e.g. ``{"response rate %": "51"}``."""
    out: dict[str, str] = {}
    for m in _QUANTITY.finditer(CITE.sub(" ", text)):
        words = [w.lower() for w in m.group(1).split() if w.lower() not in STOP]
        if not words:
            continue
        key = " ".join(words + [(m.group(3) or "").lower()]).strip()
        out.setdefault(key, m.group(2))
    return out


def _clusters(vecs: np.ndarray) -> np.ndarray:
    if len(vecs) == 1:
        return np.zeros(1, dtype=int)
    model = AgglomerativeClustering(
        n_clusters=None, metric="cosine", linkage="average", distance_threshold=1.0 - SAME_CLAIM
    )
    return model.fit_predict(vecs)


def _subject(a: str, b: str) -> str:
    wb = {w.lower() for w in content_words(b)}
    shared = [w for w in content_words(a) if w.lower() in wb]
    return " ".join(shared[:4]) or clean(a)[:60]


def _contradiction(fa: Fact, fb: Fact, sim: float) -> Contradiction | None:
    if overlap(fa.text, fb.text) < MIN_OVERLAP:
        return None
    if sim >= CONTRA_SIM and is_negated(fa.text) != is_negated(fb.text):
        neg = fa if is_negated(fa.text) else fb
        return Contradiction(
            subject=_subject(fa.text, fb.text),
            statement_a=fa.text,
            source_a=fa.source_id,
            statement_b=fb.text,
            source_b=fb.source_id,
            explanation=f"Near-identical statements (cosine {sim:.2f}) but only the one from "
            f"{neg.source_id} is negated; check whether they disagree.",
        )
    if sim >= NUMBER_SIM:
        qa, qb = _quantities(fa.text), _quantities(fb.text)
        for key in sorted(set(qa) & set(qb)):
            if float(qa[key]) != float(qb[key]):
                return Contradiction(
                    subject=key,
                    statement_a=fa.text,
                    source_a=fa.source_id,
                    statement_b=fb.text,
                    source_b=fb.source_id,
                    explanation=f"Similar statements (cosine {sim:.2f}) give different values "
                    f"for '{key}': {qa[key]} vs {qb[key]}. This may reflect "
                    "different trials or populations; check the sources.",
                )
    return None


def analyze(vectors: Vectors, facts: list[Fact]) -> Analysis:
    """Cross-validated claims, single-source count and contradictions over ``facts``.

    Duplicate (text, source) pairs count once. Claims are ordered by number of sources, then
    size; contradictions by similarity (at most ``MAX_CONTRADICTIONS``).
    """
    unique = list({(clean(f.text), f.source_id): f for f in facts if clean(f.text)}.values())
    if not unique:
        return Analysis(facts_total=len(facts))
    texts = [clean(f.text) for f in unique]
    vecs = vectors.encode(texts)
    labels = _clusters(vecs)
    claims: list[tuple[int, int, int, Claim]] = []
    single = 0
    for label in sorted(set(labels.tolist())):
        members = [i for i in range(len(unique)) if labels[i] == label]
        sources = list(dict.fromkeys(unique[i].source_id for i in members))
        if len(sources) < 2:
            single += 1
            continue
        centroid = vecs[members].mean(axis=0)
        rep = members[rank(np.round(vecs[members] @ centroid, 4))[0]]
        claims.append(
            (len(sources), len(members), min(members), Claim(text=texts[rep], source_ids=sources))
        )
    claims.sort(key=lambda c: (-c[0], -c[1], c[2]))
    sims = np.round(vecs @ vecs.T, 4)
    found: list[tuple[float, int, int, Contradiction]] = []
    for i in range(len(unique)):
        for j in range(i + 1, len(unique)):
            if unique[i].source_id == unique[j].source_id or sims[i, j] < min(
                CONTRA_SIM, NUMBER_SIM
            ):
                continue
            c = _contradiction(unique[i], unique[j], float(sims[i, j]))
            if c is not None:
                found.append((-float(sims[i, j]), i, j, c))
    found.sort(key=lambda x: x[:3])
    return Analysis(
        facts_total=len(facts),
        cross_validated=[c[3] for c in claims],
        single_source=single,
        contradictions=[c[3] for c in found[:MAX_CONTRADICTIONS]],
    )
