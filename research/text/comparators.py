"""A comparator that is neither arm of a comparison: a result of one arm against placebo,
sham, observation, usual care, no treatment or an unnamed control answers another question
than which of the question's two arms did better (``research.text.frame`` gives the arms); a
trial of a treatment added to an arm, or given to people who receive one, studies that treatment
(``studies_another``)."""

from __future__ import annotations

import re

from research.text.entities import INN_STEM
from research.text.frame import QuestionFrame
from research.text.frame_match import arms_named, arms_of
from research.text.words import content_words

_THIRD_ARM = re.compile(
    r"\b(?:placebo|sham|no\s+(?:further\s+)?(?:treatment|therapy|intervention)|usual\s+care|"
    r"observation(?:\s+(?:alone|only|group|arm))?|untreated|best\s+supportive\s+care|"
    r"(?:versus|vs\.?|compared\s+(?:with|to)|than)\s+(?:the\s+)?controls?)\b",
    re.I,
)


def third_arm(passage: str, frame: QuestionFrame) -> bool:
    """True when ``passage`` names a comparator that is neither arm of the comparison
    (``_THIRD_ARM``: placebo, sham, observation, usual care, no treatment, "versus control"; one
    the question itself names is an arm) and does not name every arm: a result against that
    comparator. Example, for "A versus B": "the hazard ratio of B versus control was 1.13" →
    True; "A versus B, compared with placebo in earlier trials" → False (both arms named)."""
    found = {m.group(0).lower() for m in _THIRD_ARM.finditer(passage)}
    own = {m.group(0).lower() for m in _THIRD_ARM.finditer(frame.question)}
    return bool(found - own) and arms_named(passage, frame) < len(frame.arms)


# A title that states what a study compares: "X versus Y", "X compared with Y", "comparison of X
# with Y", "comparing X and Y".
_COMPARES = re.compile(
    r"\b(?:versus|vs\.?|v\.|compared\s+(?:with|to)|comparisons?\s+of|comparing)\s", re.I
)


def another_comparison(title: str, frame: QuestionFrame) -> bool:
    """True when a source's ``title`` states a comparison (``_COMPARES``) without naming the
    comparator, the question's last arm (in any of its words: ``arms_of`` ``loose``): for "A
    versus B", a trial of "C versus D for A" (two ways of doing A) or of "A plus X versus A"
    compares something else, however often its abstract names B in passing. Its findings answer
    none of the questions that compare A with B (``planning.question_roles.BOTH_ARMS``)."""
    if len(frame.arms) < 2 or not _COMPARES.search(title):
        return False
    return not arms_of(title, frame, loose=True)[-1]


# Where the part of a title that names an added treatment ends: its setting, or the next clause.
_ADDED_END = re.compile(
    r"\s+(?:as|in|for|among|during|after|before|within|on|at|versus|vs\.?|compared)\s+|"
    r"[,:;()\[\]]",
    re.I,
)
# "A with or without X", "A ± X", "A +/- X", "augmentation of A with X"; "adding X to A",
# "addition of X to A"; "X added to A"; "X plus A versus A alone".
_WITH_OR_WITHOUT = re.compile(
    r"(?:\bwith\s+or\s+without\b|\bwithout\s+or\s+with\b|±|\+/[-−])\s*(.+)", re.I
)
_ADDING = re.compile(r"\b(?:adding|addition\s+of)\s+(.+?)\s+to\s+", re.I)
_ADDED_TO = re.compile(r"([^,:;]+?)\s+(?:when\s+)?added\s+to\b", re.I)
# "augmentation of A with X", "A augmented with X"
_AUGMENTED = re.compile(r"\baugment(?:ation\s+of\s+.+?|ed)\s+with\s+(.+)", re.I)
_ALONE = re.compile(r"([^:;]+?)\s+(?:versus|vs\.?|compared\s+(?:with|to))\s+(.+?)\s+alone\b", re.I)
_JOINERS = frozenset({"plus", "combined", "combination", "concurrent", "together"})
# A title whose own intervention comes before the people or occasion it studies: "X after A",
# "X in patients receiving A".
_RECEIVING = re.compile(
    r"\s+(?:after|following|during|receiving|undergoing|treated\s+with|prior\s+to|"
    r"(?:in|for)\s+(?:patients|women|men|children|adults))\s+",
    re.I,
)


def added_treatment(title: str) -> str:
    """The part of a trial's ``title`` that names a treatment added to another (module
    patterns: "A with or without X", "augmentation of A with X", "adding X to A", "X added to
    A", "X plus A versus A alone" → X's words), "" when the title states no addition."""
    m = _WITH_OR_WITHOUT.search(title) or _AUGMENTED.search(title)
    if m:
        return _ADDED_END.split(m.group(1), maxsplit=1)[0].strip()
    m = _ADDING.search(title) or _ADDED_TO.search(title)
    if m:
        return m.group(1).strip()
    m = _ALONE.search(title)
    if m:
        base = {w.lower() for w in content_words(m.group(2))} | _JOINERS
        return " ".join(w for w in content_words(m.group(1)) if w.lower() not in base)
    return ""


def studies_another(title: str, frame: QuestionFrame) -> bool:
    """True when a source's ``title`` says it studies an intervention that is none of the
    question's arms, with an arm only as its background: a treatment added to an arm ("adding
    X to A", "A with or without X": ``added_treatment`` names no arm), or a medicine (an INN
    stem) given to people who receive an arm ("X after A", "X in patients receiving A": the
    title's head names no arm, its occasion does). Such a trial answers what X adds, not how
    the arms compare or what an arm does. False for a frame whose arms are not all named in
    words (an open arm: "Interventions to prevent X")."""
    if not frame.framed or not frame.arms or not all(frame.arm_words()):
        return False
    added = added_treatment(title)
    if added and not any(arms_of(added, frame, loose=True)):
        return True
    parts = _RECEIVING.split(title, maxsplit=1)
    if len(parts) < 2:
        return False
    head, occasion = parts
    return (
        bool(INN_STEM.search(head))
        and not any(arms_of(head, frame, loose=True))
        and any(arms_of(occasion, frame, loose=True))
    )
