"""A text against a question's frame (``research.text.frame.QuestionFrame``): which of the
frame's arms a text names, whether a document is about the question, how much of its setting and
terms a text shares, and the search queries that keep the frame's terms.

* ``arms_of(text, frame) → list[bool]`` (one per arm, in order) and ``arms_named(text, frame) →
  int``: an arm is named by its naming words (``QuestionFrame.arm_words``, Snowball English
  stems, ``research.text.stems``), or, for an arm that names a drug class, by a member of it
  (the WHO INN stem its members share, ``research.text.drug_classes``);
* ``names_target(text, frame) → bool``: the condition an intervention or a device is for, named
  ``TARGET_MENTIONS`` times or more;
* ``about_question(text, frame) → bool``: a document on a framed question (an arm, the target,
  the cause, the role of treatment, the occasion's head word, most of the setting);
* ``setting_share`` and ``term_share(text, frame) → float`` in [0, 1];
* ``anchor_query(query, frame) → str`` and ``anchor_queries(queries, topic) → list[str]``: a
  search query with the frame's key terms it lacks put in front (at most ``MAX_QUERY_WORDS``
  words: a longer keyword query stops matching anything in BM25's top).

Pure text rules, measured on the labelled question sets of ``bench/data`` (docs/evidence.md).
"""

from __future__ import annotations

import re
from collections import Counter

from research.text.drug_classes import class_endings, names_member
from research.text.frame import QuestionFrame, frame_question, leaves_out
from research.text.frame import setting_words as _setting_words
from research.text.populations import names_role
from research.text.stems import ArmWord, names_arm
from research.text.stems import arm_word as _arm_word
from research.text.stems import stems as _stems
from research.text.stems import text_counts as _text_counts
from research.text.stems import text_keys as _text_keys
from research.text.words import clean

# A document names the condition an intervention is for at least this often to be about it: the
# title and the abstract both, or the text twice (labelled sets of docs/evidence.md)
TARGET_MENTIONS = 2

MAX_QUERY_WORDS = 12  # a keyword query longer than this stops matching anything in BM25's top

# The words that say a text's trial left a treatment out (the arm "no X": ``frame.leaves_out``)
_ABSENCE = re.compile(r"no|without|omit\w*|omission|forgo\w*|avoid\w*|withh\w+|none", re.I)
_WITH_OR_WITHOUT = re.compile(r"\bwith\s+(?:or|and)\s+without\b", re.I)
# words between "without" and the treatment it leaves out ("without adjuvant whole-organ …")
ABSENCE_GAP = 3

# The occasion a setting names ("… after knee surgery", "… during chemotherapy") and where its
# noun phrase ends: its head is the phrase's last content word ("surgery")
_OCCASION = re.compile(r"\b(?:after|following|during|before|undergoing)\s+(.+)$", re.I)
_OCCASION_END = re.compile(r"\s+(?:in|for|among|with|of|at|on)\s+", re.I)
# An operation is named by its kind as often as by the word ("appendectomy", "bowel
# resection", "postoperative"): any of these names an occasion whose head is one of them
_SURGICAL = re.compile(r"surg|operat|ectom|dissection|resection|excision", re.I)


def anchor_query(query: str, frame: QuestionFrame) -> str:
    """``query`` with the frame's key terms it lacks put in front: every arm whose words it does
    not all contain, then up to two setting words when it has none of them ("Taxanes Safety
    Profile Adverse" → "anthracyclines Taxanes Safety Profile Adverse adjuvant"). Queries of
    a frame that is not ``framed`` come back unchanged; so does a query that already holds them."""
    query = clean(query)
    if not frame.framed or not query:
        return query
    have = _text_keys(query)
    missing = [
        arm
        for arm, words in zip(frame.arms, frame.arm_words(), strict=False)
        if not names_arm(words, have)
    ]
    setting = _setting_words(frame.setting)
    extra = [] if _stems(setting) & have else setting[:2]
    words = " ".join([*missing, query, *extra]).split()
    return " ".join(words[: max(MAX_QUERY_WORDS, len(query.split()))])


def anchor_queries(queries: list[str], topic: str) -> list[str]:
    """``anchor_query`` over a list for the run's question ``topic``, repeats removed (order kept)."""
    frame = frame_question(topic)
    return list(dict.fromkeys(q for q in (anchor_query(x, frame) for x in queries) if q))


def arms_named(text: str, frame: QuestionFrame) -> int:
    """How many of the frame's arms ``text`` names (every content word of the arm but its class
    words: "kinase inhibitors" is named by "kinase"; an arm that names a drug class is also
    named by a member of it, ``drug_classes.class_endings``: "statins" by "atorvastatin")."""
    return sum(arms_of(text, frame))


def arms_of(text: str, frame: QuestionFrame, *, loose: bool = False) -> list[bool]:
    """Per arm of the frame (in order), True when ``text`` names it (``arms_named``).
    ``loose``: an arm of three words or more is named by any one of them, as a title shortens
    it ("weekly infusion" for "low-dose weekly belzumab infusion")."""
    have = _text_keys(text)
    return [
        _names_absence(text, words)
        if leaves_out(arm) and words
        else (
            names_arm(words, have)
            or (loose and len(words) > 2 and any(w.named_by(have) for w in words))
            or names_member(text, class_endings(arm))
        )
        for arm, words in zip(frame.arms, frame.arm_words(), strict=True)
    ]


def _names_absence(text: str, words: list[ArmWord]) -> bool:
    """True when ``text`` names the arm "no X": X left out ("without X", "no X", "omission of
    the X", up to ``ABSENCE_GAP`` words between) or a trial "with or without" a treatment. "X"
    alone names the other arm, which every study of X names too."""
    if _WITH_OR_WITHOUT.search(text):
        return True
    tokens = re.findall(r"[\w-]+", text)
    keys = [_stems([t]) for t in tokens]
    for i, tok in enumerate(tokens):
        if _ABSENCE.fullmatch(tok):
            ahead = set().union(*keys[i + 1 : i + 2 + ABSENCE_GAP])
            if any(w.named_by(ahead) for w in words):
                return True
    return False


def names_target(text: str, frame: QuestionFrame) -> bool:
    """True when ``text`` (a document's title and text) names what the question's intervention
    is for (``QuestionFrame.target_words``): half or more of its words, at least one ("hot" or
    "flushes" of "hot flushes"), one of them ``TARGET_MENTIONS`` times or more; words that
    name what is measured ("quality" of "sleep quality": ``_MEASURE_WORDS``) count only when the
    target has no other. True when it has none. A document that never names the condition, or
    names it once in passing (a side effect in a list), is not about treating it, whatever
    population it shares with the question."""
    words = frame.target_words()
    if not words:
        return True
    measured = any(w.whole in _MEASURE_KEYS for w in words)
    # "sleep quality" is named by "sleep": "quality" of life is in every trial's abstract
    words = [w for w in words if w.whole not in _MEASURE_KEYS] or words
    # the condition of "cognitive function" is not named by "cognitive-behavioral therapy": a
    # word that qualifies what is measured, inside the name of a method, is the method's
    counts = _text_counts(_METHOD_NAME.sub(" ", text) if measured else text)
    have = set(counts)
    named = [w for w in words if w.named_by(have)]
    if len(named) < max(1, (len(words) + 1) // 2):
        return False
    return max(_mentions(w, counts) for w in named) >= TARGET_MENTIONS


# Words that name what is measured of a condition, not the condition: a target's other words
# name it ("sleep" of "sleep quality", "bone" of "bone density").
_MEASURE_WORDS = """quality qualities level levels score scores rate rates function functioning
status density health outcome outcomes index burden severity intensity""".split()
_MEASURE_KEYS = frozenset(_arm_word(w).whole for w in _MEASURE_WORDS)
# A qualifier inside a method's name ("cognitive-behavioral", "cognitive therapy", "social
# cognitive theory"): the qualifier and the method word, which the target test then ignores.
_METHOD_NAME = re.compile(r"\b\w+[\s-]+(?:behaviou?ral|behaviou?rs?|therap\w*|theor\w*)\b", re.I)


def _mentions(word: ArmWord, counts: Counter[str]) -> int:
    parts = min((counts[p] for p in word.parts), default=0)
    return max(counts[word.whole], parts)


def about_question(text: str, frame: QuestionFrame, *, arms: bool = True) -> bool:
    """True when a document (title and text) is about a framed question: it names at least one
    arm (both when the other leaves a treatment out: "X versus no X"), what the intervention is
    for (``names_target``) and what that comes from, when the question says it
    (``QuestionFrame.cause_words``), the occasion (``names_occasion``), and, when the question
    has a setting, more than half of the setting's content words (all of them for one or two), the role of
    treatment among them in its own words (``names_role``). Always True
    for a frame that is not ``framed`` (their templates keep the topic-word rule of
    ``research.text.mentions_topic``). ``arms=False`` leaves the arm out of the test, for a
    caller that knows the source names it in other words (a title close in meaning)."""
    if not frame.framed:
        return True
    if arms and frame.arms:
        named = arms_of(text, frame)
        # "A versus B": B is the comparator (PICO's C), the standard that a hundred studies of
        # other questions also name; a source on A, or on both, is on the question
        if not named[0]:
            return False
        # "X versus no X": X is what every study of X names; a source on leaving it out names
        # the absence ("with or without X", "omission of X")
        if not all(named) and any(leaves_out(a) for a in frame.arms[1:]):
            return False
    if not names_target(text, frame):
        return False
    have = _text_keys(text)
    if not all(_stems([c]) & have for c in frame.cause_words()):
        return False
    if not names_role(text, frame) or not names_occasion(text, frame):
        return False
    words = _setting_words(frame.setting)
    if not words:
        return True
    hits = sum(bool(_stems([w]) & have) for w in words)
    return hits > len(words) / 2 if len(words) > 2 else hits == len(words)


def occasion_head(frame: QuestionFrame) -> str:
    """The head word of the occasion a framed question's setting names ("surgery" of "chronic
    pain after knee surgery"), "" when it names none."""
    m = _OCCASION.search(frame.setting) if frame.framed else None
    if m is None:
        return ""
    words = _setting_words(_OCCASION_END.split(m.group(1), maxsplit=1)[0])
    return words[-1] if words else ""


def names_occasion(text: str, frame: QuestionFrame) -> bool:
    """True when ``text`` names the head of the question's occasion (``occasion_head``; an
    operation by any of its names, ``_SURGICAL``), or the question names none. Pain after an
    operation and pain from a medicine or a metastasis share the condition, the population and
    most of the setting's words: the occasion is what tells them apart."""
    head = occasion_head(frame)
    if not head:
        return True
    if _SURGICAL.search(head):
        return bool(_SURGICAL.search(text))
    return bool(_stems([head]) & _text_keys(text))


def setting_share(text: str, frame: QuestionFrame) -> float:
    """Share of the setting's content words that ``text`` contains (1.0 when the question has no
    setting): how closely a source matches the population and role the question names."""
    words = _setting_words(frame.setting)
    if not words:
        return 1.0
    have = _text_keys(text)
    return sum(bool(_stems([w]) & have) for w in words) / len(words)


def term_share(text: str, frame: QuestionFrame) -> float:
    """Share of the question's own terms that ``text`` names, in [0, 1]: each arm counts once
    (``names_arm``), and each word of what the intervention is for
    (``QuestionFrame.target_words``) when the question names it, else each content word of the
    setting (for a frame with neither, the question's content words). A result that names the
    question's outcome ("… reduced fatigue") is closer to the question asked than one on another
    end point of the same trial ("… improved quality of life in survivors"); 0.0 when the
    question has no terms."""
    have = _text_keys(text)
    named = sum(names_arm(words, have) for words in frame.arm_words())
    target = frame.target_words()
    if target:
        # what the intervention is for, not who it is for: every sentence of a trial of the
        # question is on its population; only a result on the question's own outcome names it
        named += sum(w.named_by(have) for w in target)
        return named / (len(frame.arms) + len(target))
    words = _setting_words(frame.setting) or ([] if frame.arms else _setting_words(frame.question))
    named += sum(bool(_stems([w]) & have) for w in words)
    total = len(frame.arms) + len(words)
    return named / total if total else 0.0
