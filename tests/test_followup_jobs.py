"""Follow-ups run as jobs like any other work — on the RQ backend a real
``research worker`` process answers them; a ``research ask --research`` process killed mid
follow-up leaves it pending, and resuming answers it once, with one stored turn and no source
saved twice. Ordering rule: a run without its report refuses follow-ups.

Real parts: a private redis-server, the 60-document real corpus, the offline extractive
engine, real subprocesses (``research ask``, ``research worker``) killed with SIGKILL."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from private_runs import private_env
from resilience_helpers import research_cmd, subprocess_env
from rq import Queue
from streamlit.testing.v1 import AppTest

from research import jobs
from research.errors import InputError
from research.followup.ask import ask
from research.followup.more import PERSPECTIVE
from research.jobs import workers
from research.jobs.followups import pending, submit_ask
from research.models import Report, RunConfig
from research.store import keys
from research.store.connection import get_redis
from research.store.followups import FollowupStore
from research.store.runs import RunStore

pytestmark = pytest.mark.timeout(1800)
LEASE_TTL_MS = "2000"  # short, so a killed job's follow-up shows interrupted quickly
TOPIC = "Trastuzumab in HER2-positive breast cancer"


@pytest.fixture(scope="module")
def small(tmp_path_factory, finished_corpus):
    """A finished 1-perspective × 1-turn drug run in its own redis-server and data dir (its
    follow-ups research more, so it is not the session's shared run). Yields
    ``(store, run_id, data_dir, redis_url)``."""

    server, url, data, mp = private_env(
        tmp_path_factory, "fj", RESEARCH_LEASE_TTL_MS=LEASE_TTL_MS, RESEARCH_JOB_BACKEND="thread"
    )
    state = jobs.run_foreground(
        jobs.make_config(
            TOPIC, corpus=str(finished_corpus), template="drug", max_perspectives=1, max_turns=1
        )
    )
    assert state.status == "complete", state.error
    yield RunStore(get_redis()), state.run_id, data, url
    mp.undo()
    server.stop()


def _analyst_turns(store, run_id, question):

    return [
        t
        for t in store.get_turns(run_id)
        if t.perspective == PERSPECTIVE and t.question == question
    ]


def _assert_clean(store, run_id):
    """No URL saved twice; one reference list 1..N, each number one source and each source one number."""

    urls = [s.url for s in store.collector(run_id).all_sources()]
    assert len(urls) == len(set(urls)), "a source was saved twice"
    refs = FollowupStore(store).references(run_id, store.get_doc(run_id, "report", Report))
    assert [r.number for r in refs] == list(range(1, len(refs) + 1))
    assert len({r.source_id for r in refs}) == len(refs)


def test_rq_worker_answers_a_queued_followup(small, monkeypatch):
    """RESEARCH_JOB_BACKEND=rq: submit_ask stores the follow-up pending and queues it; a real
    ``research worker --burst`` process researches more and answers it."""

    store, run_id, data, url = small
    monkeypatch.setenv("RESEARCH_JOB_BACKEND", "rq")
    Queue(workers.QUEUE, connection=workers.rq_connection()).empty()
    question = "What did trials report about trastuzumab and brain metastases?"
    n_sources, n_turns = len(store.collector(run_id).all_sources()), store.count_turns(run_id)
    fid = submit_ask(store, run_id, question, research=True)
    waiting = pending(store, run_id)
    assert [(p["id"], p["stage"], p["alive"]) for p in waiting] == [(fid, "queued", True)]
    assert workers.queue().count == 1  # queued for a worker, nothing ran here
    env = subprocess_env(data, url, RESEARCH_JOB_BACKEND="rq", RESEARCH_LEASE_TTL_MS=LEASE_TTL_MS)
    proc = subprocess.run(
        research_cmd("worker", "--burst", "--no-resume", "--name", f"fj-{os.getpid()}"),
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    f = FollowupStore(store).answered(run_id, fid)
    assert f is not None, (
        proc.stderr[-2000:],
        [e.data for e in store.events(run_id) if e.type == "followup.failed"],
    )
    assert f.researched and f.sources_added >= 1 and f.found
    assert len(store.collector(run_id).all_sources()) == n_sources + f.sources_added
    assert (
        store.count_turns(run_id) == n_turns + 1
        and len(_analyst_turns(store, run_id, question)) == 1
    )
    assert pending(store, run_id) == [] and FollowupStore(store).list_pending(run_id) == []
    types = [e.type for e in store.events(run_id)]
    assert {
        "followup.asked",
        "followup.research.started",
        "followup.research.finished",
        "followup.answered",
    } <= set(types)
    _assert_clean(store, run_id)


@pytest.mark.parametrize("kill_after", ["followup.research.started", "turn.finished"])
def test_killed_followup_resumes_once(small, kill_after):
    """SIGKILL a ``research ask --research`` process while it researches (before its turn is
    stored) or after its turn was stored (before the answer); ``research resume RUN`` (or the
    Report page's Resume button, a thread job of the dashboard) answers it once, with one Analyst
    follow-up turn and no source saved twice; a turn stored before
    the kill is reused, not searched again."""

    store, run_id, data, url = small
    fs = FollowupStore(store)
    questions = {
        "followup.research.started": [
            "Which cardiac events were seen with trastuzumab plus anthracyclines?",
            "Which heart failure rates were reported with trastuzumab after anthracyclines?",
            "How often was cardiac dysfunction seen with adjuvant trastuzumab?",
        ],
        "turn.finished": [
            "What is known about subcutaneous trastuzumab dosing?",
            "What is known about the trastuzumab loading dose?",
            "What is known about trastuzumab infusion schedules?",
        ],
    }[kill_after]
    for question in questions:
        # the kill lands after the event is seen; on a loaded machine the process may answer in
        # between, which is not the case under test: that follow-up is answered, so ask anew
        n_sources, n_turns = len(store.collector(run_id).all_sources()), store.count_turns(run_id)
        mark = _nth_id(store, run_id, store.r.xlen(keys.run_events(run_id)))
        _ask_and_kill(
            store,
            run_id,
            question,
            kill_after,
            subprocess_env(
                data, url, RESEARCH_LEASE_TTL_MS=LEASE_TTL_MS, RESEARCH_JOB_BACKEND="thread"
            ),
            mark,
        )
        if fs.list_pending(run_id):
            break
    [p] = fs.list_pending(run_id)
    assert fs.answered(run_id, p.id) is None, "the process answered before it was killed"
    stored_before = len(_analyst_turns(store, run_id, question))
    assert stored_before == (1 if kill_after == "turn.finished" else 0)
    deadline = time.monotonic() + 10
    while pending(store, run_id)[0]["alive"] and time.monotonic() < deadline:
        time.sleep(0.1)  # the dead process's lease expires after LEASE_TTL_MS
    assert pending(store, run_id)[0]["stage"].startswith("interrupted")
    if (
        kill_after == "turn.finished"
    ):  # the Report page shows it from the stored record; its button resumes it
        at = _report_page_showing_interrupted(run_id, question)
        at.button(key=f"resume-followup-{p.id}").click().run()
        assert not at.exception, [e.value for e in at.exception]
        deadline = time.monotonic() + 600
        while fs.answered(run_id, p.id) is None and time.monotonic() < deadline:
            time.sleep(0.5)  # answered by the dashboard's thread job
    else:
        assert (
            jobs.resume_run(run_id, foreground=True, by="cli") == "complete"
        )  # `research resume RUN`

    [f] = [x for x in fs.list(run_id) if x.id == p.id]
    assert f.found and f.researched and f.citations
    assert fs.list_pending(run_id) == []
    assert (
        len(_analyst_turns(store, run_id, question)) == 1
        and store.count_turns(run_id) == n_turns + 1
    )
    assert len(store.collector(run_id).all_sources()) == n_sources + f.sources_added
    # the answer is stored, then its event appended: the job may still be between the two
    deadline = time.monotonic() + 30
    while True:
        events = store.events(run_id, after=mark)
        mine = [e for e in events if e.data.get("id") == p.id]
        types = [e.type for e in mine]
        if "followup.answered" in types or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert types.count("followup.answered") == 1 and "followup.resumed" in types
    assert "followup.resume.requested" in types
    by = "dashboard" if kill_after == "turn.finished" else "cli"
    assert [e.data["by"] for e in mine if e.type == "followup.resume.requested"] == [by]
    finished = [e.data for e in mine if e.type == "followup.research.finished"]
    assert finished[-1].get("reused", False) == (kill_after == "turn.finished")
    with pytest.raises(InputError, match="only interrupted or failed"):
        jobs.resume_run(run_id, by="cli")  # nothing left to resume
    _assert_clean(store, run_id)


def _ask_and_kill(store, run_id, question, kill_after, env, mark):
    """Start ``research ask RUN QUESTION --research`` and SIGKILL it as soon as event
    ``kill_after`` follows ``mark`` in the run's stream (a blocking stream read, not a poll)."""

    proc = subprocess.Popen(
        research_cmd("ask", run_id, question, "--research", "--json"),
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    stream, last = keys.run_events(run_id), mark if mark != "-" else "0-0"
    try:
        deadline = time.monotonic() + 600
        seen = False
        while not seen and proc.poll() is None and time.monotonic() < deadline:
            for _name, entries in store.r.xread({stream: last}, block=200) or []:
                for entry_id, fields in entries:
                    last = entry_id
                    seen = seen or fields.get("type") == kill_after
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL, proc.stderr.read()[-2000:]


def _report_page_showing_interrupted(run_id, question):
    """The Report page (AppTest) after asserting it shows the interrupted follow-up."""

    at = AppTest.from_file(
        str(Path(__file__).resolve().parents[1] / "app_pages" / "report.py"), default_timeout=120
    )
    at.query_params["run"] = run_id
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert any(question in str(m.value) for m in at.markdown)
    assert any(str(c.value).startswith("interrupted: its job stopped") for c in at.caption), [
        c.value for c in at.caption
    ]
    return at


def _nth_id(store, run_id, n):
    """The stream id of the run's ``n``-th event (events after it are the test's)."""

    rows = store.r.xrange(keys.run_events(run_id), count=n)
    return rows[-1][0] if rows else "-"


@pytest.mark.parametrize("status", ["conversations", "interrupted"])
def test_run_without_report_refuses_followups(small, status):
    """A run whose report is not written yet: asking is refused with a clear message (its
    reference numbers do not exist yet, so a follow-up's [1] would later mean another source);
    nothing is stored."""

    store, run_id, _, _ = small
    state = store.create_run(RunConfig(topic=TOPIC))
    store.set_status(state.run_id, status)
    n_events = len(store.events(state.run_id))
    for call in (
        lambda: ask(state.run_id, "Which trials monitored LVEF?", store=store),
        lambda: submit_ask(store, state.run_id, "Which trials monitored LVEF?", research=True),
    ):
        with pytest.raises(InputError) as exc:
            call()
        assert exc.value.code == "report_not_ready"
        assert (
            "no report yet" in exc.value.message
            and "ask again when the run is complete" in exc.value.message
        )
    fs = FollowupStore(store)
    assert fs.list(state.run_id) == [] and fs.list_pending(state.run_id) == []
    assert len(store.events(state.run_id)) == n_events
    store.delete_run(state.run_id)
