"""A question typed as a question is read as the topic it asks about, and the syllabus leads with
what it asks (``research.text.asking``, ``research.planning.syllabus``)."""

from __future__ import annotations

import json
from pathlib import Path

from research.planning.kinds import purpose
from research.planning.syllabus import ASKED_KEY, asked_key, base_template
from research.text.asking import asked, is_question, restate
from research.text.entities import split_topic
from research.text.frame import frame_question


def test_a_question_is_read_as_its_topic():
    assert restate("What are the side effects of examplumab?") == "examplumab"
    assert restate("Who was Jane Examplar?") == "Jane Examplar"
    assert restate("What is a febrile examplitis?") == "febrile examplitis"
    assert restate("What caused the 2031 Examplia floods?") == "2031 Examplia floods"
    assert restate("Why did Example Bank collapse?") == "Example Bank collapse"
    assert restate("How did Examplia prepare for Typhoon Examplo?") == "Typhoon Examplo"
    # the name of what happened, wherever the question puts it, and its event noun with it
    assert restate("How did Storm Examplo affect the United Examplia?") == "Storm Examplo"
    assert restate("How did Examplia respond to the 2031 Examplia floods?") == (
        "2031 Examplia floods"
    )
    assert restate("How did the 2031 Examplia floods affect farming?") == "2031 Examplia floods"
    assert restate("When did Jane Examplar publish her notes?") == "Jane Examplar"
    # a topic that names an event and the part of its story asked about asks it
    assert restate("Examplo Air Flight 12 crash investigation") == "Examplo Air Flight 12 crash"
    assert asked("Examplo Air Flight 12 crash investigation") == (
        "What did the investigation of the Examplo Air Flight 12 crash find?"
    )
    assert asked("Storm Examplo impact") == "What was the impact of Storm Examplo?"
    assert asked("Immune response") == "" and restate("Immune response") == "Immune response"
    # whether it works is what the kind's template asks: nothing more is asked
    assert restate("What is the role of examplumab in women with examplitis?") == (
        "examplumab in women with examplitis"
    )
    assert asked("What is the role of examplumab in women with examplitis?") == ""


def test_the_ways_analysts_ask_about_a_treatment_are_read_as_its_topic():
    assert restate("Is it safe to exercise during examplitis treatment?") == (
        "exercise during examplitis treatment"
    )
    assert restate("Is arvotinib necessary after surgery in women over 70?") == (
        "arvotinib after surgery in women over 70"
    )
    assert restate("What is the evidence for yoga in examplitis?") == "yoga in examplitis"
    assert restate("What is the best treatment for examplitis in adults?") == (
        "treatment for examplitis in adults"
    )
    assert restate("What happened at the 2031 Examplia train collision?") == (
        "2031 Examplia train collision"
    )
    which = frame_question("Which is better for examplitis, arvotinib or belzumab?")
    assert (which.kind, which.arms, which.setting) == (
        "comparison",
        ("arvotinib", "belzumab"),
        "examplitis",
    )
    # a choice between two medicines has no focus on either (``split_topic``)
    assert split_topic("Should postmenopausal women take arvotinib or examplifen?")[1] == ""
    should = frame_question("Should postmenopausal women take arvotinib or belzumab?")
    assert (should.kind, should.arms, should.setting) == (
        "comparison",
        ("arvotinib", "belzumab"),
        "postmenopausal women",
    )


def test_a_comparison_written_as_a_question_is_a_comparison():
    assert restate("Is examplumab as effective as belzumab in adults with examplitis?") == (
        "examplumab versus belzumab in adults with examplitis"
    )
    frame = frame_question("Is arvotinib better than belzumab in advanced examplitis?")
    assert frame.kind == "comparison"
    assert frame.arms == ("arvotinib", "belzumab")
    assert frame.setting == "advanced examplitis"


def test_names_and_topics_are_not_questions():
    for name in ("Will Smith", "May Day", "When Harry Met Sally", "Examplumab in examplitis"):
        assert not is_question(name)
        assert restate(name) == name
        assert asked(name) == ""


def test_the_syllabus_leads_with_what_is_asked():
    # the template question that is the ask in other words becomes it and keeps its key
    harms = base_template("auto", "What are the side effects of examplumab?")
    assert harms.questions[0].key == "clinical.safety"
    assert harms.questions[0].label == "What are the side effects of examplumab?"
    assert [q.key for q in harms.questions].count("clinical.safety") == 1
    effects = base_template("auto", "What were the consequences of Typhoon Examplo?")
    assert effects.questions[0].key == "impact.effects"
    assert "Deaths, injuries, damage" in effects.questions[0].description
    # ... one whose label names several things, the ask one of them, stays a question of its
    # own: the ask takes only the parts of its description that share its words
    causes = base_template("auto", "What caused the 2031 Examplia floods?")
    assert causes.questions[0].key == ASKED_KEY
    assert causes.questions[0].label == "What caused the 2031 Examplia floods?"
    assert causes.questions[0].description.endswith("What caused or shaped it")
    assert "criticism" not in causes.questions[0].description
    assert "debate.controversies" in [q.key for q in causes.questions]
    why = base_template("auto", "Why did Examplo Bank collapse?").questions[0]
    assert why.key == ASKED_KEY and why.description.endswith("What caused or shaped it")
    # an ask no template question shares is a question of its own, first
    prepared = base_template("auto", "How did Examplia prepare for Typhoon Examplo?")
    assert prepared.name == "auto (event)"
    assert prepared.questions[0].key == ASKED_KEY
    assert len(prepared.questions) == 7
    assert len(causes.questions) == 7
    # ... described in the words its answers use, for the asks the template data knows
    assert prepared.questions[0].description.endswith(
        "Warnings, evacuations, closures and other preparations made before it"
    )
    wrong = base_template("auto", "What went wrong with the Examplo Deep submersible?")
    assert wrong.questions[0].key == ASKED_KEY
    assert wrong.questions[0].description.endswith(
        "Failures, faults, warnings and safety concerns, and what caused them"
    )
    other = base_template("auto", "How did Examplia celebrate Examplo Day?").questions[0]
    assert other.key == ASKED_KEY
    assert other.description.endswith("The answer to the question as asked")
    # a topic keeps its template as it was
    assert base_template("auto", "Typhoon Examplo").questions[0].key == "background.overview"


def test_a_comparison_for_preventing_a_condition_asks_for_that_outcome():
    """The primary outcome of treatments given to prevent or treat a condition is that
    condition, not a cancer trial's survival."""
    assert purpose("Arvotinib versus belzumab for preventing examplitis in adults") == "Examplitis"
    assert purpose("Arvotinib versus belzumab in advanced examplitis") == ""
    efficacy = base_template("auto", "Arvotinib versus belzumab to treat examplitis").questions[0]
    assert efficacy.description.startswith("Examplitis and other primary outcomes")


def test_the_asked_question_is_found_again_unless_the_analyst_relabels_it():
    """Co-STORM's report leads with the question the analyst asked, found by its label."""
    topic = "What caused the 2031 Examplia floods?"
    syllabus = base_template("auto", topic)
    assert asked_key(syllabus, topic) == ASKED_KEY
    relabelled = syllabus.model_copy(
        update={
            "questions": [
                syllabus.questions[0].model_copy(update={"label": "Causes"}),
                *syllabus.questions[1:],
            ]
        }
    )
    assert asked_key(relabelled, topic) is None
    assert asked_key(base_template("auto", "Typhoon Examplo"), "Typhoon Examplo") is None


def test_only_the_dev_set_types_questions_as_questions():
    """The unseen, calibration and hold-out questions are topics: reading questions as their
    topic changes none of them. The dev set types half of its questions as an analyst asks them,
    so its figures measure that reading too."""
    data = Path(__file__).parent.parent / "bench" / "data"

    def questions(name: str) -> list[str]:
        path = data / f"questions_{name}.jsonl"
        return [json.loads(line)["question"] for line in path.open(encoding="utf-8")]

    topics = [q for name in ("unseen", "calibration", "holdout") for q in questions(name)]
    assert len(topics) >= 36
    for q in topics:
        assert not is_question(q) and restate(q) == q.rstrip("?.! ") and asked(q) == ""
    asking = [q for q in questions("dev") if is_question(q)]
    assert len(asking) >= 5 and sum(restate(q) != q.rstrip("?") for q in asking) >= 5
