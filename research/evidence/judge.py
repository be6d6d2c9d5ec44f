"""The one evidence judgement: does a passage of a source answer a syllabus question?

``evidence_score(question, passage, topic=…) → [0, 1]`` is used by every consumer of evidence
(docs/design.md § Terms: *evidence*): the collector counts a source for a question only when the
source has a passage at or over ``EVIDENCE_MIN``; steering chases the questions without enough
such sources; the report writes each question's section from those passages; the Coverage page
lists them.

The score combines two views of the question, with the topic's own words taken out of both, so
that a sentence about the topic cannot pass for evidence just by naming it (cosine to
"topic: heading" scored such sentences above 0.9):

* **semantic** — all-MiniLM-L6-v2 cosine of the passage (topic words removed) to the question's
  aspect texts: its label
  and description, and each of its facets (``facets``: the description's comma-separated parts,
  plus the curated phrasings of the template questions, ``research.planning.facets.FACETS``),
  topic words removed; the best of those cosines counts;
* **lexical** — how many of the question's own stemmed terms (label + description + facets,
  minus the topic's words and stop words) the passage uses, plus, for the general template's
  questions, its distinct answer cues (``cues.CUES``: dates for a timeline, names of roles for key
  actors, "criticized" for a debate…; for the questions that ask whether a treatment works, the
  cues of a reported result, ``findings.RESULT_CUES``, with ``RESULT_LEX_BASE`` below the bar so
  that a sentence with neither a cue nor a term of the question is no answer), saturating at two
  (BM25's term-frequency saturation in its simplest form: presence, not counts).

``score = sem · (LEX_BASE + (1 − LEX_BASE) · lexical) · design`` with
``sem = clip((cos − COS_FLOOR) / COS_SPAN, 0, 1)``: a passage needs the question's meaning, and
without any of the question's own words keeps only ``LEX_BASE`` of it; ``design`` is
``DESIGN_FACTOR`` for a sentence that describes how a study was run and reports no finding
(``cues.is_design``), else 1; a passage that names other medicines but not the topic's
(``OTHER_DRUG_FACTOR``) keeps nothing, unless the question is about the competition (a
combination partner's result is the partner's: docs/evidence.md § Findings); a passage
that reports only the other family of outcome (a harm for "does it work", a benefit for "what
harm does it do") keeps less (``research.planning.question_roles.outcome_fit``); on a focused
topic ("Imatinib hepatotoxicity in …") a passage that never names the focus keeps
``OFF_FOCUS_FACTOR`` (``cues.names_focus``); a question on a product's market or its patents
answers only with a sentence that names what it asks about (``cues.REQUIRED_CUES``: approval,
price, patent, exclusivity…), else 0. Words every
study report uses ("trial", "patients", "phase",
"administration"…) are not question terms. The weights and ``EVIDENCE_MIN`` were chosen on the labelled set of
``bench/data/evidence_labels.jsonl`` (calibration half; the bench reports the test half).

The cue and study-design rules and the topic's words a passage is read by (``CUES``,
``REQUIRED_CUES``, ``is_design``, ``topic_stems``, ``focus_roots``, ``names_focus``) are in
``research.evidence.cues``; splitting a source's text into passages (``split_passages``,
``Passage``, ``MAX_PASSAGES``) is ``research.evidence.passage_split``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache

import numpy as np

from research.evidence.cues import CUES, REQUIRED_CUES, is_design, names_focus, topic_stems
from research.evidence.cues import stems as _stems
from research.models import Question
from research.planning.facets import FACETS
from research.planning.question_roles import DEFINED_BY, outcome_fit
from research.text import content_words
from research.text.definitions import defines
from research.text.entities import drug_names, names_any
from research.text.findings import RESULT_CUES, outcome_family
from research.text.short_forms import spelled_out
from research.text.vectors import Vectors

EVIDENCE_MIN = 0.30
"""The calibrated bar: a passage is evidence for a question when its score is ≥ this."""
LEX_BASE = 0.45  # share of the semantic score a passage keeps with none of the question's terms
COS_FLOOR, COS_SPAN = 0.15, 0.40  # MiniLM cosine mapped to [0, 1] over [0.15, 0.55]
LEX_SATURATION = 2  # distinct question terms at which the lexical part is full
# The general template's questions are abstract ("History & Timeline"): MiniLM puts any sentence
# far from them, and their answers show in cues instead, so they read cosine on a lower scale and
# lean on the cues more.
CUE_COS_FLOOR, CUE_COS_SPAN, CUE_LEX_BASE = 0.05, 0.25, 0.3
# A question that asks for results keeps less than the bar without a result cue or a term of its
# own: a sentence that only sounds like the subject answers no "did it work".
RESULT_LEX_BASE = 0.25
DESIGN_FACTOR = 0.4  # what a study-design sentence that reports no finding keeps of its score

_GENERIC_QUESTION_WORDS = frozenset(
    "what how does which who when where why sources report drug topic key".split()
)
# Words every study report of the field uses whatever it answers: they cannot tell one question
# from another ("trial", "patients", "phase", "administration", "chemotherapy"…).
_DOMAIN_GENERIC = frozenset(
    """trial trials phase patient patients clinical effect effects develop development end
    administration administered rate rates outcome outcomes stage agent agents target targeted
    result results study studies treatment treatments therapy therapies chemotherapy cancer
    disease free such new year years available availability data ii iii iv""".split()
)
# Names of other medicines (WHO INN stems, research.planning.syllabus): a finding about one of
# them is no evidence about the topic's drug, except for a question about the competition.
_COMPARATIVE = re.compile(r"compet|landscape|alternativ|comparis|versus|combination|rival", re.I)
OTHER_DRUG_FACTOR = 0.0
# A definitional sentence's score for the question it answers (``question_roles.DEFINED_BY``: "X was an
# American drummer …", ``research.text.definitions``): among a source's best, where MiniLM
# reads what the sentence says about X, not that it says what X is
DEFINITION_SCORE = 0.9
OFF_FOCUS_FACTOR = 0.4  # what a passage keeps that never names a focused topic's focus


def facets(question: Question) -> list[str]:
    """The question's facets: curated phrasings (``FACETS``) for template keys, plus the parts
    of its description split at commas, question marks, semicolons, brackets and "and" (every
    non-empty part: keeping only parts of two words or more moved unseen u01's and u10's figures
    both ways and no calibration figure, docs/evidence.md)."""
    parts = [p.strip(" .") for p in re.split(r"[,;?]|\(|\)| and ", question.description)]
    return list(dict.fromkeys([*FACETS.get(question.key, ()), *(p for p in parts if p)]))


def _strip_topic(text: str, stems: frozenset[str]) -> str:
    """``text`` without the words whose stem is a topic stem (kept whole when nothing is left)."""
    kept = [w for w in text.split() if not (_stems(w) and _stems(w) <= stems)]
    out = " ".join(kept).strip(" :,.")
    return out if len(out.split()) >= 1 else text


def _aspects(question: Question, topic: str) -> tuple[tuple[str, ...], frozenset[str]]:
    """``(aspect texts, question term stems)`` of a question under a topic (topic words out)."""
    return _aspects_of(question.key, question.label, question.description, topic)


@lru_cache(maxsize=512)
def _aspects_of(
    key: str, label: str, description: str, topic: str
) -> tuple[tuple[str, ...], frozenset[str]]:
    question = Question(key=key, label=label, description=description, min_sources=1)
    stems = topic_stems(topic)
    head = _strip_topic(f"{question.label}: {question.description}", stems)
    generic = _stems(" ".join(_GENERIC_QUESTION_WORDS | _DOMAIN_GENERIC))
    # a facet made only of the field's generic words ("patient outcomes") matches every abstract
    parts = [_strip_topic(f, stems) for f in facets(question)]
    parts = [f for f in parts if _stems(f) - generic - stems]
    texts = [t for t in dict.fromkeys([head, *parts]) if t.strip()]
    words = content_words(" ".join([question.label, question.description, *facets(question)]))
    terms = set()
    for w in words:
        if w.lower() in _GENERIC_QUESTION_WORDS:
            continue
        terms |= _stems(w)
    return tuple(texts), frozenset(terms - stems - generic)


def score_passages(
    questions: list[Question],
    passages: list[str],
    *,
    topic: str,
    vectors: Vectors | None = None,
    fixed: bool = False,
    short_forms: tuple[str, ...] = (),
    outcome_forms: Mapping[str, str] | None = None,
) -> np.ndarray:
    """Evidence scores ``(len(questions), len(passages))`` in [0, 1] (module docstring).
    ``short_forms``: what the passages' document calls the topic's medicines for short
    (``entities.abbreviations``: "EXB"); a passage naming one names the topic's medicine.
    ``outcome_forms``: the short forms the passages' document defines (``short_forms``): a
    passage's family of outcome is read with them spelled out ("12 LR" reports recurrences).

    Embeds each passage and aspect text once (``vectors`` caches them; a new ``Vectors`` loads
    MiniLM lazily, ~5 s the first time in a process). ``fixed``: embed ``passages`` as one batch
    of their own, outside the cache, and the aspects as one batch per syllabus — the vectors then
    depend only on these texts, never on which other texts shared a batch with them earlier in the
    process (float noise that a resumed run, starting with an empty cache, would not repeat);
    the run's counting decisions use it."""
    if not questions or not passages:
        return np.zeros((len(questions), len(passages)), dtype=np.float32)
    vectors = vectors or Vectors()
    aspects = [_aspects(q, topic) for q in questions]
    flat = [t for texts, _ in aspects for t in texts]
    stems = topic_stems(topic)
    stripped = [_strip_topic(p, stems) for p in passages]
    if fixed:
        sims = np.round(fixed_encode(vectors, stripped) @ _aspect_vectors(vectors, flat).T, 4)
    else:
        sims = vectors.sim(stripped, flat)  # (passages, aspects)
    p_stems = [_stems(p) for p in passages]
    design = np.array([DESIGN_FACTOR if is_design(p) else 1.0 for p in passages])
    own = {d.lower() for d in drug_names(topic)}
    other = np.array(
        [
            bool(own)
            and not ({d.lower() for d in drug_names(p)} & own)
            and bool(drug_names(p))
            and not names_any(p, short_forms)
            for p in passages
        ]
    )
    focused = np.array([1.0 if names_focus(p, topic) else OFF_FOCUS_FACTOR for p in passages])
    families = [outcome_family(spelled_out(p, outcome_forms or {})) for p in passages]
    out = np.zeros((len(questions), len(passages)), dtype=np.float32)
    col = 0
    for i, (texts, terms) in enumerate(aspects):
        cos = sims[:, col : col + len(texts)].max(axis=1)
        col += len(texts)
        cue = CUES.get(questions[i].key)
        floor, span, base = (
            (CUE_COS_FLOOR, CUE_COS_SPAN, CUE_LEX_BASE) if cue else (COS_FLOOR, COS_SPAN, LEX_BASE)
        )
        if cue is RESULT_CUES:
            base = RESULT_LEX_BASE
        sem = np.clip((cos - floor) / span, 0.0, 1.0)
        hits = [
            len(terms & st) + (len(set(cue.findall(p))) if cue else 0)
            for st, p in zip(p_stems, passages, strict=True)
        ]
        lex = np.array([min(1.0, h / LEX_SATURATION) for h in hits])
        q = questions[i]
        others = np.where(
            other & (not _COMPARATIVE.search(f"{q.key} {q.label} {q.description}")),
            OTHER_DRUG_FACTOR,
            1.0,
        )
        misfit = np.array([outcome_fit(q.key, f) for f in families])
        required = REQUIRED_CUES.get(q.key)
        named = np.array([1.0 if required is None or required.search(p) else 0.0 for p in passages])
        out[i] = np.clip(
            sem * (base + (1 - base) * lex) * design * others * focused * misfit * named, 0.0, 1.0
        )
        if q.key in DEFINED_BY:  # the sentence that says what the topic is answers it
            said = np.array([DEFINITION_SCORE if defines(p, topic) else 0.0 for p in passages])
            out[i] = np.maximum(out[i], said)
    return np.round(out, 4)


_ASPECT_VECTORS: dict[tuple[str, ...], np.ndarray] = {}


def fixed_encode(vectors: Vectors, texts: list[str]) -> np.ndarray:
    """Unit vectors ``(len(texts), d)`` of ``texts`` embedded as one batch, bypassing the cache:
    the same texts give the same vectors in every process."""
    if not texts:
        return np.zeros((0, 384), dtype=np.float32)
    return np.asarray(vectors.embedder.encode(list(texts)), dtype=np.float32)


def _aspect_vectors(vectors: Vectors, flat: list[str]) -> np.ndarray:
    key = tuple(flat)
    if key not in _ASPECT_VECTORS:
        _ASPECT_VECTORS[key] = fixed_encode(vectors, flat)
    return _ASPECT_VECTORS[key]


def evidence_score(
    question: Question, passage: str, *, topic: str, vectors: Vectors | None = None
) -> float:
    """How well ``passage`` answers ``question`` on ``topic``, in [0, 1]; evidence at
    ``≥ EVIDENCE_MIN``. One pair of ``score_passages``."""
    return float(score_passages([question], [passage], topic=topic, vectors=vectors)[0, 0])
