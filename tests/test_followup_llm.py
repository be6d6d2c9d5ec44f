"""Follow-ups with the litellm engine: ``research ask`` on a litellm run answers through the real
litellm client and real HTTP to the loopback server (its ``answer_question`` step), every cited
number resolves to a reference of the run, the answer's citations are audited, ``research
audit`` runs; on a run whose LLM budget is spent the follow-up calls no model and is labelled
extractive."""

from __future__ import annotations

import json
import re

import pytest

import research.cli.commands as cli
from research.citations import LOCAL_RE
from research.models import Report
from research.store import open_store
from research.store.followups import FollowupStore
from tests.llm_fixtures import MODEL

pytestmark = pytest.mark.timeout(1200)
TOPIC = "Trastuzumab in HER2-positive breast cancer"
LVEF = "Which trials monitored left ventricular ejection fraction?"


def _main(capsys, *argv) -> tuple[int, dict]:
    code = cli.main(list(argv))
    out = capsys.readouterr().out.strip().splitlines()
    return code, (json.loads(out[-1]) if out else {})


def _run(capsys, corpus_path, *extra) -> str:
    code, s = _main(
        capsys,
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
        "1",
        "--max-turns",
        "1",
        "--json",
        *extra,
    )
    assert code == 0 and s["status"] == "complete", s
    return s["run_id"]


def _references(run_id: str) -> dict[int, str]:

    store = open_store()
    refs = FollowupStore(store).references(run_id, store.get_doc(run_id, "report", Report))
    return {r.number: r.source_id for r in refs}


def _report_cited(run_id: str) -> set[int]:
    """Numbers cited in the report's lead and sections (the one citation regex)."""

    report = open_store().get_doc(run_id, "report", Report)
    return {
        int(n)
        for n in LOCAL_RE.findall(" ".join([report.lead, *[s.text for s in report.sections]]))
    }


def test_ask_with_litellm_engine(llm_env, capsys, corpus_path, data_dir):
    run_id = _run(capsys, corpus_path)
    before = llm_env.stats()["by_step"].get("answer_question", 0)
    n_bodies = len(llm_env.bodies)
    code, f = _main(capsys, "ask", run_id, LVEF, "--json")
    assert code == 0, f
    assert not f["extractive"] and f["engine_label"] == f"litellm ({MODEL})" and f["found"]
    # the loopback server answered the follow-up's answer_question step (real HTTP, real litellm)
    assert llm_env.stats()["by_step"].get("answer_question", 0) > before
    asked = [b for b in llm_env.bodies[n_bodies:] if LVEF in json.dumps(b)]
    assert asked, "no request carried the follow-up question"
    # ≥ 1 citation, each resolving to a reference of the run (the report's or a new one)
    refs = _references(run_id)
    cited = {int(n) for n in re.findall(r"\[(\d+)\]", f["answer"])}
    assert f["citations"] and cited == set(f["citations"]) and cited <= set(refs)
    assert [r["number"] for r in f["new_references"]] == sorted(
        r["number"] for r in f["new_references"]
    )
    assert all(refs[r["number"]] == r["source_id"] for r in f["new_references"])
    # its citations are audited (one check per cited number at least) and `research audit` runs
    assert f["audit"] and {c["number"] for c in f["audit"]} == cited
    assert all(
        c["verdict"] in ("supported", "weak", "unsupported") and c["passage"] for c in f["audit"]
    )
    code, audit = _main(capsys, "audit", run_id, "--json")
    assert code == 0 and audit["total"] == audit["supported"] + audit["weak"] + audit["unsupported"]
    assert {c["number"] for c in audit["checks"]} == _report_cited(
        run_id
    )  # every report citation, none else
    code, snap = _main(capsys, "show", run_id, "--json")
    assert code == 0 and [x["id"] for x in snap["followups"]] == [f["id"]]


def test_ask_on_a_run_whose_budget_is_spent_calls_no_model(llm_env, capsys, corpus_path, data_dir):
    # spent while planning (a lean run spends ~$0.0004 on plan, survey queries and a card),
    # so the conversation runs on the extractive fallback and saves sources
    run_id = _run(capsys, corpus_path, "--budget-usd", "0.0003")
    requests = llm_env.stats()["requests"]
    code, f = _main(capsys, "ask", run_id, LVEF, "--json")
    assert code == 0, f
    assert llm_env.stats()["requests"] == requests  # the run's budget holds for follow-ups
    assert f["extractive"] and f["engine_label"].startswith("offline extractive mode")
    assert "budget" in f["engine_label"] and f["found"] == bool(f["citations"])
    assert set(f["citations"]) <= set(_references(run_id))
