"""Short forms a document defines ("local recurrences (LR)") and what they stand for.

An abstract names its outcome in full once and by its short form afterwards: "12 (3.4%) LR
were observed in arm 1 and 16 (4.4%) in arm 2" reports recurrences, though no word of it says
so. Read with the document's definitions, the sentence names its outcome
(``research.text.findings.outcome_family``).

The definitions are found by the algorithm of Schwartz & Hearst, "A simple algorithm for
identifying abbreviation definitions in biomedical text", Pacific Symposium on Biocomputing
2003:451-462: a short form in parentheses after its long form; the long form is the shortest
run of the words before it, at most ``min(|SF| + 5, 2·|SF|)`` words, in which every letter or
digit of the short form occurs in order, its first at the start of a word.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

# "long form (SF)" or "long form (SF;" / "(SF," — a short form of 2-10 characters that starts
# with a letter or digit, holds a letter and is one word
_DEFINED = re.compile(r"\(\s*([A-Za-z0-9][\w-]{1,9})\s*[;,)]")
_WORD = re.compile(r"[^\s()]+")


def _long_form(short: str, before: str) -> str:
    """The shortest tail of ``before`` that the short form abbreviates (Schwartz & Hearst's
    backward match), "" when none does."""
    words = _WORD.findall(before)
    limit = min(len(short) + 5, 2 * len(short))
    words = words[-limit:]
    candidate = " ".join(words)
    si, li = len(short) - 1, len(candidate) - 1
    while si >= 0:
        c = short[si].lower()
        if not c.isalnum():
            si -= 1
            continue
        # the first character of the short form must start a word of the long form
        while li >= 0 and (
            candidate[li].lower() != c or (si == 0 and li > 0 and candidate[li - 1].isalnum())
        ):
            li -= 1
        if li < 0:
            return ""
        si, li = si - 1, li - 1
    start = candidate.rfind(" ", 0, li + 1) + 1
    long = candidate[start:].strip(" ,;:")
    return long if len(long) > len(short) else ""


def short_forms(text: str) -> dict[str, str]:
    """``short form → long form`` for every definition "long form (SF)" in ``text`` (module
    docstring), first definition kept; a short form written in lower case only is no short form.
    Example: "the incidence of local recurrences (LR) and overall survival (OAS)" →
    ``{"LR": "local recurrences", "OAS": "overall survival"}``."""
    out: dict[str, str] = {}
    for m in _DEFINED.finditer(text or ""):
        short = m.group(1)
        if short in out or short.islower() or not any(ch.isalpha() for ch in short):
            continue
        long = _long_form(short, text[max(0, m.start() - 200) : m.start()])
        if long:
            out[short] = long
    return out


def spelled_out(sentence: str, forms: Mapping[str, str]) -> str:
    """``sentence`` with each short form of ``forms`` it uses followed by its long form in
    parentheses ("12 LR" → "12 LR (local recurrences)"): for reading what it reports,
    never for quoting."""
    for short, long in forms.items():
        sentence = re.sub(
            rf"(?<![\w-]){re.escape(short)}(?![\w-])", f"{short} ({long})", sentence, count=1
        )
    return sentence
