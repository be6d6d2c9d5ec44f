"""A question syllabus fitted to the query, without a model.

Input: the topic, the template of its kind (``research.planning.syllabus.base_template``: a drug topic
gets the ``STORM_QUESTIONS`` (docs/design.md § Question syllabus), anything else the general
template) and the related-topic survey (docs/design.md § Perspective discovery: ``TopicOutline``
per survey query, whose ``sections`` are section names and key phrases of what the corpus says
about the topic). Output: 4–8 questions.

1. **Focus.** ``research.text.entities.split_topic`` reads the topic as ``subject [focus] [in context]``: for a drug
   topic the subject is the medicine (WHO INN stem), the focus the other words of the head
   ("Imatinib *hepatotoxicity* in chronic myeloid leukaemia").
2. **Focused topic** (a focus is named): the questions come from research facets of the focus
   (mechanism, incidence and risk factors, monitoring and detection, prevention and management,
   outcomes, trial evidence, guidelines) — the axes along which reviews of an adverse effect,
   outcome or problem are organised (e.g. the chapters of an organ-toxicity guideline in oncology).
   Risk factors, monitoring and prevention/management are always asked (``CORE_FACETS``); the
   other facets are scored by their support in the survey (best cosine of the facet text to a
   survey phrase, all-MiniLM-L6-v2) and the best fill up to ``MAX_FACETS``, in facet order.
3. **Unfocused topic**: the template's questions stay (they are what an encyclopedic article on
   any topic covers: replacing the weakest of them lowered FreshWiki heading soft recall on 2 of
   3 shared topics, 0.947 → 0.908), and up to ``MAX_ADDED`` questions on the survey's own key
   phrases are added after them — phrases that name a subject (``is_subject_phrase``) and are
   relevant to the topic (cosine to the topic ≥ ``PHRASE_MIN_SIM``), e.g. "Maximum Sustained
   Winds" for a hurricane. The personas (made from the first questions) stay the template's;
   the added questions get their own coverage and conversation focus.
   A drug topic keeps every drug question (the syllabus (docs/design.md § Question syllabus) is
   what the drug desk needs).
4. **Grounding.** Every question's description ends with the survey phrases closest to it
   ("corpus: Liver Function Tests, Serum Transaminases"), so the analyst sees what
   the corpus offers for it.

Deterministic for the same input; keys are ``area.name`` (``monitoring.hepatotoxicity``).
"""

from __future__ import annotations

import re

import numpy as np

from research.models import Question, Syllabus, TopicOutline
from research.text import clean, content_words, title_case, topic_keys, word_key
from research.text.asking import asked_label, restate
from research.text.entities import split_topic, topic_kind
from research.text.frame import frame_question
from research.text.vectors import Vectors, rank

MAX_FACETS = 6
MAX_ADDED = 2
PHRASE_MIN_SIM = 0.30  # cosine of a survey phrase to the topic before it may become a question
GROUND_MIN_SIM = (
    0.35  # cosine of a survey phrase to a question before it is named in its description
)

# (area, label template, description template) with {f} = focus, {s} = subject. A label is
# "Aspect: focus", never the focus glued in front of a template word ("Hepatotoxicity Monitoring").
FACETS: tuple[tuple[str, str, str], ...] = (
    ("mechanism", "Mechanism: {f}", "How does {s} lead to {f}? Causes and biological pathways"),
    (
        "risk",
        "Risk factors: {f}",
        "How often does {f} occur with {s}, and which patients are at higher risk?",
    ),
    (
        "monitoring",
        "Monitoring: {f}",
        "How is {f} monitored and detected: tests, schedules, thresholds",
    ),
    (
        "prevention",
        "Prevention and management: {f}",
        "How is {f} prevented, treated and managed, including dose interruption or discontinuation",
    ),
    ("outcomes", "Outcomes: {f}", "Course, recovery and long-term outcomes of {f}"),
    (
        "evidence",
        "Trial evidence: {f}",
        "Trial results, patient numbers and rates of {f} with {s}",
    ),
    (
        "guidelines",
        "Guidelines: {f}",
        "What guidelines and regulators recommend about {f} with {s}",
    ),
)
CORE_FACETS = (
    "risk",
    "monitoring",
    "prevention",
)  # always asked of a focus; the rest by survey support
_FACET_MIN = {
    "mechanism": 4,
    "risk": 5,
    "monitoring": 4,
    "prevention": 4,
    "outcomes": 3,
    "evidence": 5,
    "guidelines": 3,
}


def slug(text: str, max_chars: int = 30) -> str:
    """``area.name`` part: lower-case words joined by ``_`` (``Left ventricular`` → ``left_ventricular``)."""
    words = re.findall(r"[a-z0-9]+", text.lower())
    out = ""
    for w in words:
        nxt = f"{out}_{w}" if out else w
        if len(nxt) > max_chars:
            break
        out = nxt
    return out or "topic"


def _phrases(related: list[TopicOutline], topic: str, subject: str) -> list[str]:
    """Distinct survey phrases (section names), minus ones made only of the topic's words and,
    for a focused topic, ones naming the subject itself (they match every question alike)."""
    own, named = (
        topic_keys(topic),
        (topic_keys(subject) if subject != clean(topic).rstrip("?.! ") else set()),
    )
    out: dict[str, str] = {}
    for o in related:
        for s in o.sections:
            s = clean(s)
            keys = {word_key(w) for w in content_words(s)}
            if s and keys and not keys <= own and not keys & named:
                out.setdefault(s.lower(), s)
    return list(out.values())


_WEAK_END = frozenset(
    "later earlier also day days year years time times today then more less".split()
)


def is_subject_phrase(phrase: str, topic: str, min_words: int = 2) -> bool:
    """True when a survey phrase can name a question of its own: 2–5 words, none of them the
    topic's (``Marie Salomea Curie`` only restates "Marie Curie"), no numbers (``Passage 59``
    is a document title, not a subject), not ending in a time word (``Flight Later`` is a fragment)."""
    words = clean(phrase).split()
    if not min_words <= len(words) <= 5 or any(re.search(r"\d", w) for w in words):
        return False
    if words[-1].lower() in _WEAK_END:
        return False
    return not ({word_key(w) for w in words} & topic_keys(topic))


def _ground(
    vectors: Vectors, questions: list[Question], phrases: list[str], topic: str
) -> list[Question]:
    """Append the ≤ 3 survey phrases closest to each question (cosine ≥ GROUND_MIN_SIM) among
    those that name a subject (``is_subject_phrase``, one word allowed); not to a question
    labelled with the analyst's own question (``planning.syllabus._asking``)."""
    phrases = [p for p in phrases if is_subject_phrase(p, topic, min_words=1)]
    if not phrases or not questions:
        return questions
    sims = vectors.sim([f"{q.label}: {q.description}" for q in questions], phrases)
    out = []
    for i, q in enumerate(questions):
        near = [phrases[j] for j in rank(sims[i])[:3] if sims[i][j] >= GROUND_MIN_SIM]
        desc = q.description.rstrip(". ")
        # the question the analyst asked in so many words keeps them: a nearby phrase of the
        # corpus ("flood victims" for "what caused the floods?") would change what it asks
        if near and not asked_label(q.label):
            desc = f"{desc} (corpus: {', '.join(title_case(p) for p in near)})"
        out.append(q.model_copy(update={"description": desc[:300]}))
    return out


def _support(vectors: Vectors, texts: list[str], phrases: list[str]) -> np.ndarray:
    """Best cosine of each text to any survey phrase (0 when the survey found nothing)."""
    if not phrases:
        return np.zeros(len(texts))
    return vectors.sim(texts, phrases).max(axis=1)


def _focused(vectors: Vectors, subject: str, focus: str, phrases: list[str]) -> list[Question]:
    f = clean(focus)
    cands = []
    for area, label, desc in FACETS:
        cands.append(
            Question(
                key=f"{area}.{slug(f)}",
                label=label.format(F=title_case(f), f=f, s=subject),
                description=desc.format(F=f, f=f, s=subject),
                min_sources=_FACET_MIN[area],
            )
        )
    support = _support(vectors, [f"{q.label}: {q.description}" for q in cands], phrases)
    core = [i for i, (area, _, _) in enumerate(FACETS) if area in CORE_FACETS]
    rest = [i for i in rank(support) if i not in core][: MAX_FACETS - len(core)]
    return [cands[i] for i in sorted(core + rest)]  # core + best supported facets, in facet order


def _unfocused(
    vectors: Vectors, topic: str, base: Syllabus, phrases: list[str], drug: bool
) -> list[Question]:
    questions = list(base.questions)
    if drug or not phrases:
        return questions
    cands = [p for p in phrases if is_subject_phrase(p, topic)]
    if not cands:
        return questions
    rel = vectors.sim([topic], cands)[0]
    chosen: list[str] = []
    for j in rank(rel):
        if rel[j] < PHRASE_MIN_SIM or len(chosen) == MAX_ADDED:
            break
        if chosen and float(vectors.sim([cands[j]], chosen).max()) >= 0.7:
            continue  # a near-duplicate of a phrase already chosen
        chosen.append(cands[j])
    keys = {q.key for q in questions}
    for phrase in chosen:
        key = f"topic.{slug(phrase)}"
        if key not in keys:
            keys.add(key)
            questions.append(
                Question(
                    key=key,
                    label=title_case(phrase),
                    min_sources=3,
                    description=f"What do sources report about {phrase.lower()} for {restate(topic)}?",
                )
            )
    return questions


def fit_syllabus(
    vectors: Vectors, topic: str, base: Syllabus, related: list[TopicOutline]
) -> Syllabus:
    """The syllabus fitted to ``topic`` (module doc). ``base`` is the template of the topic's
    kind; the result keeps its name and has 4–8 questions with unique ``area.name`` keys."""
    subject, focus, _ = split_topic(topic)
    phrases = _phrases(related, topic, subject)
    if focus:
        questions = _focused(vectors, subject, focus, phrases)
    else:
        keep = topic_kind(topic) == "drug" or frame_question(topic).framed
        questions = _unfocused(vectors, topic, base, phrases, keep)
    return Syllabus(name=base.name, questions=_ground(vectors, questions, phrases, topic)[:8])
