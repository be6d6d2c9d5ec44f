"""Co-STORM with the litellm engine ("works with both engines"): every Co-STORM step
through the real litellm client and real HTTP to the loopback server, the sanitising of model
replies, and a short Co-STORM CLI run over the shared corpus."""

from __future__ import annotations

import json
import re

import pytest

import research.cli.commands as cli
from research.citations import check_integrity
from research.costorm import get_meta, get_mindmap, get_turns
from research.costorm.mindmap import MindItem, MindMap
from research.devtools.loopback_llm import LoopbackLLM, Reply
from research.devtools.loopback_responder import default_responder, step_of
from research.engines import costorm_steps as cs
from research.engines.costorm_steps import PoolItem
from research.engines.factory import costorm_steps as steps_for
from research.engines.litellm import LiteLLMEngine
from research.engines.litellm.costorm import LiteLLMCoStorm
from research.engines.steps import family
from research.models import CoStormTurn, Perspective, Report, RunConfig, SearchResult
from research.planning.syllabus import get_template
from research.store.runs import RunStore
from research.text.vectors import Vectors
from tests.llm_fixtures import MODEL

TOPIC = "Trastuzumab in HER2-positive breast cancer"
EXPERT = Perspective(
    name="Cardiology Expert",
    focus="Cardiac safety of trastuzumab",
    questions=["How common is LVEF decline?"],
)


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


def _turn(n, intent, role="Cardiology Expert", text="What about cardiac safety?"):
    return CoStormTurn(turn_number=n, role=role, intent=intent, utterance=text)


@pytest.fixture()
def steps(llm_env):
    return steps_for(LiteLLMEngine(RunConfig(topic=TOPIC, engine="litellm", models={"*": MODEL})))


def test_every_costorm_step_parses(steps, llm_env):
    assert isinstance(steps, LiteLLMCoStorm) and isinstance(steps, cs.CoStormSteps)
    assert steps.label == f"litellm ({MODEL})"
    experts = steps.generate_experts(
        cs.ExpertsInput(topic=TOPIC, background=_results(), n=3)
    ).perspectives
    assert (
        len(experts) == 3 and len({e.name for e in experts}) == 3 and all(e.focus for e in experts)
    )
    q_hist = [_turn(1, "information_request")]
    assert (
        steps.choose_intent(cs.IntentInput(topic=TOPIC, expert=EXPERT, history=[])).intent
        == "potential_answer"
    )
    a_hist = [*q_hist, _turn(2, "potential_answer", "Other Expert", "Trastuzumab works [1].")]
    assert steps.choose_intent(
        cs.IntentInput(topic=TOPIC, expert=EXPERT, history=a_hist)
    ).intent in ("further_details", "information_request")
    syl = get_template("drug")
    q = steps.expert_question(
        cs.ExpertQuestionInput(
            topic=TOPIC,
            expert=EXPERT,
            intent="information_request",
            history=a_hist,
            next_focus=syl.questions[:2],
        )
    ).text
    assert q.endswith("?") and syl.questions[0].label in q
    queries = steps.turn_queries(
        cs.TurnQueryInput(
            topic=TOPIC, expert=EXPERT, intent="further_details", question=q, history=a_hist
        )
    ).queries
    assert 1 <= len(queries) <= 3 and all(x.strip() for x in queries)
    ans = steps.expert_answer(
        cs.ExpertAnswerInput(
            topic=TOPIC,
            expert=EXPERT,
            intent="potential_answer",
            question=q,
            history=q_hist,
            results=_results(),
        )
    )
    assert ans.cited == [1, 2, 3] and "[3]" in ans.answer
    pol = steps.polish_utterance(
        cs.UtteranceInput(
            topic=TOPIC,
            role=EXPERT.name,
            intent="potential_answer",
            utterance=ans.answer,
            history=q_hist,
        )
    ).text
    assert set(re.findall(r"\[\d+\]", pol)) == set(re.findall(r"\[\d+\]", ans.answer))
    items = [
        PoolItem(text=r.snippets[0], question="survival?", turn=1, result=r) for r in _results(2)
    ]
    mod = steps.moderator_question(
        cs.ModeratorInput(topic=TOPIC, items=items, concepts=["Efficacy"], history=a_hist)
    )
    assert mod.cited == [1] and "[1]" in mod.question and mod.question_only.endswith("?")
    panel = steps.update_experts(
        cs.ExpertUpdateInput(topic=TOPIC, experts=experts, question=mod.question, n=3)
    )
    assert [e.name for e in panel.perspectives] == [e.name for e in experts]
    root = TOPIC
    place = steps.choose_placement(
        cs.PlacementInput(
            topic=TOPIC,
            question="What is known about Efficacy?",
            text="x",
            candidates=[root, f"{root} > Safety"],
            similarities=[0.2, 0.1],
        )
    )
    assert place.path == root and place.new_node == "Efficacy"
    place = steps.choose_placement(
        cs.PlacementInput(
            topic=TOPIC,
            question="q",
            text="x",
            candidates=[f"{root} > Safety", root],
            similarities=[0.8, 0.2],
            allow_new=False,
        )
    )
    assert place.path == f"{root} > Safety" and place.new_node == ""
    subs = steps.subtopics(
        cs.SubtopicInput(
            topic=TOPIC,
            path=f"{root} > Safety",
            items=[f"Cardiotoxicity finding {i} in adjuvant cohorts." for i in range(11)],
        )
    )
    assert 2 <= len(subs.names) <= 4 and len({n.lower() for n in subs.names}) == len(subs.names)
    assert len(subs.assignment) == 11 and all(-1 <= a < len(subs.names) for a in subs.assignment)
    by_step = llm_env.stats()["by_step"]
    assert set(by_step) == set(family("costorm")) and len(family("costorm")) == 10
    assert steps.engine.session.accountant.totals["calls"] == sum(by_step.values())


def test_replies_are_sanitised(llm_env, monkeypatch):
    """Out-of-range citations are dropped, a question after a question becomes an answer, and a
    placement naming no candidate is re-asked once, then answered by the offline steps."""
    bad = {
        "costorm_intent": {"intent": "information_request"},
        "costorm_answer": {"answer": "Trastuzumab helps [2]. Also [7].", "cited": [2, 7]},
        "costorm_moderator": {
            "question": "Look [9]. And [1]. Why?",
            "question_only": "Why?",
            "cited": [9],
        },
        "costorm_placement": {"choice": 9, "new_node": ""},
    }
    seen: list[str] = []

    def responder(body):
        step = step_of(body)
        seen.append(step)
        return Reply(content=json.dumps(bad[step])) if step in bad else default_responder(body)

    with LoopbackLLM(responder) as srv:
        monkeypatch.setenv("OPENAI_API_BASE", srv.url)
        steps = LiteLLMCoStorm(
            LiteLLMEngine(RunConfig(topic=TOPIC, engine="litellm", models={"*": MODEL}))
        )
        assert (
            steps.choose_intent(
                cs.IntentInput(topic=TOPIC, expert=EXPERT, history=[_turn(1, "original_question")])
            ).intent
            == "potential_answer"
        )
        ans = steps.expert_answer(
            cs.ExpertAnswerInput(
                topic=TOPIC,
                expert=EXPERT,
                intent="potential_answer",
                question="q?",
                history=[],
                results=_results(2),
            )
        )
        assert ans.answer == "Trastuzumab helps [2]. Also." and ans.cited == [2]
        items = [
            PoolItem(
                text="A new finding on biosimilars.", question="q", turn=1, result=_results(1)[0]
            )
        ]
        mod = steps.moderator_question(
            cs.ModeratorInput(topic=TOPIC, items=items, concepts=[], history=[])
        )
        assert "[9]" not in mod.question and mod.cited == [1]
        place = steps.choose_placement(
            cs.PlacementInput(
                topic=TOPIC, question="q", text="x", candidates=[TOPIC], similarities=[1.0]
            )
        )
        assert place.path == TOPIC  # the extractive fallback answered
    # a reply naming no candidate is weak: re-asked once with the reason, then the offline steps
    assert seen.count("costorm_placement") == 2


def test_subtopics_reply_places_the_items_in_the_same_call(llm_env, monkeypatch):
    """The subtopics reply's assignment (1-based, 0 = stays) maps onto the names kept after
    sanitising; a reply that cannot place every item leaves the placing to the mind map."""
    path = f"{TOPIC} > Safety"
    items = [f"Finding {i} on cardiac events." for i in range(5)]
    replies = iter(
        [
            {
                "names": ["Cardiac Events", "Safety", "cardiac events", "Dosing"],
                "assignment": [1, 2, 3, 4, 0],
            },
            {"names": ["Cardiac Events", "Dosing"], "assignment": [1, 2]},  # 2 numbers for 5 items
            {"names": ["Cardiac Events", "Dosing"], "assignment": [1, 2, 3, 1, 1]},  # no third name
        ]
    )
    with LoopbackLLM(lambda body: Reply(content=json.dumps(next(replies)))) as srv:
        monkeypatch.setenv("OPENAI_API_BASE", srv.url)
        steps = LiteLLMCoStorm(
            LiteLLMEngine(RunConfig(topic=TOPIC, engine="litellm", models={"*": MODEL}))
        )
        first = steps.subtopics(cs.SubtopicInput(topic=TOPIC, path=path, items=items))
        assert first.names == [
            "Cardiac Events",
            "Dosing",
        ]  # the concept's own name and a repeat dropped
        assert first.assignment == [0, -1, -1, 1, -1]  # items sent to dropped names stay
        assert (
            steps.subtopics(cs.SubtopicInput(topic=TOPIC, path=path, items=items)).assignment == []
        )
        assert (
            steps.subtopics(cs.SubtopicInput(topic=TOPIC, path=path, items=items)).assignment == []
        )


def test_reorganize_costs_one_call_not_one_per_item(steps, llm_env):
    """Mind-map reorganize with the litellm steps: one costorm_subtopics call re-inserts every
    item of the over-full concept (it was one costorm_placement call per item)."""

    mm = MindMap.new(TOPIC)
    vectors = Vectors()
    texts = [
        f"Trastuzumab cardiotoxicity finding {i}: LVEF decline in adjuvant cohort {i}."
        for i in range(6)
    ] + [
        f"Trastuzumab biosimilar {i} showed equivalent pathologic complete response."
        for i in range(6)
    ]
    for t in texts:
        mm.add_item(
            MindItem(id=0, text=t, source_id="S1"),
            "What is known about Safety?",
            steps,
            vectors,
            k=100,
        )
    before = dict(llm_env.stats()["by_step"])
    full = next(p for p, n in mm.walk() if len(n.items) == len(texts))
    mm.reorganize(full, steps, vectors, k=4)
    after = llm_env.stats()["by_step"]
    assert after.get("costorm_subtopics", 0) - before.get("costorm_subtopics", 0) == 1
    assert after.get("costorm_placement", 0) == before.get("costorm_placement", 0)
    assert sorted(mm.item_paths()) == list(range(len(texts)))  # every item still somewhere
    assert len({p for p in mm.item_paths().values()}) >= 2  # and the concept was split


def test_budget_exhausted_steps_fall_back_offline(llm_env):
    """A token cap reached after the first call: later Co-STORM steps send nothing and the
    offline steps answer (the run still ends)."""
    steps = steps_for(
        LiteLLMEngine(
            RunConfig(topic=TOPIC, engine="litellm", models={"*": MODEL}, budget_tokens=1)
        )
    )
    first = steps.generate_experts(
        cs.ExpertsInput(topic=TOPIC, background=_results(), n=2)
    ).perspectives
    assert llm_env.stats()["ok"] == 1 and [e.name for e in first] == [
        "General Background Expert",
        "Trial Expert",
    ]
    again = steps.generate_experts(
        cs.ExpertsInput(topic=TOPIC, background=_results(), n=2)
    ).perspectives
    assert llm_env.stats()["ok"] == 1 and len(again) == 2 and again[1].name != "Trial Expert"
    assert steps.engine.session.budget.exhausted()


@pytest.mark.slow
def test_costorm_run_with_litellm_engine(llm_env, capsys, corpus_path, data_dir, r, monkeypatch):
    # no fault is injected here: a long call timeout keeps a loaded machine's slow reply from
    # being abandoned by the client (and retried) after the server counted it delivered
    monkeypatch.setenv("RESEARCH_LLM_TIMEOUT_S", "10")
    code = cli.main(
        [
            "run",
            TOPIC,
            "--mode",
            "costorm",
            "--corpus",
            str(corpus_path),
            "--template",
            "drug",
            "--engine",
            "litellm",
            "--model",
            MODEL,
            "--experts",
            "2",
            "--query-budget",
            "8",
            "--costorm-turns",
            "8",
            "--json",
        ]
    )
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert code == 0 and summary["status"] == "complete", summary

    rid, store = summary["run_id"], RunStore(r)
    turns, meta = get_turns(r, rid), get_meta(r, rid)
    assert len(meta.experts) == 2 and meta.stop_reason in (
        "coverage_complete",
        "query_budget",
        "turn_cap",
    )
    assert len({t.intent for t in turns}) >= 3 and any(t.kind == "moderator" for t in turns)
    for t in turns:
        assert {int(n) for n in re.findall(r"\[(\d+)\]", t.utterance)} <= {s.n for s in t.sources}
    mm = get_mindmap(r, rid)
    assert mm.items and mm.problems() == [] and mm.depth() >= 1
    report = store.get_doc(rid, "report", Report)
    body = "\n\n".join([report.lead, *[s.text for s in report.sections]])
    assert report.references and check_integrity(body, len(report.references)) == []
    assert report.engine_label == f"litellm ({MODEL})"
    by_step = llm_env.stats()["by_step"]
    assert {"costorm_experts", "costorm_answer", "costorm_placement", "costorm_moderator"} <= set(
        by_step
    )
    assert summary["llm_calls"] == llm_env.stats()["ok"] > 0 and summary["cost_usd"] > 0
    usage = store.usage_breakdown(rid)
    assert {"planner", "expert", "question_asker", "outline", "writer"} <= set(usage["role"])
    assert {"planning", "conversations", "synthesizing"} <= set(usage["phase"])
    assert usage["step"]["costorm_answer"]["calls"] == by_step["costorm_answer"]
