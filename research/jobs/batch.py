"""Batches: many topics queued as ordinary runs on the job backend, followed as one.

``submit_batch`` creates each run (``research.jobs.create_run``), stores the batch (its name,
creation time and run ids: ``research.store.batches``) and hands every run to
``research.jobs.submit`` — a thread of this process (``thread`` backend) or the RQ queue that
``research worker`` processes consume (``rq``). The input is checked whole first
(``research.jobs.batch_input.build_configs``), so a bad row queues nothing.
"""

from __future__ import annotations

import time
from typing import Any

from research.config import job_backend
from research.errors import InputError, RunNotFoundError
from research.export.batch_zip import reports_zip
from research.jobs.launch import create_run, is_active, submit
from research.jobs.progress import run_progress
from research.models import Report, RunConfig
from research.store import open_store
from research.store.batches import Batch, BatchStore
from research.store.keys import check_batch_id
from research.store.runs import RunStore


def submit_batch(
    configs: list[RunConfig], name: str | None = None, *, backend: str | None = None
) -> Batch:
    """Create a run per config, store the batch, then queue every run on ``backend`` ("thread"
    or "rq"; default ``job_backend()``). Returns the stored ``Batch`` (ids in config order).

    Raises:
        InputError: no configs, or an unknown job backend (before anything is written).
    """
    if not configs:
        raise InputError("The batch has no topics; write one topic per line.")
    backend = backend or job_backend()  # a bad backend fails before anything is written
    run_ids = [create_run(c) for c in configs]
    batch = BatchStore(open_store()).create(name, run_ids)
    for run_id in run_ids:
        submit(run_id, backend)
    return batch


def get_batch(batch_id: str, store: RunStore | None = None) -> Batch:
    """The stored batch.

    Raises:
        InputError: ill-formed id, or no batch with this id (code ``no_such_batch``).
    """
    batch_id = check_batch_id(batch_id.strip() if isinstance(batch_id, str) else batch_id)
    batch = BatchStore(store or open_store()).get(batch_id)
    if batch is None:
        raise InputError(
            f"No batch '{batch_id}' in this store; `research batch status` lists the batches.",
            code="no_such_batch",
        )
    return batch


def batch_rows(store: RunStore, batch: Batch) -> list[dict[str, Any]]:
    """One row per run, in batch order: ``{run_id, topic, status, phase, progress (0–1),
    sources, citations, error}``; a run deleted since reads status ``deleted``."""
    counts = store.source_counts(batch.run_ids)
    rows = []
    for run_id in batch.run_ids:
        try:
            state = store.get_run(run_id)
        except RunNotFoundError:
            rows.append(
                {"run_id": run_id, "topic": "", "status": "deleted", "phase": "", "progress": 0.0}
                | {"sources": 0, "citations": 0, "error": None}
            )
            continue
        prog = run_progress(store, state)
        report = store.get_doc(run_id, "report", Report) if state.status == "complete" else None
        rows.append(
            {
                "run_id": run_id,
                "topic": state.topic,
                "status": state.status,
                "phase": prog["phase"],
                "progress": prog["fraction"],
                "sources": int(counts.get(run_id, 0)),
                "citations": len(report.references) if report else 0,
                "error": state.error or None,
            }
        )
    return rows


def batch_status(batch_id: str, store: RunStore | None = None) -> dict[str, Any]:
    """``{batch_id, name, created_at (Unix s), total, counts (status → runs), done (no run
    active), progress (mean of the runs, 0–1), runs: batch_rows}``.

    Raises:
        InputError: as :func:`get_batch`.
    """
    store = store or open_store()
    batch = get_batch(batch_id, store)
    rows = batch_rows(store, batch)
    counts: dict[str, int] = {}
    for row in rows:
        counts[row["status"]] = counts.get(row["status"], 0) + 1
    return {
        "batch_id": batch.batch_id,
        "name": batch.name,
        "created_at": batch.created_at,
        "total": len(rows),
        "counts": counts,
        "done": not any(is_active(r["status"]) for r in rows),
        "progress": round(sum(r["progress"] for r in rows) / max(1, len(rows)), 3),
        "runs": rows,
    }


def wait_batch(
    batch_id: str, *, poll_s: float = 1.0, timeout_s: float | None = None, on_poll=None
) -> dict[str, Any]:
    """Poll :func:`batch_status` until no run is active or ``timeout_s`` (s) passed; returns
    the last status. ``on_poll``: optional ``callable(status)`` told every poll."""
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    while True:
        status = batch_status(batch_id)
        if on_poll is not None:
            on_poll(status)
        if status["done"] or (deadline is not None and time.monotonic() > deadline):
            return status
        time.sleep(poll_s)


def list_batches(limit: int = 50, store: RunStore | None = None) -> list[dict[str, Any]]:
    """The newest ``limit`` batches: ``{batch_id, name, created_at, total}``, newest first."""
    return [
        {
            "batch_id": b.batch_id,
            "name": b.name,
            "created_at": b.created_at,
            "total": len(b.run_ids),
        }
        for b in BatchStore(store or open_store()).list(limit)
    ]


def batch_zip(batch_id: str, store: RunStore | None = None) -> tuple[bytes, int]:
    """``(zip bytes, reports in it)``: every finished report of the batch as Markdown, plus
    ``batch.csv`` (the status table) and a README (``research.export.batch_zip``).

    Raises:
        InputError: as :func:`get_batch`.
    """
    store = store or open_store()
    status = batch_status(batch_id, store)
    return reports_zip(store, status["name"], status["runs"])


def cancel_batch(batch_id: str, store: RunStore | None = None) -> list[str]:
    """Ask every active run of the batch to stop at its next step; returns their ids."""
    store = store or open_store()
    batch = get_batch(batch_id, store)
    asked = []
    for row in batch_rows(store, batch):
        if is_active(row["status"]):
            store.request_cancel(row["run_id"])
            asked.append(row["run_id"])
    return asked
