"""The litellm engine's steps through the real litellm client to the loopback server."""

from __future__ import annotations

import json

import pytest

from research.devtools.loopback_llm import LoopbackLLM, Reply
from research.devtools.loopback_responder import default_responder, material_of, step_of
from research.engines import base as b
from research.engines.litellm import LiteLLMEngine
from research.engines.litellm import material as mat
from research.engines.litellm.structured import extract_json
from research.llm.errors import LLMError
from research.models import (
    ConversationResult,
    DialogueTurn,
    OutlineSection,
    Perspective,
    ReportSection,
    RunConfig,
    SearchResult,
    SummaryCard,
)
from research.planning.syllabus import get_template
from tests.llm_fixtures import CANARY_KEY, MODEL

TOPIC = "Trastuzumab in HER2-positive breast cancer"


def _results(n=3):
    return [
        SearchResult(
            url=f"https://example.org/{i}",
            title=f"Trial {i} of trastuzumab",
            snippets=[
                f"Trastuzumab improved survival in trial {i} of HER2-positive patients. More text."
            ],
            text="full text " * 50,
            query="trastuzumab survival",
        )
        for i in range(1, n + 1)
    ]


@pytest.fixture()
def engine(llm_env):
    return LiteLLMEngine(RunConfig(topic=TOPIC, engine="litellm", models={"*": MODEL}))


def test_every_step_parses(engine, llm_env):
    syl = get_template("drug")
    plan = engine.plan(b.PlanInput(topic=TOPIC, syllabus=syl))
    assert plan.steps and [s.step_id for s in plan.steps] == list(range(1, len(plan.steps) + 1))
    assert 1 <= len(engine.survey_queries(b.SurveyInput(topic=TOPIC)).queries) <= 5
    rel = engine.related_outline(b.RelatedInput(topic=TOPIC, query="her2", results=_results()))
    assert rel.sections and rel.source == "https://example.org/1"
    fitted = engine.fit_syllabus(
        b.FitInput(topic=TOPIC, syllabus=syl, related=[rel])
    )  # a syllabus fitted to the query
    assert (
        4 <= len(fitted.questions) <= 8 and fitted.keys() != syl.keys() and fitted.name == syl.name
    )
    personas = engine.personas(
        b.PersonaInput(topic=TOPIC, related=[rel], syllabus=syl, max_perspectives=2)
    )
    assert len(personas.perspectives) == 2
    p = personas.perspectives[0]
    ask = engine.ask_question(
        b.AskInput(
            topic=TOPIC, perspective=p, history=[], next_focus=syl.questions[:2], max_turns=2
        )
    )
    assert ask.question and ask.focus_question in {"", *syl.keys()}
    assert 1 <= len(ask.queries) <= 3 and all(
        q.strip() for q in ask.queries
    )  # queries in the same call
    assert engine.question_to_queries(b.QueryInput(topic=TOPIC, question=ask.question)).queries
    ans = engine.answer_question(
        b.AnswerInput(topic=TOPIC, question=ask.question, results=_results())
    )
    assert ans.cited and set(ans.cited) <= {1, 2, 3} and "[1]" in ans.answer
    asg = engine.assign_questions(
        b.AssignInput(
            syllabus=syl, question=ask.question, focus=[syl.keys()[0]], results=_results()
        )
    )
    assert len(asg.relevant_questions) == len(asg.key_excerpts) == 3
    assert all(set(k) <= set(syl.keys()) for k in asg.relevant_questions)
    card_of_search = b.TurnCard(
        query="trastuzumab survival",
        card=SummaryCard(
            summary_title="Trials of trastuzumab",
            summary="Three trials report improved survival.",
            extraction=["Trial 1: survival improved"],
            is_useful=True,
        ),
    )
    both = engine.answer_and_assign(
        b.AnswerAssignInput(  # one call, one copy of the results
            answer=b.AnswerInput(
                topic=TOPIC, question=ask.question, results=_results(), turn_cards=[card_of_search]
            ),
            syllabus=syl,
            focus=[syl.keys()[0]],
        )
    )
    assert both.answer.cited and set(both.answer.cited) <= {1, 2, 3}
    assert (
        both.assigned
        and len(both.assigned.relevant_questions) == len(both.assigned.key_excerpts) == 3
    )
    assert all(set(k) <= set(syl.keys()) for k in both.assigned.relevant_questions)
    sent = material_of(
        next(x for x in reversed(llm_env.bodies) if step_of(x) == "answer_and_assign")
    )
    assert (
        sent["notes"][0]["summary"] == "Three trials report improved survival."
    )  # the turn's card is in the prompt
    assert [r.split("]")[0] for r in sent["results"]] == [
        "[1",
        "[2",
        "[3",
    ]  # each result once, one line
    assert all(
        len(r.split(": ", 1)[1]) <= mat.CARDED_CHARS for r in sent["results"]
    )  # … the card stands in
    assert sent["keys"] == ", ".join(syl.keys()) and "topic" not in sent
    card = engine.compress(
        b.CompressInput(
            plan_title="p",
            step_title="s",
            step_description="d",
            tool_name="search_local",
            raw_output=json.dumps({"query": "q", "results": [r.model_dump() for r in _results()]}),
        )
    )
    assert card.is_useful and card.summary_title
    facts = [
        b.Fact(text="Trastuzumab improves survival.", source_id=f"src_00{i}") for i in range(1, 5)
    ]
    analysis = engine.analyze(b.AnalysisInput(topic=TOPIC, facts=facts))
    assert analysis.facts_total == 4 and all(
        len(c.source_ids) >= 2 for c in analysis.cross_validated
    )
    draft = engine.draft_outline(b.OutlineInput(topic=TOPIC))
    assert draft.sections
    turn = DialogueTurn(perspective=p.name, turn_number=1, question="q?", answer="a [1].")
    refined = engine.refine_outline(
        b.RefineInput(
            topic=TOPIC,
            draft=draft,
            conversations=[ConversationResult(perspective=p, turns=[turn])],
        )
    )
    assert len(refined.sections) >= len(draft.sections)
    sec = engine.write_section(
        b.SectionInput(
            topic=TOPIC,
            section=OutlineSection(heading="Efficacy"),
            snippets=[
                b.Snippet(
                    n=1,
                    source_id="src_001",
                    text="Trastuzumab improved overall survival in the HERA trial.",
                )
            ],
        )
    )
    assert "[1]" in sec.text
    lead = engine.write_lead(
        b.LeadInput(topic=TOPIC, sections=[ReportSection(heading="Efficacy", text=sec.text)])
    )
    assert lead.text
    # polish removes repeated sentences without a call: the writer's prompt asks for clean prose
    assert engine.polish(b.PolishInput(topic=TOPIC, text=sec.text)).text == sec.text
    twice = f"{sec.text} {sec.text}"
    assert engine.polish(b.PolishInput(topic=TOPIC, text=twice)).text.strip() == sec.text.strip()
    assert engine.session.accountant.totals["calls"] == llm_env.stats()["ok"] == 16
    steps = {n for n in vars(b.Engine) if not n.startswith("_") and callable(getattr(b.Engine, n))}
    steps -= {"fallbacks"}  # the engine's count of steps answered offline, not a step
    assert set(llm_env.stats()["by_step"]) == steps - {"polish"} and len(steps) == 17


def test_reask_once_on_invalid_reply_and_think_blocks(llm_env, monkeypatch):
    calls = []

    def responder(body):
        calls.append(body)
        if len(calls) == 1:
            return Reply(content="<think>let me see</think> not json at all")
        return Reply(
            content="<think>ok</think>```json\n" + default_responder(body).content + "\n```"
        )

    with LoopbackLLM(responder) as srv:
        monkeypatch.setenv("OPENAI_API_BASE", srv.url)
        eng = LiteLLMEngine(RunConfig(topic=TOPIC, engine="litellm", models={"*": MODEL}))
        out = eng.survey_queries(b.SurveyInput(topic=TOPIC))
    assert out.queries and len(calls) == 2
    assert "did not validate" in calls[1]["messages"][-1]["content"]
    assert calls[1]["response_format"]["type"] == "json_schema"


def test_invalid_twice_falls_back_to_extractive(llm_env, monkeypatch):
    with LoopbackLLM(lambda body: Reply(content="nope", finish_reason="length")) as srv:
        monkeypatch.setenv("OPENAI_API_BASE", srv.url)
        eng = LiteLLMEngine(RunConfig(topic=TOPIC, engine="litellm", models={"*": MODEL}))
        out = eng.survey_queries(b.SurveyInput(topic=TOPIC))
        assert srv.stats()["ok"] == 2  # the call and exactly one re-ask
    assert out.queries  # the extractive engine answered


def test_extract_json_and_step_marker():
    assert json.loads(extract_json('<think>x {"a": 2}</think>Here: {"a": 1} thanks')) == {"a": 1}
    assert (
        step_of({"messages": [{"role": "system", "content": "[step: write_lead]\nx"}]})
        == "write_lead"
    )


def test_auth_error_is_raised_with_its_code(llm_env, monkeypatch):
    class Srv(LoopbackLLM):
        def handle(self, body):
            return (
                401,
                {"Content-Type": "application/json"},
                json.dumps(
                    {
                        "error": {
                            "message": "Incorrect API key provided",
                            "type": "invalid_request_error",
                            "code": "invalid_api_key",
                        }
                    }
                ).encode(),
            )

    with Srv() as srv:
        monkeypatch.setenv("OPENAI_API_BASE", srv.url)
        eng = LiteLLMEngine(RunConfig(topic=TOPIC, engine="litellm", models={"*": MODEL}))

        with pytest.raises(LLMError) as ei:
            eng.survey_queries(b.SurveyInput(topic=TOPIC))
    assert ei.value.code == "auth_error" and CANARY_KEY not in ei.value.message


def test_asker_sees_a_bounded_history_and_writes_the_queries(engine, llm_env):
    """ONE asker call returns the question and its search queries; its material
    holds the questions asked, the last answer only (clipped, no citation markers) and the open
    syllabus questions as ``{key: label}`` (no descriptions)."""
    syl = get_template("drug")
    p = Perspective(name="Oncologist", focus="treatment decisions")
    history = [
        DialogueTurn(
            perspective=p.name,
            turn_number=i,
            question=f"Question {i}?",
            answer=("Trastuzumab improved survival [1]. " * 20) + f"turn {i}",
        )
        for i in (1, 2)
    ]
    ask = engine.ask_question(
        b.AskInput(
            topic=TOPIC, perspective=p, history=history, next_focus=syl.questions[:4], max_turns=3
        )
    )
    m = material_of(next(x for x in reversed(llm_env.bodies) if step_of(x) == "ask_question"))
    assert m["asked"] == ["Question 1?", "Question 2?"] and m["perspective"] == "Oncologist"
    assert len(m["last_answer"]) <= mat.ASK_ANSWER_CHARS and "[1]" not in m["last_answer"]
    assert "turn 1" not in str(m) and m["last_answer"].endswith("…")  # earlier answers are not sent
    assert m["open"] == {q.key: q.label for q in syl.questions[:3]} and "description" not in str(m)
    assert ask.focus_question in m["open"] and 1 <= len(ask.queries) <= 3
    assert llm_env.stats()["by_step"].get("question_to_queries", 0) == 0
    done = engine.ask_question(
        b.AskInput(topic=TOPIC, perspective=p, history=history + [history[0]], max_turns=3)
    )
    assert b.THANKS in done.question and done.queries == []


def test_a_lead_must_cite_the_sections_and_none_is_asked_for_with_nothing_to_cite(
    llm_env, monkeypatch
):
    """A small model's lead can be a confident invention ("a discovery changes everything")
    with no citation: it is re-asked, then written offline; when no section cites a source
    there is no finding to state, so the offline engine writes the lead without a call."""
    invented = '{"text": "Our team discovered a new disease that changes everything."}'
    with LoopbackLLM(lambda body: Reply(content=invented)) as srv:
        monkeypatch.setenv("OPENAI_API_BASE", srv.url)
        eng = LiteLLMEngine(RunConfig(topic=TOPIC, engine="litellm", models={"*": MODEL}))
        cited = [ReportSection(heading="Efficacy", text="Trastuzumab improved survival [1].")]
        lead = eng.write_lead(b.LeadInput(topic=TOPIC, sections=cited))
        assert srv.stats()["ok"] == 2  # the call and its re-ask
        assert "discovered" not in lead.text
        uncited = [ReportSection(heading="Efficacy", text="No source states the efficacy.")]
        eng.write_lead(b.LeadInput(topic=TOPIC, sections=uncited))
        assert srv.stats()["ok"] == 2  # no call
