"""Who a source studies, against the population and role of treatment a question names: the
opposite stage, line or age group (``_CONTRASTS``), people who have the condition or not yet
(``_HAVE_IT``, ``_NOT_YET``, ``_has_it``), and the role of treatment a setting names
(``names_role``). Pure text rules on a question's frame (``research.text.frame``), measured on
the labelled question sets of ``bench/data`` (docs/evidence.md).
"""

from __future__ import annotations

import re
from typing import Protocol

from research.text.asking import POPULATION
from research.text.findings import NAMED as _NAMED
from research.text.words import STOP, content_words


class QuestionFrame(Protocol):
    """What these rules read of a question's frame (``research.text.frame.QuestionFrame``):
    its setting, the words after the arms ("adjuvant therapy for early X")."""

    @property
    def setting(self) -> str: ...


# A treatment's role that a setting names, and the words a source on that role uses for it: a
# trial of treating the disease is not one of preventing it, though both name the disease (the
# setting's other words), and a question on adjuvant use is answered by trials that say so.
_ROLES: dict[str, tuple[str, ...]] = {
    "prevention": ("prevent", "chemoprevent", "risk reduc", "risk-reduc"),
    "adjuvant": ("adjuvant", "postoperative", "post-operative"),
}


def names_role(text: str, frame: QuestionFrame) -> bool:
    """True when ``text`` names the role of treatment the question's setting names (``_ROLES``:
    "… for *prevention*" is named by "prevents", "chemoprevention", "risk reduction"), or the
    setting names none."""
    low = text.lower()
    # a word's start, not any substring: the word for treatment before surgery holds "adjuvant"
    return all(
        any(re.search(rf"(?<![a-z]){re.escape(w)}", low) for w in _ROLES[role])
        for role in {w.lower() for w in re.findall(r"[A-Za-z-]+", frame.setting)} & set(_ROLES)
    )


# Setting words and the words that name the opposite setting: a source titled with the opposite
# ("first-line therapy of advanced disease") is about another population than the question's
# ("adjuvant therapy of early disease"), however many of its other words it shares. Words of
# stage, line of treatment, course, age group and menopausal status; no condition is named.
_CONTRASTS: dict[str, tuple[str, ...]] = {
    "early": ("advanced", "metastatic", "metastases", "metastasis", "late-stage"),
    "adjuvant": (
        "metastatic",
        "metastases",
        "metastasis",
        "advanced",
        "palliative",
        "prevention",
        "chemoprevention",
    ),
    "prevention": ("adjuvant", "metastatic", "metastases", "metastasis", "advanced"),
    "localized": ("metastatic", "metastases", "metastasis", "advanced"),
    "localised": ("metastatic", "metastases", "metastasis", "advanced"),
    "advanced": ("early", "adjuvant", "nonmetastatic", "non-metastatic"),
    "metastatic": ("early", "adjuvant", "nonmetastatic", "non-metastatic"),
    "metastases": ("early", "adjuvant", "nonmetastatic", "non-metastatic"),
    "metastasis": ("early", "adjuvant", "nonmetastatic", "non-metastatic"),
    "acute": ("chronic",),
    "chronic": ("acute",),
    "children": ("adults", "adult"),
    "paediatric": ("adults", "adult"),
    "pediatric": ("adults", "adult"),
    "adults": ("children", "paediatric", "pediatric", "infants"),
    "premenopausal": ("postmenopausal",),
    "postmenopausal": ("premenopausal",),
}


# People who have the condition ("women with X", "X survivors") and people who do not yet: a
# trial in healthy or at-risk people, or of preventing the disease itself, studies another
# population, unless its title also names people who have it.
_HAVE_IT = re.compile(r"\b(?:with|patients?|survivors?|sufferers?)\b", re.I)
_NOT_YET = re.compile(
    r"\b(?:healthy|at[- ](?:high[- ])?risk|high[- ]risk|prevention|chemoprevention|"
    r"risk[- ]reducing|risk[- ]reduction)\b|"
    # the risk of getting the disease: "… and invasive X cancer risk", "risk of developing X"
    r"\b(?:cancers?|carcinomas?|tumou?rs?|neoplasms?|diseases?)\s+risks?\b|"
    r"\brisk\s+of\s+(?:developing|incident)\b",
    re.I,
)


# ... and the mirror: a question on preventing a disease is not answered by a trial in people
# who have it ("X patients", "… in women with invasive X": ``_has_it``).
_PATIENTS = re.compile(r"\b(?:patients|survivors)\b", re.I)
_DISEASE_HEADS = ("cancers?", "carcinomas?", "tumou?rs?", "diseases?", "neoplasms?", "neoplasia")


def _has_it(title: str, setting: str) -> bool:
    """True when ``title`` names people who have the condition of ``setting``: patients or
    survivors, or people "with" (up to three words before) the condition's name (the setting's
    words but its role and its people: "comparing A with B in women" is no one with X) or a
    disease's head word."""
    if _PATIENTS.search(title):
        return True
    condition = POPULATION.sub(" ", _NOT_YET.sub(" ", setting))
    names = [re.escape(w) for w in content_words(condition) if w.lower() not in STOP]
    heads = "|".join([*names, *_DISEASE_HEADS])
    return bool(re.search(rf"\bwith\s+(?:[\w-]+\s+){{0,3}}(?:{heads})\b", title, re.I))


def contradicts_setting(title: str, frame: QuestionFrame) -> bool:
    """True when ``title`` names the opposite of one of the question's setting words and not
    the word itself (``_CONTRASTS``: "…in advanced disease" for a question on early disease):
    the source studies another population, so it is not about the question. So does a title on
    healthy or at-risk people, or on preventing the disease (``_NOT_YET``), for a question on
    people who have it ("… in women with X": ``_HAVE_IT``), unless it names such people too;
    and a title on people who have it (``_has_it``) for a question on preventing it. The words
    of a capitalised group or study name (``_NAMED``: "… Surgical Adjuvant … Project") do
    not count."""
    plain = _NAMED.sub(" ", title)
    if _HAVE_IT.search(frame.setting) and _NOT_YET.search(title) and not _HAVE_IT.search(plain):
        return True
    if (
        _NOT_YET.search(frame.setting)
        and not _HAVE_IT.search(frame.setting)
        and _has_it(plain, frame.setting)
    ):
        return True
    have = {w.lower() for w in re.findall(r"[A-Za-z][A-Za-z-]*", plain)}
    wanted = {w.lower() for w in re.findall(r"[A-Za-z][A-Za-z-]*", frame.setting)}
    return any(
        w not in have and any(c in have for c in _CONTRASTS[w]) for w in wanted if w in _CONTRASTS
    )
