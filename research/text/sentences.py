"""Sentences of a text: rule-based splitting, whole-sentence rules, sentence kinds.

``split_sentences`` cuts prose (and one-field-per-line records such as ClinicalTrials.gov's) into
sentences; ``is_whole`` says whether a sentence can be quoted as it stands; ``STUDY_DESIGN`` and
``ANAPHORA`` mark sentences that report no finding or point back at what they do not name.
"""

from __future__ import annotations

import re
import unicodedata

from research.citations import CITE_PATTERN
from research.models import SearchResult
from research.text.words import clean, strip_citations

_ABBREV = frozenset(
    """e.g i.e et al vs dr mr mrs ms prof fig figs no nos approx ca inc ltd co jr sr st
u.s u.k ref refs vol pp eq ed eds dept univ gen lt col sgt mt ft a.m p.m""".split()
)

_LABELS = (
    r"Background|Objectives?|Methods?|Results?|Conclusions?|Purpose|Aims?|Introduction|Design|Setting|"
    r"Participants|Interventions?|Findings|Interpretation|Context|Importance|Summary|"
    r"Official title|Brief summary|Status|Study type|Conditions?|Description|Detailed description|"
    r"Primary outcomes?|Secondary outcomes?|"
    r"(?:Patients|Materials|Subjects|Methods) (?:and|&) (?:Methods|Results)"
)

_LABEL = re.compile(
    rf"^(?:(?:[A-Z][A-Z &/-]{{2,30}}|(?i:{_LABELS}))\s*:\s+(?=\S)|(?i:{_LABELS})\s+(?=[A-Z][a-z]))"
)

# A sentence's end: its mark, closing quotes and citations, then a space and a capital (or the end
# of the line), or a page's glued join of two sentences ("not recommended.Febrile seizures …",
# "on 24 May 2031.Between …")
_BOUNDARY = re.compile(
    r"[.!?…]+[\"'”’)\]]*(?:" + CITE_PATTERN + r")*"
    r"(?=\s+[A-Z0-9\"'“(\[]|\s*$|(?:(?<=[a-z][a-z][.!?])|(?<=\d\d[.!?]))[A-Z][a-z])"
)

_ELLIPSIS_AFTER_END = re.compile(
    r"([.!?])\s*(?:\.\s?\.\s?\.|…)(?=\s|$)"
)  # "morning. ..." -> "morning."

# A sentence that says how a study was set up or what it aimed at, not what it found ("were
# randomized to receive…", "we aimed to assess…", "the purpose of this study was…"): report
# writing ranks such sentences lower wherever it looks for findings (sections, lead).
STUDY_DESIGN = re.compile(
    r"\b(?:were (?:randomi[sz]ed|randomly assigned|evaluated|enrolled)|we (?:evaluated|assessed|investigated|"
    r"compared|aimed|examined|hypothesi[sz]ed?)|(?:was|is) designed|the (?:purpose|aim|objective) of this study|"
    r"(?:is|was) a (?:prospective|multicenter|randomi[sz]ed)[^.]{0,40}trial|(?:will|to) (?:receive|determine|"
    r"evaluate))\b",
    re.I,
)

# A sentence that points back at something it does not name ("as given in this regimen", "these
# patients", "the latter"): whole in its abstract, unclear as a report's lead, where it stands
# alone. The lead ranks such sentences lower (``lead.question_lead``).
ANAPHORA = re.compile(
    r"\b(?:(?:this|these|such|the present|the same)\s+(?:[\w-]+\s+){0,2}?(?:regimens?|settings?|populations?|"
    r"cohorts?|combinations?|approach(?:es)?|strategy|strategies|schedules?|groups?|patients|subgroups?|"
    r"studies|study|trials?|analys[ie]s|doses?|arms?)|the (?:former|latter))\b",
    re.I,
)


def split_sentences(text: str, min_words: int = 3) -> list[str]:
    """Split prose into sentences (rule based; keeps trailing ``[n]`` markers with their sentence).

    Line breaks always end a sentence (structured records such as ClinicalTrials.gov fields are
    one per line), and so does a live blog's timestamp, which is cut ("03 Jun, 2023, 11:27 AM
    IST"). Within a line, a boundary is ``.``, ``!``, ``?`` or ``…`` (plus closing
    quotes/brackets and citation markers) followed by whitespace and an upper-case letter,
    digit, quote or bracket, unless the word before it is a known abbreviation or a
    single-letter initial. Field labels such as ``BACKGROUND:`` or ``Official title:`` are
    removed; fragments under ``min_words`` words join the previous sentence of the same line.

    Returns:
        Sentences in order (empty list for empty text).
    """
    out: list[str] = []
    for line in _STAMP.sub("\n", str(text or "")).splitlines():
        out += _split_line(line, min_words)
    return out


# A live blog's timestamp between two posts ("… the minister added.03 Jun, 2023, 11:27 AM IST The
# accident …"): page furniture that also ends a post, so it is cut and ends a sentence
_STAMP = re.compile(
    r"\s*\b\d{1,2} (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*,? \d{4},? "
    r"\d{1,2}:\d{2}(?:\s?[AP]M)?(?: [A-Z]{2,4})?\s*·?\s*"
)


def _split_line(line: str, min_words: int) -> list[str]:
    text = _ELLIPSIS_AFTER_END.sub(r"\1", clean(line)).replace("….", "…")
    if not text:
        return []
    pieces: list[str] = []
    start = 0
    for m in _BOUNDARY.finditer(text):
        before = text[start : m.start()].rsplit(" ", 1)[-1].lower().lstrip("([\"'")
        if before in _ABBREV or (len(before) == 1 and before.isalpha()):
            continue
        # "₨. 1.75 billion": a currency sign's abbreviating point, not a sentence's end
        if before and unicodedata.category(before[-1]) == "Sc":
            continue
        pieces.append(text[start : m.end()].strip())
        start = m.end()
    if text[start:].strip():
        pieces.append(text[start:].strip())
    merged: list[str] = []
    for s in pieces:
        s = _LABEL.sub("", re.sub(r"^(?:\.{3}|…)\s*", "", s)).strip()
        if not s:
            continue
        if merged and len(s.split()) < min_words:
            merged[-1] = f"{merged[-1]} {s}"
        else:
            merged.append(s)
    return merged


def ensure_period(sentence: str) -> str:
    """The sentence with terminal punctuation (adds ``.`` if missing)."""
    s = sentence.rstrip()
    return s if s[-1:] in ".!?…" else f"{s}."


def clip(text: str, max_chars: int) -> str:
    """``text`` cut at a word boundary to ≤ ``max_chars`` characters, with ``…`` when cut."""
    text = clean(text)
    if len(text) <= max_chars:
        return text
    cut = text[: max_chars - 1].rsplit(" ", 1)[0].rstrip(",;:")
    return f"{cut}…"


def sentences_of(
    result: SearchResult, use_text: bool = False, max_sentences: int = 40
) -> list[str]:
    """Sentences a result shows to engines: its snippets (the full ``text`` only when there are
    no snippets, or when ``use_text``); the title when nothing else exists."""
    parts = list(result.snippets)
    if use_text or not any(p.strip() for p in parts):
        parts.append(result.text)
    sents = [s for p in parts for s in split_sentences(p)]
    sents = list(dict.fromkeys(sents))[:max_sentences]
    return sents or ([clean(result.title)] if result.title.strip() else [])


_BOILERPLATE = re.compile(
    r"^(?:discover|learn|explore|click|tap|subscribe|sign up|sign in|log in|read more|follow us|share|copy|"
    r"watch|listen|download|advertisement|outdated browser|this article is|all rights reserved|support our|"
    r"subscribe to|get the latest|update your browser|enable javascript)\b|\bsubscription to receive\b",
    re.I,
)


# An entry of a page's reference list: a quoted title, then the publisher ('"Examplia Floods:
# Leaders Pay Condolences". Example News.')
_REFERENCE = re.compile(r"^[\"“][^\"“”]{8,}[\"”]\s*[.,]\s*(?:[A-Z][\w&'’.-]*\s*){1,5}\.?$")


def is_boilerplate(sentence: str) -> bool:
    """Web page furniture rather than content ('Discover the real story...', 'Click here...',
    a reference-list entry: a quoted title and its publisher)."""
    s = sentence.strip()
    return bool(_BOILERPLATE.match(s) or _REFERENCE.match(s))


MIN_WORDS, MAX_WORDS = 6, 80  # a whole sentence's length in words
_WHOLE_START = re.compile(r"^[A-Z0-9\"'“(\[]")
_WHOLE_END = re.compile(r"[.!?][\"'”’)]?$")
_CUT = re.compile(r"…|\.\.\.|\. \. \.")


def is_whole_form(sentence: str) -> bool:
    """True when ``sentence`` has the form of a whole sentence: ``MIN_WORDS``–``MAX_WORDS`` words,
    a capitalised start, terminal ``.!?``, no ``…``/``...`` cut (snippet truncation leaves those)
    and balanced brackets — a report quotes a passage as it stands, so a fragment is never one."""
    n = len(sentence.split())
    if not (MIN_WORDS <= n <= MAX_WORDS) or _CUT.search(sentence):
        return False
    if not _WHOLE_START.match(sentence) or not _WHOLE_END.search(sentence):
        return False
    return sentence.count("(") == sentence.count(")") and sentence.count("[") == sentence.count("]")


def is_whole(sentence: str) -> bool:
    """True for a whole sentence (``is_whole_form``, citation markers removed) that is not web-page
    furniture (``is_boilerplate``)."""
    s = strip_citations(sentence).strip()
    return is_whole_form(s) and not is_boilerplate(s)
