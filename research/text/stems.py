"""The stems a question's words are matched by in a text (``research.text.frame_match``).

A question's word is found in a text when their Snowball English stems meet, after the word's
``word_key`` form and British spelling are folded ("oedema" and "edema", "tumour" and
"tumor", "anaemia" and "anemia" meet; ``spelling``). A hyphenated word is also found by all its
parts ("conventionally fractionated" and "conventional fractionation" share theirs).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

import Stemmer

from research.text.words import word_key

_STEMMER = Stemmer.Stemmer("english")
# British "oe"/"ae" before a consonant other than r ("oedema", "haemorrhage", "paediatric",
# "diarrhoea" at the end) and "-our" at a word's end ("tumour", "behaviour"). Folded on both
# sides of a match, so an American word that happens to fit ("does") meets only itself.
_DIGRAPH = re.compile(r"([oa])e(?=[b-df-hj-npqs-tv-z]|a\b|$)")
_OUR = re.compile(r"(?<=[a-z]{2})our(s?)$")


# Words trials use for the same arm: "standard-dose" chemotherapy is the "conventional-dose"
# group ("conventionally dosed"), "standard care" is "usual care", and radiotherapy is
# "irradiation" or "radiation" (therapy) in as many abstracts
_SAME_ARM = {
    "conventional": "standard",
    "conventionally": "standard",
    "usual": "standard",
    "irradiation": "radiotherapy",
    "radiation": "radiotherapy",
}


def spelling(key: str) -> str:
    """``key`` (a lower-case ``word_key``) with British spelling folded to American:
    "oesophagus" → "esophagus", "haemorrhage" → "hemorrhage", "tumours" → "tumors"; a
    comparator's other names folded to one (``_SAME_ARM``: "conventional" → "standard")."""
    return _SAME_ARM.get(key) or _OUR.sub(r"or\1", _DIGRAPH.sub("e", key))


def whole_key(word: str) -> str:
    """``word``'s ``word_key`` with spelling folded (``spelling``), a hyphenated word's part by
    part ("conventional-dose" → "standarddose")."""
    if "-" not in word:
        return spelling(word_key(word))
    return "".join(spelling(word_key(p)) for p in word.split("-"))


def stems(words: Iterable[str]) -> set[str]:
    """Snowball stems of the words' ``whole_key`` forms and of their hyphen parts of three
    letters or more."""
    keys = set()
    for w in words:
        keys.add(whole_key(w))
        keys |= {spelling(word_key(p)) for p in w.split("-") if len(p) >= 3}
    return {k for k in _STEMMER.stemWords(sorted(keys - {""})) if k}


_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'’-]*")
# A name made of a word and a capital letter ("vitamin D", "hepatitis B", "vitamin D3"): the
# letter is what tells it from its neighbours ("vitamin E"), so the pair is one word as well
LETTERED = re.compile(r"\b([A-Za-z]{3,})[\s-]([A-Z])\d{0,2}\b")


def lettered(text: str) -> list[str]:
    """The word-and-letter names of ``text`` as one word each ("vitamin D3" → "vitaminD")."""
    return [f"{word}{letter}" for word, letter in LETTERED.findall(text)]


def text_keys(text: str) -> set[str]:
    """``stems`` of every word of ``text``, of its word-and-letter names (``lettered``) and of
    each two words in a row written as one ("high dose" → the stem of "highdose", as "high-dose"
    is stemmed whole)."""
    words = _WORD.findall(text)
    pairs = [f"{a}-{b}" for a, b in zip(words, words[1:], strict=False) if "-" not in a + b]
    return stems([*words, *lettered(text)]) | {
        k for k in _STEMMER.stemWords([whole_key(p) for p in pairs]) if k
    }


def text_counts(text: str) -> Counter[str]:
    """How many times each stem of ``text_keys`` occurs in ``text`` (a hyphenated word counts
    for itself and for each part); each distinct word is stemmed once."""
    out: Counter[str] = Counter()
    for tok, n in Counter([*_WORD.findall(text), *lettered(text)]).items():
        for s in stems([tok]):
            out[s] += n
    return out


@dataclass(frozen=True)
class ArmWord:
    """One naming word of an arm: ``whole``, the stem of the word as written, and ``parts``, the
    stems of its hyphen parts (empty for a word with none); ``stems`` is both."""

    whole: str
    parts: frozenset[str] = frozenset()

    @property
    def stems(self) -> frozenset[str]:
        return frozenset({self.whole, *self.parts} - {""})

    def named_by(self, have: set[str]) -> bool:
        """True when ``have`` (a text's stems, ``text_keys``: two words in a row also as one)
        holds the whole word: "high-dose" is named by "high-dose" or "high dose", not by "high"
        and "dose" apart ("high-risk … dose-dense")."""
        return self.whole in have


def arm_word(word: str) -> ArmWord:
    """The ``ArmWord`` of one word as typed ("H1N1-vaccine" → whole and parts)."""
    key = whole_key(word) if word_key(word) else ""
    whole = _STEMMER.stemWord(key) if key else ""
    pieces = [spelling(word_key(p)) for p in word.split("-") if len(p) >= 3] if "-" in word else []
    parts = frozenset(_STEMMER.stemWord(p) for p in pieces if p)
    return ArmWord(whole=whole, parts=parts)


def names_arm(words: list[ArmWord], have: set[str]) -> bool:
    """True when ``have`` (a text's stems) names half or more of an arm's words (all of one or
    two): ``QuestionFrame.arm_words``. A long arm is named in part (two of its four words:
    an abstract shortens it)."""
    hits = sum(w.named_by(have) for w in words)
    return hits >= len(words) / 2 if len(words) > 2 else hits == len(words)
