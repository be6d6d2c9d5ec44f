"""A syllabus fitted to the query (``--template auto``) and plan review
(``--review`` → ``awaiting_review`` → ``research plan`` / ``research approve``).

Real parts: the extractive engine with the real MiniLM embedder, the real redis-server fixture,
the ``research`` command in process (``research.cli.commands``), the 60-document real corpus.
"""

from __future__ import annotations

import json

import pytest

from research import jobs
from research.cli import main
from research.devtools.loopback_llm import LoopbackLLM, Reply
from research.engines.base import FitInput, PersonaInput
from research.engines.extractive import ExtractiveEngine
from research.engines.extractive.fitting import is_subject_phrase
from research.engines.litellm import LiteLLMEngine
from research.errors import InputError
from research.jobs import review
from research.models import Perspective, Plan, RunConfig, Step, Syllabus, TopicOutline
from research.planning.edit import PlanBundle, apply_edit, diff
from research.planning.syllabus import (
    base_template,
    check_template,
    template_choices,
    template_names,
)
from research.store.collector import SourceCollector
from research.store.runs import RunStore
from research.text.entities import split_topic, topic_kind
from tests.llm_fixtures import MODEL

CARDIO = "Trastuzumab cardiotoxicity in HER2-positive breast cancer"


# ---------------------------------------------------------------- item 1: auto syllabus
def test_template_choices_and_topic_kind():
    assert template_choices() == ["auto", *template_names()]
    assert check_template(" AUTO ") == "auto"
    with pytest.raises(
        InputError,
        match="choose one of auto, comparison, condition, device, drug, event, general, intervention, "
        "person",
    ):
        check_template("nope")
    assert topic_kind(CARDIO) == "drug" and topic_kind("Imatinib resistance") == "drug"
    assert topic_kind("mRNA vaccines") == "drug"
    assert (
        topic_kind("2022 Winter Olympics") == "general"
        and topic_kind("Large language model") == "general"
    )
    assert base_template("auto", CARDIO).keys() == base_template("drug", "x").keys()
    assert base_template("auto", "2022 Winter Olympics").name == "auto (event)"
    assert base_template("auto", "Silicon Valley Bank").name == "auto (person)"
    assert base_template("auto", "Zoledronic acid in early breast cancer").name == "auto (drug)"


def test_split_topic():

    assert split_topic(CARDIO) == ("Trastuzumab", "cardiotoxicity", "HER2-positive breast cancer")
    assert split_topic("Trastuzumab in HER2-positive breast cancer")[1] == ""
    assert split_topic("Large language model") == ("Large language model", "", "")


@pytest.fixture(scope="module")
def engine():

    return ExtractiveEngine()


CARDIO_SURVEY = [  # section names as the extractive survey produces them (key phrases, title case)
    TopicOutline(
        topic="Trastuzumab cardiotoxicity",
        sections=[
            "Left Ventricular Ejection Fraction",
            "Cardiac Monitoring",
            "Congestive Heart Failure",
            "Anthracycline Exposure",
            "Echocardiography",
        ],
    ),
    TopicOutline(
        topic="Cardio-oncology",
        sections=[
            "Risk Factors",
            "ACE Inhibitors",
            "Beta-Blockers",
            "Recovery of Cardiac Function",
        ],
    ),
]


def test_auto_syllabus_for_a_focused_drug_topic_names_its_subjects(engine):

    s = engine.fit_syllabus(
        FitInput(topic=CARDIO, syllabus=base_template("auto", CARDIO), related=CARDIO_SURVEY)
    )
    labels = " | ".join(q.label.lower() for q in s.questions)
    assert 4 <= len(s.questions) <= 8, labels
    for word in ("monitoring", "risk", "prevention"):
        assert word in labels, labels
    assert all("cardiotoxicity" in q.label.lower() for q in s.questions), labels
    assert not {"history", "key actors", "intellectual property", "market status"} & set(
        labels.split(" | ")
    )
    assert len(set(s.keys())) == len(s.keys()) and all(k.count(".") == 1 for k in s.keys())
    monitoring = next(q for q in s.questions if "monitoring" in q.label.lower())
    assert "corpus:" in monitoring.description  # grounded in the survey's phrases
    # personas follow the syllabus: specialists named after the fitted questions

    personas = engine.personas(
        PersonaInput(topic=CARDIO, related=CARDIO_SURVEY, syllabus=s, max_perspectives=4)
    )
    assert [p.name for p in personas.perspectives][1:] == [
        f"{q.label.split(':')[0]} Specialist" for q in s.questions[:3]
    ]
    # a label says its aspect, then the focus: never the focus glued before a template word
    assert all(
        q.label.lower().startswith(("mechanism", "risk", "monitoring", "prevention", "outcomes"))
        or ":" in q.label
        for q in s.questions
    ), labels
    assert not any(q.label.lower().startswith("cardiotoxicity ") for q in s.questions), labels


def test_auto_syllabus_for_a_general_topic_adds_survey_subjects(engine):

    topic = "2022 Winter Olympics"
    survey = [
        TopicOutline(
            topic="Beijing 2022",
            sections=[
                "Alpine Skiing",
                "Figure Skating",
                "COVID-19 Protocols",
                "Medal Table",
                "Venues",
            ],
        )
    ]
    base = base_template("auto", topic)
    s = engine.fit_syllabus(FitInput(topic=topic, syllabus=base, related=survey))
    assert 4 <= len(s.questions) <= 8 and len(set(s.keys())) == len(s.keys())
    fitted = [q for q in s.questions if q.key.startswith("topic.")]
    assert 1 <= len(fitted) <= 2 and s.keys()[:6] == base.keys(), s.keys()
    assert all(
        q.label
        in {"Alpine Skiing", "Figure Skating", "COVID-19 Protocols", "Medal Table", "Venues"}
        for q in fitted
    )


def test_the_question_the_analyst_asked_keeps_its_own_words(engine):
    """Fitting grounds each question in the corpus's nearby phrases, but not the question the
    analyst asked in so many words: "flood victims" would change what "What caused it?" asks.
    A fitted question names the subject, not the whole question."""
    topic = "What caused the 2031 Examplia floods?"
    survey = [
        TopicOutline(
            topic="2031 Examplia floods",
            sections=["Flood Victims", "Monsoon Rains", "Relief Efforts", "Economic Losses"],
        )
    ]
    base = base_template("auto", topic)
    s = engine.fit_syllabus(FitInput(topic=topic, syllabus=base, related=survey))
    asked = s.questions[0]
    assert asked.label == topic and "(corpus:" not in asked.description
    assert all("What caused the" not in q.description for q in s.questions[1:])


def test_subject_phrases_exclude_fragments_and_restatements():

    assert is_subject_phrase("Maximum Sustained Winds", "Hurricane Hilary")
    assert not is_subject_phrase("Oliver Taylor Hawkins", "Taylor Hawkins")  # restates the topic
    assert not is_subject_phrase("Passage 59", "Taylor Hawkins")
    assert not is_subject_phrase("Hurricane Hunter Flight Later", "Typhoon Hinnamnor")
    assert not is_subject_phrase("Venues", "2022 Winter Olympics")


def test_auto_syllabus_for_an_unfocused_drug_topic_keeps_the_drug_questions(engine):

    topic = "Trastuzumab in HER2-positive breast cancer"
    s = engine.fit_syllabus(
        FitInput(topic=topic, syllabus=base_template("auto", topic), related=CARDIO_SURVEY)
    )
    assert s.keys() == base_template("drug", topic).keys()


def test_litellm_planner_proposes_questions_and_falls_back_to_the_template(llm_env, monkeypatch):

    base = base_template("auto", CARDIO)
    eng = LiteLLMEngine(RunConfig(topic=CARDIO, engine="litellm", models={"*": MODEL}))
    s = eng.fit_syllabus(FitInput(topic=CARDIO, syllabus=base, related=CARDIO_SURVEY))
    assert 4 <= len(s.questions) <= 8 and s.keys() != base.keys()
    assert "Left Ventricular Ejection Fraction" in [q.label for q in s.questions]
    bad = {"questions": [{"key": "Not A Key", "label": "x", "description": "", "min_sources": 99}]}
    with LoopbackLLM(lambda body: Reply(content=json.dumps(bad))) as srv:
        monkeypatch.setenv("OPENAI_API_BASE", srv.url)
        eng = LiteLLMEngine(RunConfig(topic=CARDIO, engine="litellm", models={"*": MODEL}))
        assert (
            eng.fit_syllabus(FitInput(topic=CARDIO, syllabus=base, related=CARDIO_SURVEY)) == base
        )


# ---------------------------------------------------------------- item 2: the validator
def _bundle() -> PlanBundle:
    return PlanBundle(
        plan=Plan(
            plan_title="Research plan: x", steps=[Step(step_id=1, title="Survey", description="d")]
        ),
        syllabus=base_template("drug", "x"),
        perspectives=[
            Perspective(name="Basic Fact Writer", focus="facts", questions=["q1"]),
            Perspective(name="Safety Specialist", focus="safety", questions=["q2"]),
        ],
    )


@pytest.mark.parametrize(
    "edit, fragment",
    [
        ({"syllabus": {"questions": []}}, "at least one question"),
        (
            {
                "syllabus": {
                    "questions": [
                        {"key": "a.b", "label": "A", "min_sources": 3},
                        {"key": "a.b", "label": "B", "min_sources": 3},
                    ]
                }
            },
            "used twice",
        ),
        (
            {"syllabus": {"questions": [{"key": "Bad Key", "label": "A", "min_sources": 3}]}},
            "must be area.name",
        ),
        (
            {"syllabus": {"questions": [{"key": "a.b.c", "label": "A", "min_sources": 3}]}},
            "must be area.name",
        ),
        (
            {"syllabus": {"questions": [{"key": "a.b", "label": "A", "min_sources": 0}]}},
            "from 1 to 20",
        ),
        (
            {"syllabus": {"questions": [{"key": "a.b", "label": "A", "min_sources": 21}]}},
            "from 1 to 20",
        ),
        (
            {"syllabus": {"questions": [{"key": "a.b", "label": "A", "min_sources": 2.5}]}},
            "whole number",
        ),
        (
            {"syllabus": {"questions": [{"key": "a.b", "label": "", "min_sources": 3}]}},
            "give it a label",
        ),
        ({"perspectives": []}, "at least one perspective"),
        (
            {"perspectives": [{"name": "A", "focus": "x"}, {"name": "a", "focus": "y"}]},
            "used twice",
        ),
        ({"perspectives": [{"name": "A", "focus": ""}]}, "give it a focus"),
        ({"plan": {"steps": []}}, "at least one step"),
        ({"extra": 1}, "Unknown keys extra"),
        ([1, 2], "JSON object"),
    ],
)
def test_validator_rejects_bad_edits_with_clear_messages(edit, fragment):
    with pytest.raises(InputError, match=fragment) as exc:
        apply_edit(_bundle(), edit)
    assert exc.value.code == "invalid_plan"


def test_validator_applies_a_subset_and_reports_the_diff():
    old = _bundle()
    rows = [q.model_dump() for q in old.syllabus.questions[:3]]
    rows[2] = {
        "key": "",
        "label": "Cardiac monitoring",
        "description": "LVEF checks",
        "min_sources": "4",
    }
    new = apply_edit(
        old,
        {
            "syllabus": {"questions": rows},
            "perspectives": [
                {"name": "Basic Fact Writer", "focus": "facts"},
                {"name": "Cardiologist", "focus": "heart"},
            ],
        },
    )
    assert new.syllabus.keys() == [
        "mechanism.moa",
        "clinical.efficacy",
        "custom.cardiac_monitoring",
    ]
    assert new.syllabus.questions[2].min_sources == 4 and new.plan == old.plan
    assert new.perspectives[0].questions == ["q1"]  # unchanged persona keeps its questions
    d = diff(old, new)
    assert d["questions"]["added"] == ["custom.cardiac_monitoring"]
    assert set(d["questions"]["removed"]) == {
        "clinical.safety",
        "competitive.landscape",
        "market.status",
        "ip.patents",
    }
    assert d["perspectives"] == {
        "added": ["Cardiologist"],
        "removed": ["Safety Specialist"],
        "changed": [],
    }
    assert d["changed"] and not d["steps"]["changed"]


# ---------------------------------------------------------------- item 2: CLI round trip
def _cli(capsys, *args: str) -> tuple[int, str, str]:

    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.timeout(900)
def test_cli_review_round_trip(data_dir, r, finished_corpus, capsys, tmp_path):

    code, out, err = _cli(
        capsys,
        "run",
        CARDIO,
        "--corpus",
        str(finished_corpus),
        "--max-perspectives",
        "2",
        "--max-turns",
        "1",
        "--review",
        "--json",
    )
    assert code == 0, err
    summary = json.loads(out)
    run_id = summary["run_id"]
    assert summary["status"] == "awaiting_review" and summary["sources"] == 0
    store = RunStore(r)
    assert store.get_run(run_id).status == "awaiting_review"  # not interrupted: no job, no lease
    assert store.count_turns(run_id) == 0
    types = [e.type for e in store.events(run_id)]
    assert "syllabus.fitted" in types and "review.awaiting" in types

    code, out, _ = _cli(capsys, "plan", run_id, "--json")
    bundle = json.loads(out)
    assert set(bundle) == {"plan", "syllabus", "perspectives"}
    labels = [q["label"].lower() for q in bundle["syllabus"]["questions"]]
    assert any("monitoring" in x for x in labels) and not any("history" in x for x in labels), (
        labels
    )

    # bad input: invalid file, unknown run, run not awaiting review → exit 2, nothing changed
    bad = tmp_path / "bad.json"
    bad.write_text(
        json.dumps({"syllabus": {"questions": [{"key": "x", "label": "X", "min_sources": 50}]}})
    )
    code, _, err = _cli(capsys, "approve", run_id, "--plan", str(bad))
    assert code == 2 and "area.name" in err and "from 1 to 20" in err
    code, _, err = _cli(capsys, "approve", run_id, "--plan", str(tmp_path / "missing.json"))
    assert code == 2 and "Cannot read the plan file" in err
    code, _, err = _cli(capsys, "approve", "0123456789abcdef")
    assert code == 2 and "No run" in err
    assert store.get_run(run_id).status == "awaiting_review"
    assert [
        q["key"]
        for q in json.loads(_cli(capsys, "plan", run_id, "--json")[1])["syllabus"]["questions"]
    ] == [q["key"] for q in bundle["syllabus"]["questions"]]

    # three questions replaced
    edited = bundle["syllabus"]["questions"][:-3] + [
        {
            "key": "cardiac.lvef",
            "label": "LVEF decline",
            "description": "How often LVEF falls",
            "min_sources": 2,
        },
        {
            "key": "cardiac.heart_failure",
            "label": "Heart failure",
            "description": "Symptomatic CHF",
            "min_sources": 2,
        },
        {
            "key": "cardiac.recovery",
            "label": "Recovery after stopping",
            "description": "Reversibility",
            "min_sources": 1,
        },
    ]
    path = tmp_path / "edited.json"
    path.write_text(json.dumps({"syllabus": {"questions": edited}}))
    code, out, err = _cli(capsys, "approve", run_id, "--plan", str(path), "--json")
    assert code == 0, err
    done = json.loads(out)
    want = [q["key"] for q in edited]
    assert done["status"] == "complete" and list(done["questions"]) == want
    assert store.get_doc(run_id, "syllabus", Syllabus).keys() == want
    assert SourceCollector(r, run_id).syllabus().keys() == want  # the collector follows the edit
    sources = SourceCollector(r, run_id).all_sources()
    assert sources and {k for s in sources for k in s.relevant_questions} <= set(want)
    ev = next(e for e in store.events(run_id) if e.type == "plan.edited")
    assert set(ev.data["questions"]["added"]) == {
        "cardiac.lvef",
        "cardiac.heart_failure",
        "cardiac.recovery",
    }
    assert len(ev.data["questions"]["removed"]) == 3
    # the report is organised by the edited syllabus: one entry per edited question, in order
    shown = json.loads(_cli(capsys, "show", run_id, "--json")[1])
    assert [q["key"] for q in shown["report"]["questions"]] == want
    assert all(q["status"] in ("answered", "insufficient") for q in shown["report"]["questions"])

    code, _, err = _cli(capsys, "approve", run_id)  # no longer awaiting review
    assert code == 2 and "not awaiting review" in err


def test_review_is_storm_only(data_dir, finished_corpus):

    with pytest.raises(InputError, match="Plan review is for STORM runs"):
        jobs.make_config(CARDIO, corpus=str(finished_corpus), mode="costorm", review=True)


def test_cancel_at_review(data_dir, r, finished_corpus):

    config = jobs.make_config(
        "Large language model",
        corpus=str(finished_corpus),
        max_perspectives=1,
        max_turns=1,
        review=True,
    )
    state = jobs.run_foreground(config)
    assert state.status == "awaiting_review"
    review.cancel(state.run_id, by="test")
    assert RunStore(r).get_run(state.run_id).status == "cancelled"
    with pytest.raises(InputError, match="not awaiting review"):
        review.approve(state.run_id)
