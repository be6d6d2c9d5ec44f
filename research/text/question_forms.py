"""Ways analysts type a treatment question, rewritten to the plain form the question frame reads.

``research.text.frame.frame_question`` reads "A versus B in S", "X for Y in S" and names. Analysts
also type the same questions other ways; ``plain_form`` rewrites those (a topic phrase, after
``asking.restate``) so that the frame's rules see one form:

* a regimen: "A combined with B", "A in combination with B" → "A plus B";
* leaving a treatment out: "X be omitted after S" (from "Can X be omitted after S?"), "omission
  of X after S", "omitting X after S" → "X versus no X after S";
* a better outcome against a comparator: "A improve survival over B in S" (from "Does A improve
  survival over B in S?") → "A versus B in S";
* what is done for a condition: "preventing X after S", "treating X in S", "management of X" →
  "interventions to prevent X after S" (an open arm: any intervention for X).

``asks_how_it_works``, ``asks_what_happened`` and ``appositive_name`` read forms that decide a
kind: "How does a top-four primary work?" asks what a thing is and how it works (``general``,
even when its noun names an event); "What happened during X?" asks about an event, whatever X's
noun ("… flight test"); "Ada Lovelace, English mathematician" is a name with its description
(``person``). Deterministic; never raise.
"""

from __future__ import annotations

import re

_COMBINED = re.compile(r"\s+(?:combined\s+with|in\s+combination\s+with)\s+", re.I)
# "X be (safely) omitted …", the body of "Can X be omitted …?"
_OMITTED = re.compile(
    r"^(.+?)\s+be\s+(?:safely\s+)?(?:omitted|avoided|skipped|withheld|forgone|spared|dropped)"
    r"(?:\s+(.*))?$",
    re.I,
)
_OMISSION = re.compile(r"^(?:the\s+)?(?:omission\s+of|omitting|forgoing|avoiding)\s+(.+)$", re.I)
# Where a treatment's (or a condition's) name ends when the occasion or population follows it
OCCASION_WORDS = r"in|among|after|following|during|with|for|at|on"
_OCCASION = re.compile(rf"\s+(?=(?:{OCCASION_WORDS})\s)", re.I)
_OUTCOME_VERB = (
    r"(?:improves?|increases?|prolongs?|extends?|reduces?|lowers?|decreases?|prevents?|"
    r"benefits?|helps?)"
)
# "A improve(s) survival over B …": up to three outcome words, then the comparator
_OVER = re.compile(
    rf"^(.+?)\s+{_OUTCOME_VERB}\s+((?:[\w-]+\s+){{0,3}}?)(?:over|relative\s+to|compared\s+"
    r"(?:with|to))\s+(.+)$",
    re.I,
)
# Outcomes every efficacy question asks about: said by the comparison itself
_PRIMARY_OUTCOME = re.compile(
    r"^(?:overall\s+|disease-free\s+|progression-free\s+)?(?:survival|outcomes?|prognosis|"
    r"mortality|results?|efficacy)$",
    re.I,
)
_DOING = {
    "preventing": "prevent",
    "prevention of": "prevent",
    "treating": "treat",
    "treatment of": "treat",
    "managing": "manage",
    "management of": "manage",
    "reducing": "reduce",
    "relieving": "relieve",
    "controlling": "control",
}
_DOING_RX = re.compile(rf"^(?:the\s+)?({'|'.join(_DOING)})\s+(.+)$", re.I)
_HOW_WORKS = re.compile(r"^how\s+(?:does|do|did)\s+(.+?)\s+work\b", re.I)
_WHAT_HAPPENED = re.compile(r"^what\s+happened\b", re.I)
# "Ada Lovelace, English mathematician": two to five capitalised words, a comma, a description
_APPOSITIVE = re.compile(r"^((?:[A-Z][\w'’.-]*\s+){1,4}[A-Z][\w'’.-]*)\s*,\s+[a-z\w]", re.U)


def plain_form(body: str) -> str:
    """``body`` (a topic phrase) in the plain form the frame reads (module doc); unchanged when
    it is typed in none of the other forms."""
    body = _COMBINED.sub(" plus ", body)
    m = _OMITTED.match(body) or _OMISSION.match(body)
    if m:
        rest = " ".join(g for g in m.groups() if g)
        parts = _OCCASION.split(rest, maxsplit=1)
        treatment = parts[0].strip(" ,")
        after = f" {parts[1].strip()}" if len(parts) > 1 else ""
        return f"{treatment} versus no {treatment}{after}"
    m = _OVER.match(body)
    if m and len(m.group(1).split()) <= 8:
        outcome = m.group(2).strip()
        pieces = _OCCASION.split(m.group(3).strip(), maxsplit=1)
        what = f" for {outcome}" if outcome and not _PRIMARY_OUTCOME.match(outcome) else ""
        tail = f" {pieces[1]}" if len(pieces) > 1 else ""
        return f"{m.group(1).strip()} versus {pieces[0]}{what}{tail}"
    m = _DOING_RX.match(body)
    if m:
        return f"interventions to {_DOING[' '.join(m.group(1).lower().split())]} {m.group(2)}"
    return body


def asks_how_it_works(question: str) -> bool:
    """True for "How does/do X work?": what a thing is and how it works is asked."""
    return bool(_HOW_WORKS.match(question.strip()))


def asks_what_happened(question: str) -> bool:
    """True for "What happened …?": the question is about an event, whatever its noun."""
    return bool(_WHAT_HAPPENED.match(question.strip()))


def appositive_name(topic: str) -> str:
    """The name of "Name Surname, description" (two to five capitalised words before a comma
    and a lower-case description), else ""."""
    m = _APPOSITIVE.match(topic.strip())
    if m is None:
        return ""
    described = any(w[:1].islower() for w in topic.strip()[m.end(1) :].split())
    return m.group(1) if described else ""
