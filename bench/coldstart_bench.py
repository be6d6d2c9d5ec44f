"""Item 13 — the first run on a cold index vs the same run on a warm one.

What a new user waits for: ``python -m research.cli run "Trastuzumab in HER2-positive breast
cancer" --corpus <shared corpus> --template drug --json`` (default perspectives and turns, the
offline extractive engine, float32 embeddings: ``RESEARCH_EMBED_PRECISION`` empty), as a
subprocess, exactly as typed.

* **Cold**: a fresh data dir and an empty index dir (``RESEARCH_INDEX_DIR`` = a new temp
  folder), so the process loads the model, builds the corpus index (BM25 + dense vectors) and
  then runs.
* **Warm**: the same command right after, on another fresh data dir and the index dir the cold
  run just filled. Figure: cold wall ÷ warm wall (s, process start to exit); target ≤ 2.0.
* **Seconds until the first index progress** of the cold run, two ways: on the CLI's stderr
  (the first byte of the progress bar, ``research.cli.progress.LABELS``) and on the run's event
  stream (the first ``index.progress`` event's timestamp, read back from the run's own embedded
  Redis after the process ended, minus the time the process was started); target ≤ 2 s.

The machine is shared, so the cold/warm pairs run back to back, ``reps`` times; the figures are
the medians of the pairs' ratios and times, every pair and the load average at each start are in
``extra``. Baseline of the ratio: the warm run of the same pair.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from bench.common import Figure
from research.cli.progress import LABELS
from research.store.connection import make_client
from research.store.runs import RunStore
from research.store.server import EmbeddedRedis

TOPIC = "Trastuzumab in HER2-positive breast cancer"
REPO = Path(__file__).resolve().parents[1]


def _first_progress_on_stderr(proc: subprocess.Popen, t0: float, out: dict) -> None:
    """Read ``proc``'s stderr to the end; store in ``out`` the seconds from ``t0`` to the first
    chunk naming an index progress state, and the whole text."""

    buf = b""
    while True:
        chunk = os.read(proc.stderr.fileno(), 65536)
        if not chunk:
            break
        buf += chunk
        if "stderr_s" not in out and any(label.encode() in buf for label in LABELS.values()):
            out["stderr_s"] = time.time() - t0
    out["stderr"] = buf.decode(errors="replace")


def _first_progress_event(data_dir: Path, run_id: str) -> float | None:
    """Timestamp (Unix s) of the run's first ``index.progress`` event, from its Redis files."""

    server = EmbeddedRedis(data_dir / "redis")
    server.start()
    try:
        events = RunStore(make_client(server.url)).events(run_id)
        return next((ev.ts for ev in events if ev.type == "index.progress"), None)
    finally:
        server.stop()


def cli_run(corpus: Path, data_dir: Path, index_dir: Path, timeout_s: float = 1800) -> dict:
    """One ``research run`` subprocess; returns ``{wall_s, status, run_id, sources, stderr_s,
    event_s, load_1m}`` (``stderr_s``/``event_s``: seconds from start to the first index
    progress on stderr / in the event stream, None when there was none).

    Raises:
        RuntimeError: the process failed or printed no JSON.
    """
    env = dict(
        os.environ,
        RESEARCH_DATA_DIR=str(data_dir),
        RESEARCH_INDEX_DIR=str(index_dir),
        RESEARCH_EMBED_PRECISION="",
        PYTHONPATH=str(REPO),
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        TOKENIZERS_PARALLELISM="false",
    )
    env.pop("REDIS_URL", None)
    load = os.getloadavg()[0]
    t0 = time.time()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "research.cli",
            "run",
            TOPIC,
            "--corpus",
            str(corpus),
            "--template",
            "drug",
            "--json",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=str(REPO),
    )
    err: dict = {}
    reader = threading.Thread(target=_first_progress_on_stderr, args=(proc, t0, err), daemon=True)
    reader.start()
    stdout = proc.stdout.read().decode(errors="replace")  # stderr: the reader thread
    proc.wait(timeout=timeout_s)
    wall = time.time() - t0
    reader.join(timeout=10)
    try:
        doc = json.loads(stdout)
    except ValueError:
        raise RuntimeError(
            f"run printed no JSON (exit {proc.returncode}): {err.get('stderr', '')[-400:]}"
        ) from None
    event_ts = _first_progress_event(data_dir, doc["run_id"])
    return {
        "wall_s": round(wall, 2),
        "status": doc.get("status"),
        "run_id": doc["run_id"],
        "sources": doc.get("sources"),
        "run_wall_s": doc.get("wall_s"),
        "load_1m": round(load, 2),
        "stderr_s": round(err["stderr_s"], 2) if "stderr_s" in err else None,
        "event_s": round(event_ts - t0, 2) if event_ts else None,
    }


def run(corpus: Path, reps: int = 2) -> list[Figure]:
    """``reps`` cold/warm pairs back to back; figures: median cold ÷ warm wall (target ≤ 2.0),
    median seconds to the first index progress on stderr and in the event stream (≤ 2 s)."""
    pairs = []
    for _ in range(reps):
        tmp = Path(tempfile.mkdtemp(prefix="bench-coldstart-"))
        try:
            cold = cli_run(corpus, tmp / "data-cold", tmp / "indexes")
            warm = cli_run(corpus, tmp / "data-warm", tmp / "indexes")
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        pairs.append(
            {"cold": cold, "warm": warm, "ratio": round(cold["wall_s"] / warm["wall_s"], 3)}
        )
        print(f"[bench] coldstart pair: {json.dumps(pairs[-1])}", file=sys.stderr, flush=True)
    ok = all(p["cold"]["status"] == p["warm"]["status"] == "complete" for p in pairs)
    cold_s = statistics.median(p["cold"]["wall_s"] for p in pairs)
    warm_s = statistics.median(p["warm"]["wall_s"] for p in pairs)
    ratio = statistics.median(p["ratio"] for p in pairs)
    loads = [(p["cold"]["load_1m"], p["warm"]["load_1m"]) for p in pairs]
    statuses = [(p["cold"]["status"], p["warm"]["status"]) for p in pairs]
    note = (
        f"{reps} cold/warm pairs back to back, ratios {[p['ratio'] for p in pairs]}; load average (1 min) "
        f"at each start {loads}; statuses {'complete' if ok else statuses}"
    )
    extra = {"pairs": pairs}
    figs = [
        Figure(
            13,
            "cold start: first run on an empty index dir ÷ warm run (wall)",
            cold_s,
            "s",
            baseline=warm_s,
            baseline_label="same run, warm index",
            ratio=ratio,
            target="<= 2.0",
            note=note,
            extra=extra,
        )
    ]
    for key, label in (("stderr_s", "CLI stderr"), ("event_s", "run event stream")):
        vals = [p["cold"][key] for p in pairs if p["cold"][key] is not None]
        figs.append(
            Figure(
                13,
                f"cold start: s until the first index progress ({label})",
                statistics.median(vals) if len(vals) == len(pairs) else None,
                "s",
                target="<= 2",
                target_on="value",
                note=f"per pair {[p['cold'][key] for p in pairs]}",
            )
        )
    return figs
