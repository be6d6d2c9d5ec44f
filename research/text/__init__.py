"""Shared text tools: one definition each of what every engine, the evidence judgement, the
report pipeline and follow-ups do with text.

* ``research.text.words`` — stop words, content words, comparison keys, topic words, heading case;
* ``research.text.sentences`` — sentence splitting and the whole-sentence rules;
* ``research.text.phrases`` — key phrases (RAKE candidates, c-TF-IDF ranking);
* ``research.text.entities`` — medicine names by INN stem, topic kind, ``subject [focus] [context]``;
* ``research.text.vectors`` — sentence vectors (all-MiniLM-L6-v2) with a per-engine cache;
* ``research.text.artifact_text`` — document text read back from raw tool-output artifacts.

The names below are re-exported so callers write ``from research.text import split_sentences``.
``vectors`` and ``artifact_text`` are imported from their modules (they load numpy, the embedder
and the artifact store).
"""

from research.text.entities import INN_STEM, drug_names, split_topic, topic_kind
from research.text.phrases import candidate_phrases, ranked_phrases
from research.text.sentences import (
    ANAPHORA,
    MAX_WORDS,
    MIN_WORDS,
    STUDY_DESIGN,
    clip,
    ensure_period,
    is_boilerplate,
    is_whole,
    is_whole_form,
    sentences_of,
    split_sentences,
)
from research.text.words import (
    CITE,
    ENGLISH_STOP_WORDS,
    GENERIC,
    SMALL_WORDS,
    STOP,
    WEAK_HEAD,
    aspect_of,
    clean,
    content_words,
    is_negated,
    mentions_topic,
    norm_key,
    numbers,
    overlap,
    strip_citations,
    subject_of,
    title_case,
    topic_keys,
    topic_words,
    word_key,
)

__all__ = [
    "ANAPHORA",
    "CITE",
    "ENGLISH_STOP_WORDS",
    "GENERIC",
    "INN_STEM",
    "MAX_WORDS",
    "MIN_WORDS",
    "SMALL_WORDS",
    "STOP",
    "STUDY_DESIGN",
    "WEAK_HEAD",
    "aspect_of",
    "candidate_phrases",
    "clean",
    "clip",
    "content_words",
    "drug_names",
    "ensure_period",
    "is_boilerplate",
    "is_negated",
    "is_whole",
    "is_whole_form",
    "mentions_topic",
    "norm_key",
    "numbers",
    "overlap",
    "ranked_phrases",
    "sentences_of",
    "split_sentences",
    "split_topic",
    "strip_citations",
    "subject_of",
    "title_case",
    "topic_keys",
    "topic_kind",
    "topic_words",
    "word_key",
]
