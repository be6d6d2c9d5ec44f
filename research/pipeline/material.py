"""Report material: whole sentences from the full text of each saved source.

Where the text comes from: ``research.text.artifact_text.source_texts`` maps each saved source
to the full document text its raw search artifact holds.

What a usable sentence is (``clean_sentences``):

- **whole** (``research.text.is_whole``): a capitalised start, terminal ``.!?``, no ``…`` cut,
  6–80 words, balanced brackets, no web-page furniture;
- **on the topic** (``on_topic_sources`` + ``TOPIC_SENT_MIN``): its source passes the gate the
  run's evidence passes (``evidence.passages.on_question_docs``: it mentions more than half of
  the topic's content words, hyphen parts counting as the word, or its title has cosine ≥
  ``TOPIC_TITLE_MIN`` to the topic; for a question on a treatment, the arm and setting and no
  title for the opposite setting), and the sentence itself has cosine ≥ ``TOPIC_SENT_MIN`` to
  the topic (``TITLED_SENT_MIN`` when its source's title is about the topic: such a page's
  sentences need not name it). This keeps out e.g. a surgical-technique study that a query on
  the disease found for a drug topic, and a trial in metastatic disease from a report on early
  disease.

Similarity is cosine of all-MiniLM-L6-v2 embeddings (``research.search.embeddings``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from research.evidence.passages import on_question_docs
from research.models import SourceRecord
from research.text import (
    is_whole,
    norm_key,
    split_sentences,
    strip_citations,
    subject_of,
)
from research.text.vectors import Vectors

TOPIC_SENT_MIN = 0.30  # cosine(sentence, topic) for a sentence to be about the topic
TOPIC_TITLE_MIN = 0.55  # cosine(source title, topic) that makes a source on-topic by itself
TITLED_SENT_MIN = (
    0.15  # the sentence bar inside such a source (its sentences need not name the topic)
)
SENTENCES_PER_SOURCE = 60  # first sentences of a source's full text considered
_PURPOSE = re.compile(r"^To [a-z]+\b(?!,)")
# a protocol's hypothesis or plan, not a finding: "We hypothesize that patients … will maintain …",
# "Patients will be randomized to …"
_PROTOCOL = re.compile(
    r"^(?:We|It is|It was) hypothesi[sz]ed?\b|\bwill be (?:randomi[sz]ed|enrolled|recruited|"
    r"assigned|allocated)\b",
    re.I,
)


@dataclass(frozen=True)
class Unit:
    """One candidate report sentence: plain text (no citation markers) and its source id."""

    text: str
    source_id: str


def on_topic_sources(
    vectors: Vectors, topic: str, sources: list[SourceRecord], texts: dict[str, str]
) -> set[str]:
    """Ids of the sources on the run's question, by the gate its evidence passes
    (``evidence.passages.on_question_docs``: about the topic or titled close to it; for a framed
    question an arm, what it is for and the setting; no title for the opposite setting)."""
    docs = [(s.title or s.url, texts.get(s.source_id, "")) for s in sources]
    keep = on_question_docs(vectors, topic, docs)
    return {s.source_id for s, on in zip(sources, keep, strict=True) if on}


def clean_sentences(text: str, title: str = "") -> list[str]:
    """Whole sentences (``is_whole``) of ``text``, in order, exact repeats removed, citation
    markers stripped; the document's own title (PubMed texts open with it) and bare purpose
    clauses ("To evaluate the efficacy of …", an abstract's objective without a main clause)
    and a protocol's hypothesis or plan ("We hypothesize that …", "… will be randomized …")
    are not sentences: they state no finding. At most the first ``SENTENCES_PER_SOURCE`` sentences are read."""
    skip = norm_key(title)
    sents = [strip_citations(s) for s in split_sentences(text)[:SENTENCES_PER_SOURCE]]
    return list(
        dict.fromkeys(
            s
            for s in sents
            if is_whole(s)
            and not _PURPOSE.match(s)
            and not _PROTOCOL.search(s)
            and not (skip and norm_key(s) == skip)
        )
    )


def units_for(
    vectors: Vectors, topic: str, sources: list[SourceRecord], texts: dict[str, str]
) -> list[Unit]:
    """Every usable sentence of every on-topic source: whole (``clean_sentences``) and with
    cosine ≥ ``TOPIC_SENT_MIN`` to the topic — ``TITLED_SENT_MIN`` in a source whose title is
    about the topic (cosine ≥ ``TOPIC_TITLE_MIN``): a page about a named storm says "Water
    rescues occurred across the county" without naming it, and 40–65 % of a
    FreshWiki article's sentences sit below 0.30. Source order, then text order (deterministic)."""
    keep = on_topic_sources(vectors, topic, sources, texts)
    kept = [s for s in sources if s.source_id in keep]
    if not kept:
        return []
    titled = vectors.sim([subject_of(topic)], [s.title or s.url for s in kept])[0]
    floor = {
        s.source_id: TITLED_SENT_MIN if float(t) >= TOPIC_TITLE_MIN else TOPIC_SENT_MIN
        for s, t in zip(kept, titled, strict=True)
    }
    units = [
        Unit(s, src.source_id)
        for src in kept
        for s in clean_sentences(texts.get(src.source_id, ""), src.title)
    ]
    if not units:
        return []
    sims = vectors.sim([subject_of(topic)], [u.text for u in units])[0]
    return [u for u, v in zip(units, sims, strict=True) if float(v) >= floor[u.source_id]]


def near_duplicates(vectors: Vectors, texts: list[str], threshold: float = 0.92) -> np.ndarray:
    """Boolean ``(n,)``: True where a text repeats an earlier one (same words ignoring case and
    punctuation, or cosine ≥ ``threshold``)."""
    if not texts:
        return np.zeros(0, dtype=bool)
    vecs = vectors.encode(texts)
    keys = [" ".join(re.findall(r"[a-z0-9]+", t.lower())) for t in texts]
    out = np.zeros(len(texts), dtype=bool)
    for i in range(1, len(texts)):
        out[i] = keys[i] in keys[:i] or float(np.max(vecs[:i] @ vecs[i])) >= threshold
    return out
