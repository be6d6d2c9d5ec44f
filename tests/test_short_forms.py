"""Short forms a document defines (Schwartz & Hearst's algorithm) and the family of outcome a
sentence that uses one reports: "12 (3.4%) LR were observed in arm 1" reports recurrences."""

from __future__ import annotations

import pytest

from research.evidence import judge
from research.evidence.passages import document_evidence, family_of
from research.models import Question
from research.planning.kinds import COMPARISON_QUESTIONS, fill
from research.text.findings import outcome_family
from research.text.frame import frame_question
from research.text.short_forms import short_forms, spelled_out
from research.text.vectors import Vectors

TOPIC = "Arvotinib with or without belzumab after surgery for early examplitis"
DEFINED = (
    "Primary endpoints were the cumulative incidence of local recurrences (LR) and overall "
    "survival (OAS) after conservative surgery (CS) with or without belzumab."
)
FIGURES = "After a median follow-up of 108 months, 12 (3.4%) LR were observed in arm 1 and 16 (4.4%) in arm 2."


@pytest.fixture(scope="module")
def vectors():
    return Vectors()


def test_a_short_form_is_read_with_the_long_form_it_abbreviates():
    forms = short_forms(DEFINED)
    # each short form's letters start the words before it, in order
    assert forms == {
        "LR": "local recurrences",
        "OAS": "overall survival",
        "CS": "conservative surgery",
    }
    assert short_forms("patients given the drug (n = 40) or placebo (arm B)") == {}
    assert short_forms("the end of treatment (eot)") == {}
    # a short form whose letters the words before it do not hold in order defines nothing
    assert short_forms("after breast surgery (XYZ) the arms") == {}
    assert outcome_family(FIGURES) == ""
    assert outcome_family(spelled_out(FIGURES, forms)) == "benefit"
    assert spelled_out(FIGURES, forms).startswith(
        "After a median follow-up of 108 months, 12 (3.4%) LR (local recurrences)"
    )


def test_a_result_named_by_its_short_form_answers_the_efficacy_question(vectors):
    spec = fill(COMPARISON_QUESTIONS, frame_question(TOPIC))
    qs = [
        Question(key=k, label=v["label"], description=v["description"], min_sources=1)
        for k, v in spec.items()
        if k == "efficacy.comparison"
    ]
    plain = judge.score_passages(qs, [FIGURES], topic=TOPIC, vectors=vectors)[0, 0]
    read = judge.score_passages(
        qs, [FIGURES], topic=TOPIC, vectors=vectors, outcome_forms=short_forms(DEFINED)
    )[0, 0]
    assert read > plain  # no longer a result that names no outcome of benefit
    found = document_evidence(
        vectors,
        qs,
        TOPIC,
        "Arvotinib with or without belzumab: a randomised trial",
        f"{DEFINED} {FIGURES}",
        [],
    )
    [figures] = [p for p in found["efficacy.comparison"] if p.passage == FIGURES]
    assert figures.outcome == "benefit" and family_of(figures) == "benefit"
    # a passage whose own words say what it reports keeps no family of its own
    assert all(p.outcome is None for p in found["efficacy.comparison"] if p.passage != FIGURES)
