"""Question syllabus templates (docs/design.md § Question syllabus, ``STORM_QUESTIONS``).

A syllabus is the list of research questions a run gathers sources for; each question has a
``min_sources`` threshold that the source collector (``research.store.collector``) uses for
progress and completion.

- ``"drug"``: the ``STORM_QUESTIONS`` (docs/design.md § Question syllabus) verbatim (six questions
about a drug: mechanism,
  efficacy, safety, competitive landscape at 5 sources each; market status and IP at 3 each).
- ``"general"``: the same shape for any topic (background, history, actors, impact, debate,
  outlook), for runs that are not about a drug.
- ``"auto"`` (the default): the run starts from the template of the topic's kind
  (``topic_kind``: a drug topic gets ``drug``, anything else ``general``) and the engine fits it
  to the query after the related-topic survey (``research.pipeline.planning.fit_syllabus``).

Usage::

    syllabus = get_template("drug")       # a fresh copy; mutate freely
    template_names()                      # ["comparison", "device", "drug", "event", …]
    template_choices()                    # ["auto", "comparison", …, "person"]
    base_template("auto", "Imatinib hepatotoxicity")   # the drug template, named "auto"
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType

from research.errors import InputError, InvariantError
from research.models import TEMPLATE_CHOICES, Question, Syllabus
from research.planning.edit import LABEL_MAX
from research.planning.facets import FACETS
from research.planning.kinds import ASK_PHRASES, KIND_TEMPLATES, fill
from research.text import subject_of, word_key
from research.text.asking import asked
from research.text.frame import frame_question
from research.text.stems import stems

# docs/design.md § Question syllabus, "STORM_QUESTIONS" — keys, labels, descriptions and thresholds verbatim
STORM_QUESTIONS: dict[str, dict] = {
    "mechanism.moa": {
        "label": "Mechanism of Action",
        "description": "How does the drug work? Target binding, pathway effects",
        "min_sources": 5,
    },
    "clinical.efficacy": {
        "label": "Clinical Efficacy",
        "description": "Trial results, patient outcomes, response rates",
        "min_sources": 5,
    },
    "clinical.safety": {
        "label": "Safety Profile",
        "description": "Adverse events, toxicity, contraindications",
        "min_sources": 5,
    },
    "competitive.landscape": {
        "label": "Competitive Landscape",
        "description": "Other drugs, combinations, market position",
        "min_sources": 5,
    },
    "market.status": {
        "label": "Market Status",
        "description": "Development stage, approvals, commercialization",
        "min_sources": 3,
    },
    "ip.patents": {
        "label": "Intellectual Property",
        "description": "Patent coverage, exclusivity, formulations",
        "min_sources": 3,
    },
}

# our general-topic counterpart: six questions a STORM-style article on any topic needs
GENERAL_QUESTIONS: dict[str, dict] = {
    "background.overview": {
        "label": "Background & Overview",
        "description": "What is it? Definitions, scope, key facts and context",
        "min_sources": 5,
    },
    "history.timeline": {
        "label": "History & Timeline",
        "description": "Origins, key events and dates, how it developed",
        "min_sources": 4,
    },
    "key.actors": {
        "label": "Key Actors",
        "description": "People, organizations, places and groups involved and their roles",
        "min_sources": 4,
    },
    "impact.effects": {
        "label": "Impact & Effects",
        "description": "Consequences, reception, measurable outcomes and significance",
        "min_sources": 4,
    },
    "debate.controversies": {
        "label": "Debate & Controversies",
        "description": "Criticism, disputes, competing views and open problems",
        "min_sources": 3,
    },
    "outlook.future": {
        "label": "Outlook",
        "description": "Current status, recent developments and what comes next",
        "min_sources": 3,
    },
}


def _syllabus(name: str, questions: Mapping[str, dict]) -> Syllabus:
    return Syllabus(name=name, questions=[Question(key=k, **v) for k, v in questions.items()])


TEMPLATES: Mapping[str, Syllabus] = MappingProxyType(
    {
        "drug": _syllabus("drug", STORM_QUESTIONS),
        "general": _syllabus("general", GENERAL_QUESTIONS),
        **{
            kind: _syllabus(kind, fill(questions, frame_question("")))
            for kind, questions in KIND_TEMPLATES.items()
        },
    }
)
"""Read-only ``name → Syllabus``. Use ``get_template`` to get a copy you may change."""


def template_names() -> list[str]:
    """Names of the available templates, sorted (``["comparison", "device", "drug", "event", …]``)."""
    return sorted(TEMPLATES)


AUTO = "auto"

if TEMPLATE_CHOICES != (AUTO, *template_names()):
    raise InvariantError(
        f"models.TemplateName {TEMPLATE_CHOICES} must be 'auto' followed by the "
        f"templates of research/planning/syllabus.py {template_names()}"
    )


def template_choices() -> list[str]:
    """What ``--template`` and the Launch form accept: ``["auto", "comparison", …]`` (auto first),
    the values of ``models.TemplateName``."""
    return list(TEMPLATE_CHOICES)


def check_template(name: str) -> str:
    """The normalised template choice (``auto``, ``drug`` or ``general``).

    Raises:
        InputError (code ``unknown_template``): anything else; the message lists the choices.
    """
    key = name.strip().lower() if isinstance(name, str) else ""
    if key != AUTO and key not in TEMPLATES:
        raise InputError(
            f"Unknown question template {str(name)[:40]!r}: choose one of "
            f"{', '.join(template_choices())}.",
            code="unknown_template",
        )
    return key


def base_template(name: str, topic: str) -> Syllabus:
    """The syllabus a run starts from: the named template, or for ``auto`` the template of the
    question's kind (``research.text.frame``: a comparison, an intervention or a device gets its
    PICO-shaped template named with the question's own terms, a drug the drug template, an event
    and a person or organisation their own, any other topic the general one), renamed
    ``auto (kind)``. The kinds'
    templates are filled with the question's terms whichever way they are chosen.

    Raises:
        InputError: unknown template name.
    """
    key = check_template(name)
    frame = frame_question(topic)
    if key != AUTO:
        if key in KIND_TEMPLATES:
            return _asking(topic, _syllabus(key, fill(KIND_TEMPLATES[key], frame)))
        return _asking(topic, get_template(key))
    if frame.kind in KIND_TEMPLATES:
        filled = fill(KIND_TEMPLATES[frame.kind], frame)
        return _asking(topic, _syllabus(f"{AUTO} ({frame.kind})", filled))
    syllabus = get_template("drug" if frame.kind == "drug" else "general")
    return _asking(topic, syllabus.model_copy(update={"name": f"{AUTO} ({syllabus.name})"}))


ASKED_KEY = "asked.question"
ASKED_MIN_SOURCES = 4
_PARTS = re.compile(r"[,;?]")  # a description's parts: "What caused or shaped it, blame, …"
_ASPECTS = re.compile(r",|\band\b|&")  # a label's: "Causes, disputes and investigations"


def _asking(topic: str, syllabus: Syllabus) -> Syllabus:
    """``syllabus`` led by the question the analyst asked, when it asks more of its topic than
    the template does ("What caused X?", "How did A prepare for X?": ``text.asking.asked``),
    labelled with the question itself. The template question that shares the most of its words
    (label, description and facet phrasings, ``facets.FACETS``) becomes it and keeps its key, so
    the evidence judgement reads it in that question's words ("What caused X?" is the causes
    question); one that shares none is added as a question of its own. Unchanged otherwise."""
    question = asked(topic)
    if not question:
        return syllabus
    label = _label(question)
    ask = _keys(question) - _keys(subject_of(topic))
    if question.lower().startswith("why"):  # a question of why asks for causes
        ask |= _keys("caused causes")
    best, shared = None, 0
    for q in syllabus.questions:
        words = _keys(" ".join([q.label, q.description, *FACETS.get(q.key, ())]))
        if len(ask & words) > shared:
            best, shared = q, len(ask & words)
    # a template question whose label names several things, the ask only one of them ("What
    # caused X?" of "Causes, disputes and investigations"), stays a question of its own: the ask
    # takes the parts of its description that share its words (disputes do not say what caused
    # an event); a label the ask shares no word with ("Safety Profile" for side effects, "Impact
    # and outcomes" for consequences) is the ask in other words, and becomes it
    aspects = [stems(_keys(a)) for a in _ASPECTS.split(best.label)] if best else []
    asks = stems(ask)
    parts = _PARTS.split(best.description) if best else []
    narrow = [p.strip() for p in parts if stems(_keys(p)) & asks]
    if best is None or 0 < sum(bool(a & asks) for a in aspects) < len(aspects):
        said = [ASK_PHRASES[s] for s in sorted(asks) if s in ASK_PHRASES]
        what = "; ".join(narrow) or "; ".join(dict.fromkeys(said))
        what = what or "The answer to the question as asked"
        first = Question(
            key=ASKED_KEY,
            label=label,
            description=f"{question} {what}"[:300],
            min_sources=ASKED_MIN_SOURCES,
        )
    else:
        first = best.model_copy(
            update={"label": label, "description": f"{question} {best.description}"[:300]}
        )
    rest = [q for q in syllabus.questions if q.key not in (first.key, ASKED_KEY)]
    return syllabus.model_copy(update={"questions": [first, *rest]})


def _label(question: str) -> str:
    """The asked question as a label: whole, or cut at a word to ``LABEL_MAX`` characters."""
    if len(question) <= LABEL_MAX:
        return question
    return question[: LABEL_MAX - 1].rsplit(" ", 1)[0] + "…"


def asked_key(syllabus: Syllabus, topic: str) -> str | None:
    """The key of the question of ``syllabus`` that is the one the analyst asked (its first,
    labelled with the question: ``_asking``), or None when the topic asks nothing more of
    its subject or the analyst relabelled it."""
    question = asked(topic)
    first = syllabus.questions[0] if syllabus.questions else None
    if question and first is not None and first.label == _label(question):
        return first.key
    return None


def _keys(text: str) -> set[str]:
    """``word_key`` forms of ``text``'s words of three letters or more but the words that ask
    and join (not every stop word: "side effects" is what a question on harms asks)."""
    return {word_key(w) for w in re.findall(r"[A-Za-z]{3,}", text) if w.lower() not in _JOINING}


_JOINING = frozenset(
    """what which who whom how why when where did does was were are the and for with from
    into its their this that these those has have had can could should would will""".split()
)


def get_template(name: str) -> Syllabus:
    """A fresh copy of the named syllabus template (docs/design.md § Question syllabus:
    ``STORM_QUESTIONS`` for ``"drug"``).

    Args:
        name: template name; surrounding spaces and case are ignored.

    Returns:
        ``Syllabus`` whose questions keep the template's order.

    Raises:
        InputError: unknown name; the message lists the valid names.
    """
    key = name.strip().lower() if isinstance(name, str) else ""
    template = TEMPLATES.get(key)
    if template is None:
        raise InputError(
            f"Unknown question template {str(name)[:40]!r}: choose one of "
            f"{', '.join(template_names())}.",
            code="unknown_template",
        )
    return template.model_copy(deep=True)
