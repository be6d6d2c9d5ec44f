"""litellm writing from per-question material, through the real litellm
client and the loopback OpenAI-compatible server: the section prompt carries its syllabus
question and the snippets of the sources assigned to it, and a reply citing anything else is
re-asked once, then written by the extractive engine from the same snippets."""

from __future__ import annotations

import json

from research.devtools.loopback_llm import LoopbackLLM, Reply
from research.devtools.loopback_responder import default_responder, material_of, step_of
from research.engines import base as b
from research.engines.litellm import LiteLLMEngine
from research.models import OutlineSection, Question, ReportSection, RunConfig
from tests.llm_fixtures import MODEL

TOPIC = "Trastuzumab in HER2-positive breast cancer"
SAFETY = Question(
    key="clinical.safety",
    label="Safety Profile",
    description="Adverse events, toxicity, contraindications",
    min_sources=5,
)
SNIPPETS = [  # whole sentences from the shared corpus (PMID 22987084, NSABP B-31 cardiac follow-up)
    b.Snippet(
        n=1,
        source_id="src_004",
        title="Seven-year follow-up assessment of cardiac function in NSABP B-31",
        text="Cardiac dysfunction is a significant adverse effect of trastuzumab therapy.",
    ),
    b.Snippet(
        n=2,
        source_id="src_009",
        title="Trastuzumab after adjuvant chemotherapy in HER2-positive breast cancer",
        text="Severe cardiotoxicity developed in 0.5% of the women who were treated with trastuzumab.",
    ),
]


def _section_input() -> b.SectionInput:
    return b.SectionInput(
        topic=TOPIC,
        section=OutlineSection(heading="Cardiac Safety"),
        snippets=SNIPPETS,
        question=SAFETY,
    )


def test_section_prompt_carries_question_and_assigned_snippets(llm_env, monkeypatch):
    seen = []

    def responder(body):
        if step_of(body) == "write_section":
            seen.append(material_of(body))
        return default_responder(body)

    with LoopbackLLM(responder) as srv:
        monkeypatch.setenv("OPENAI_API_BASE", srv.url)
        eng = LiteLLMEngine(RunConfig(topic=TOPIC, engine="litellm", models={"*": MODEL}))
        out = eng.write_section(_section_input())
    m = seen[0]
    assert m["question"] == {
        "key": "clinical.safety",
        "label": "Safety Profile",
        "description": "Adverse events, toxicity, contraindications",
    }
    assert [s["n"] for s in m["snippets"]] == m["allowed_citations"] == [1, 2]
    assert m["snippets"][0]["title"].startswith("Seven-year follow-up")
    assert "[1]" in out.text and "[2]" in out.text


def test_citation_outside_the_assigned_sources_is_reasked(llm_env, monkeypatch):
    calls = []

    def responder(body):
        if step_of(body) != "write_section":
            return default_responder(body)
        calls.append(body)
        if len(calls) == 1:  # cites a number that is not among its snippets
            return Reply(
                content=json.dumps(
                    {
                        "text": "Cardiac dysfunction is a significant adverse effect [1]. "
                        "Trastuzumab was approved in 1998 [7]."
                    }
                )
            )
        return default_responder(body)

    with LoopbackLLM(responder) as srv:
        monkeypatch.setenv("OPENAI_API_BASE", srv.url)
        eng = LiteLLMEngine(RunConfig(topic=TOPIC, engine="litellm", models={"*": MODEL}))
        out = eng.write_section(_section_input())
    assert len(calls) == 2
    assert (
        "not snippet numbers" in calls[1]["messages"][-1]["content"]
        and "[1, 2]" in calls[1]["messages"][-1]["content"]
    )
    assert "[7]" not in out.text and "1998" not in out.text and "[1]" in out.text


def test_persistent_outside_citation_falls_back_to_extractive_writing(llm_env, monkeypatch):
    bad = Reply(content=json.dumps({"text": "Trastuzumab was approved in 1998 [7]."}))
    with LoopbackLLM(
        lambda body: bad if step_of(body) == "write_section" else default_responder(body)
    ) as srv:
        monkeypatch.setenv("OPENAI_API_BASE", srv.url)
        eng = LiteLLMEngine(RunConfig(topic=TOPIC, engine="litellm", models={"*": MODEL}))
        out = eng.write_section(_section_input())
        assert srv.stats()["ok"] == 2
    assert "[7]" not in out.text and "1998" not in out.text
    assert (
        "Cardiac dysfunction is a significant adverse effect of trastuzumab therapy.[1]" in out.text
    )


def test_lead_prompt_lists_the_questions_and_their_status(llm_env, monkeypatch):
    seen = []

    def responder(body):
        if step_of(body) == "write_lead":
            seen.append(material_of(body))
        return default_responder(body)

    qs = [
        b.LeadQuestion(
            key="clinical.safety",
            label="Safety Profile",
            heading="Cardiac Safety",
            status="answered",
            sources_found=6,
            min_sources=5,
        ),
        b.LeadQuestion(
            key="market.status",
            label="Market Status",
            heading="Market Status",
            status="insufficient",
            sources_found=1,
            min_sources=3,
        ),
    ]
    with LoopbackLLM(responder) as srv:
        monkeypatch.setenv("OPENAI_API_BASE", srv.url)
        eng = LiteLLMEngine(RunConfig(topic=TOPIC, engine="litellm", models={"*": MODEL}))
        lead = eng.write_lead(
            b.LeadInput(
                topic=TOPIC,
                questions=qs,
                sections=[
                    ReportSection(
                        heading="Cardiac Safety",
                        text="Cardiac dysfunction is a significant adverse effect [1].",
                    )
                ],
            )
        )
    assert lead.text
    assert seen[0]["questions"] == [
        "Safety Profile (under “Cardiac Safety”): answered (6 of 5 sources)",
        "Market Status: insufficient (1 of 3 sources)",
    ]
