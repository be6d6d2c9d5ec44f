"""Delivering notifications: after a run's end is committed, in a background thread, never
fatal to the run.

``research.pipeline.runner.execute`` — the one place every run (thread, CLI or RQ worker)
reaches ``complete``, ``failed`` or ``awaiting_review`` — calls :func:`run_ended` once, after
the status is stored and the run's lease released. That starts a thread which builds the
notification (``research.notify.payload``), sends it to every target of the settings and of
the run (``research.notify.targets``) and records each delivery: a ``NotificationRecord`` in
``run:{id}:notifications`` (``research show --json`` → ``notifications``; the run's pages) and
a ``notification.sent`` / ``notification.failed`` event.

The thread is not a daemon, so a CLI process finishes its deliveries (bounded by the
attempts, timeouts and backoff of the settings) before it exits and before its embedded Redis
stops. Nothing here raises into the run: every error is recorded or logged.

Other events reuse :func:`send` with their own ``Notification`` and ``on_record`` (where to
keep the records): e.g. a batch of runs that ends builds ``Notification(event="batch.complete",
...)`` and calls ``send(n, settings_targets(settings), settings, on_record=...)``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from research.config import Settings, load_settings
from research.errors import ResearchError
from research.notify import apprise_target, webhook
from research.notify.base import Notification, Outcome, Target
from research.notify.batch import BATCH_EVENT, deliver_batch
from research.notify.payload import run_notification
from research.notify.targets import (
    RUN_EVENTS,
    enabled_events,
    run_targets,
    settings_targets,
)
from research.store import open_store
from research.store.notifications import NotificationRecord
from research.store.runs import RunStore

log = logging.getLogger(__name__)
_threads: set[threading.Thread] = set()
_lock = threading.Lock()


def run_ended(
    run_id: str, status: str, settings: Settings | None = None
) -> threading.Thread | None:
    """Notify, in a background thread, that run ``run_id`` reached ``status``. Only
    ``complete``, ``failed`` and ``awaiting_review`` notify (others return None at once).
    Returns the thread (``wait_idle`` waits for all of them). Never raises."""
    if status not in RUN_EVENTS:
        return None
    settings = settings or load_settings()
    thread = threading.Thread(
        target=_guarded,
        args=(run_id, status, settings),
        name=f"notify-{run_id}",
        daemon=False,  # created from a daemon thread (the CLI's) it would otherwise be one
    )
    try:
        with _lock:
            _threads.add(thread)
        thread.start()
    except RuntimeError:  # no thread to be had (interpreter shutting down): log, never raise
        log.warning("run %s: notifications of %s not sent (no thread)", run_id, status)
        return None
    return thread


def wait_idle(timeout_s: float | None = None) -> bool:
    """Wait until every delivery thread started by ``run_ended`` finished (or ``timeout_s``
    passed); True when none is left."""
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    while True:
        with _lock:
            pending = [t for t in _threads if t.is_alive()]
            _threads.difference_update(t for t in list(_threads) if not t.is_alive())
        if not pending:
            return True
        left = None if deadline is None else deadline - time.monotonic()
        if left is not None and left <= 0:
            return False
        pending[0].join(left)


def _guarded(run_id: str, status: str, settings: Settings) -> None:
    try:
        deliver_run(run_id, status, settings)
    except Exception:  # the thread's last resort: a delivery never breaks anything else
        log.exception("run %s: notifications of %s were not sent", run_id, status)
    try:
        _announce_batch(run_id, settings)
    except Exception:
        log.exception("run %s: its batch's end was not announced", run_id)


def _announce_batch(run_id: str, settings: Settings) -> list[NotificationRecord]:
    """``batch.complete`` when this run was its batch's last (``research.notify.batch``),
    recorded on this run."""
    if BATCH_EVENT not in enabled_events(settings):
        return []
    store = open_store(settings)
    targets, _ = _targets(store, run_id, settings)  # a problem is reported with the run's own
    return deliver_batch(
        store,
        run_id,
        settings,
        targets,
        lambda n, ts: send(n, ts, settings, lambda r: _record(store, run_id, r)),
    )


def deliver_run(run_id: str, status: str, settings: Settings) -> list[NotificationRecord]:
    """Send the notification of run ``run_id`` ending in ``status`` to its targets and record
    each delivery; in this thread. Returns the records ([] when the event is off in
    ``RESEARCH_NOTIFY_ON`` or there is no target).

    Raises:
        StoreError: Redis cannot be reached (a redis error may also escape mid-way).
    """
    try:
        if RUN_EVENTS[status] not in enabled_events(settings):
            return []
    except ResearchError as exc:
        log.warning("notifications off: %s", exc.message)
        return []
    store = open_store(settings)
    event = RUN_EVENTS[status]
    targets, problem = _targets(store, run_id, settings)
    records: list[NotificationRecord] = []
    if problem is not None:  # the targets do not open with this key: say so, on the run
        rec = NotificationRecord(
            event=event,
            target="this run's targets",
            kind="unknown",
            origin="run",
            ok=False,
            error=problem.message,
            started_at=time.time(),
            finished_at=time.time(),
        )
        _record(store, run_id, rec)
        records.append(rec)
    if not targets:
        return records
    notification = run_notification(store, run_id, status, settings)
    return records + send(notification, targets, settings, lambda r: _record(store, run_id, r))


def _targets(
    store: RunStore, run_id: str, settings: Settings
) -> tuple[list[Target], ResearchError | None]:
    """The settings' targets, then the run's own ones not among them; with the error that kept
    the run's own from opening (sealed with another key), if any."""
    targets = settings_targets(settings)
    try:
        own = run_targets(store, run_id, settings)
    except ResearchError as exc:
        return targets, exc
    seen = {t.url for t in targets}
    return targets + [t for t in own if t.url not in seen], None


def send(
    notification: Notification,
    targets: list[Target],
    settings: Settings,
    on_record: Callable[[NotificationRecord], None] | None = None,
) -> list[NotificationRecord]:
    """Deliver ``notification`` to each target in turn (webhook: signed POST; Apprise: the
    service's own API), each with its retries; ``on_record`` receives each record as soon as
    its delivery ends. Returns the records, in target order. Never raises."""
    records = []
    for target in targets:
        started = time.time()
        try:
            sender = webhook.send if target.kind == "webhook" else apprise_target.send
            outcome = sender(target, notification, settings)
        except Exception as exc:  # a sender bug: recorded like a failed delivery
            outcome = Outcome(error=f"{type(exc).__name__} while sending")
        record = NotificationRecord(
            event=notification.event,
            target=target.display,
            kind=target.kind,
            origin=target.origin,
            ok=outcome.ok,
            status_code=outcome.status_code,
            error=outcome.error,
            attempts=outcome.attempts,
            signed=outcome.signed,
            delivery_id=outcome.delivery_id,
            started_at=started,
            finished_at=time.time(),
        )
        if not record.ok:
            log.warning(
                "%s: notification %s to %s failed after %d attempt(s): %s",
                notification.subject or "-",
                record.event,
                record.target,
                record.attempts,
                record.error,
            )
        if on_record is not None:
            try:
                on_record(record)
            except Exception:
                log.exception(
                    "could not record the delivery of %s to %s", record.event, record.target
                )
        records.append(record)
    return records


def _record(store: RunStore, run_id: str, record: NotificationRecord) -> None:
    """Keep one delivery record on the run and emit its event."""
    store.notifications.append(run_id, record)
    data: dict[str, object] = {
        "event": record.event,
        "target": record.target,
        "attempts": record.attempts,
    }
    if record.status_code is not None:
        data["status_code"] = record.status_code
    if record.ok:
        store.emit(run_id, "notification.sent", data)
    else:
        store.emit(run_id, "notification.failed", {**data, "error": record.error})
