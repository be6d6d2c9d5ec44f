"""Evidence on the session's finished trastuzumab run: the coverage chart (docs/design.md § Source collector: counts),
``report.questions`` and the report text say the same thing about every question; every source
counted for a question shows a passage for it; unmet questions say what was searched; gap turns
ran while ``check_completion`` was not ready; ``research show --json`` carries the evidence."""

from __future__ import annotations

import json

import pytest

from research.cli import main
from research.devtools.evidence_checks import evidence_checks
from research.evidence.judge import EVIDENCE_MIN
from research.models import GapReport, Report
from research.store.connection import get_redis
from research.store.runs import RunStore


@pytest.fixture(scope="module")
def store(finished_run):
    mp = pytest.MonkeyPatch()
    for k, v in finished_run.env().items():
        mp.setenv(k, v)
    yield RunStore(get_redis())
    mp.undo()


def test_chart_report_and_text_agree(store, finished_run):
    checks = evidence_checks(store, finished_run.run_id)
    assert checks["agree_all"], checks["questions"]
    assert checks["sources_without_evidence"] == 0, checks["questions"]
    counts = store.collector(finished_run.run_id).question_counts()  # what get_progress counts
    report = store.get_doc(finished_run.run_id, "report", Report)
    for q in report.questions:
        assert (counts[q.key] >= q.min_sources) == (q.status == "answered"), q.key
        assert all(p.score >= EVIDENCE_MIN and p.question == q.key for p in q.evidence)


def test_unmet_questions_say_what_was_searched_and_gap_turns_ran(store, finished_run):
    run_id = finished_run.run_id
    report = store.get_doc(run_id, "report", Report)
    gaps = store.get_doc(run_id, "gaps", GapReport)
    assert gaps is not None and [s.key for s in gaps.questions] == [q.key for q in report.questions]
    events = [e for e in store.events(run_id) if e.type.startswith("gap.")]
    planned_unmet = [s for s in gaps.questions if s.reason != "met in the planned conversations"]
    if planned_unmet:  # check_completion was not ready after the planned turns
        assert any(e.type == "gap.round" for e in events)
        turns = [t for t in store.get_turns(run_id) if t.perspective == "Gap search"]
        assert turns and all(t.focus_questions for t in turns)
    headings = {s.heading: s.text for s in report.sections}
    for q in report.questions:
        assert q.stop_reason
        if q.status == "insufficient":
            text = headings[q.heading]
            assert f"{q.label} is not answered: " in text
            stop = next(s for s in gaps.questions if s.key == q.key)
            if stop.gap_queries:
                assert any(f"“{q}”" in text for q in stop.gap_queries)


def test_show_json_lists_evidence_and_stop_reasons(store, finished_run, capsys):
    assert main(["show", finished_run.run_id, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    questions = doc["report"]["questions"]
    assert questions and all("evidence" in q and q["stop_reason"] for q in questions)
    answered = [q for q in questions if q["status"] == "answered"]
    for q in answered:
        assert q["evidence"] and {"question", "passage", "score", "start", "end"} <= set(
            q["evidence"][0]
        )
