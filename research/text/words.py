"""Words of a text: stop words, content words, comparison keys, topic words, heading case.

No model here: regular expressions plus scikit-learn's ``ENGLISH_STOP_WORDS`` (the Glasgow IR
group's list) and a list of words that carry no topic in questions, queries and headings
(``GENERIC``). Every engine, the evidence judgement, the report pipeline and follow-ups use these
one definitions.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

from research.citations import CITE_RE
from research.text.asking import restate

CITE = CITE_RE


def _sklearn_stop_words() -> frozenset[str]:
    """scikit-learn's ``ENGLISH_STOP_WORDS`` (the Glasgow IR group's list), read from its data
    module by file: ``import sklearn`` runs the package's init (scipy, pandas: ~3 s on 2 cores),
    which every importer of this module (the report pipeline of every engine) would pay for a
    word list; ``CountVectorizer`` is imported by ``ranked_phrases`` alone, where it is used."""
    spec = importlib.util.find_spec("sklearn")
    if spec is None or spec.origin is None:
        raise ImportError("scikit-learn is not installed (a declared dependency)")
    path = Path(spec.origin).parent / "feature_extraction" / "_stop_words.py"
    data = importlib.util.spec_from_file_location("_sklearn_stop_words", path)
    if data is None or data.loader is None:
        raise ImportError(f"scikit-learn's stop-word list is missing at {path}")
    module = importlib.util.module_from_spec(data)
    data.loader.exec_module(module)
    return frozenset(module.ENGLISH_STOP_WORDS)


ENGLISH_STOP_WORDS = _sklearn_stop_words()

# Words that carry no topic in questions, queries and headings (added to sklearn's list).
GENERIC = frozenset(
    """
able according also although among analysis analyses approach associated available based
basic believe besides compared comparison conclusion conclusions data did does doing during
effect effects evidence example explain factors far fig findings following found fundamental
given help however include included includes including information key known large lead led
like likely literature main make making many may method methods might new number objective
observed obtained order overall p paper particular perhaps possible potential present
presented purpose questions really related relation relevant report reported reports research
result results review role said say says shown show shows showed significant significantly
similar sources specific studied studies study tell term terms thank thanks total type types
use used uses using various versus via vs way ways well whether within without year years
topic topics fact facts entity entities figures dates definition definitions case cases bear add adds
""".split()
)

STOP = (
    frozenset(ENGLISH_STOP_WORDS)
    | GENERIC
    | frozenset({"s", "t", "don", "isn", "doesn", "et", "al"})
)

# Heading-level generic nouns: fine inside a phrase, never a whole heading on their own.
WEAK_HEAD = frozenset(
    """patients patient group groups trial trials treatment treatments therapy
months weeks days women men people case cases rate rates level levels time times outcome outcomes
arm arms cohort participants subjects value values response""".split()
)

SMALL_WORDS = frozenset(
    "a an and as at but by for from in into of on or over the to vs with".split()
)

_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9+\-/']*[A-Za-z0-9+]|[A-Za-z0-9]")

_NUMBER = re.compile(r"(?<![A-Za-z])[-+]?\d+(?:[.,]\d+)*(?:\s?%)?")

_NEGATION = re.compile(
    r"\b(?:not|never|neither|nor|cannot|fail(?:s|ed)? to|lack(?:s|ed)? of|unable to|\w+n't|"
    r"no (?:significant|statistically|difference|benefit|evidence|improvement|effect|association|"
    r"increase|reduction|change|advantage|impact|role|correlation|relationship))\b",
    re.I,
)


def clean(text: str) -> str:
    """Collapse whitespace runs to one space and strip."""
    return " ".join(str(text or "").split())


def strip_citations(text: str) -> str:
    """Text without ``[n]`` markers (whitespace tidied)."""
    return clean(re.sub(r"\s+([.,;:!?])", r"\1", CITE.sub("", text)))


def norm_key(text: str) -> str:
    """Comparison key: lower-case alphanumerics only (citations removed)."""
    return " ".join(re.findall(r"[a-z0-9]+", CITE.sub("", text).lower()))


def content_words(text: str) -> list[str]:
    """Content words of ``text`` in first-appearance order, original case, no duplicates.

    A content word is not a stop word (sklearn list + ``GENERIC``), and has ≥ 3 characters or
    mixes letters and digits (``EGFR2``).
    """
    seen: set[str] = set()
    out = []
    for w in _WORD.findall(text or ""):
        w = w.strip("'")
        low = w.lower()
        if low in STOP or low in seen or low.isdigit():
            continue
        if len(low) < 3 and not (re.search(r"\d", low) and re.search(r"[a-z]", low)):
            continue
        seen.add(low)
        out.append(w)
    return out


def word_key(word: str) -> str:
    """A word with case, hyphens and a possessive 's removed (``IL-6`` = ``il6``,
    ``Hawkins's`` = ``hawkins``)."""
    return re.sub(r"[^a-z0-9]", "", re.sub(r"['’]s$", "", word.lower()))


def title_case(phrase: str) -> str:
    """Heading case: capitalise each word (hyphen parts too), keep acronyms/mixed case (EGFR,
    mRNA) and lower-case small words inside the phrase."""
    words = clean(phrase).split(" ")
    out = []
    for i, w in enumerate(words):
        if any(c.isupper() for c in w[1:]) or any(c.isdigit() for c in w):
            out.append(w)
        elif 0 < i < len(words) - 1 and w.lower() in SMALL_WORDS:
            out.append(w.lower())
        else:
            out.append("-".join(p[:1].upper() + p[1:] for p in w.split("-")))
    return " ".join(out)


def numbers(text: str) -> list[str]:
    """Numeric values in ``text`` (``51%``, ``0.54``, ``1,694``), citation markers excluded."""
    return [n.replace(" ", "") for n in _NUMBER.findall(CITE.sub(" ", text))]


def is_negated(text: str) -> bool:
    """True when ``text`` contains a negation cue (not, no, never, without, fail to, n't ...)."""
    return bool(_NEGATION.search(text))


def subject_of(topic: str) -> str:
    """The topic as a noun phrase for templates: whitespace collapsed, trailing ``?``/``.`` off,
    a question read as the topic it asks about ("What caused X?" → "X":
    ``research.text.asking.restate``)."""
    return restate(topic)


def aspect_of(text: str, topic: str) -> str:
    """The content words of ``text`` that are not the topic's: what a question or step is
    about beyond the topic ("safety profile adverse events" for a safety question). Falls back
    to ``text`` when nothing is left."""
    topic_keys = {word_key(p) for w in content_words(topic) for p in [w, *w.split("-")]}
    words = [w for w in content_words(strip_citations(text)) if word_key(w) not in topic_keys]
    return " ".join(words) or clean(text)


def overlap(a: str, b: str) -> float:
    """Jaccard overlap of the two texts' content-word sets (0..1)."""
    wa = {word_key(w) for w in content_words(a)}
    wb = {word_key(w) for w in content_words(b)}
    return len(wa & wb) / len(wa | wb) if wa and wb else 0.0


def topic_keys(*texts: str) -> set[str]:
    """``word_key`` forms of the texts' content words and of their hyphen parts (for
    ``ranked_phrases(exclude=...)``: 'EGFR-mutant' gives egfrmutant, egfr, mutant)."""
    return {word_key(p) for t in texts for w in content_words(t) for p in [w, *w.split("-")]} - {""}


def topic_words(topic: str) -> list[set[str]]:
    """The topic's content words, each as the set of ``word_key`` forms that count as a mention
    (the word and its hyphen parts of ≥ 3 characters: ``EGFR-mutant`` → egfrmutant, egfr,
    positive)."""
    out = []
    for w in content_words(subject_of(topic)):
        forms = {word_key(w)} | {word_key(p) for p in w.split("-") if len(word_key(p)) >= 3}
        out.append(forms - {""})
    return [f for f in out if f]


def mentions_topic(text: str, words: list[set[str]]) -> bool:
    """More than half of the topic's content words (``topic_words``) occur in ``text`` (all of
    them when the topic has one or two)."""
    if not words:
        return True
    have = {word_key(w) for w in re.findall(r"[A-Za-z0-9][A-Za-z0-9'’-]*", text)}
    have |= {word_key(p) for w in list(have) for p in re.split(r"-", w)}
    hits = sum(bool(forms & have) for forms in words)
    return hits > len(words) / 2 if len(words) > 2 else hits == len(words)
