"""A comparator that is neither arm of a comparison: a result of one arm against placebo,
sham, observation, usual care, no treatment or an unnamed control answers another question
than which of the question's two arms did better (``research.text.frame`` gives the arms)."""

from __future__ import annotations

import re

from research.text.frame import QuestionFrame, arms_named

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
