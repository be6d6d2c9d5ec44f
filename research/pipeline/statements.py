"""What a question's section says of itself when it cannot simply quote its answer: the plain
statement of an unmet question (what was searched, what was found: ``unmet_statement``), the
trial registrations an unmet results question names (``registrations_note``), where the answer is
quoted instead (``quoted_in_lead``, ``QUOTED_ABOVE``, ``quoted_under``), and that its sources
only say how their studies were run (``conduct_statement``). The quoting itself is
``research.pipeline.answers``.
"""

from __future__ import annotations

import re

from research.models import Question, QuestionStop
from research.text.asking import label_in_sentence


def what_it_asks(q: Question) -> str:
    """The question's description as a phrase: "patent coverage, exclusivity, formulations"."""
    # the fitted syllabus's hint of the corpus's own words ("(corpus: …)") is for the plan
    # review, not for a sentence of the report
    desc = re.sub(r"\s*\(corpus:[^)]*\)", "", q.description).strip().rstrip(".")
    desc = desc.rsplit("?", 1)[-1].strip() or desc
    # a description that is one question reads as a clause: "what sources report about X"
    desc = _ASKS_SOURCES.sub("what sources report", desc).rstrip("?")
    return f"{desc[:1].lower()}{desc[1:]}" if desc else q.label.lower()


_ASKS_SOURCES = re.compile(r"^what\s+do\s+(?:the\s+)?sources\s+report", re.I)


def unmet_statement(
    q: Question, found: int, stop: QuestionStop | None, follows: bool = True, indirect: int = 0
) -> str:
    """The plain statement for an unmet question: what was searched and what was found, e.g.
    "Intellectual Property is not answered: 6 gap searches (such as “imatinib patent
    expiry”) after the planned conversations found 1 of the 3 sources needed that state patent
    coverage, exclusivity, formulations; what it reports follows." — the last clause only when
    the section quotes something after it (``follows``). ``indirect``: the number of sources of
    a comparison question's section that quote what each arm did in trials of its own
    (``pipeline.indirect``): "… found no source that states …, only trials of each arm against
    another comparator (an indirect comparison); what they report follows." """
    queries = stop.gap_queries if stop else []
    searched = "the planned conversations' searches"
    if queries:
        n = len(queries)
        searched = (
            f"the planned conversations and {n} gap {'search' if n == 1 else 'searches'} "
            f"(such as “{queries[min(1, n - 1)]}”)"
        )
    label = label_in_sentence(q.label, first=True)
    if found == 0 and indirect and follows:
        return (
            f"{label} is not answered: {searched} found no source that states {what_it_asks(q)}, "
            "only trials of each arm against another comparator (an indirect comparison); "
            f"{_follows(indirect)}."
        )
    if found == 0:
        return f"{label} is not answered: {searched} found no source that states {what_it_asks(q)}."
    said = (
        f"{label} is not answered: {searched} found {found} of the {q.min_sources} sources "
        f"needed that state {what_it_asks(q)}"
    )
    if not follows:
        return f"{said}."
    return f"{said}; {_follows(found)}."


def _follows(found: int) -> str:
    return f"what {'it reports' if found == 1 else 'they report'} follows"


# A section whose one sentence is the whole of the report's lead (the answer to the question
# asked, from one source): it says where that sentence is, rather than repeat it
QUOTED_ABOVE = "The summary above quotes the sources' answer to this question."


def quoted_in_lead(statement: str) -> str:
    """An open question's ``statement`` (``unmet_statement``) whose quoted sentences all went to
    the report's lead: "…; what it reports follows." becomes "…; the summary above quotes what
    it reports."; any other text comes back unchanged."""
    for found, what in ((1, "it reports"), (2, "they report")):
        statement = statement.replace(
            f"; {_follows(found)}.", f"; the summary above quotes what {what}."
        )
    return statement


def registrations_note(external_ids: list[str], shown: int = 4) -> str:
    """The sentence an unmet results question adds when the run found trial registrations
    (which hold no results: ``evidence.passages.registration_only``), naming up to ``shown`` of
    them, e.g. "The sources found include 5 trial registrations (NCT04355897, NCT04516954,
    NCT04730401, NCT05595538 and 1 more), which state what their trials will measure, not
    results."; "" for none."""
    ids = list(dict.fromkeys(i for i in external_ids if i))
    if not ids:
        return ""
    named = ", ".join(ids[:shown]) + (f" and {len(ids) - shown} more" if len(ids) > shown else "")
    noun = "trial registration" if len(ids) == 1 else "trial registrations"
    which = "states what its trial will" if len(ids) == 1 else "state what their trials will"
    return f"The sources found include {len(ids)} {noun} ({named}), which {which} measure, not results."


def quoted_under(q: Question, elsewhere: list[str], source_ids: list[str]) -> str:
    """The text of an answered question's section whose every passage another question's
    section already quotes (a passage answers both), e.g. "Its evidence on reversibility is
    quoted under “Liver injury” [@src_…]." (draft citations)."""
    names = " and ".join(f"“{h}”" for h in elsewhere[:2])
    cites = "".join(f"[@{sid}]" for sid in dict.fromkeys(source_ids))
    return f"The evidence on {what_it_asks(q)} is quoted under {names} {cites}."


def conduct_statement(q: Question, source_ids: list[str]) -> str:
    """The text of an answered question's section whose best passages only say how the studies
    were run, e.g. "The sources with evidence on who benefits: subgroups report how their studies
    were run (who took part, how participants were allocated), not a finding on it [@src_…]."
    (draft citations; the sentence states no finding, so the lead never takes it)."""
    cites = "".join(f"[@{sid}]" for sid in dict.fromkeys(source_ids))
    return (
        f"The sources with evidence on {what_it_asks(q)} report how their studies were run (who "
        f"took part, how participants were allocated), not a finding on it {cites}."
    )
