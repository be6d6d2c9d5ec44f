"""Co-STORM end to end on the real corpus, offline: the CLI run, an
analyst turn posted mid-run, and a resumed run that neither loses nor repeats turns.

The CLI run uses ``--query-budget 22`` instead of the default 30 to keep the suite fast; the
default command was run by hand for the screenshots (docs/screenshots/)."""

from __future__ import annotations

import contextlib
import io
import json
import re
import threading
import time

import pytest

import research.cli.commands as cli
from research import jobs
from research.citations import check_integrity
from research.costorm import get_meta, get_mindmap, get_turns, post_analyst_message
from research.costorm.report import OPEN_QUESTIONS
from research.evidence.passages import REGISTRY
from research.models import Report, Syllabus
from research.pipeline import registrations, runner
from research.planning.question_roles import PRIMARY
from research.store import keys
from research.store.connection import get_redis
from research.store.runs import RunStore
from research.text import norm_key

TOPIC = "Trastuzumab in HER2-positive breast cancer"


@pytest.fixture(scope="module")
def env(redis_server, tmp_path_factory):
    mp = pytest.MonkeyPatch()
    mp.setenv("RESEARCH_DATA_DIR", str(tmp_path_factory.mktemp("costorm_data")))
    mp.setenv("REDIS_URL", redis_server)
    yield
    mp.undo()


@pytest.fixture(scope="module")
def cli_run(env, corpus_path):

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
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
                "--query-budget",
                "22",
                "--json",
            ]
        )
    return code, json.loads(out.getvalue().strip().splitlines()[-1])


@pytest.mark.slow
def test_cli_costorm_run_meets_done_when(cli_run):
    code, summary = cli_run
    assert code == 0 and summary["status"] == "complete", summary
    r = get_redis()
    rid = summary["run_id"]
    turns = get_turns(r, rid)
    meta = get_meta(r, rid)
    assert len(meta.experts) >= 3
    assert {t.role for t in turns if t.warm_start} == {e.name for e in meta.experts[:3]} or len(
        [t for t in turns if t.warm_start]
    ) >= 3
    assert any(t.kind == "moderator" for t in turns)
    assert {t.intent for t in turns} == {
        "original_question",
        "information_request",
        "potential_answer",
        "further_details",
    }
    assert [t.turn_number for t in turns] == list(range(1, len(turns) + 1))
    assert meta.stop_reason in ("coverage_complete", "query_budget", "turn_cap")
    state = RunStore(r).get_run(rid)
    assert state.stop_reason == meta.stop_reason and meta.queries_used <= 22
    # every cited [n] in a turn resolves to one of its sources
    for t in turns:
        nums = {int(n) for n in __import__("re").findall(r"\[(\d+)\]", t.utterance)}
        assert nums <= {s.n for s in t.sources}, (t.turn_number, nums)
    mm = get_mindmap(r, rid)
    assert mm.depth() >= 2 and mm.problems() == []
    assert all(n.total_items() > 0 for _, n in list(mm.walk())[1:])
    assert all(len(n.children) != 1 for _, n in list(mm.walk())[1:])


@pytest.mark.slow
def test_report_from_mind_map_citations_resolve(cli_run):
    _, summary = cli_run
    store = RunStore(get_redis())
    report = store.get_doc(summary["run_id"], "report", Report)
    body = "\n\n".join([report.lead, *[s.text for s in report.sections]])
    assert report.references and check_integrity(body, len(report.references)) == []
    assert "[-1]" not in report.markdown
    # the same snippet reaches several concepts, yet no sentence is quoted twice
    quoted = [norm_key(x) for x in re.split(r"\[\d+\]", body) if len(x.split()) >= 4]
    assert len(quoted) == len(set(quoted)), [q for q in quoted if quoted.count(q) > 1][:3]
    # ... and no heading stands over nothing: a concept whose sentences the lead or another
    # concept quotes goes, unless a deeper section follows it
    lines = [x for x in report.markdown.splitlines() if x.strip()]
    for a, b in zip(lines, lines[1:], strict=False):
        if a.startswith("#") and b.startswith("#"):
            assert len(b) - len(b.lstrip("#")) > len(a) - len(a.lstrip("#")), (a, b)
    mm = get_mindmap(store.r, summary["run_id"])
    syllabus = store.get_doc(summary["run_id"], "syllabus", Syllabus)
    # a section per concept, and first the primary question's, quoting the results of the
    # sources the mind map cites (from the run's evidence)
    primary = [q.label for q in syllabus.questions if q.key in PRIMARY]
    assert report.sections[0].heading in primary
    # ... and, last, the registered trials without results, citing registry records only
    listed = {OPEN_QUESTIONS, registrations.HEADING}
    assert {s.heading for s in report.sections} - listed <= {*mm.node_names(), *primary}
    for sec in report.sections:
        if sec.heading == registrations.HEADING:
            assert sec is report.sections[-1] or report.sections[-1].heading == OPEN_QUESTIONS
            cited = {int(n) for n in re.findall(r"\[(\d+)\]", sec.text)}
            types = {report.references[n - 1].source_type for n in cited}
            assert types == {REGISTRY}, types
    first = {int(n) for n in re.findall(r"\[(\d+)\]", report.sections[0].text)}
    in_map = {i.source_id for i in mm.items}
    assert first and {report.references[n - 1].source_id for n in first} <= in_map
    # every syllabus question is answered by a section or stated as open
    assert [q.key for q in report.questions] == syllabus.keys()
    for q in report.questions:
        assert q.heading in {s.heading for s in report.sections} - {registrations.HEADING}
        # the primary question's section answers it alone, not the questions citing its sources
        assert q.key in PRIMARY or q.heading not in primary
        if q.status == "insufficient":
            assert f"{q.label}: {q.sources_found} " in report.markdown
    saved = {
        s.source_id
        for s in __import__("research.store.collector", fromlist=["x"])
        .SourceCollector(store.r, summary["run_id"])
        .all_sources()
    }
    assert {ref.source_id for ref in report.references} <= saved


def _wait(pred, timeout_s: float = 300.0) -> None:
    t0 = time.monotonic()
    while not pred():
        if time.monotonic() - t0 > timeout_s:
            raise AssertionError("timed out")
        time.sleep(0.05)


@pytest.mark.slow
def test_analyst_turn_and_resume_without_repeating_turns(env, corpus_path):
    config = jobs.make_config(
        TOPIC,
        corpus=str(corpus_path),
        template="drug",
        mode="costorm",
        costorm={"experts": 2, "query_budget": 30, "max_turns": 24},
    )
    store = RunStore(get_redis())
    rid = store.create_run(config, engine_label="offline extractive mode").run_id
    # Queued before the run starts, the message is taken at the first turn boundary after the
    # warm start: a warm run finishes its round-table in seconds, so a message posted once
    # turns appear could arrive after the last one. The long turn cap leaves turns to cancel.
    message = "What is known about trastuzumab biosimilars?"
    post_analyst_message(store, rid, message)
    worker = threading.Thread(target=runner.execute, args=(rid,), daemon=True)
    worker.start()
    _wait(
        lambda: (
            any(t.kind == "analyst" for t in get_turns(store.r, rid))
            and len(get_turns(store.r, rid))
            >= [t.kind for t in get_turns(store.r, rid)].index("analyst") + 2
        )
    )
    store.request_cancel(rid)  # interrupt the run after some turns
    worker.join(300)
    assert store.get_run(rid).status == "cancelled"
    before = get_turns(store.r, rid)
    analyst = next(t for t in before if t.kind == "analyst")
    assert (
        analyst.role == "Analyst"
        and analyst.intent == "original_question"
        and analyst.utterance == message
    )
    nxt = before[before.index(analyst) + 1]
    assert nxt.question == message  # it steers the next turn
    # a stopped worker leaves the run 'interrupted' (the resume path); re-execute it
    store.r.delete(keys.run_cancel(rid))
    store.set_status(rid, "interrupted")
    assert runner.execute(rid) == "complete"
    after = get_turns(store.r, rid)
    assert [t.model_dump() for t in after[: len(before)]] == [t.model_dump() for t in before]
    assert [t.turn_number for t in after] == list(range(1, len(after) + 1))
    assert len(after) > len(before)
    assert sum(t.kind == "analyst" for t in after) == 1
    assert any(e.type == "costorm.resumed" for e in store.events(rid))
