"""Definitional sentences: the sentence that says what the topic is.

An encyclopaedia article, a biography or a glossary entry opens with it ("Oliver Jane Doe
(1950–2020) was an American drummer…", "A fever fit, also called …, is a seizure that …"): the
topic as the subject, then a copula and a class. That is the genus–differentia form of a
definition, and the sentence the definition task of the TREC 2003 question answering track
rewarded (Voorhees, "Overview of the TREC 2003 Question Answering Track", the definition
questions).

A sentence embedding of such a sentence is close to what it says about the topic (music, a
fever), not to the abstract words of the question "who or what it is: role, field, origin":
the evidence judgement reads the form instead (``research.evidence.judge``).
"""

from __future__ import annotations

import re

from research.text.stems import stems
from research.text.words import content_words, mentions_topic, norm_key, subject_of, topic_words

# "is a", "was the", "are one of", "refers to": the copula that joins the subject to its class
_COPULA = re.compile(r"\b(?:is|was|are|were)\s+(?:an?|the|one\s+of)\b|\brefers?\s+to\b", re.I)
_BRACKETS = re.compile(r"\([^()]*\)")
# words before the copula at most: a subject with its alternative names ("X, also known as Y
# or Z,"), not a clause that only mentions the topic on the way
SUBJECT_MAX_WORDS = 15


def defines(sentence: str, topic: str) -> bool:
    """True when ``sentence`` defines ``topic``: before its first copula (brackets removed:
    dates, pronunciations) stand at most ``SUBJECT_MAX_WORDS`` words that name the topic
    (``research.text.mentions_topic``: more than half of its content words, all of one or two).

    Example: defines("Oliver Jane Doe (1950–2020) was an American drummer.", "Jane Doe") →
    True; defines("The band's drummer, Jane Doe, said that it was a hard year.", "Jane Doe") →
    False (the copula's subject is "it")."""
    text = _BRACKETS.sub(" ", sentence)
    m = _COPULA.search(text)
    if not m:
        return False
    subject = text[: m.start()]
    if len(subject.split()) > SUBJECT_MAX_WORDS:
        return False
    if re.search(r"\b(?:that|which|who|it|he|she|they|there|said|says|stated)\b", subject, re.I):
        # a clause's subject, not the sentence's: "… said that it was a hard year"; "after
        # one X there is a 35% chance" says what follows X, not what X is
        return False
    return mentions_topic(subject, topic_words(topic))


# a site's name after the page's own title ("X - Wikipedia", "X | Site"); an article's section
# ("X — Aftermath") is a part of the article, not its opening
_SITE_SUFFIX = re.compile(r"\s+[-|]\s+[^-|]*$")
LEAD_SENTENCES = 3  # sentences of an article on the topic that open it (its lead section)
LOOSE_MIN_WORDS = 2  # a one-word page ("Examplia") is the place, not what happened there
# a section of a page ("X — Aftermath", "X — Career > Early years")
_SECTION = re.compile(r"\s[—>]\s")


def titled_as_topic(title: str, topic: str, *, loose: bool = False) -> bool:
    """True when a document's ``title`` is the topic itself, a site's name after it allowed
    ("2023 Example flood - Wikipedia" for "2023 Example flood"): its first ``LEAD_SENTENCES``
    sentences are the article's lead, which says what the topic is, what happened, where and
    when (the lead section of an encyclopaedia article summarises it). ``loose`` (for a topic
    that names something, not a treatment): also a page's title of ``LOOSE_MIN_WORDS`` content
    words or more, all of them the topic's (stems), that is no section of a page."""
    want = norm_key(subject_of(topic))
    if not want:
        return False
    if want in {norm_key(title), norm_key(_SITE_SUFFIX.sub("", title))}:
        return True
    if not loose or _SECTION.search(title):
        return False
    # the page's name inside a longer question ("X attack in Examplia, May 2031" for the page
    # "X attack"; "Ada Lovelace (mathematician)" for "Ada Lovelace, English mathematician")
    named = stems(content_words(_SITE_SUFFIX.sub("", title)))
    return len(named) >= LOOSE_MIN_WORDS and named <= stems(content_words(topic))
