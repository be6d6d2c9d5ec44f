"""Weak replies: JSON that fits the step's schema and says nothing.

A small local model often answers with an empty string, a list of one query repeated, or an
outline whose only heading is "Introduction". Each helper here returns the usable part of such
a reply or raises ``InvalidOutput`` with a reason the model can act on; the engine's ``post``
functions call them, so ``structured.call_structured`` re-asks once with that reason and the
engine then answers the step offline (``llm.fallback``).
"""

from __future__ import annotations

import re

from research.engines.base import PersonaList
from research.llm.errors import InvalidOutput
from research.models import Perspective

_SPACE_RE = re.compile(r"\s+")
BAD_HEADINGS = {"references", "see also", "introduction", "external links"}


def _norm(text: str) -> str:
    return _SPACE_RE.sub(" ", text).strip().lower().rstrip("?.!")


def usable_queries(queries: list[str], limit: int) -> list[str]:
    """The distinct non-empty queries (first ``limit``, ≤ 200 characters each).

    Raises:
        InvalidOutput: no query, or several given that all say the same thing.
    """
    given = [q.strip()[:200] for q in queries if q and q.strip()]
    distinct = list({_norm(q): q for q in reversed(given)}.values())[::-1]
    if not distinct:
        raise InvalidOutput("the query list is empty; give 1–3 different search queries")
    if len(given) > 1 and len(distinct) == 1:
        raise InvalidOutput(
            f"the queries repeat one query ({distinct[0][:80]!r}); give different search queries"
        )
    return distinct[:limit]


def usable_headings(headings: list[str]) -> list[str]:
    """The distinct headings that name content (not References, Introduction…).

    Raises:
        InvalidOutput: none is left.
    """
    out = list(
        dict.fromkeys(h.strip() for h in headings if h.strip() and _norm(h) not in BAD_HEADINGS)
    )
    if not out:
        raise InvalidOutput(
            "no usable section heading; name the sections of the topic (not References, "
            "Introduction or See also)"
        )
    return out


def usable_personas(reply: PersonaList) -> list[Perspective]:
    """The perspectives with a name, each name once.

    Raises:
        InvalidOutput: none has a name.
    """
    seen: set[str] = set()
    out = []
    for p in reply.perspectives:
        name = p.name.strip()
        if name and _norm(name) not in seen:
            seen.add(_norm(name))
            out.append(p)
    if not out:
        raise InvalidOutput("no perspective has a name; give each a name and a focus")
    return out


def nonempty(text: str, step: str) -> str:
    """``text`` stripped.

    Raises:
        InvalidOutput: it is empty.
    """
    text = text.strip()
    if not text:
        raise InvalidOutput(f"{step}: the text is empty; write it")
    return text
