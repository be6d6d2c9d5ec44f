"""The batch's own notification: when the last run of a batch ends, ``batch.complete`` goes
once to the settings' targets and to the targets of the run that ended last (a batch's runs
share the targets given with the batch).

``research.notify.deliver`` calls :func:`deliver_batch` in the run's delivery thread, after the
run's own notification. The batch is over when none of its runs is active (``complete``,
``failed``, ``cancelled``, ``interrupted`` or ``awaiting_review``, as the Batch tab counts it);
Redis ``SET NX`` (``BatchStore.claim_announcement``) lets exactly one of the runs that end at
about the same time announce it. A run that ends ``cancelled`` sends no notification, so a
batch whose last run is cancelled announces nothing.
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime

from research.config import Settings
from research.errors import ResearchError, RunNotFoundError
from research.models import ACTIVE_STATUSES
from research.notify.base import Notification, Target
from research.notify.payload import iso, run_url
from research.store.batches import Batch, BatchStore
from research.store.notifications import NotificationRecord
from research.store.runs import RunStore

BATCH_EVENT = "batch.complete"


def batch_rows(store: RunStore, batch: Batch, settings: Settings) -> list[dict[str, str | None]]:
    """``{run_id, topic, status, url}`` per run of the batch, in batch order (a deleted run:
    topic ``""``, status ``deleted``)."""
    rows: list[dict[str, str | None]] = []
    for run_id in batch.run_ids:
        topic, status = "", "deleted"
        try:
            state = store.get_run(run_id)
            topic, status = state.topic, str(state.status)
        except RunNotFoundError:
            pass
        rows.append(
            {"run_id": run_id, "topic": topic, "status": status, "url": run_url(settings, run_id)}
        )
    return rows


def batch_notification(batch: Batch, rows: list[dict[str, str | None]]) -> Notification:
    """The ``batch.complete`` notification of ``batch`` whose runs are ``rows``
    (:func:`batch_rows`): the webhook body ``{event, id, sent_at, batch_id, name, total, counts
    (status → runs), runs}`` and a title and text for Apprise; level ``success`` when every run
    completed, else ``failure``."""
    counts = dict(Counter(str(r["status"]) for r in rows))
    body = {
        "event": BATCH_EVENT,
        "id": uuid.uuid4().hex,
        "sent_at": iso(datetime.now(tz=UTC).timestamp()),
        "batch_id": batch.batch_id,
        "name": batch.name,
        "total": len(rows),
        "counts": counts,
        "runs": rows,
    }
    done = counts.get("complete", 0)
    lines = [f"{done} of {len(rows)} runs complete"]
    lines += [f"{n} {s}" for s, n in sorted(counts.items()) if s != "complete"]
    return Notification(
        event=BATCH_EVENT,
        body=body,
        title=f"Research batch done: {batch.name}",
        text="; ".join(lines) + ".",
        level="success" if done == len(rows) else "failure",
        subject=batch.batch_id,
    )


def deliver_batch(
    store: RunStore,
    run_id: str,
    settings: Settings,
    targets: list[Target],
    send: Callable[[Notification, list[Target]], list[NotificationRecord]],
) -> list[NotificationRecord]:
    """When ``run_id`` is the last run of its batch to end, and no other run claimed it first,
    send ``batch.complete`` to ``targets`` through ``send``; returns the records ([] otherwise:
    not in a batch, runs still active, announced already, or no target).

    Raises:
        StoreError: Redis cannot be reached.
    """
    batches = BatchStore(store)
    try:
        batch_id = batches.batch_of(run_id)
        batch = batches.get(batch_id) if batch_id else None
    except ResearchError:
        return []
    if batch is None or not targets:
        return []
    rows = batch_rows(store, batch, settings)
    if any(r["status"] in ACTIVE_STATUSES for r in rows):
        return []
    if not batches.claim_announcement(batch.batch_id):
        return []
    return send(batch_notification(batch, rows), targets)
