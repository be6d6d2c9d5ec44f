"""Whole runs with the litellm engine through real litellm and real HTTP to the loopback server:
CLI run + show, cost, faults, budget, replay, canary key. The accounting run searches the shared
2,972-document corpus (its context reduction is the figure the README quotes); the others, whose
point does not depend on the corpus, search the session's 60-document ``finished_corpus``."""

from __future__ import annotations

import json
from pathlib import Path

import litellm
from streamlit.testing.v1 import AppTest

import research.cli.commands as cli
from research.devtools.loopback_llm import Faults, LoopbackLLM
from research.ui.cost import breakdown_rows, context_figure, cost_figure, tokens_figure
from tests.llm_fixtures import CANARY_KEY, MODEL

TOPIC = "Trastuzumab in HER2-positive breast cancer"


def _run(capsys, corpus_path, *extra, persp="2", turns="2") -> dict:
    code = cli.main(
        [
            "run",
            TOPIC,
            "--corpus",
            str(corpus_path),
            "--template",
            "drug",
            "--engine",
            "litellm",
            "--model",
            MODEL,
            "--max-perspectives",
            persp,
            "--max-turns",
            turns,
            "--json",
            *extra,
        ]
    )
    out = capsys.readouterr().out.strip().splitlines()[-1]
    summary = json.loads(out)
    summary["exit"] = code
    return summary


def _show(capsys, run_id: str) -> dict:
    assert cli.main(["show", run_id, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_full_run_accounting_and_context_reduction(
    llm_env, capsys, corpus_path, data_dir, r, monkeypatch
):
    # no fault is injected here: a long call timeout keeps a loaded machine's slow reply from
    # being abandoned by the client (and retried) after the server counted it delivered
    monkeypatch.setenv("RESEARCH_LLM_TIMEOUT_S", "10")
    s = _run(capsys, corpus_path)
    assert s["exit"] == 0 and s["status"] == "complete", s
    snap = _show(capsys, s["run_id"])
    llm = snap["llm"]
    assert snap["run"]["engine_label"] == f"litellm ({MODEL})"
    assert llm["llm_calls"] == llm_env.stats()["ok"] > 20
    assert {"planning", "conversations", "analyzing", "synthesizing"} <= set(llm["by_phase"])
    assert {
        "planner",
        "question_asker",
        "expert",
        "compressor",
        "outline",
        "writer",
    } == set(llm["by_role"])
    assert sum(v["calls"] for v in llm["by_role"].values()) == llm["llm_calls"]
    # cost = litellm's price table for gpt-4o-mini, to the cent (and to the micro-dollar)

    price = litellm.model_cost["gpt-4o-mini"]
    expected = (
        llm["prompt_tokens"] * price["input_cost_per_token"]
        + llm["completion_tokens"] * price["output_cost_per_token"]
    )
    assert (
        round(llm["cost_usd"], 2) == round(expected, 2) and abs(llm["cost_usd"] - expected) < 1e-6
    )
    assert abs(sum(v["cost_usd"] for v in llm["by_phase"].values()) - expected) < 1e-6
    ctx = llm["context"]
    assert ctx["raw_tool_tokens"] > ctx["tool_tokens_sent"] > 0
    assert ctx["context_reduction_pct"] >= 80.0, ctx
    # a dialogue turn answers and assigns its results in ONE call (no second copy of them)
    assert (
        llm["by_step"]["answer_and_assign"]["calls"] >= 1
        and "assign_questions" not in llm["by_step"]
    )
    # the asker writes the turn's queries in the same call (no question_to_queries call)
    assert (
        llm["by_step"]["ask_question"]["calls"] >= 1 and "question_to_queries" not in llm["by_step"]
    )
    # llm_calls.jsonl: one line per call, prompts and replies, no key
    log = data_dir / "research_artifacts" / s["run_id"] / "llm_calls.jsonl"
    lines = [json.loads(x) for x in log.read_text().splitlines()]
    assert len(lines) == llm["llm_calls"] and all(x["messages"] and x["response"] for x in lines)
    asked = {
        json.loads(x["response"]["content"])["question"]: json.loads(x["response"]["content"])[
            "queries"
        ]
        for x in lines
        if x["step"] == "ask_question"
    }
    turns = snap["turns"]
    assert turns and all(
        t["search_queries"] == asked[t["question"]] for t in turns
    )  # the asker's queries were searched
    assert (data_dir / "reports" / s["run_id"] / "report.md").read_text().count("[1]") >= 1

    assert {r["role"] for r in breakdown_rows(llm, "role")} == set(llm["by_role"])
    assert (
        tokens_figure(llm, "phase").data
        and cost_figure(llm, "model").data
        and context_figure(llm) is not None
    )

    at = AppTest.from_file(
        str(Path(__file__).resolve().parents[1] / "app_pages" / "cost.py"), default_timeout=60
    )
    at.query_params["run"] = s["run_id"]
    at.run()
    assert not at.exception, at.exception
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["LLM calls"] == str(llm["llm_calls"]) and metrics["Context reduction"].endswith(
        "%"
    )


def test_ten_runs_in_a_row_complete_with_20pct_faults(
    llm_env, capsys, finished_corpus, monkeypatch
):
    """With 20% of calls failing (429 with Retry-After, 500, timeout, bad JSON, malformed,
    truncated) 10 runs in a row complete, and every transport fault shows up as a counted retry."""
    faults = Faults(
        rate=0.2,
        kinds=("429", "500", "timeout", "bad_json", "malformed", "truncated"),
        seed=11,
        retry_after_s=0.02,
        hang_s=2.5,
    )
    with LoopbackLLM(faults=faults) as srv:
        monkeypatch.setenv("OPENAI_API_BASE", srv.url)
        # 2 s leaves a loaded machine room to deliver a reply that is not a fault: a delivered
        # reply the client had already given up on would be counted by the server and not the client.
        monkeypatch.setenv("RESEARCH_LLM_TIMEOUT_S", "2.0")
        retries = calls = 0
        for _ in range(10):
            s = _run(capsys, finished_corpus, persp="1", turns="1")
            assert s["status"] == "complete", s
            llm = _show(capsys, s["run_id"])["llm"]
            retries, calls = retries + llm["retries"], calls + llm["llm_calls"]
        stats = srv.stats()
    transport = sum(
        n for k, n in stats["faults"].items() if k in ("429", "500", "timeout", "malformed")
    )
    assert transport >= 10 and retries >= transport, (stats, retries)
    assert calls == stats["ok"]


def test_budget_ends_run_early_with_report_and_flag(llm_env, capsys, finished_corpus, data_dir):
    s = _run(capsys, finished_corpus, "--budget-usd", "0.001", persp="1", turns="1")
    assert s["status"] == "complete" and s["report_path"], s
    snap = _show(capsys, s["run_id"])
    assert (
        snap["run"]["budget_exhausted"] is True and snap["run"]["stop_reason"] == "budget_exhausted"
    )
    assert [e for e in snap["events"] if e["type"] == "budget.exhausted"]
    assert snap["llm"]["cost_usd"] < 0.002 and snap["llm"]["budget_exhausted"] is True
    assert snap["report"]["sections"]
    s2 = _run(capsys, finished_corpus, "--budget-tokens", "3000", persp="1", turns="1")
    snap2 = _show(capsys, s2["run_id"])
    assert s2["status"] == "complete" and snap2["run"]["budget_exhausted"] is True
    assert snap2["llm"]["llm_calls"] < 10


def test_replay_reproduces_report_byte_for_byte_offline(
    llm_env, capsys, finished_corpus, tmp_path, monkeypatch, data_dir
):
    cassette = tmp_path / "run.cassette.jsonl"
    with LoopbackLLM() as srv:
        monkeypatch.setenv("OPENAI_API_BASE", srv.url)
        # no fault is injected here: a long call timeout keeps a loaded machine's slow reply from
        # being abandoned by the client (and retried) after the server counted it delivered
        monkeypatch.setenv("RESEARCH_LLM_TIMEOUT_S", "10")
        first = _run(capsys, finished_corpus, "--record", str(cassette))
        recorded = srv.stats()["ok"]
    assert first["status"] == "complete"
    assert len(cassette.read_text().splitlines()) == recorded
    monkeypatch.setenv("RESEARCH_LLM_RECORD", "")
    monkeypatch.setenv("OPENAI_API_KEY", "")  # no key, no server: nothing can reach a network
    second = _run(capsys, finished_corpus, "--replay", str(cassette))
    if second["status"] != "complete":
        events = _show(capsys, second["run_id"])["events"]
        raise AssertionError([e for e in events if "fail" in e["type"] or "error" in e["type"]])
    a = (data_dir / "reports" / first["run_id"] / "report.md").read_bytes()
    b = (data_dir / "reports" / second["run_id"] / "report.md").read_bytes()
    assert a == b
    # every call of the replay was answered from the cassette: on a loaded machine the recorded
    # run made one call more than its replay needed (56 against 55, identical reports), so the
    # replay needs at most what was recorded
    assert 0 < _show(capsys, second["run_id"])["llm"]["llm_calls"] <= recorded
    # which of two parallel searches cards a shared result first depends on thread timing, so a
    # replay may ask for a card its recording never made: the offline compressor makes it and the
    # report is still the recorded one
    lines = cassette.read_text().splitlines()
    card = next(
        i for i, line in enumerate(lines) if json.loads(line)["semantic"].startswith("compress|")
    )
    gap = tmp_path / "gap.cassette.jsonl"
    gap.write_text("\n".join(lines[:card] + lines[card + 1 :]) + "\n")
    third = _run(capsys, finished_corpus, "--replay", str(gap))
    assert third["status"] == "complete", third
    assert (data_dir / "reports" / third["run_id"] / "report.md").read_bytes() == a
    events = _show(capsys, third["run_id"])["events"]
    assert [
        e for e in events if e["type"] == "llm.fallback" and e["data"]["code"] == "cassette_miss"
    ]


def test_canary_key_is_nowhere(llm_env, capsys, finished_corpus, data_dir, r, tmp_path):
    s = _run(capsys, finished_corpus, persp="1", turns="1")
    assert s["status"] == "complete"
    out = tmp_path / "export.md"
    assert cli.main(["export", s["run_id"], "--out", str(out)]) == 0
    capsys.readouterr()
    assert CANARY_KEY not in out.read_text()
    for key in r.keys("*"):
        kind = r.type(key)
        values = {
            "string": lambda key=key: [r.get(key)],
            "hash": lambda key=key: list(r.hgetall(key).values()),
            "list": lambda key=key: r.lrange(key, 0, -1),
            "set": lambda key=key: list(r.smembers(key)),
            "zset": lambda key=key: r.zrange(key, 0, -1),
            "stream": lambda key=key: [json.dumps(f) for _, f in r.xrange(key)],
        }.get(kind, lambda key=key: [])()
        assert not any(CANARY_KEY in str(v) for v in values), key
    for path in data_dir.rglob("*"):
        if path.is_file() and path.stat().st_size < 50_000_000 and "redis" not in path.parts:
            assert CANARY_KEY.encode() not in path.read_bytes(), path
    for path in (data_dir / "redis").rglob("*") if (data_dir / "redis").is_dir() else []:
        if path.is_file():
            assert CANARY_KEY.encode() not in path.read_bytes(), path
