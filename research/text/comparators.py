"""A comparator that is neither arm of a comparison: a result of one arm against placebo,
sham, observation, usual care, no treatment or an unnamed control answers another question
than which of the question's two arms did better (``research.text.frame`` gives the arms)."""

from __future__ import annotations

import re

from research.text.frame import QuestionFrame, arms_named, arms_of

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
    none of the questions that compare A with B (``planning.kinds.BOTH_ARMS``)."""
    if len(frame.arms) < 2 or not _COMPARES.search(title):
        return False
    return not arms_of(title, frame, loose=True)[-1]
