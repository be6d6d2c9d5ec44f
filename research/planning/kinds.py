"""Syllabus templates for the kinds of question: the template data the evidence judgement
reads, beside the facet phrasings of ``research.planning.facets`` and the questions' roles of
``research.planning.question_roles``.

A comparison ("A versus B in S") gets a PICO-shaped syllabus (population, intervention,
comparator, outcomes: the frame of clinical questions in evidence-based medicine, Richardson et al.
1995, "The well-built clinical question", ACP J Club 123:A12) named with the question's own
terms; an intervention for a condition and a device or procedure get the same shape around their
one intervention. The labels and descriptions hold ``{a}``, ``{b}`` (the arms) and ``{s}`` (the
setting); ``fill`` puts the question's terms in (``research.text.frame``). A label is
"Aspect: terms", never a fragment of the question glued in front of a template word.

No template names a particular medicine, organ or event (a test checks it).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from research.planning.question_roles import NO_SWITCH
from research.text.frame import OCCASION, QuestionFrame, leaves_out

COMPARISON_QUESTIONS: dict[str, dict] = {
    "efficacy.comparison": {
        "label": "Efficacy: {a} vs {b}",
        "description": "{outcomes} and other primary outcomes with "
        "{a} compared with {b}{in_s}: which arm did better, by how much, in which trials",
        "min_sources": 5,
    },
    "harms.comparison": {
        "label": "Harms: {a} vs {b}",
        "description": "Adverse events, toxicity, serious harms and discontinuation with {a} "
        "compared with {b}",
        "min_sources": 4,
    },
    "subgroups.benefit": {
        "label": "Who benefits: subgroups",
        "description": "Which patients benefit more from {a} or from {b}: subgroups by age, "
        "risk, stage and other features",
        "min_sources": 3,
    },
    "sequencing.switching": {
        "label": "Switching and sequencing: {a} and {b}",
        "description": "Switching from one to the other, sequence, duration and combination of "
        "{a} and {b}",
        "min_sources": 3,
    },
    "qol.adherence": {
        "label": "Quality of life and adherence",
        "description": "Quality of life, symptoms, adherence and persistence with {a} versus {b}",
        "min_sources": 3,
    },
    "guidance.open": {
        "label": "Guidance and open questions",
        "description": "What guidelines and reviews recommend on {a} versus {b}, and what "
        "remains uncertain",
        "min_sources": 3,
    },
}

INTERVENTION_QUESTIONS: dict[str, dict] = {
    "efficacy.intervention": {
        "label": "Efficacy: {a}",
        "description": "Does {a} improve outcomes{for_s}? Trial results, effect sizes and "
        "patient numbers",
        "min_sources": 5,
    },
    "harms.intervention": {
        "label": "Harms and tolerability: {a}",
        "description": "Adverse events, risks, tolerability and discontinuation with {a}",
        "min_sources": 3,
    },
    "subgroups.benefit": COMPARISON_QUESTIONS["subgroups.benefit"]
    | {
        "description": "Which patients benefit more from {a}: subgroups by age, risk, stage "
        "and other features"
    },
    "delivery.dose": {
        "label": "Dose, timing and delivery",
        "description": "How {a} is given: dose, schedule, duration, setting and adherence",
        "min_sources": 3,
    },
    "comparators.alternatives": {
        "label": "Compared with alternatives",
        "description": "How {a} compares with placebo, usual care or other options{for_s}",
        "min_sources": 3,
    },
    "guidance.open": COMPARISON_QUESTIONS["guidance.open"]
    | {"description": "What guidelines and reviews recommend on {a}, and what remains uncertain"},
}

DEVICE_QUESTIONS: dict[str, dict] = {
    "indications.technique": {
        "label": "Indications and technique: {a}",
        "description": "What {a} is, how it is done and for whom it is indicated{in_s}",
        "min_sources": 4,
    },
    "accuracy.outcomes": {
        "label": "Accuracy and outcomes: {a}",
        "description": "Detection rates, accuracy, outcomes and effect sizes with {a}",
        "min_sources": 5,
    },
    "risks.complications": {
        "label": "Risks and complications: {a}",
        "description": "Complications, adverse events and morbidity of {a}",
        "min_sources": 3,
    },
    "comparators.alternatives": INTERVENTION_QUESTIONS["comparators.alternatives"],
    "subgroups.benefit": INTERVENTION_QUESTIONS["subgroups.benefit"],
    "guidance.open": INTERVENTION_QUESTIONS["guidance.open"],
}

# An event and a person or organisation keep the general template's question keys (the judgement's
# answer cues, ``research.evidence.cues.CUES``, are keyed by them) under the headings an article
# on such a subject has: what happened and why for an event, who and what they did for a person.
EVENT_QUESTIONS: dict[str, dict] = {
    "background.overview": {
        "label": "What happened",
        "description": "What happened, where and when, and who took part",
        "min_sources": 5,
    },
    "history.timeline": {
        "label": "Timeline",
        "description": "The sequence of events in order, with dates and times",
        "min_sources": 4,
    },
    "impact.effects": {
        "label": "Impact and outcomes",
        "description": "Deaths, injuries, damage, results, costs and other measurable consequences",
        "min_sources": 4,
    },
    "key.actors": {
        "label": "Response and reactions",
        "description": "How officials, agencies, participants and the public responded",
        "min_sources": 4,
    },
    "debate.controversies": {
        "label": "Causes, disputes and investigations",
        "description": "What caused or shaped it, investigations and their findings, blame, "
        "criticism and disputes",
        "min_sources": 3,
    },
    "outlook.future": {
        "label": "Aftermath and legacy",
        "description": "Aftermath: compensation, reforms, recovery, legacy and what comes next",
        "min_sources": 3,
    },
}

PERSON_QUESTIONS: dict[str, dict] = {
    "background.overview": {
        "label": "Who they are",
        "description": "Who or what it is: role, field, origin and why it is known",
        "min_sources": 5,
    },
    "history.timeline": {
        "label": "Life and career",
        "description": "Early life or founding, career and key dates in order",
        "min_sources": 4,
    },
    "impact.effects": {
        "label": "Work and achievements",
        "description": "Works, products, achievements, awards, records and influence",
        "min_sources": 4,
    },
    "key.actors": {
        "label": "Associates",
        "description": "Members, partners, colleagues, owners and groups associated with it",
        "min_sources": 3,
    },
    "debate.controversies": {
        "label": "Controversies",
        "description": "Criticism, disputes, legal cases, failures and controversies",
        "min_sources": 3,
    },
    "outlook.future": {
        "label": "Legacy and current status",
        "description": "Death, collapse or current status, tributes, legacy and what comes next",
        "min_sources": 3,
    },
}

# A medical condition: the sections of a medical encyclopaedia's article on a disease, in their
# usual order (what it is, causes, signs and diagnosis, treatment, prognosis, how common: the
# section order of Wikipedia's Manual of Style for medicine articles, WP:MEDMOS).
CONDITION_QUESTIONS: dict[str, dict] = {
    "background.overview": {
        "label": "What it is",
        "description": "What the condition is: definition, types and who it affects",
        "min_sources": 4,
    },
    "causes.risk": {
        "label": "Causes and risk factors",
        "description": "What causes it, what triggers it and who is at higher risk",
        "min_sources": 3,
    },
    "diagnosis.signs": {
        "label": "Signs and diagnosis",
        "description": "Symptoms and signs, and how it is diagnosed: tests and examination",
        "min_sources": 3,
    },
    "treatment.management": {
        "label": "Treatment and management",
        "description": "How it is treated or managed: medicines, procedures and care, and what "
        "works or does not",
        "min_sources": 4,
    },
    "prognosis.outcomes": {
        "label": "Prognosis",
        "description": "Outcomes and prognosis: recurrence, complications and long-term risks",
        "min_sources": 3,
    },
    "epidemiology.burden": {
        "label": "How common it is",
        "description": "How common it is: incidence, prevalence, ages affected and trends",
        "min_sources": 3,
    },
}

KIND_TEMPLATES: Mapping[str, Mapping[str, dict]] = {
    "comparison": COMPARISON_QUESTIONS,
    "intervention": INTERVENTION_QUESTIONS,
    "device": DEVICE_QUESTIONS,
    "event": EVENT_QUESTIONS,
    "person": PERSON_QUESTIONS,
    "condition": CONDITION_QUESTIONS,
}


def fill(questions: Mapping[str, dict], frame: QuestionFrame) -> dict[str, dict]:
    """The template's questions with the frame's terms in place of ``{a}``, ``{b}``, ``{s}``,
    ``{in_s}`` and ``{for_s}`` (" in S" / " for S", "" when the question has no setting). A frame
    with fewer arms than the template needs gets "the question's subject" for ``{a}`` and "the
    alternatives" for ``{b}``; one whose arm leaves a treatment out ("no X") has no
    ``NO_SWITCH`` question."""
    arms = list(frame.arms)
    a = arms[0] if arms else (frame.question or "the intervention")
    b = arms[1] if len(arms) > 1 else "the alternatives"
    s = frame.setting
    values = {
        "outcomes": purpose(frame.question) or PRIMARY_OUTCOMES,
        "a": _mid(a),
        "b": _mid(b),
        "s": s,
        "in_s": f" in {s}" if s else "",
        "for_s": f" for {s}" if s else "",
    }
    out = {}
    for key, q in questions.items():
        if key in NO_SWITCH and any(leaves_out(x) for x in arms):
            continue  # "X versus no X": nothing to switch to, nor a sequence of the two
        label = q["label"].format(**values)
        desc = q["description"].format(**values)
        out[key] = {
            **q,
            "label": label[:1].upper() + label[1:],
            "description": desc[:1].upper() + desc[1:],
        }
    return out


# A comparison's primary outcomes when the question does not say what the treatments are for
PRIMARY_OUTCOMES = "Survival, recurrence, response, accuracy"
# "… for preventing X", "… to treat X in S", "… for the relief of X": what the treatments are
# given for, which is then their primary outcome (not the survival of a cancer trial)
_PURPOSE = re.compile(
    r"\b(?:for|to)\s+(?:the\s+)?(?:prevent\w*|treat\w*|reduc\w*|relie\w*|manag\w*|control\w*)"
    r"(?:\s+of)?\s+(.+)$",
    re.I,
)


def purpose(question: str) -> str:
    """What the treatments of ``question`` are given for, capitalised ("Febrile neutropenia" of
    "A versus B for preventing febrile neutropenia in adults"), or "" when it does not say."""
    m = _PURPOSE.search(question.rstrip("?.! "))
    if not m:
        return ""
    target = OCCASION.split(m.group(1), maxsplit=1)[0].strip()
    return target[:1].upper() + target[1:]


def _mid(term: str) -> str:
    """A term as it reads inside a sentence: its first word lower-cased unless it is an acronym or
    a mixed-case name (``COVID-19``, ``mRNA``)."""
    first, _, rest = term.partition(" ")
    if first[1:] and (any(c.isupper() for c in first[1:]) or any(c.isdigit() for c in first)):
        return term
    return f"{first[:1].lower()}{first[1:]}{' ' if rest else ''}{rest}"


# What an ask no template question shares is answered with, in the words its answers use ("How
# did A prepare for X?": the warnings and evacuations sources report, not X's landfall in A),
# keyed by the stem of the ask's word (``planning.syllabus._asking``). Names no event.
ASK_PHRASES: dict[str, str] = {
    "prepar": "Warnings, evacuations, closures and other preparations made before it",
    "warn": "Warnings, forecasts and alerts issued before it",
    "evacu": "Evacuations, shelters and closures before it",
    "rescu": "Rescue, relief and aid during and after it",
    "fund": "Funding, money raised and pledged, and who paid",
    "learn": "Lessons drawn and changes made since",
    "lesson": "Lessons drawn and changes made since",
    "wrong": "Failures, faults, warnings and safety concerns, and what caused them",
    "fail": "Failures, faults, warnings and safety concerns, and what caused them",
    "failur": "Failures, faults, warnings and safety concerns, and what caused them",
}
