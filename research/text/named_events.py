"""Another event of the same kind: "Cyclone Examplo" is not "Cyclone Exampla".

A source titled with the same kind of event as the topic and another name ("Typhoon Examplo"
for "Typhoon Exampla") shares the topic's most telling word and is close to it in meaning, so
the title-closeness test of the evidence gate (``research.evidence.passages.on_question_docs``)
lets it in; what it reports happened elsewhere. ``another_name(title, topic) → bool`` finds it:
the event noun of the topic (``research.text.asking.EVENT``: storm, cyclone, earthquake…) is
followed in the title by a capitalised name that the topic does not hold.
"""

from __future__ import annotations

import re

from research.text.asking import EVENT

# an event noun and the name that follows it: "Cyclone Examplo", "Storm Examplo-Two"
_NOUN_NAME = re.compile(r"\b([A-Za-z]+)\s+(?=([A-Z][\w'’-]*))")


def another_name(title: str, topic: str) -> bool:
    """True when ``topic`` names an event by a noun and a name ("Cyclone Exampla") and ``title``
    gives the same noun another name ("Cyclone Examplo", "… of Cyclone Examplo"): another
    event of the same kind. False when the title's name is one of the topic's words ("Cyclone
    Exampla — Impact"), when the noun is followed by no name ("Tropical cyclones in 2031"), or
    when the topic names no event by a noun and a name."""
    mine = {
        m.group(1).lower()
        for m in _NOUN_NAME.finditer(topic)
        if EVENT.fullmatch(m.group(1)) and m.group(2)[:1].isupper()
    }
    if not mine:
        return False
    names = {w.lower() for w in re.findall(r"[\w'’-]+", topic)}
    return any(
        m.group(1).lower() in mine and m.group(2).lower() not in names
        for m in _NOUN_NAME.finditer(title)
    )
