"""Syllabus templates (docs/design.md § Question syllabus: ``STORM_QUESTIONS`` and the general-topic template)."""

from __future__ import annotations

import pytest

from research.errors import InputError
from research.models import Syllabus
from research.planning.syllabus import TEMPLATES, base_template, get_template, template_names
from research.store.source_input import check_syllabus

SEED_000_STORM_QUESTIONS = {  # copied from the seed text, "STORM_QUESTIONS"
    "mechanism.moa": (
        "Mechanism of Action",
        "How does the drug work? Target binding, pathway effects",
        5,
    ),
    "clinical.efficacy": (
        "Clinical Efficacy",
        "Trial results, patient outcomes, response rates",
        5,
    ),
    "clinical.safety": ("Safety Profile", "Adverse events, toxicity, contraindications", 5),
    "competitive.landscape": (
        "Competitive Landscape",
        "Other drugs, combinations, market position",
        5,
    ),
    "market.status": ("Market Status", "Development stage, approvals, commercialization", 3),
    "ip.patents": ("Intellectual Property", "Patent coverage, exclusivity, formulations", 3),
}


def test_names():
    assert template_names() == [
        "comparison",
        "condition",
        "device",
        "drug",
        "event",
        "general",
        "intervention",
        "person",
    ]
    assert sorted(TEMPLATES) == template_names()


def test_drug_template_is_seed_000_verbatim():
    drug = get_template("drug")
    assert isinstance(drug, Syllabus) and drug.name == "drug"
    assert {
        q.key: (q.label, q.description, q.min_sources) for q in drug.questions
    } == SEED_000_STORM_QUESTIONS
    assert drug.keys() == list(SEED_000_STORM_QUESTIONS)  # seed order
    assert sum(q.min_sources for q in drug.questions) == 26


def test_general_template_shape():
    general = get_template("general")
    assert general.name == "general" and len(general.questions) == 6
    assert general.keys() == [
        "background.overview",
        "history.timeline",
        "key.actors",
        "impact.effects",
        "debate.controversies",
        "outlook.future",
    ]
    assert all(3 <= q.min_sources <= 5 and q.label and q.description for q in general.questions)


@pytest.mark.parametrize("name", template_names())
def test_every_template_is_usable_by_the_collector(name):
    assert check_syllabus(get_template(name)).name == name


def test_get_template_returns_an_independent_copy():
    a = get_template("drug")
    a.questions[0].min_sources = 99
    a.questions.pop()
    b = get_template("drug")
    assert b.questions[0].min_sources == 5 and len(b.questions) == 6
    assert TEMPLATES["drug"].questions[0].min_sources == 5


def test_name_is_case_and_space_insensitive():
    assert get_template("  Drug ").keys() == get_template("drug").keys()


@pytest.mark.parametrize("bad", ["nope", "", None, 3])
def test_unknown_template_lists_valid_names(bad):
    with pytest.raises(InputError) as exc:
        get_template(bad)
    assert exc.value.code == "unknown_template"
    assert "comparison, condition, device, drug, event, general, intervention, person" in str(
        exc.value
    )


def test_templates_mapping_is_read_only():
    with pytest.raises(TypeError):
        TEMPLATES["x"] = get_template("drug")  # type: ignore[index]  # the write must fail


def test_a_condition_gets_the_sections_of_a_medical_article():
    """A disease named as the topic ("Examplitis", "Fever fit syndrome") is a condition: what it
    is, causes, signs and diagnosis, treatment, prognosis, how common (the order of a medical
    encyclopaedia's article), not the general template's history and key actors."""
    for topic in (
        "Examplitis",
        "Fever fit syndrome",
        "Chronic examplosis",
        "Drug-induced examplitis",
    ):
        syllabus = base_template("auto", topic)
        assert syllabus.name == "auto (condition)", topic
        assert [q.label for q in syllabus.questions] == [
            "What it is",
            "Causes and risk factors",
            "Signs and diagnosis",
            "Treatment and management",
            "Prognosis",
            "How common it is",
        ]
    # a treatment for a condition is still an intervention question; a person stays a person
    assert base_template("auto", "Exercise for examplitis").name == "auto (intervention)"
    assert base_template("auto", "Jane Doe").name == "auto (person)"
    # a name that ends like a disease is still a name; a disease's head word decides anyway
    assert base_template("auto", "Paloma Doe").name == "auto (person)"
    assert base_template("auto", "Examplon Disease").name == "auto (condition)"


def test_a_comparison_that_leaves_a_treatment_out_asks_no_switching():
    """ "Can X be omitted": X versus no X, named so; there is nothing to switch to."""
    syllabus = base_template("auto", "Can radiotherapy be omitted after surgery in older women?")
    labels = [q.label for q in syllabus.questions]
    assert labels[0] == "Efficacy: radiotherapy vs no radiotherapy"
    assert not any(q.key == "sequencing.switching" for q in syllabus.questions)
    both = base_template("auto", "Examplumab versus arvotinib in examplitis")
    assert any(q.key == "sequencing.switching" for q in both.questions)
