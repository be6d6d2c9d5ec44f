"""A source's text as the evidence judgement reads it: whole-sentence passages with their
character offsets.

``split_passages(text, limit=MAX_PASSAGES) → list[Passage]``, ``Passage(text, start, end)``: the
sentences of ``text`` (``research.text.split_sentences``) in text order, each with its offsets
``[start, end)`` in ``text``; a trial registration left after a passage's last sentence
(``NCT…``, clinicaltrials.gov) is cut off, and a fragment (``research.text.is_whole_form``) or a
page's furniture (``research.text.is_boilerplate``) is no passage. At most ``MAX_PASSAGES``
sentences of a source's text are read; ``research.evidence.judge.score_passages`` scores them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from research.text import is_boilerplate, is_whole_form, split_sentences

MAX_PASSAGES = 60  # sentences of a source's text that are read


@dataclass(frozen=True)
class Passage:
    """A whole-sentence passage of a text: ``text`` and its character offsets ``[start, end)``."""

    text: str
    start: int
    end: int


# A trial registration left after a passage's last sentence ("… disease. NCT00309556,
# www.clinicaltrials.gov.", "… necessary. clinicaltrials. gov (NCT00711529)."): not part of
# what the passage states.
_REGISTRATION = re.compile(
    r"(?<=[.!?])\s+[^.!?]*\b(?:NCT\d{8}|clinicaltrials\.\s?gov)\b[^!?]*$", re.I
)


def split_passages(text: str, limit: int = MAX_PASSAGES) -> list[Passage]:
    """Whole-sentence passages of ``text`` with their offsets, in text order, at most ``limit``.

    Whole: ``research.text.is_whole_form`` — a report quotes a passage as it stands, so a
    fragment is never one."""
    out: list[Passage] = []
    pos = 0
    for sent in split_sentences(text or ""):
        start = text.find(sent, pos)
        if start < 0:
            start = text.find(sent[:40], pos)
        if start < 0:
            continue
        end = start + len(sent)
        pos = end
        tail = _REGISTRATION.search(sent)
        if tail:
            sent = sent[: tail.start()].rstrip()
            end = start + len(sent)
        if not is_whole_form(sent) or is_boilerplate(sent):
            continue  # a fragment, or a page's furniture ("Discover the real story of X.")
        out.append(Passage(sent, start, end))
        if len(out) >= limit:
            break
    return out
