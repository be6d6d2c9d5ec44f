"""A real language model end to end: llama.cpp's server with SmolLM2-135M-Instruct
(``tests/real_model.py``) answers a small STORM run and a small Co-STORM run on the litellm
engine, set up as a local user would (``OPENAI_API_BASE`` and nothing else: no key, no price,
no concurrency, default time-outs).

A 135M model's replies are often weak (empty, repeated, JSON that says nothing), so only what
must hold with any model is asserted: the run completes; every step either got the model's
reply or states its fallback (``llm.fallback`` with a code, counted in ``research show --json``
and noted on the report); the summary cards are the offline engine's by design, stated the same
way (``llm.offline``), and no gap round runs unless asked; citations resolve; the report has a
section per syllabus question; no reply ran past its step's bound; no call timed out waiting for
its turn. The scripted loopback tests keep the exact behaviour."""

from __future__ import annotations

import json
import time
from collections import Counter

import pytest

import research.cli.commands as cli
from research import jobs
from research.citations import check_integrity
from research.engines.labels import planned_line
from research.engines.steps import STEPS
from research.models import Report
from tests.real_model import ALIAS, LlamaServer, skip_reason

# a 135M model on 2 cores shared with the other test worker: minutes per run
pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]
REASON = skip_reason()
MODEL = f"openai/{ALIAS}"
TOPIC = "Metformin in type 2 diabetes"


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory):
    if REASON:
        pytest.skip(REASON)
    srv = LlamaServer(tmp_path_factory.mktemp("llama") / "server.log").start()
    yield srv
    srv.stop()


@pytest.fixture()
def local_env(llama_server, data_dir, monkeypatch):
    """Only ``OPENAI_API_BASE``: the settings a local user has."""
    monkeypatch.setenv("OPENAI_API_BASE", llama_server.url)
    for name in (
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "RESEARCH_LLM_MODEL",
        "RESEARCH_MODEL_PRICES",
        "RESEARCH_LLM_CONCURRENCY",
        "RESEARCH_LLM_TIMEOUT_S",
        "RESEARCH_LLM_RECORD",
        "RESEARCH_LLM_REPLAY",
    ):
        monkeypatch.setenv(name, "")  # empty = unset
    return llama_server


def _run(capsys, corpus, *args) -> tuple[dict, float]:
    t0 = time.monotonic()
    code = cli.main(
        ["run", TOPIC, "--corpus", str(corpus), "--template", "drug", "--engine", "litellm"]
        + ["--model", MODEL, *args, "--json"]
    )
    out = capsys.readouterr().out
    summary = json.loads(out)  # --json prints JSON only: no banner, no progress line
    assert code == 0, summary
    return summary, time.monotonic() - t0


def _check(run_id: str, data_dir) -> dict:
    """The must-hold assertions (module doc); returns the fallbacks by step."""
    snap = jobs.run_snapshot(run_id)
    assert snap["run"]["status"] == "complete", snap["run"]["error"]
    calls = [
        json.loads(line)
        for line in (data_dir / "research_artifacts" / run_id / "llm_calls.jsonl")
        .read_text()
        .splitlines()
    ]
    assert calls, "no call reached the model"
    for c in calls:
        assert c["step"] in STEPS, c["step"]
        assert c["max_tokens"] == STEPS[c["step"]].max_tokens
        assert c["completion_tokens"] <= c["max_tokens"], (c["step"], c["completion_tokens"])
        assert c["error"] != "queue_timeout", c["step"]
    events = [e for e in snap["events"] if e["type"] == "llm.fallback"]
    assert all(e["data"].get("code") for e in events)
    fallbacks = snap["llm"]["fallbacks"]
    assert fallbacks == dict(Counter(e["data"]["step"] for e in events))
    called = {c["step"] for c in calls}
    assert set(fallbacks) <= called
    answered = {c["step"] for c in calls if c["response"] is not None}
    assert called - set(fallbacks) <= answered  # a step that did not fall back got a reply
    report = Report.model_validate(snap["report"])
    body = "\n\n".join([report.lead, *[s.text for s in report.sections]])
    assert check_integrity(body, len(report.references)) == []
    saved = {s["source_id"] for s in snap["sources"]["sources"]}
    assert {ref.source_id for ref in report.references} <= saved
    keys = [q["key"] for q in snap["syllabus"]["questions"]]
    assert [q.key for q in report.questions] == keys
    headings = {s.heading for s in report.sections}
    assert all(q.heading in headings for q in report.questions)
    if fallbacks:
        assert "answered in offline extractive mode, the model's reply" in report.markdown
    # a local model's cards are the offline engine's by design, and said so (no call made them);
    # the Co-STORM round table makes no summary cards
    assert "compress" not in called
    offline = snap["llm"]["offline_by_design"]
    if snap["run"]["config"]["mode"] == "storm":
        assert offline.get("compress") and planned_line(offline) in report.markdown
        planned = [e["data"]["step"] for e in snap["events"] if e["type"] == "llm.offline"]
        assert planned == ["compress"]
    assert snap["llm"]["cost_usd"] == 0 and snap["llm"]["local_models"] == [MODEL]
    return fallbacks


def test_storm_run_on_a_real_local_model(local_env, capsys, finished_corpus, data_dir):
    summary, wall_s = _run(
        capsys,
        finished_corpus,
        "--max-perspectives",
        "1",
        "--max-turns",
        "1",
        "--depth",
        "brief",
    )
    fallbacks = _check(summary["run_id"], data_dir)
    # no --gap-turns: a local model's default, no gap round
    assert jobs.run_snapshot(summary["run_id"])["run"]["config"]["gap_turns"] == 0
    print(
        f"\nreal model STORM, 1 perspective x 1 turn: {wall_s:.0f} s, "
        f"{summary['llm_calls']} calls, fallbacks {fallbacks}"
    )


def test_costorm_run_on_a_real_local_model(local_env, capsys, finished_corpus, data_dir):
    summary, wall_s = _run(
        capsys,
        finished_corpus,
        "--mode",
        "costorm",
        "--experts",
        "1",
        "--query-budget",
        "2",
        "--costorm-turns",
        "2",
    )
    fallbacks = _check(summary["run_id"], data_dir)
    print(
        f"\nreal model Co-STORM: {wall_s:.0f} s, {summary['llm_calls']} calls, fallbacks {fallbacks}"
    )
