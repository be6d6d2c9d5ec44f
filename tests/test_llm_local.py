"""Calls that fit a local server, against the loopback server as a stand-in with exact
behaviour: every reply read no further than its step's bound (a server that never stops
streaming), four runs at once sharing one slot of a slow one-slot server with no call timing
out for its turn, a free local model with no key, weak replies re-asked with their reason
then answered offline with the fallback shown, and the reply's schema sent as ``json_object``
(asked again without it where the server refuses it)."""

from __future__ import annotations

import json
import threading
from collections import Counter

from research import jobs
from research.devtools.loopback_llm import LoopbackLLM, Reply
from research.devtools.loopback_responder import default_responder, step_of
from research.engines import base as b
from research.engines.litellm.engine import LiteLLMEngine
from research.engines.steps import STEPS
from research.llm import slots
from research.llm.session import LLMSession
from research.llm.usage import usage_report
from research.models import Report, RunConfig
from research.store.runs import RunStore

MODEL = "openai/smollm2"  # a name no price table knows: free only because it is local
TOPIC = "Trastuzumab in HER2-positive breast cancer"


def _calls(data_dir, run_id: str) -> list[dict]:
    path = data_dir / "research_artifacts" / run_id / "llm_calls.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def _local(monkeypatch, srv: LoopbackLLM) -> None:
    """A local user's settings: the base URL only (no key, no price, default concurrency)."""
    monkeypatch.setenv("OPENAI_API_BASE", srv.url)
    for name in ("OPENAI_API_KEY", "RESEARCH_LLM_CONCURRENCY", "RESEARCH_MODEL_PRICES"):
        monkeypatch.setenv(name, "")


def test_a_server_that_never_stops_is_cut_at_every_steps_bound(llm_env, monkeypatch):
    with LoopbackLLM(lambda body: Reply(content=""), endless=True) as srv:
        _local(monkeypatch, srv)
        session = LLMSession(RunConfig(topic=TOPIC, engine="litellm", models={"*": MODEL}))
        for spec in STEPS.values():
            messages = [
                {"role": "system", "content": spec.marker},
                {"role": "user", "content": "<material>{}</material>"},
            ]
            result = session.call(spec, messages=messages)
            assert result.finish_reason == "length", spec.name
            assert spec.max_tokens - 5 < result.completion_tokens <= spec.max_tokens, (
                spec.name,
                result.completion_tokens,
            )
        # the bound is sent, too, on every request (a retry on a loaded machine included)
        sent = {(step_of(body), body.get("max_tokens")) for body in srv.bodies}
        assert sent == {(s.name, s.max_tokens) for s in STEPS.values()}


def test_a_run_against_a_never_ending_server_completes_offline(
    llm_env, monkeypatch, capsys, finished_corpus, data_dir
):
    with LoopbackLLM(endless=True) as srv:
        _local(monkeypatch, srv)
        state = jobs.run_foreground(
            jobs.make_config(
                TOPIC,
                corpus=str(finished_corpus),
                template="drug",
                engine="litellm",
                models={"*": MODEL},
                max_perspectives=1,
                max_turns=1,
            )
        )
    assert state.status == "complete", state.error
    calls = _calls(data_dir, state.run_id)
    assert calls and all(
        c["finish_reason"] == "length" and c["completion_tokens"] <= c["max_tokens"] for c in calls
    )
    store = RunStore(llm_env_redis())
    rep = usage_report(store, state.run_id)
    assert rep["fallbacks"] and set(rep["fallbacks"]) <= {c["step"] for c in calls}
    assert rep["cost_usd"] == 0 and rep["local_models"] == [MODEL]
    report = store.get_doc(state.run_id, "report", Report)
    assert "answered in offline extractive mode, the model's reply" in report.markdown


def llm_env_redis():
    from research.store.connection import get_redis  # noqa: PLC0415 - after data_dir's env

    return get_redis()


def test_four_runs_share_one_slot_of_a_slow_server_without_queue_timeouts(
    llm_env, monkeypatch, finished_corpus, data_dir
):
    """A one-slot server 0.25 s per reply and a 3 s time-out: 16 requests at once (4 runs × the
    old 4 per run) would leave the last waiting 4 s in the server's queue, past their time-out;
    with one slot per local model for the whole process they wait here, where waiting is free.
    The time-out is 12 replies long so that a loaded test machine's scheduling delay on one
    reply is not mistaken for queueing."""
    with LoopbackLLM(slots=1, latency_ms=250) as srv:
        _local(monkeypatch, srv)
        monkeypatch.setenv("RESEARCH_LLM_TIMEOUT_S", "3")
        monkeypatch.setenv("RESEARCH_LLM_MAX_ATTEMPTS", "1")  # a time-out would show as a failure
        assert slots.limit(MODEL) == 1
        config = jobs.make_config(
            TOPIC,
            corpus=str(finished_corpus),
            template="drug",
            engine="litellm",
            models={"*": MODEL},
            max_perspectives=1,
            max_turns=1,
        )
        states = []
        threads = [
            threading.Thread(target=lambda: states.append(jobs.run_foreground(config)))
            for _ in range(4)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=600)
        assert srv.max_busy == 1 and srv.stats()["ok"] > 40
    assert len(states) == 4 and all(s.status == "complete" for s in states), states
    calls = [c for s in states for c in _calls(data_dir, s.run_id)]
    errors = Counter(c["error"] for c in calls if c["error"])
    assert errors == Counter(), errors  # no time-out, queued or in flight
    assert max(c["queued_s"] or 0 for c in calls) > 0.25  # calls did wait for the slot
    for s in states:
        assert usage_report(RunStore(llm_env_redis()), s.run_id)["fallbacks"] == {}


def test_weak_replies_are_reasked_with_the_reason_then_fall_back(
    llm_env, monkeypatch, finished_corpus, data_dir
):
    """Queries that repeat one query and empty answers: each re-asked once with the reason,
    then answered offline; the fallbacks are counted by step and noted on the report."""

    def weak(body: dict) -> Reply:
        step = step_of(body)
        if step in ("ask_question", "survey_queries"):
            reply = json.loads(default_responder(body).content or "{}")
            reply["queries"] = ["trastuzumab"] * 3
            return Reply(content=json.dumps(reply))
        if step == "answer_and_assign":
            reply = json.loads(default_responder(body).content or "{}")
            reply["answer"] = " "
            return Reply(content=json.dumps(reply))
        return default_responder(body)

    with LoopbackLLM(responder=weak) as srv:
        monkeypatch.setenv("OPENAI_API_BASE", srv.url)
        state = jobs.run_foreground(
            jobs.make_config(
                TOPIC,
                corpus=str(finished_corpus),
                template="drug",
                engine="litellm",
                models={"*": MODEL},
                max_perspectives=1,
                max_turns=1,
            )
        )
        reasks = [
            m["content"]
            for b in srv.bodies
            for m in b["messages"]
            if m["role"] == "user" and m["content"].startswith("Your reply did not validate")
        ]
    assert state.status == "complete", state.error
    assert any("repeat one query" in r for r in reasks) and any(
        "answer is empty" in r for r in reasks
    )
    rep = usage_report(RunStore(llm_env_redis()), state.run_id)
    assert {"survey_queries", "ask_question", "answer_and_assign"} <= set(rep["fallbacks"])
    report = RunStore(llm_env_redis()).get_doc(state.run_id, "report", Report)
    assert "answered in offline extractive mode, the model's reply" in report.markdown
    assert "survey_queries" in report.markdown


def test_a_local_server_gets_the_schema_as_json_object(llm_env, monkeypatch):
    """llama.cpp's servers turn ``json_object`` with a schema into a grammar: the schema goes
    there, and the prompt keeps only the reply's shape line (the grammar holds the reply to it)."""
    with LoopbackLLM() as srv:
        _local(monkeypatch, srv)
        eng = LiteLLMEngine(RunConfig(topic=TOPIC, engine="litellm", models={"*": MODEL}))
        out = eng.survey_queries(b.SurveyInput(topic=TOPIC))
    assert out.queries
    (body,) = srv.bodies
    assert body["response_format"] == {
        "type": "json_object",
        "schema": b.QueryList.model_json_schema(),
    }
    system = body["messages"][0]["content"]
    assert "It must validate against this JSON schema" not in system
    assert 'Return {"queries": [...]}' in system and "Reply with one JSON object only." in system


def test_a_server_that_refuses_json_object_is_asked_without_it(llm_env, monkeypatch):
    """A 400 for the format costs one request: the same call goes again without it, and later
    calls to that server do not send it."""
    with LoopbackLLM(refuse_formats=("json_object",)) as srv:
        _local(monkeypatch, srv)
        eng = LiteLLMEngine(RunConfig(topic=TOPIC, engine="litellm", models={"*": MODEL}))
        first = eng.survey_queries(b.SurveyInput(topic=TOPIC))
        second = eng.question_to_queries(
            b.QueryInput(topic=TOPIC, question="How well does it work?")
        )
    assert srv.refused == 1
    assert len(srv.bodies) == 2 and all("response_format" not in x for x in srv.bodies)
    # without the grammar, the prompt spells the schema out, the refused call's included
    assert all(
        "It must validate against this JSON schema" in x["messages"][0]["content"]
        for x in srv.bodies
    )
    assert first.queries and second.queries  # both from the model: two bodies delivered
