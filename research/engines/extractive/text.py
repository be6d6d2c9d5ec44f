"""Text statistics for the extractive engine: sentences, content words, key phrases, numbers,
negation cues, title case.

No model here: regular expressions plus scikit-learn's ``ENGLISH_STOP_WORDS`` and
``CountVectorizer`` (key-phrase counting). Key-phrase candidates follow RAKE (Rose et al. 2010,
"Automatic keyword extraction from individual documents", §1.2): maximal runs of content words
between stop words and punctuation; ranking across groups is class-based TF-IDF (c-TF-IDF, as in
Grootendorst 2022, BERTopic §3.3).
"""

from __future__ import annotations

import importlib.util
import re
from collections import Counter
from pathlib import Path

import numpy as np

from research.citations import CITE_PATTERN, CITE_RE
from research.models import SearchResult


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

_ABBREV = frozenset(
    """e.g i.e et al vs dr mr mrs ms prof fig figs no nos approx ca inc ltd co jr sr st
u.s u.k ref refs vol pp eq ed eds dept univ gen lt col sgt mt ft""".split()
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
_BOUNDARY = re.compile(r"[.!?…]+[\"'”’)\]]*(?:" + CITE_PATTERN + r")*(?=\s+[A-Z0-9\"'“(\[]|\s*$)")
CITE = CITE_RE
_ELLIPSIS_AFTER_END = re.compile(
    r"([.!?])\s*(?:\.\s?\.\s?\.|…)(?=\s|$)"
)  # "morning. ..." -> "morning."
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9+\-/']*[A-Za-z0-9+]|[A-Za-z0-9]")
_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9+\-']*[A-Za-z0-9+]|[A-Za-z0-9]|[^\sA-Za-z0-9]")
_NUMBER = re.compile(r"(?<![A-Za-z])[-+]?\d+(?:[.,]\d+)*(?:\s?%)?")
_NEGATION = re.compile(
    r"\b(?:not|never|neither|nor|cannot|fail(?:s|ed)? to|lack(?:s|ed)? of|unable to|\w+n't|"
    r"no (?:significant|statistically|difference|benefit|evidence|improvement|effect|association|"
    r"increase|reduction|change|advantage|impact|role|correlation|relationship))\b",
    re.I,
)
_VERBISH = re.compile(r"[a-z]{3,}(?:ed|ing)$")
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
# alone. The lead ranks such sentences lower (``writing.question_lead``).
ANAPHORA = re.compile(
    r"\b(?:(?:this|these|such|the present|the same)\s+(?:[\w-]+\s+){0,2}?(?:regimens?|settings?|populations?|"
    r"cohorts?|combinations?|approach(?:es)?|strategy|strategies|schedules?|groups?|patients|subgroups?|"
    r"studies|study|trials?|analys[ie]s|doses?|arms?)|the (?:former|latter))\b",
    re.I,
)
SMALL_WORDS = frozenset(
    "a an and as at but by for from in into of on or over the to vs with".split()
)


def clean(text: str) -> str:
    """Collapse whitespace runs to one space and strip."""
    return " ".join(str(text or "").split())


def split_sentences(text: str, min_words: int = 3) -> list[str]:
    """Split prose into sentences (rule based; keeps trailing ``[n]`` markers with their sentence).

    Line breaks always end a sentence (structured records such as ClinicalTrials.gov fields are
    one per line). Within a line, a boundary is ``.``, ``!``, ``?`` or ``…`` (plus closing
    quotes/brackets and citation markers) followed by whitespace and an upper-case letter,
    digit, quote or bracket, unless the word before it is a known abbreviation or a
    single-letter initial. Field labels such as ``BACKGROUND:`` or ``Official title:`` are
    removed; fragments under ``min_words`` words join the previous sentence of the same line.

    Returns:
        Sentences in order (empty list for empty text).
    """
    out: list[str] = []
    for line in str(text or "").splitlines():
        out += _split_line(line, min_words)
    return out


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


def strip_citations(text: str) -> str:
    """Text without ``[n]`` markers (whitespace tidied)."""
    return clean(re.sub(r"\s+([.,;:!?])", r"\1", CITE.sub("", text)))


def norm_key(text: str) -> str:
    """Comparison key: lower-case alphanumerics only (citations removed)."""
    return " ".join(re.findall(r"[a-z0-9]+", CITE.sub("", text).lower()))


def content_words(text: str) -> list[str]:
    """Content words of ``text`` in first-appearance order, original case, no duplicates.

    A content word is not a stop word (sklearn list + ``GENERIC``), and has ≥ 3 characters or
    mixes letters and digits (``HER2``).
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


def _is_content(tok: str) -> bool:
    low = tok.lower()
    if low in STOP or not re.match(r"[a-z0-9]", low) or not re.search(r"[a-z]", low):
        return False
    return len(low) >= 3 or bool(re.search(r"\d", low) and re.search(r"[a-z]", low))


def candidate_phrases(text: str, max_words: int = 4) -> list[tuple[str, str]]:
    """RAKE candidates: ``(key, surface)`` for each run of content words (1–``max_words`` long).

    Longer runs are skipped (their fragments make poor names); trailing verb forms (-ed, -ing)
    are trimmed; phrases made only of ``WEAK_HEAD`` nouns are dropped. ``key`` is lower case.
    """
    out: list[tuple[str, str]] = []
    for sentence in split_sentences(text, min_words=1) or [text]:
        run: list[str] = []
        for tok in [*_TOKEN.findall(CITE.sub(" ", sentence)), "."]:
            if _is_content(tok):
                run.append(tok)
                continue
            if run:
                for g in [run] if len(run) <= max_words else []:
                    while len(g) > 1 and (_VERBISH.search(g[-1]) or g[-1].lower().endswith("ly")):
                        g = g[:-1]  # "breast cancer treated" -> "breast cancer"
                    while (
                        len(g) > 2 and _VERBISH.search(g[0]) or len(g) > 1 and g[0].endswith("ing")
                    ):
                        g = g[1:]  # "assessed cardiac safety" -> "cardiac safety"
                    if all(w.lower() in WEAK_HEAD for w in g) or (
                        len(g) == 1 and _VERBISH.search(g[0])
                    ):
                        continue
                    out.append((" ".join(w.lower() for w in g), " ".join(g)))
            run = []
    return out


def ranked_phrases(
    groups: list[str],
    top: int = 5,
    exclude: set[str] | frozenset = frozenset(),
) -> list[list[str]]:
    """Top key phrases per text group, as surface strings (most frequent surface form).

    Score: c-TF-IDF (term frequency within the group × log(1 + mean group size / frequency over
    all groups)), × 1.25 per extra word (multi-word phrases name things better). A phrase whose
    words are all in ``exclude`` (e.g. the topic's words) is skipped. Ties break
    alphabetically, so the result is deterministic. ``exclude`` holds ``word_key`` forms.

    Returns:
        One list per group (possibly empty).
    """
    if not groups:
        return []
    surfaces: dict[str, Counter] = {}

    def analyzer(doc: str) -> list[str]:
        keys = []
        for key, surface in candidate_phrases(doc):
            if {word_key(w) for w in key.split()} <= exclude:
                continue
            surfaces.setdefault(key, Counter())[surface] += 1
            keys.append(key)
        return keys

    from sklearn.feature_extraction.text import CountVectorizer  # noqa: PLC0415 - ~3 s package init

    vec = CountVectorizer(analyzer=analyzer)
    try:
        counts = vec.fit_transform(groups).toarray().astype(float)
    except ValueError:  # empty vocabulary
        return [[] for _ in groups]
    vocab = vec.get_feature_names_out()
    tf = counts / np.maximum(counts.sum(axis=1, keepdims=True), 1.0)
    avg = counts.sum() / len(groups)
    idf = np.log(1.0 + avg / np.maximum(counts.sum(axis=0), 1.0))
    length_bonus = np.array([1.25 ** (len(k.split()) - 1) for k in vocab])
    score = tf * idf * length_bonus * (counts > 0)
    out = []
    for row in score:
        order = sorted(
            (i for i in np.flatnonzero(row > 0)), key=lambda i: (-round(row[i], 9), vocab[i])
        )
        picked: list[str] = []
        for i in order:
            surface = max(surfaces[vocab[i]].items(), key=lambda kv: (kv[1], kv[0]))[0]
            picked.append(surface)
            if len(picked) >= top:
                break
        out.append(picked)
    return out


def title_case(phrase: str) -> str:
    """Heading case: capitalise each word (hyphen parts too), keep acronyms/mixed case (HER2,
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


def subject_of(topic: str) -> str:
    """The topic as a noun phrase for templates: whitespace collapsed, trailing ``?``/``.`` off."""
    return clean(topic).rstrip("?.! ")


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


def word_key(word: str) -> str:
    """A word with case, hyphens and a possessive 's removed (``HER-2`` = ``her2``,
    ``Hawkins's`` = ``hawkins``)."""
    return re.sub(r"[^a-z0-9]", "", re.sub(r"['’]s$", "", word.lower()))


_BOILERPLATE = re.compile(
    r"^(?:discover|learn|explore|click|tap|subscribe|sign up|sign in|log in|read more|follow us|share|copy|"
    r"watch|listen|download|advertisement|outdated browser|this article is|all rights reserved|support our|"
    r"subscribe to|get the latest)\b|\bsubscription to receive\b",
    re.I,
)


def is_boilerplate(sentence: str) -> bool:
    """Web page furniture rather than content ('Discover the real story...', 'Click here...')."""
    return bool(_BOILERPLATE.match(sentence.strip()))


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
    ``ranked_phrases(exclude=...)``: 'HER2-positive' gives her2positive, her2, positive)."""
    return {word_key(p) for t in texts for w in content_words(t) for p in [w, *w.split("-")]} - {""}
