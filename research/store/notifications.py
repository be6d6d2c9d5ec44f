"""Notification records of a run: where its end was announced and how each delivery went.

Keys (``research.store.keys``): ``run:{id}:notify:targets`` STRING — the run's own targets as
one encrypted token (``research.notify.seal``; this module never sees them in clear) — and
``run:{id}:notifications`` LIST of :class:`NotificationRecord` JSON, oldest first, one per
delivery (a target × an event, after its retries). A record names its target only in the
redacted display form (``https://hooks.example.org/… #1a2b3c``).
"""

from __future__ import annotations

from typing import Literal

import redis
from pydantic import BaseModel, Field

from research.store import keys
from research.store.connection import TextRedis

MAX_RECORDS = 500  # a run resumed and failed again and again keeps its newest records only


class NotificationRecord(BaseModel):
    """The outcome of one delivery (after every attempt).

    Attributes:
        event: ``run.complete``, ``run.failed``, ``run.awaiting_review``...
        target: the target's redacted display form (never its URL in clear).
        kind: ``webhook`` (an HTTP POST of the JSON payload), ``apprise`` (Slack, Teams,
            e-mail...) or ``unknown`` (the run's targets could not be read).
        origin: ``settings`` (``RESEARCH_WEBHOOK_URLS`` / ``RESEARCH_APPRISE_URLS``) or ``run``
            (``--notify`` / the launch form).
        ok: delivered (HTTP 2xx for a webhook; Apprise reported success).
        status_code: the last HTTP status a webhook answered (None: no answer, or Apprise).
        error: why it failed ("" when ok), secrets scrubbed.
        attempts: attempts made (1 = delivered or given up at the first).
        signed: the webhook body carried ``X-Research-Signature`` (a secret was configured).
        delivery_id: the ``X-Research-Delivery`` id (the same on every attempt).
        started_at, finished_at: Unix seconds.
    """

    event: str
    target: str
    kind: Literal["webhook", "apprise", "unknown"]
    origin: Literal["settings", "run"]
    ok: bool
    status_code: int | None = None
    error: str = ""
    attempts: int = Field(default=0, ge=0)
    signed: bool = False
    delivery_id: str = ""
    started_at: float = 0.0
    finished_at: float = 0.0


class NotificationStore:
    """The notification targets and delivery records of runs on one Redis
    (``RunStore.notifications``).

    Args:
        r: a ``redis.Redis`` with ``decode_responses=True``.
    """

    def __init__(self, r: redis.Redis) -> None:
        self._r: TextRedis = r

    def put_sealed_targets(self, run_id: str, token: str) -> None:
        """Store the run's own targets as the encrypted ``token`` (replacing any)."""
        self._r.set(keys.run_notify_targets(run_id), token)

    def sealed_targets(self, run_id: str) -> str | None:
        """The run's encrypted targets token, or None when the run has none of its own."""
        token: str | None = self._r.get(keys.run_notify_targets(run_id))
        return token or None

    def append(self, run_id: str, record: NotificationRecord) -> None:
        """Add one delivery record (the list keeps the newest ``MAX_RECORDS``)."""
        pipe = self._r.pipeline(transaction=False)
        pipe.rpush(keys.run_notifications(run_id), record.model_dump_json())
        pipe.ltrim(keys.run_notifications(run_id), -MAX_RECORDS, -1)
        pipe.execute()

    def list(self, run_id: str) -> list[NotificationRecord]:
        """Every delivery record of the run, oldest first ([] when none)."""
        return [
            NotificationRecord.model_validate_json(x)
            for x in self._r.lrange(keys.run_notifications(run_id), 0, -1)
        ]
