"""The text rules the evidence judgement (``research.evidence.judge``) reads a passage by,
beside its meaning: what an answer to a question looks like, whether a sentence reports a finding
at all, and the topic's own words.

* ``CUES: dict[str, re.Pattern]`` (question key → pattern): the answer cues of the questions
  whose answers show in cues more than in MiniLM's cosine: the general template's abstract
  questions (dates for a timeline, names of roles for key actors, "criticized" for a debate…), a
  medical condition's questions, the kinds' questions that ask for results (the cues of a
  reported result, ``findings.RESULT_CUES``) and the questions on harms (``findings.HARM_CUES``);
  the judgement counts a passage's distinct cues with the question's own terms;
* ``REQUIRED_CUES: dict[str, re.Pattern]``: what a sentence must name to answer a question on a
  product's market or its patents (approval, price, patent, exclusivity…);
* ``is_design(passage) → bool``: a sentence that states an aim or a question, or describes how a
  study was run and reports no finding;
* ``topic_stems(topic) → frozenset[str]``: the Snowball English stems (``stems``) of the topic's
  words and their hyphen parts, which the judgement takes out of the passage and the question; a
  focused topic's focus (``research.text.entities.split_topic``) is kept in;
* ``focus_roots(topic) → tuple[str, ...]`` and ``names_focus(passage, topic) → bool``: the roots
  a passage uses to speak of a focused topic's focus ("hepat…"), plus their plain words
  (``research.text.roots.VERNACULAR``: "liver").

Pure text rules; the judgement that weighs them was calibrated on the labelled set of
``bench/data/evidence_labels.jsonl`` (docs/evidence.md).
"""

from __future__ import annotations

import re
from functools import lru_cache

import Stemmer

from research.planning.question_roles import HARMS
from research.text import STUDY_DESIGN, subject_of, word_key
from research.text.entities import split_topic
from research.text.findings import HARM_CUES, RESULT_CUES, states_result
from research.text.roots import VERNACULAR

# A sentence that describes how a study was run, not what it found.
_DESIGN = re.compile(
    r"\b(?:primary|secondary|main)\s+(?:end\s?-?points?|outcomes?|objectives?)\b|"
    r"\bend\s?-?points?\s+(?:was|were|included)\b|\boutcomes?\s+included\b|"
    r"\bwere\s+(?:considered\s+)?(?:randomi[sz]ed|enrolled|recruited|assigned|allocated|eligible|"
    r"stratified)\b|"
    r"\b(?:randomly|randomi[sz]ed)\s+assigned\b|"
    r"\bunderwent\b|\b(?:was|were)\s+undertaken\b|\bcould\s+be\s+enrolled\b|"
    # who took part and how outcomes were recorded: "230 women … were entered into the study",
    # "patients completed a cosmetic assessment before …", "each patient kept a diary"
    r"\b(?:was|were)\s+entered\s+into\b|\b(?:completed|kept)\s+(?:an?|the)\s+(?:[\w-]+,?\s+){0,4}"
    r"(?:assessments?|questionnaires?|diar(?:y|ies))\b|"
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
    r"\b(?:ISRCTN|NCT|ACTRN)\d{6,}|\b(?:clinical\s+)?trials?\s+registry\b|\bregistration\s+(?:number|no)\b|"
    r"\bintention[- ]to[- ]treat\b|\bwarranted\b|"
    # what a study compared, with no figure of what it found ("This randomized study compared X
    # with Y in delaying …"), or in which studies outcomes were measured ("Pain was assessed in
    # a double-blind phase 3 study comparing X with Y …")
    r"^(?:This|The|A|An|In\s+this)\s+(?:[\w,-]+\s+){0,6}(?:study|trial)\s+compared\b(?![^.]*\d)|"
    r"\b(?:were|was)\s+(?:assessed|analy[sz]ed|evaluated|compared)\s+(?:in|from|across)\s+"
    r"(?:an?|one|two|three|four|\d+)\s+(?:[\w,-]+\s+){0,6}(?:stud(?:y|ies)|trials?)\s+"
    r"compar(?:ing|ed)\b|"
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
# Cues of the general template's questions: what their answers look like in any article.
CUES: dict[str, re.Pattern[str]] = {
    # what the topic is, or what happened: an account of an event gives the clock time of what
    # was done ("At around 2:30 three units arrived", "recaptured at 17:27")
    "background.overview": re.compile(
        r"\b(?:is|was|are|were)\s+(?:an?|the)\b|\brefers?\s+to\b|\bknown\s+as\b|\blocated\b|"
        r"\b(?:[01]?\d|2[0-3]):[0-5]\d\b",
        re.I,
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
    # what is recommended or still open: a recommendation, a conclusion drawn for practice, a
    # hedge, an uncertainty or a call for more research. A trial's enrolment ("The trial included
    # 960 patients") or another trial's result is no guidance, however close its words come.
    "guidance.open": re.compile(
        r"\b(?:guidelines?|guidance|recommend\w*|consensus|uncertain\w*|unclear|unknown|"
        r"unresolved|remains?\s+(?:\w+\s+){0,2}(?:uncertain|unclear|unknown|controversial|debated|"
        r"open|to\s+be|an?\s+option|the\s+standard)|further|needed|warranted|should|options?|"
        r"standard\s+(?:of\s+care|treatment|practice)|practice|conclu\w+|suggest\w*|"
        r"support\w*|may|might|could|meta-analys[ie]s|systematic\s+reviews?|questions?|"
        r"debate\w*|controvers\w*|role|evidence|implications?|appropriate|safe(?:ly)?)\b",
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


def is_design(passage: str) -> bool:
    """True for a sentence that states an aim or a question ("The purpose of this study was to
    determine whether …") or describes a study's design and reports no finding ("The primary
    end point was DFS.", "Patients were randomized to …")."""
    if _AIM.search(passage):
        return True
    designed = bool(_DESIGN.search(passage) or STUDY_DESIGN.search(passage))
    return designed and not (_FINDING.search(passage) or states_result(passage))


_STEM = Stemmer.Stemmer("english")
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'’-]*")


def stems(text: str) -> set[str]:
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
        return frozenset(stems(subject_of(topic)))
    return frozenset(stems(f"{subject} {context}") - stems(focus))


@lru_cache(maxsize=256)
def focus_roots(topic: str) -> tuple[str, ...]:
    """The roots a passage must use to speak of a focused topic's focus: the first five letters
    of each focus word's stem ("hepatotoxicity" → "hepat": hepatic, hepatitis…), plus the plain
    words of those roots (``research.text.roots.VERNACULAR``: "liver"); () for a topic without
    a focus (``research.text.entities.split_topic``)."""
    _, focus, _ = split_topic(topic)
    roots = [stem[:5] for stem in sorted(stems(focus)) if len(stem) >= 4]
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
