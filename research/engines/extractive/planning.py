"""Planner and perspective discovery without a model.

- ``make_plan``: docs/design.md § Coordinator and planner: schema ``{plan_title, steps}``; one step
per syllabus question
  between a survey step and a cross-check/report step.
- ``survey_queries`` / ``related_outline``: docs/design.md § Perspective discovery (STORM FindRelatedTopic, paper
  §3.1): keyword queries on different angles, and a related topic's structure from its results.
- ``make_personas``: docs/design.md § Perspective discovery (STORM GenPersona): Basic Fact Writer first, then one
  specialist per syllabus question, then survey-derived researchers.
"""

from __future__ import annotations

import re

from research.engines.base import PersonaList, QueryList
from research.errors import InputError
from research.models import Perspective, Plan, Question, SearchResult, Step, Syllabus, TopicOutline
from research.text import (
    clean,
    content_words,
    ranked_phrases,
    subject_of,
    title_case,
    topic_keys,
)
from research.text.vectors import Vectors, rank

BASIC_NAME = "Basic Fact Writer"
BASIC_FOCUS = (
    "Basic, fundamental facts about the topic: definitions, key entities, dates and figures."
)
ANGLES = ("history", "applications", "controversies", "technical aspects", "related fields")
_QWORD = re.compile(r"^(how|what|which|why|when|where|who|does|do|is|are|can|should)\b", re.I)
_TITLE_SUFFIX = re.compile(r"\s+[-|–]\s+([^-|–]{1,40})$")


def require_topic(topic: str) -> str:
    """The cleaned topic. Raises InputError when it is empty."""
    t = clean(topic)
    if not t:
        raise InputError("The topic is empty; give the research question to plan for.")
    return t


def make_plan(topic: str, syllabus: Syllabus) -> Plan:
    """Seed 001 §3.2 plan: step 1 survey, one step per syllabus question, last step cross-check.

    Steps are sequential, ``step_id`` 1..n, descriptions name the topic and what to search for.

    Raises:
        InputError: empty topic.
    """
    t = require_topic(topic)
    subject = subject_of(t)
    steps = [
        Step(
            step_id=1,
            title="Survey related topics",
            description=f"Search for background on {subject}: definitions, related topics and the "
            "main subtopics, to find the perspectives worth investigating.",
        )
    ]
    for q in syllabus.questions:
        steps.append(
            Step(
                step_id=len(steps) + 1,
                title=q.label,
                description=f"Search for sources on {subject} that answer '{q.label}' ({q.key}): "
                f"{clean(q.description).rstrip('.')}. Save each relevant source under "
                f"{q.key} until it has at least {q.min_sources}.",
            )
        )
    steps.append(
        Step(
            step_id=len(steps) + 1,
            title="Cross-check findings and write the report",
            description=f"Compare the findings on {subject} across sources: mark claims backed by "
            "two or more sources, flag contradictions, then write the cited report.",
        )
    )
    return Plan(plan_title=f"Research plan: {subject}", steps=steps)


def survey_queries(topic: str) -> QueryList:
    """3–5 keyword queries (docs/design.md § Perspective discovery: angles): the topic itself, then
    the topic's keywords (at most 4) with each generic angle the topic does not already mention."""
    t = require_topic(topic)
    words = content_words(t)
    core = " ".join(words[:4]) or subject_of(t)
    queries = [subject_of(t)]
    for angle in ANGLES:
        if angle.split()[0] in t.lower():
            continue
        q = f"{core} {angle}"
        if q.lower() not in (x.lower() for x in queries):
            queries.append(q)
        if len(queries) == 5:
            break
    return QueryList(queries=queries)


def _short_title(title: str) -> str:
    """A result title as a topic name: text before ' — ' (wiki sections), site suffix removed."""
    t = clean(title).split(" — ")[0]
    m = _TITLE_SUFFIX.search(t)
    if m and len(m.group(1).split()) <= 3 and len(t[: m.start()].split()) >= 2:
        t = t[: m.start()]
    return t.rstrip(". ")[:120]


def related_outline(
    topic: str, query: str, results: list[SearchResult], max_sections: int = 8
) -> TopicOutline:
    """A related topic's structure from its search results (docs/design.md § Perspective discovery).

    ``topic`` = the top result's (shortened) title, or the query; ``sections`` = section names
    found in result titles (``Page — Section > Subsection``) then the results' top key phrases
    (title case, distinct, not just the query's own words). Uses the top 3 results.
    """
    top = results[:3]
    name = _short_title(top[0].title) if top and top[0].title.strip() else clean(query)
    sections: list[str] = []
    seen: set[str] = set()

    def add(s: str) -> None:
        s = title_case(clean(s))
        low = s.lower()
        if not s or low == name.lower() or len(sections) >= max_sections:
            return
        if any(low in x or x in low for x in seen):  # sub-/super-phrase of one already listed
            return
        seen.add(low)
        sections.append(s)

    for r in top:
        if " — " in r.title:
            for part in r.title.split(" — ", 1)[1].split(" > "):
                add(part)
    exclude = topic_keys(query, topic)
    texts = [" ".join([r.title, *r.snippets]) or r.text[:2000] for r in top]
    if texts:
        for phrase in ranked_phrases([" ".join(texts)], top=max_sections * 2, exclude=exclude)[0]:
            add(phrase)
    return TopicOutline(
        topic=name or clean(query), sections=sections, source=top[0].url if top else ""
    )


def _aspects(description: str) -> list[str]:
    """Parts of a syllabus description: 'How does it work? Target binding, pathway effects'
    → ['How does it work', 'Target binding', 'pathway effects']."""
    parts = re.split(r"[?;,:.]|\band\b", description)
    return [clean(p) for p in parts if len(clean(p)) > 2]


def _aspect_question(aspect: str, subject: str) -> str:
    if _QWORD.match(aspect) and re.search(
        r"\bit\b", aspect
    ):  # "What is it" -> "What is <subject>?"
        asked = re.sub(r"\bit\b", subject, aspect, count=1)
        return f"{asked[0].upper()}{asked[1:]}?"
    if _QWORD.match(aspect):
        return f"{aspect[0].upper()}{aspect[1:]}, in the case of {subject}?"
    return f"What do sources report about {aspect.lower()} for {subject}?"


def question_persona(q: Question, subject: str, related_phrase: str | None = None) -> Perspective:
    """A specialist for one syllabus question: '<Aspect> Specialist' (the label's part before a
    colon: "Risk factors: hepatotoxicity" gives "Risk factors Specialist"), 3–4 template
    questions."""
    aspect = q.label.split(":", 1)[0].strip() or q.label
    questions = [_aspect_question(a, subject) for a in _aspects(q.description)[:3]]
    if related_phrase:
        questions.append(
            f"What does the related topic '{related_phrase}' add to the {aspect.lower()} of {subject}?"
        )
    if len(questions) < 3:
        questions.append(f"Where do sources disagree about the {aspect.lower()} of {subject}?")
    if len(questions) < 3:
        questions.append(f"What are the most recent findings on the {aspect.lower()} of {subject}?")
    return Perspective(
        name=f"{aspect} Specialist",
        focus=f"{q.label}: {clean(q.description)}",
        questions=questions[:4],
    )


def basic_persona(subject: str) -> Perspective:
    """The always-present Basic Fact Writer (docs/design.md § Perspective discovery)."""
    return Perspective(
        name=BASIC_NAME,
        focus=BASIC_FOCUS,
        questions=[
            f"What is {subject}, and what are its defining facts?",
            f"What are the key entities, dates and figures for {subject}?",
            f"What background is needed to understand {subject}?",
        ],
    )


def make_personas(
    vectors: Vectors,
    topic: str,
    related: list[TopicOutline],
    syllabus: Syllabus,
    max_perspectives: int,
) -> PersonaList:
    """GenPersona without a model: Basic Fact Writer, then syllabus specialists (syllabus order),
    then '<Phrase> Researcher' personas from survey sections, up to ``max_perspectives``.

    Each specialist gets one extra question on the survey section most similar (cosine ≥ 0.35)
    to its label + description, so the survey informs the questions (docs/design.md § Perspective discovery).
    """
    subject = subject_of(require_topic(topic))
    out = [basic_persona(subject)]
    phrases = list(dict.fromkeys(s for o in related for s in o.sections if s.strip()))
    used: set[int] = set()
    picked = syllabus.questions[: max(0, max_perspectives - 1)]
    if phrases and picked:
        sims = vectors.sim([f"{q.label}: {q.description}" for q in picked], phrases)
    for qi, q in enumerate(picked):
        phrase = None
        if phrases:
            best = rank(sims[qi])[0]
            if sims[qi][best] >= 0.35:
                phrase = phrases[best]
                used.add(best)
        out.append(question_persona(q, subject, phrase))
    names = {p.name.lower() for p in out}
    for i, phrase in enumerate(phrases):
        if len(out) >= max_perspectives:
            break
        name = f"{title_case(phrase)} Researcher"
        if i in used or name.lower() in names:
            continue
        names.add(name.lower())
        out.append(
            Perspective(
                name=name,
                focus=f"{phrase} in relation to {subject}",
                questions=[
                    f"What is the role of {phrase.lower()} in {subject}?",
                    f"What do sources report about {phrase.lower()} and {subject}?",
                    f"What open questions remain about {phrase.lower()} for {subject}?",
                ],
            )
        )
    return PersonaList(perspectives=out[:max_perspectives])
