"""Item 21 — load test: runs submitted through the HTTP API to RQ workers, one killed mid-way.

Real processes on one private redis-server and one data dir: ``research serve`` (the HTTP API,
``RESEARCH_JOB_BACKEND=rq``, no rate limit) and ``workers`` ``research worker`` processes. The
bench submits ``runs`` small extractive runs (drug template, 1 perspective × 1 turn, no gap
rounds, 60 real trastuzumab documents of the shared corpus, the index built before the workers
start) with ``POST /runs`` as fast as the API takes them, then watches ``GET /runs``. Once a
quarter of the runs completed and the first worker is executing a run (its ``host:pid`` on the
run), that worker gets SIGKILL; it is started again once its lease expired
(``RESEARCH_LEASE_TTL_MS`` = 3 s), and at start it resumes the interrupted run as any worker
does (``research.jobs.resume_interrupted``).

Figures: runs completed within ``timeout_s`` of the first submission and runs still queued or
working then (how many finish depends on the machine's load; the deadline keeps the item under
10 minutes), runs lost — ended failed or cancelled, or interrupted and never resumed (target 0),
sources
saved twice within a run (same URL; target 0), throughput (completed runs per minute from the
first submission to the last finish) and the queue wait (run created → a worker set it
``planning``, its first pick-up) p50 / p95. All runs are queued at once on purpose, so the
queue wait grows with a run's place in the queue; the per-run rows are in ``extra``.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from bench.common import Figure, percentile, scoped_env
from research.models import ACTIVE_STATUSES
from research.search.local import get_local_search
from research.store import keys, open_store
from research.store.runs import RunStore
from research.store.server import EmbeddedRedis

ITEM = 21
TOPIC = "Trastuzumab in HER2-positive breast cancer"
REPO = Path(__file__).resolve().parents[1]
LEASE_TTL_MS = 3000
RUN = {"template": "drug", "max_perspectives": 1, "max_turns": 1, "gap_turns": 0}


def _tiny_corpus(corpus: Path, out: Path, n: int = 60) -> Path:
    """The first ``n`` documents of ``corpus`` that name trastuzumab or HER2, as JSONL."""
    lines = []
    with corpus.open(encoding="utf-8") as fh:
        for line in fh:
            text = json.loads(line)["text"].lower()
            if "trastuzumab" in text or "her2" in text:
                lines.append(line)
                if len(lines) >= n:
                    break
    out.write_text("".join(lines), encoding="utf-8")
    return out


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class _Procs:
    """The API and worker processes, their logs in ``logs``; ``stop()`` ends what is left."""

    def __init__(self, env: dict[str, str], logs: Path) -> None:
        self.env, self.logs, self.all = env, logs, []

    def start(self, name: str, *args: str) -> subprocess.Popen:
        log = (self.logs / f"{name}.log").open("w")
        proc = subprocess.Popen(
            [sys.executable, "-m", "research.cli", *args],
            env=self.env,
            cwd=REPO,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        self.all.append(proc)
        return proc

    def stop(self) -> None:
        for proc in self.all:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in self.all:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()


def _wait_health(base: str, api: subprocess.Popen, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if api.poll() is not None:
            raise RuntimeError(f"research serve exited with {api.returncode}")
        try:
            if httpx.get(f"{base}/health", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise RuntimeError("research serve did not answer /health within 60 s")


def _victim_run(store: RunStore, worker: subprocess.Popen) -> str | None:
    """A run the ``worker`` process is executing now (not just picked), or None."""
    holder = f"{socket.gethostname()}:{worker.pid}"
    for state in store.list_runs(limit=1000):
        if state.status in ACTIVE_STATUSES and state.status != "pending":
            # the runner writes its ``host:pid`` on the run hash (not a RunState field)
            if (
                store.is_held(state.run_id)
                and store.r.hget(keys.run(state.run_id), "worker") == holder
            ):
                return state.run_id
    return None


def run(corpus: Path, runs: int = 40, workers: int = 2, timeout_s: float = 480) -> list[Figure]:
    """Submit ``runs`` runs through the API to ``workers`` RQ workers, SIGKILL one worker
    mid-way and restart it; returns the item's figures (see the module docstring).

    Raises:
        RuntimeError: the API did not start, or a submission was refused.
    """
    tmp = Path(tempfile.mkdtemp(prefix="bench-load-"))
    server = EmbeddedRedis(tmp / "redis")
    url = server.start()
    data, index = tmp / "data", tmp / "indexes"
    data.mkdir()
    tiny = _tiny_corpus(corpus, tmp / "tiny.jsonl")
    settings = {
        "RESEARCH_DATA_DIR": str(data),
        "REDIS_URL": url,
        "RESEARCH_INDEX_DIR": str(index),
        "RESEARCH_JOB_BACKEND": "rq",
        "RESEARCH_LEASE_TTL_MS": str(LEASE_TTL_MS),
        "RESEARCH_API_RATE_PER_MIN": "0",
    }
    env = {**os.environ, **settings, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO)}
    env.pop("RESEARCH_LLM_MODEL", None)
    procs = _Procs(env, tmp)
    try:
        with scoped_env(**settings):
            get_local_search(tiny, index)  # on disk first: the workers only load it
            store = open_store()
            token = store.tokens.create("bench-load")[1]
            port = _free_port()
            base = f"http://127.0.0.1:{port}"
            api = procs.start("api", "serve", "--port", str(port), "--no-resume")
            pool = [procs.start(f"worker{i}", "worker", "--name", f"w{i}") for i in range(workers)]
            _wait_health(base, api)
            client = httpx.Client(
                base_url=base, headers={"Authorization": f"Bearer {token}"}, timeout=60
            )
            t_first = time.time()
            ids = []
            for i in range(runs):
                body = {"topic": f"{TOPIC} (load run {i + 1})", "corpus": str(tiny), **RUN}
                resp = client.post("/runs", json=body)
                if resp.status_code != 201:
                    raise RuntimeError(f"POST /runs refused: {resp.status_code} {resp.text[:300]}")
                ids.append(resp.json()["run_id"])
            submit_s = time.time() - t_first
            kill = _watch(client, store, ids, pool, procs, t_first + timeout_s)
            return _figures(store, ids, runs, workers, submit_s, kill)
    finally:
        procs.stop()
        server.stop()
        shutil.rmtree(tmp, ignore_errors=True)


def _watch(client, store, ids, pool, procs, deadline: float) -> dict:
    """Poll ``GET /runs`` until every run ended (or ``deadline``); SIGKILL ``pool[0]`` once a
    quarter of the runs completed while it executes one, restart it after its lease expired."""
    kill: dict = {}
    wanted = set(ids)
    while time.time() < deadline:
        rows = [
            r for r in client.get("/runs", params={"limit": 1000}).json() if r["run_id"] in wanted
        ]
        done = sum(r["status"] == "complete" for r in rows)
        if not kill and done >= len(ids) // 4:
            victim = _victim_run(store, pool[0])
            if victim:
                pool[0].send_signal(signal.SIGKILL)
                pool[0].wait()
                kill = {"run_id": victim, "at_s": time.time(), "completed_before": done}
        if (
            kill
            and "restarted_at_s" not in kill
            and time.time() - kill["at_s"] > LEASE_TTL_MS / 1000 + 1
        ):
            procs.start("worker0-restarted", "worker", "--name", "w0-restarted")
            kill["restarted_at_s"] = time.time()
        if len(rows) == len(ids) and all(
            r["status"] in ("complete", "failed", "cancelled") for r in rows
        ):
            break
        time.sleep(1.0)
    return kill


def _figures(
    store: RunStore, ids, runs: int, workers: int, submit_s: float, kill: dict
) -> list[Figure]:
    rows, waits, dups = [], [], 0
    for run_id in ids:
        state = store.get_run(run_id)
        events = store.events(run_id)
        picked = next(
            (e.ts for e in events if e.type == "status" and e.data.get("status") == "planning"),
            None,
        )
        urls = [s.url for s in store.collector(run_id).all_sources()]
        dup = len(urls) - len(set(urls))
        dups += dup
        if picked is not None:
            waits.append(picked - state.created_at)
        rows.append(
            {
                "run_id": run_id,
                "status": state.status,
                "queue_wait_s": None if picked is None else round(picked - state.created_at, 2),
                "wall_s": state.wall_s,
                "resumed": sum(e.type == "run.resumed" for e in events),
                "sources": len(urls),
                "duplicated_sources": dup,
            }
        )
    states = [store.get_run(i) for i in ids]
    completed = [s for s in states if s.status == "complete"]
    # lost: ended without a report, or its job died and nobody resumed it; a run still queued or
    # working at the deadline is not lost, only unfinished (reported apart)
    lost = [s.run_id for s in states if s.status in ("failed", "cancelled", "interrupted")]
    unfinished = [s.run_id for s in states if s.status in ACTIVE_STATUSES]
    span_s = (
        (max(s.finished_at for s in completed) - min(s.created_at for s in states))
        if completed
        else 0.0
    )
    extra = {
        "runs": rows,
        "kill": kill,
        "workers": workers,
        "submit_s": round(submit_s, 2),
        "span_s": round(span_s, 1),
        "lost": lost,
        "unfinished_at_deadline": unfinished,
    }
    note = (
        f"{runs} runs via POST /runs ({submit_s:.1f} s to submit) to {workers} RQ workers; "
        + (
            f"worker 1 SIGKILLed after {kill['completed_before']} completed while running "
            f"{kill['run_id']}, restarted {kill.get('restarted_at_s', 0) - kill['at_s']:.1f} s later"
            if kill
            else "no worker was killed (no run finished a quarter of the way in time)"
        )
        + (f"; {len(unfinished)} still queued or working at the deadline" if unfinished else "")
    )
    return [
        Figure(ITEM, "load.runs_completed", len(completed), "runs", note=note, extra=extra),
        Figure(ITEM, "load.runs_unfinished_at_deadline", len(unfinished), "runs"),
        Figure(ITEM, "load.runs_lost", len(lost), "runs", target="<= 0", target_on="value"),
        Figure(ITEM, "load.duplicated_sources", dups, "sources", target="<= 0", target_on="value"),
        Figure(
            ITEM, "load.throughput", len(completed) / span_s * 60 if span_s else None, "runs/min"
        ),
        Figure(ITEM, "load.queue_wait_p50", percentile(waits, 50) if waits else None, "s"),
        Figure(ITEM, "load.queue_wait_p95", percentile(waits, 95) if waits else None, "s"),
    ]
