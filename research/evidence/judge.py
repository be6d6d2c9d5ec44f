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
  plus the curated phrasings of the template questions, ``research.planning.kinds.FACETS``),
  topic words removed; the best of those cosines counts;
* **lexical** — how many of the question's own stemmed terms (label + description + facets,
  minus the topic's words and stop words) the passage uses, plus, for the general template's
  questions, its distinct answer cues (``CUES``: dates for a timeline, names of roles for key
  actors, "criticized" for a debate…; for the questions that ask whether a treatment works, the
  cues of a reported result, ``findings.RESULT_CUES``, with ``RESULT_LEX_BASE`` below the bar so
  that a sentence with neither a cue nor a term of the question is no answer), saturating at two
  (BM25's term-frequency saturation in its simplest form: presence, not counts).

``score = sem · (LEX_BASE + (1 − LEX_BASE) · lexical) · design`` with
``sem = clip((cos − COS_FLOOR) / COS_SPAN, 0, 1)``: a passage needs the question's meaning, and
without any of the question's own words keeps only ``LEX_BASE`` of it; ``design`` is
``DESIGN_FACTOR`` for a sentence that describes how a study was run and reports no finding
(``is_design``), else 1; a passage that names other medicines but not the topic's
(``OTHER_DRUG_FACTOR``) keeps nothing, unless the question is about the competition (a
combination partner's result is the partner's: docs/evidence.md § Findings); a passage
that reports only the other family of outcome (a harm for "does it work", a benefit for "what
harm does it do") keeps less (``research.planning.kinds.outcome_fit``); on a focused
topic ("Imatinib hepatotoxicity in …") a passage that never names the focus keeps
``OFF_FOCUS_FACTOR`` (``names_focus``); a question on a product's market or its patents
answers only with a sentence that names what it asks about (``REQUIRED_CUES``: approval,
price, patent, exclusivity…), else 0. Words every
study report uses ("trial", "patients", "phase",
"administration"…) are not question terms. The weights and ``EVIDENCE_MIN`` were chosen on the labelled set of
``bench/data/evidence_labels.jsonl`` (calibration half; the bench reports the test half).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import Stemmer

from research.models import Question
from research.planning.kinds import DEFINED_BY, FACETS, HARMS, outcome_fit
from research.text import (
    STUDY_DESIGN,
    content_words,
    is_boilerplate,
    is_whole_form,
    split_sentences,
    subject_of,
    word_key,
)
from research.text.definitions import defines
from research.text.entities import drug_names, names_any, split_topic
from research.text.findings import HARM_CUES, RESULT_CUES, outcome_family, states_result
from research.text.roots import VERNACULAR
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
MAX_PASSAGES = 60  # sentences of a source's text that are read

_STEM = Stemmer.Stemmer("english")
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'’-]*")
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
# A sentence that describes how a study was run, not what it found.
_DESIGN = re.compile(
    r"\b(?:primary|secondary|main)\s+(?:end\s?-?points?|outcomes?|objectives?)\b|"
    r"\bend\s?-?points?\s+(?:was|were|included)\b|\boutcomes?\s+included\b|"
    r"\bwere\s+(?:randomi[sz]ed|enrolled|recruited|assigned|allocated|eligible|stratified)\b|"
    r"\b(?:randomly|randomi[sz]ed)\s+assigned\b|"
    r"\bunderwent\b|\b(?:was|were)\s+undertaken\b|\bcould\s+be\s+enrolled\b|"
    r"\bwe\s+(?:expect|aim|aimed|hypothesi[sz]e|evaluated|assessed|compared)\b|"
    r"\b(?:this|the|in\s+this)\s+(?:[\w-]+[\s,]+){0,6}(?:trial|study)\s+(?:compared|evaluates|"
    r"evaluated|assessed|enrolled|investigated|examined|will|was\s+designed)\b|"
    r"\bis\s+an?\s+(?:international|multicent(?:er|re)|randomi[sz]ed|open-label|phase)\b|"
    # "At a median follow-up of 28 months, we noted a 40% decrease…" is a finding; the follow-up
    # alone is design
    r"\bmedian\s+follow-?up\b",
    re.I,
)
# A sentence that states an aim, a plan or a question rather than an answer: never a finding.
_AIM = re.compile(
    r"\b(?:purpose|aims?|objectives?|goals?)\s+(?:of|was|were|is|are|include[sd]?)\b|"
    r"^(?:To|We\s+sought\s+to)\s+[a-z]+\b|\bhypothesi[sz]e[ds]?\b|\bregistered\b|"
    r"\b(?:ISRCTN|NCT)\d{6,}|\bintention[- ]to[- ]treat\b|\bwarranted\b|"
    r"\b(?:data|samples)\s+were\s+available\b|"
    r"\b(?:was|were)\s+(?:also\s+)?(?:evaluated|assessed|measured|monitored|recorded)\s*\.?$|"
    r"^(?:To|We\s+sought\s+to)\s+[a-z]+\b|\bto\s+(?:determine|evaluate|assess|investigate|clarify|"
    r"examine|explore)\b|\bwhether\b|\bwill\s+be\b|\bwe\s+(?:report|present|describe)\b|"
    # what was measured, not what was found
    r"\b(?:end\s?-?points?|outcomes?|objectives?)(?:\s+measures?)?\s+(?:was|were|is|are|included?)\b|"
    r"\b(?:was|were)\s+developed\s+to\b|"
    r"\b(?:was|were)\s+(?:evaluated|assessed|measured|defined|monitored|calculated)\s+(?:as|by|using|with)\b|"
    # a trial described, not its result: "The HERA trial was an international, randomized…"
    r"\b(?:is|was)\s+(?:an?|the(?:\s+only|\s+first)?)\s+(?:[\w-]+[\s,]+){0,8}(?:trial|study)\b",
    re.I,
)
# Names of other medicines (WHO INN stems, research.planning.syllabus): a finding about one of
# them is no evidence about the topic's drug, except for a question about the competition.
_COMPARATIVE = re.compile(r"compet|landscape|alternativ|comparis|versus|combination|rival", re.I)
OTHER_DRUG_FACTOR = 0.0
# A definitional sentence's score for the question it answers (``kinds.DEFINED_BY``: "X was an
# American drummer …", ``research.text.definitions``): among a source's best, where MiniLM
# reads what the sentence says about X, not that it says what X is
DEFINITION_SCORE = 0.9
OFF_FOCUS_FACTOR = 0.4  # what a passage keeps that never names a focused topic's focus
# Cues of the general template's questions: what their answers look like in any article.
CUES: dict[str, re.Pattern[str]] = {
    "background.overview": re.compile(
        r"\b(?:is|was|are|were)\s+(?:an?|the)\b|\brefers?\s+to\b|\bknown\s+as\b|\blocated\b", re.I
    ),
    "history.timeline": re.compile(
        r"\b(?:1[5-9]\d{2}|20\d{2})\b|\b(?:January|February|March|April|May|June|July|August|"
        r"September|October|November|December)\b|\b(?:founded|established|began|formed|built|"
        r"launched|first|later|until|since)\b",
        re.I,
    ),
    "key.actors": re.compile(
        r"\b(?:president|minister|chief|director|founder|leader|spokes\w+|CEO|governor|"
        r"company|government|agency|department|police|organi[sz]ation|members?|said|led\s+by)\b",
        re.I,
    ),
    "impact.effects": re.compile(
        r"\b(?:killed|deaths?|died|injured|damage[sd]?|destroyed|affected|displaced|losses|"
        r"million|billion|caused|resulted\s+in|led\s+to|impact\w*|consequen\w+|"
        r"awards?|awarded|won|prizes?|honou?red|inducted|nominated|voted)\b",
        re.I,
    ),
    "debate.controversies": re.compile(
        r"\b(?:critici\w+|critics?|controvers\w+|disput\w+|alleg\w+|accus\w+|lawsuits?|"
        r"opposed|opposition|argued|condemn\w+|debate\w*|concerns?|protest\w*|investigat\w+)\b",
        re.I,
    ),
    "outlook.future": re.compile(
        r"\b(?:will|plans?|planned|expected|future|upcoming|proposed|announced|scheduled|"
        r"ongoing|currently|remains?|tributes?|memorials?|legacy|posthumous\w*)\b",
        re.I,
    ),
}
# Cues of a medical condition's questions (``kinds.CONDITION_QUESTIONS``).
CUES.update(
    {
        "causes.risk": re.compile(
            r"\b(?:caus\w*|trigger\w*|risk\s+factors?|due\s+to|genetic\w*|inherit\w*|"
            r"family\s+history|run\s+in\s+families|linked\s+to)\b",
            re.I,
        ),
        "diagnosis.signs": re.compile(
            r"\b(?:symptoms?|signs?|diagnos\w*|tests?|examination|present(?:s|ed)?\s+with|"
            r"imaging|blood\s+tests?)\b",
            re.I,
        ),
        "treatment.management": re.compile(
            r"\b(?:treat\w*|therap\w*|medications?|medicines?|drugs?|administ\w+|"
            r"management|managed|recommended|no\s+benefit|first[- ]line)\b",
            re.I,
        ),
        "prognosis.outcomes": re.compile(
            r"\b(?:prognos\w*|recur\w*|long[- ]term|chance|later\s+in\s+life|outgrow\w*|"
            r"complications?|more\s+likely|less\s+likely)\b",
            re.I,
        ),
        "epidemiology.burden": re.compile(
            r"\d+(?:\.\d+)?\s?%|\bper\s+\d[\d,]*\b|\b(?:prevalen\w+|inciden\w+|common(?:ly)?|"
            r"between\s+the\s+ages|aged?)\b",
            re.I,
        ),
    }
)
# The questions of the kinds' templates that ask for results ("which arm did better, by how
# much"): abstract beside the outcome a trial names ("hair preservation 50.5% vs 0%"), like the
# general template's questions, so their answers are read by the same cues.
CUES.update(
    {
        key: RESULT_CUES
        for key in (
            "efficacy.comparison",
            "efficacy.intervention",
            "accuracy.outcomes",
            "clinical.efficacy",
        )
    }
)
# The questions on harms: a complication a procedure causes ("pain and swelling were less
# frequent") is as far from "adverse events, toxicity" in MiniLM as a trial's figures are from
# "which arm did better", so they are read by the harm cues too.
CUES.update({key: HARM_CUES for key in HARMS})
# Questions no sentence answers without naming what they ask about: a product's market (its
# approvals, launch, price) and its protection (patents, exclusivity, follow-on products). A
# trial's dosing or a result sits close to "approved for this indication" in MiniLM, and a
# section of such sentences reads as answered when nothing in the sources is.
REQUIRED_CUES: dict[str, re.Pattern[str]] = {
    "market.status": re.compile(
        r"\b(?:approv\w*|FDA|EMA|licen[cs]\w*|marketed|marketing|market|launch\w*|"
        r"commerciali[sz]\w*|reimburs\w*|pric(?:e|es|ing)|cost[- ]effective\w*|sales|"
        r"authori[sz]ation|regulator\w*|available\s+in)\b",
        re.I,
    ),
    "ip.patents": re.compile(
        r"\b(?:patent\w*|exclusivit\w*|generics?|biosimilars?|intellectual\s+property|"
        r"licen[cs]\w*|trademarks?|litigation|follow-on|copies)\b",
        re.I,
    ),
}
# What a finding says: a number with a unit of effect, a comparison or an effect verb.
_FINDING = re.compile(
    r"\d+(?:\.\d+)?\s?%|\bhazard\s+ratio\b|(?-i:\b(?:HR|OR|RR|CI)\b)|\bP\s?[<=>]|"
    r"\bsignifican(?:t|tly|ce)\b|\b(?:improv|reduc|increas|decreas|prolong|lower|rais)(?:ed|es|ing)\b|"
    r"\bassociated\s+with\b|\boccurred\b|\b(?:higher|lower|longer|shorter|better|worse)\b|"
    r"\b(?:demonstrated|showed|shown|approved|binds?|inhibits?|blocks?)\b",
    re.I,
)


@dataclass(frozen=True)
class Passage:
    """A whole-sentence passage of a text: ``text`` and its character offsets ``[start, end)``."""

    text: str
    start: int
    end: int


def _stems(text: str) -> set[str]:
    words = [word_key(w) for w in _WORD.findall(text or "")]
    parts = [p for w in _WORD.findall(text or "") for p in w.split("-") if len(p) >= 3]
    return {s for s in _STEM.stemWords(words + [word_key(p) for p in parts]) if s}


def topic_stems(topic: str) -> frozenset[str]:
    """Stems of the topic's words and their hyphen parts (``EGFR-mutant`` → egfr, mutant…),
    except a focused topic's focus: in "Imatinib hepatotoxicity in chronic myeloid leukaemia"
    every question is about hepatotoxicity, so a passage must still speak of it, while
    the subject and its context are what every passage shares (``research.text.entities.split_topic``)."""
    subject, focus, context = split_topic(topic)
    if not focus:  # a question's subject: what it asks of the subject is no topic word
        return frozenset(_stems(subject_of(topic)))
    return frozenset(_stems(f"{subject} {context}") - _stems(focus))


@lru_cache(maxsize=256)
def focus_roots(topic: str) -> tuple[str, ...]:
    """The roots a passage must use to speak of a focused topic's focus: the first five letters
    of each focus word's stem ("hepatotoxicity" → "hepat": hepatic, hepatitis…), plus the plain
    words of those roots (``research.text.roots.VERNACULAR``: "liver"); () for a topic without
    a focus (``research.text.entities.split_topic``)."""
    _, focus, _ = split_topic(topic)
    roots = [stem[:5] for stem in sorted(_stems(focus)) if len(stem) >= 4]
    return tuple(dict.fromkeys([*roots, *(a for r in roots for a in VERNACULAR.get(r, ()))]))


def names_focus(passage: str, topic: str) -> bool:
    """True when ``passage`` speaks of the topic's focus (a word starting with one of its
    ``focus_roots``, or one of their aliases), or when the topic has no focus. In a report on
    "Imatinib hepatotoxicity…" a relapse hazard ratio answers no question, however close its
    words come to "which patients are at higher risk"."""
    roots = focus_roots(topic)
    if not roots:
        return True
    low = passage.lower()
    words = re.findall(r"[a-z0-9]+", low)
    return any(w.startswith(r) for r in roots if " " not in r for w in words) or any(
        r in low for r in roots if " " in r
    )


def facets(question: Question) -> list[str]:
    """The question's facets: curated phrasings (``FACETS``) for template keys, plus the parts
    of its description split at commas, question marks and semicolons (≥ 2 words each)."""
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
) -> np.ndarray:
    """Evidence scores ``(len(questions), len(passages))`` in [0, 1] (module docstring).
    ``short_forms``: what the passages' document calls the topic's medicines for short
    (``entities.abbreviations``: "EXB"); a passage naming one names the topic's medicine.

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
    families = [outcome_family(p) for p in passages]
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


def is_design(passage: str) -> bool:
    """True for a sentence that states an aim or a question ("The purpose of this study was to
    determine whether …") or describes a study's design and reports no finding ("The primary
    end point was DFS.", "Patients were randomized to …")."""
    if _AIM.search(passage):
        return True
    designed = bool(_DESIGN.search(passage) or STUDY_DESIGN.search(passage))
    return designed and not (_FINDING.search(passage) or states_result(passage))


def evidence_score(
    question: Question, passage: str, *, topic: str, vectors: Vectors | None = None
) -> float:
    """How well ``passage`` answers ``question`` on ``topic``, in [0, 1]; evidence at
    ``≥ EVIDENCE_MIN``. One pair of ``score_passages``."""
    return float(score_passages([question], [passage], topic=topic, vectors=vectors)[0, 0])


# A trial registration left after a passage's last sentence ("… disease. NCT00309556,
# www.clinicaltrials.gov."): not part of what the passage states.
_REGISTRATION = re.compile(r"(?<=[.!?])\s+[^.!?]*\b(?:NCT\d{8}|clinicaltrials\.gov)\b[^!?]*$", re.I)


def split_passages(text: str, limit: int = MAX_PASSAGES) -> list[Passage]:
    """Whole-sentence passages of ``text`` with their offsets, in text order, at most ``limit``.

    Whole: ``research.text.is_whole_form`` — a report quotes a passage as it stands, so a
    fragment is never one."""
    out: list[Passage] = []
    pos = 0
    for sent in split_sentences(text or ""):
        start = text.find(sent, pos)
        if start < 0:
            start = text.find(sent[:40], pos)
        if start < 0:
            continue
        end = start + len(sent)
        pos = end
        tail = _REGISTRATION.search(sent)
        if tail:
            sent = sent[: tail.start()].rstrip()
            end = start + len(sent)
        if not is_whole_form(sent) or is_boilerplate(sent):
            continue  # a fragment, or a page's furniture ("Discover the real story of X.")
        out.append(Passage(sent, start, end))
        if len(out) >= limit:
            break
    return out
