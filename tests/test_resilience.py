"""Leases, interrupted runs, deterministic resumable runs, Redis restart, concurrency.

Real parts only: the session redis-server (or a private one for the restart test), real
documents (the whole runs use the session's 60-document ``finished_corpus``: determinism and
resume do not need the 2,972-document index, and these tests do a dozen runs), the offline
extractive engine. Kill -9 trials and RQ workers: tests/test_kill_resume.py.
"""

from __future__ import annotations

import threading
import time

import pytest
from resilience_helpers import SMALL, TOPIC, diff_keys, fingerprint

from research import jobs
from research.artifacts import ArtifactStore
from research.engines.factory import make_engine
from research.errors import InputError
from research.models import RunConfig, Step
from research.pipeline import runner
from research.store import keys, lease
from research.store.connection import get_redis
from research.store.runs import RunStore
from research.store.server import EmbeddedRedis


def _config(corpus_path, topic=TOPIC, **kw):
    return jobs.make_config(topic, corpus=str(corpus_path), **{**SMALL, **kw})


# ---------------------------------------------------------------------------- leases
def test_lease_is_exclusive_renewed_and_released(r, monkeypatch):
    run_id = "a" * 16
    first = lease.Lease(r, run_id, ttl_ms=600)
    assert first.acquire()
    assert not lease.Lease(r, run_id, ttl_ms=600).acquire()
    time.sleep(1.0)  # > ttl: the heartbeat kept it alive
    assert lease.is_held(r, run_id)
    first.release()
    assert not lease.is_held(r, run_id)
    # release is token-checked: a stale holder cannot delete a newer lease
    second = lease.Lease(r, run_id, ttl_ms=600)
    assert second.acquire()
    first.release()
    assert lease.is_held(r, run_id)
    second.release()


def test_active_run_without_lease_becomes_interrupted(r, data_dir, corpus_path):
    store = RunStore(r)
    state = store.create_run(_config(corpus_path))
    # pending and young: waiting for its job, not interrupted
    assert store.get_run(state.run_id).status == "pending"
    store.set_status(state.run_id, "conversations")
    held = lease.Lease(r, state.run_id, ttl_ms=5000)
    assert held.acquire()
    assert store.get_run(state.run_id).status == "conversations"  # a live job holds it
    held.release()
    assert store.get_run(state.run_id).status == "interrupted"  # its job is gone
    assert [s.status for s in store.list_runs()] == ["interrupted"]
    assert store.stored_status(state.run_id) == "conversations"  # reads are pure
    assert store.reconcile_dead_runs() == [state.run_id]  # worker/dashboard start, `research list`
    assert store.stored_status(state.run_id) == "interrupted"
    assert store.reconcile_dead_runs() == []
    types = [e.type for e in store.events(state.run_id)]
    assert types.count("run.interrupted") == 1
    # an old pending run (its process died before the job started) is interrupted too
    old = store.create_run(_config(corpus_path))
    r.hset(keys.run(old.run_id), "created_at", time.time() - lease.PENDING_GRACE_S - 1)
    assert store.get_run(old.run_id).status == "interrupted"
    # a queued one is not
    queued = store.create_run(_config(corpus_path))
    r.set(keys.run_queued(queued.run_id), "1")
    r.hset(keys.run(queued.run_id), "created_at", time.time() - lease.PENDING_GRACE_S - 1)
    assert store.get_run(queued.run_id).status == "pending"


def _snapshot(r) -> dict:
    """Every key with its serialized value (DUMP) and TTL state: equal snapshots, equal Redis."""
    return {k: (r.dump(k), r.ttl(k) > 0) for k in sorted(r.scan_iter("*"))}


def test_reads_of_a_dead_run_write_nothing(r, data_dir, corpus_path):
    """get_run / list_runs on a run whose lease expired show it ``interrupted`` but change
    nothing in Redis (reads are pure; reconciliation is explicit)."""
    store = RunStore(r)
    state = store.create_run(_config(corpus_path))
    store.set_status(state.run_id, "synthesizing")
    before = _snapshot(r)
    assert store.get_run(state.run_id).status == "interrupted"
    assert [s.status for s in store.list_runs()] == ["interrupted"]
    assert _snapshot(r) == before
    assert "run.interrupted" not in [e.type for e in store.events(state.run_id)]


def test_resume_refuses_running_and_finished_runs(r, data_dir, corpus_path):
    store = RunStore(r)
    state = store.create_run(_config(corpus_path))
    store.set_status(state.run_id, "planning")
    held = lease.Lease(r, state.run_id, ttl_ms=5000)
    held.acquire()
    with pytest.raises(InputError, match="still running"):
        jobs.resume_run(state.run_id)
    held.release()
    store.set_status(state.run_id, "complete")
    with pytest.raises(InputError, match="only interrupted or failed"):
        jobs.resume_run(state.run_id)
    with pytest.raises(InputError, match="not a run id"):
        jobs.resume_run("../../etc/passwd")


# ---------------------------------------------------------------------------- artifacts
def test_keyed_tool_call_reuses_its_file(r, data_dir, corpus_path):
    store = RunStore(r)
    run_id = store.create_run(_config(corpus_path)).run_id
    arts = ArtifactStore(run_id, "Plan", make_engine(RunConfig(topic="t")), store)
    step = Step(step_id=1, title="Search", description="find things")
    a, _ = arts.record(step, "search_local", {"results": [1]}, call_id="conv0.t1.1")
    again, _ = arts.record(step, "search_local", {"results": [1]}, call_id="conv0.t1.1")
    b, _ = arts.record(step, "search_local", {"results": [2]}, call_id="conv0.t1.2")
    assert a.artifact_file == again.artifact_file and not a.artifact_file.endswith("__2.json")
    assert b.artifact_file.endswith("__2.json")
    assert len(store.get_cards(run_id)) == 2
    # a call reserved but never recorded (process died mid-write) rewrites its own file
    r.hdel(keys.run_calls(run_id), "conv0.t1.2|rec")
    c, _ = arts.record(step, "search_local", {"results": [2]}, call_id="conv0.t1.2")
    assert c.artifact_file == b.artifact_file
    files = sorted(p.name for p in (arts.plan_dir).iterdir())
    assert len(files) == 2


# ---------------------------------------------------------------------------- whole runs
@pytest.fixture(scope="module")
def baseline(redis_server, finished_corpus, tmp_path_factory):
    """One uninterrupted small run (module data dir) and its fingerprint."""
    mp = pytest.MonkeyPatch()
    mp.setenv("RESEARCH_DATA_DIR", str(tmp_path_factory.mktemp("resilience_data")))
    mp.setenv("REDIS_URL", redis_server)
    state = jobs.run_foreground(_config(finished_corpus))
    assert state.status == "complete", state.error
    store = RunStore(get_redis())
    yield store, state.run_id, fingerprint(store, state.run_id)
    mp.undo()


@pytest.mark.slow
def test_same_input_gives_identical_run(baseline, finished_corpus):
    store, _, base = baseline
    again = jobs.run_foreground(_config(finished_corpus))
    fp = fingerprint(store, again.run_id)
    assert diff_keys(base, fp) == []
    planned = [t for t in base["turns"] if t[0] != "Gap search"]  # gap turns come after them
    assert len(base["sources"]) > 5 and len(planned) == 4


@pytest.mark.slow
def test_resume_after_a_stop_mid_conversations_redoes_nothing(baseline, finished_corpus):
    """A run stopped after its first committed turn (the job's process 'dies': lease dropped,
    status left active) resumes to the same run; finished turns are not redone."""
    store, _, base = baseline
    run_id = jobs.create_run(_config(finished_corpus))
    stop = threading.Event()

    def watch() -> None:  # cancel right after the first stored turn, as a crash would stop it
        while not stop.is_set() and store.count_turns(run_id) < 1:
            time.sleep(0.01)
        store.r.set(keys.run_cancel(run_id), "1")

    t = threading.Thread(target=watch)
    t.start()

    runner.execute(run_id)
    stop.set()
    t.join()
    first_turns = store.get_turns(run_id)
    # the four planned turns are computed in parallel and may all be committed before the
    # cancel lands; the run still stops before its report, with its turns stored
    planned = [t for t in base["turns"] if t[0] != "Gap search"]
    assert 1 <= len(first_turns) <= len(planned)
    assert store.get_run(run_id).status == "cancelled" and not store.has_doc(run_id, "report")
    # turn the cancelled run into a crashed one: active status, no lease, no cancel flag
    store.r.delete(keys.run_cancel(run_id))
    store.set_status(run_id, "conversations")
    assert store.get_run(run_id).status == "interrupted"
    assert jobs.resume_run(run_id, foreground=True) == "complete"
    fp = fingerprint(store, run_id)
    assert diff_keys(base, fp) == []
    turns = store.get_turns(run_id)
    assert [t.started_at for t in turns[: len(first_turns)]] == [t.started_at for t in first_turns]
    types = [e.type for e in store.events(run_id)]
    assert "run.interrupted" in types and "run.resumed" in types


@pytest.mark.slow
def test_redis_restart_mid_run_completes(baseline, finished_corpus, tmp_path, monkeypatch):
    """Stop and restart a private redis-server (same socket, AOF) during the conversations: the
    run reconnects with backoff and ends complete with the same report and sources."""
    _, _, base = baseline
    server = EmbeddedRedis(tmp_path / "redis")
    url = server.start()
    monkeypatch.setenv("REDIS_URL", url)
    try:
        run_id = jobs.start_run(_config(finished_corpus))
        store = RunStore(get_redis())
        deadline = time.monotonic() + 120
        while store.count_turns(run_id) < 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        server.stop()  # SHUTDOWN: the AOF is flushed
        time.sleep(1.5)
        server.start()
        state = jobs.wait_for(run_id, timeout_s=300)
        assert state.status == "complete", (state.status, state.error)
        assert diff_keys(base, fingerprint(store, run_id)) == []
    finally:
        server.stop()


@pytest.mark.slow
def test_eight_concurrent_runs_do_not_interfere(baseline, finished_corpus):
    """8 runs at once (4 of the same topic): all complete; same input → identical runs."""
    store = baseline[0]
    other = "Pembrolizumab in non-small cell lung cancer"
    configs = [_config(finished_corpus, max_perspectives=2, max_turns=1)] * 4 + [
        _config(finished_corpus, topic=other, max_perspectives=1, max_turns=1)
    ] * 4
    ids = [jobs.start_run(c) for c in configs]
    states = [jobs.wait_for(i, timeout_s=600) for i in ids]
    assert [s.status for s in states] == ["complete"] * 8, [s.error for s in states]
    for group in (ids[:4], ids[4:]):
        fps = [fingerprint(store, i) for i in group]
        assert fps[0]["report"] and len(fps[0]["sources"]) > 2
        assert all(diff_keys(fps[0], fp) == [] for fp in fps[1:])
