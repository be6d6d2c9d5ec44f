"""Kill -9 a `research run` process at random points, resume each run, compare
with an uninterrupted run of the same input; 2 RQ worker processes serve 4 queued runs.

Kill points (six stratified draws rather than ten uniform ones, for the same coverage in less time): the
run's event stream is cut into six equal strata and one point is drawn at random in each, so every
sixth of the run — planning and survey, each stretch of the parallel conversations, outline, writing — is
killed at least once. Ten uniform draws covered it worse (they cluster by chance: on the 43-event
baseline the seed drew 10, 18, 21, 28, 30, 34, 35, 36, 38, 39 — five kills in the last sixth, none
before event 10 (survey.done), so no kill while planning or surveying) and cost four more whole
runs, each a cold ``research run`` process (imports, then the search and embedding models loaded)
plus a resume. ``RESEARCH_KILL_TRIALS=10`` runs ten strata.

Real processes, the session redis-server, 60 real documents of the shared corpus (the session's
``finished_corpus``: the runs need a few trastuzumab documents, not the 2,972-document index, and
each trial is a whole run), the offline extractive engine.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import tempfile
import time

import pytest
from resilience_helpers import SMALL, TOPIC, diff_keys, fingerprint, research_cmd, subprocess_env
from rq import Queue

from research import jobs
from research.config import load_settings
from research.jobs import workers
from research.search.local import get_local_search
from research.store import keys
from research.store.connection import get_redis
from research.store.runs import RunStore

LEASE_TTL_MS = "2000"  # short, so a killed job's run shows interrupted quickly
TRIALS = int(os.environ.get("RESEARCH_KILL_TRIALS", "6"))  # strata of the event stream (see above)


@pytest.fixture(scope="module")
def env_and_baseline(redis_server, finished_corpus, tmp_path_factory):

    mp = pytest.MonkeyPatch()
    data = tmp_path_factory.mktemp("kill_data")
    mp.setenv("RESEARCH_DATA_DIR", str(data))
    mp.setenv("REDIS_URL", redis_server)
    mp.setenv("RESEARCH_LEASE_TTL_MS", LEASE_TTL_MS)
    # the index on disk first, so the baseline's event count has no index-build events that the
    # killed subprocesses (which find the index ready) would never reach
    get_local_search(finished_corpus, load_settings().index_dir)
    config = jobs.make_config(TOPIC, corpus=str(finished_corpus), **SMALL)
    state = jobs.run_foreground(config)
    assert state.status == "complete", state.error
    store = RunStore(get_redis())
    events = len(store.events(state.run_id))
    yield store, data, fingerprint(store, state.run_id), events
    mp.undo()


def _new_run(
    store: RunStore, known: set[str], proc: subprocess.Popen, timeout_s: float = 180
) -> str | None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and proc.poll() is None:
        fresh = set(store.r.zrange(keys.RUNS_INDEX, 0, -1)) - known
        if fresh:
            return fresh.pop()
        time.sleep(0.05)
    return None


def _stratified_points(rng: random.Random, lo: int, hi: int, n: int) -> list[int]:
    """``n`` distinct event counts in ``[lo, hi)``, one drawn uniformly in each of ``n`` equal strata."""
    edges = [lo + (hi - lo) * i // n for i in range(n + 1)]
    return [rng.randrange(a, max(a + 1, b)) for a, b in zip(edges, edges[1:], strict=False)]


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_kill9_at_random_points_then_resume_gives_the_same_run(
    env_and_baseline, redis_server, finished_corpus
):
    store, data, base, n_events = env_and_baseline
    rng = random.Random(20240607)
    points = _stratified_points(rng, 3, n_events - 2, TRIALS)
    env = subprocess_env(data, redis_server, RESEARCH_LEASE_TTL_MS=LEASE_TTL_MS)
    cmd = research_cmd(
        "run",
        TOPIC,
        "--corpus",
        str(finished_corpus),
        "--template",
        SMALL["template"],
        "--max-perspectives",
        str(SMALL["max_perspectives"]),
        "--max-turns",
        str(SMALL["max_turns"]),
        "--json",
    )
    killed_at = []
    for point in points:
        known = set(store.r.zrange(keys.RUNS_INDEX, 0, -1))
        err = tempfile.TemporaryFile()
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=err)
        try:
            run_id = _new_run(store, known, proc)
            assert run_id, "the subprocess never created its run"
            while proc.poll() is None and store.r.xlen(keys.run_events(run_id)) < point:
                time.sleep(0.01)
            if proc.poll() is not None:  # ended before the kill point: say how, not "no process"
                err.seek(0)
                tail = err.read().decode(errors="replace")[-2000:]
                status = store.get_run(run_id).status
                events = [e.type for e in store.events(run_id)][-8:]
                raise AssertionError(
                    f"run {run_id} ended ({status}, exit {proc.returncode}) at event "
                    f"{store.r.xlen(keys.run_events(run_id))} before the kill point {point}; "
                    f"last events {events}; stderr: {tail}"
                )
            os.kill(proc.pid, signal.SIGKILL)
        finally:
            proc.wait(timeout=30)
            err.close()
        killed_at.append((point, store.r.xlen(keys.run_events(run_id)), store.count_turns(run_id)))
        print(f"trial {len(killed_at)}: killed at event {point}: {killed_at[-1]}", flush=True)
        deadline = time.monotonic() + 10
        while store.get_run(run_id).status != "interrupted" and time.monotonic() < deadline:
            time.sleep(0.1)  # the dead process's lease expires after LEASE_TTL_MS
        assert store.get_run(run_id).status == "interrupted", (point, store.get_run(run_id).status)
        assert jobs.resume_run(run_id, foreground=True) == "complete"
        fp = fingerprint(store, run_id)
        assert diff_keys(base, fp) == [], (point, diff_keys(base, fp))
        types = [e.type for e in store.events(run_id)]
        assert "run.interrupted" in types and "run.resumed" in types
    # the kills landed at different stages (events seen at the kill; turns stored)
    assert len({events for _, events, _ in killed_at}) >= min(5, TRIALS), killed_at


@pytest.mark.slow
def test_two_rq_workers_serve_four_queued_runs(
    env_and_baseline, redis_server, finished_corpus, monkeypatch
):
    store, data, _, _ = env_and_baseline
    monkeypatch.setenv("RESEARCH_JOB_BACKEND", "rq")
    monkeypatch.delenv("RESEARCH_LEASE_TTL_MS")  # the default: busy workers must not look dead

    Queue(workers.QUEUE, connection=workers.rq_connection()).empty()
    config = jobs.make_config(
        TOPIC, corpus=str(finished_corpus), template="drug", max_perspectives=1, max_turns=1
    )
    ids = [jobs.start_run(config) for _ in range(4)]
    assert all(store.get_run(i).status == "pending" for i in ids)  # queued, not started here
    env = subprocess_env(data, redis_server, RESEARCH_JOB_BACKEND="rq")
    procs = [
        subprocess.Popen(
            research_cmd("worker", "--burst", "--no-resume", "--name", f"w{n}-{os.getpid()}"),
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        for n in range(2)
    ]
    try:
        states = [jobs.wait_for(i, timeout_s=600) for i in ids]
    finally:
        for p in procs:
            try:
                p.wait(timeout=120)
            except subprocess.TimeoutExpired:
                p.kill()
    assert [s.status for s in states] == ["complete"] * 4, [(s.status, s.error) for s in states]
    holders = {store.r.hget(keys.run(i), "worker") for i in ids}
    assert len(holders) == 2, holders  # both worker processes did work
    assert all(p.returncode == 0 for p in procs), [p.stderr.read()[-2000:] for p in procs]


def test_a_resumed_run_goes_ahead_of_the_queued_ones(
    env_and_baseline, redis_server, finished_corpus, monkeypatch
):
    """A resumed run has waited its turn once: on the RQ queue it goes first, not behind the
    runs queued while it was executing (a worker killed mid-run under load left it last)."""
    store, _, _, _ = env_and_baseline
    monkeypatch.setenv("RESEARCH_JOB_BACKEND", "rq")
    q = Queue(workers.QUEUE, connection=workers.rq_connection())
    q.empty()
    config = jobs.make_config(
        TOPIC, corpus=str(finished_corpus), template="drug", max_perspectives=1, max_turns=1
    )
    queued = [jobs.start_run(config) for _ in range(2)]
    stopped = jobs.create_run(config)
    store.set_status(stopped, "interrupted")  # as a dead worker's run is stored
    assert jobs.resume_run(stopped, by="test") == "pending"
    order = [q.fetch_job(j).args[0] for j in q.job_ids]
    assert order == [stopped, *queued]
    q.empty()
    for rid in [*queued, stopped]:  # never executed: ended, so no later resume picks them up
        store.set_status(rid, "cancelled")
