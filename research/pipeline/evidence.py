"""Report material: whole sentences from the full text of each saved source.

Where the text comes from: every search is a recorded tool call whose raw artifact (seed 001
§5) holds each result's full document ``text`` next to the ``snippets`` shown to engines.
``source_texts`` reads the raw search artifacts of the run's dialogue turns and maps each
collector source (seed 000 ``SourceRecord``) to its full text by canonical URL or external id;
a source whose artifact has no text falls back to its snippets and key excerpts.

What a usable sentence is (``clean_sentences``):

- **whole**: it starts with an upper-case letter, digit or quote/bracket and ends with ``.``,
  ``!`` or ``?``; nothing cut with ``…`` or ``...`` (those come from snippet truncation), 6–80
  words, no unbalanced brackets, no web-page furniture (``is_boilerplate``);
- **on the topic** (``on_topic_sources`` + ``TOPIC_SENT_MIN``): its source mentions more than
  half of the topic's content words (hyphen parts count as the word: ``HER2`` for
  ``HER2-positive``) or its title has cosine ≥ ``TOPIC_TITLE_MIN`` to the topic, and the sentence
  itself has cosine ≥ ``TOPIC_SENT_MIN`` to the topic (``TITLED_SENT_MIN`` when its source's
  title is about the topic: such a page's sentences need not name it). This keeps out e.g. a sentinel-lymph-node
  (methylene blue) study that a breast-cancer query found for a trastuzumab topic.

Similarity is cosine of all-MiniLM-L6-v2 embeddings (``research.search.embeddings``).
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass

import numpy as np

from research.artifacts import artifact_path
from research.config import Settings
from research.engines.extractive.text import (
    content_words,
    is_boilerplate,
    norm_key,
    split_sentences,
    strip_citations,
    subject_of,
    word_key,
)
from research.engines.extractive.vectors import Vectors
from research.errors import ArtifactError
from research.models import ConversationResult, SourceRecord
from research.store.collector import canonical_url

log = logging.getLogger(__name__)

TOPIC_SENT_MIN = 0.30  # cosine(sentence, topic) for a sentence to be about the topic
TOPIC_TITLE_MIN = 0.55  # cosine(source title, topic) that makes a source on-topic by itself
TITLED_SENT_MIN = (
    0.15  # the sentence bar inside such a source (its sentences need not name the topic)
)
MIN_WORDS, MAX_WORDS = 6, 80
SENTENCES_PER_SOURCE = 60  # first sentences of a source's full text considered
_WHOLE_START = re.compile(r"^[A-Z0-9\"'“(\[]")
_WHOLE_END = re.compile(r"[.!?][\"'”’)]?$")
_CUT = re.compile(r"…|\.\.\.|\. \. \.")
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


def source_texts(
    run_id: str,
    conversations: list[ConversationResult],
    sources: list[SourceRecord],
    settings: Settings | None = None,
) -> dict[str, str]:
    """``source_id → full document text`` for the run's saved sources.

    Reads the raw JSON artifacts listed on the dialogue turns (``DialogueTurn.artifact_files``);
    a result matches a source by canonical URL or by ``(source_type, external_id)``. Sources
    with no text in any artifact get their turn snippets plus ``key_excerpts`` (may be cut with
    ``…``; ``clean_sentences`` drops such pieces). Unreadable artifacts are skipped (logged).
    """
    by_url: dict[str, str] = {}
    by_ext: dict[tuple[str, str], str] = {}
    snippets: dict[str, list[str]] = {}
    seen_files: set[str] = set()
    for conv in conversations:
        for turn in conv.turns:
            for ts in turn.sources:
                if ts.snippet:
                    snippets.setdefault(ts.source_id, []).append(ts.snippet)
            for name in turn.artifact_files:
                if not name.endswith(".json") or name in seen_files:
                    continue
                seen_files.add(name)
                for res in _results(run_id, name, settings):
                    text = str(res.get("text") or "")
                    if not text.strip():
                        continue
                    url = str(res.get("url") or "")
                    if url:
                        by_url.setdefault(canonical_url(url), text)
                    ext = str(res.get("external_id") or "").strip().lower()
                    if ext:
                        by_ext.setdefault((str(res.get("source_type") or "").lower(), ext), text)
    out: dict[str, str] = {}
    for s in sources:
        text = by_url.get(canonical_url(s.url)) or by_ext.get(
            (s.source_type, s.external_id.strip().lower()), ""
        )
        if not text and s.external_id.strip():
            text = next(
                (t for (_, e), t in by_ext.items() if e == s.external_id.strip().lower()), ""
            )
        out[s.source_id] = text or "\n".join([*snippets.get(s.source_id, []), s.key_excerpts])
    return out


def _results(run_id: str, name: str, settings: Settings | None) -> list[dict]:
    try:
        raw = json.loads(artifact_path(run_id, name, settings).read_text(encoding="utf-8"))
    except (ArtifactError, OSError, ValueError) as exc:
        log.info("run %s: artifact %s not readable for report material (%s)", run_id, name, exc)
        return []
    results = raw.get("results") if isinstance(raw, dict) else None
    return [r for r in results if isinstance(r, dict)] if isinstance(results, list) else []


def is_whole(sentence: str) -> bool:
    """True for a whole sentence: capitalised start, terminal ``.!?``, no ``…``/``...`` cut,
    ``MIN_WORDS``–``MAX_WORDS`` words, balanced brackets, not page furniture."""
    s = strip_citations(sentence).strip()
    n = len(s.split())
    if not (MIN_WORDS <= n <= MAX_WORDS) or _CUT.search(s) or is_boilerplate(s):
        return False
    if not _WHOLE_START.match(s) or not _WHOLE_END.search(s):
        return False
    return s.count("(") == s.count(")") and s.count("[") == s.count("]")


def topic_words(topic: str) -> list[set[str]]:
    """The topic's content words, each as the set of ``word_key`` forms that count as a mention
    (the word and its hyphen parts of ≥ 3 characters: ``HER2-positive`` → her2positive, her2,
    positive)."""
    out = []
    for w in content_words(subject_of(topic)):
        forms = {word_key(w)} | {word_key(p) for p in w.split("-") if len(word_key(p)) >= 3}
        out.append(forms - {""})
    return [f for f in out if f]


def mentions_topic(text: str, words: list[set[str]]) -> bool:
    """More than half of the topic's content words (``topic_words``) occur in ``text`` (all of
    them when the topic has one or two)."""
    if not words:
        return True
    have = {word_key(w) for w in re.findall(r"[A-Za-z0-9][A-Za-z0-9'’-]*", text)}
    have |= {word_key(p) for w in list(have) for p in re.split(r"-", w)}
    hits = sum(bool(forms & have) for forms in words)
    return hits > len(words) / 2 if len(words) > 2 else hits == len(words)


def on_topic_sources(
    vectors: Vectors, topic: str, sources: list[SourceRecord], texts: dict[str, str]
) -> set[str]:
    """Ids of the sources about the topic: title + text mention it (``mentions_topic``) or the
    title's cosine to the topic is ≥ ``TOPIC_TITLE_MIN``."""
    words = topic_words(topic)
    if not sources:
        return set()
    title_sim = vectors.sim([subject_of(topic)], [s.title or s.url for s in sources])[0]
    return {
        s.source_id
        for s, t in zip(sources, title_sim, strict=True)
        if mentions_topic(f"{s.title}\n{texts.get(s.source_id, '')}", words)
        or float(t) >= TOPIC_TITLE_MIN
    }


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
    about the topic (cosine ≥ ``TOPIC_TITLE_MIN``): a page about Hurricane Hilary says "Water
    rescues occurred across the San Diego area" without naming the storm, and 40–65 % of a
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
