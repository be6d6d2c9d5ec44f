"""Batches of runs in Redis: the one place that reads and writes ``batch:{id}`` and the
``batches`` index (keys from ``research.store.keys``).

A batch is a name, a creation time and the ids of its runs in the order of the batch file;
the runs themselves are ordinary runs (``run:{id}``), so every page, export and command works
on them. Deleting a run leaves its id in the batch (its status then reads ``deleted``).
"""

from __future__ import annotations

import json
import secrets

from pydantic import BaseModel, Field

from research.models import now
from research.store import keys
from research.store.runs import RunStore

MAX_NAME_CHARS = 120
ANNOUNCED_TTL_S = 90 * 24 * 3600  # how long a batch remembers that its end was announced (s)


class Batch(BaseModel):
    """One batch: ``run_ids`` in file order, ``created_at`` in Unix s."""

    batch_id: str
    name: str
    created_at: float = Field(default_factory=now)
    run_ids: list[str] = Field(default_factory=list)


def new_batch_id() -> str:
    """Random batch id: ``b`` + 12 lowercase hex characters."""
    return "b" + secrets.token_hex(6)


def clean_name(name: str | None, fallback: str) -> str:
    """The name as stored: one line, at most 120 characters; empty → ``fallback``."""
    text = " ".join(str(name or "").split())[:MAX_NAME_CHARS]
    return text or fallback


class BatchStore:
    """Typed access to batches.

    Args:
        store: the ``RunStore`` (its Redis client is used).
    """

    def __init__(self, store: RunStore) -> None:
        self.r = store.r

    def create(self, name: str | None, run_ids: list[str]) -> Batch:
        """Store a new batch of ``run_ids`` (each checked as a run id) and index it.

        Raises:
            InputError: an ill-formed run id.
        """
        batch_id = new_batch_id()
        ids = [keys.check_run_id(x) for x in run_ids]
        batch = Batch(batch_id=batch_id, name=clean_name(name, f"batch {batch_id}"), run_ids=ids)
        pipe = self.r.pipeline()
        pipe.hset(
            keys.batch(batch_id),
            mapping={
                "name": batch.name,
                "created_at": repr(batch.created_at),
                "run_ids": json.dumps(ids),
            },
        )
        pipe.zadd(keys.BATCHES_INDEX, {batch_id: batch.created_at})
        for run_id in ids:
            pipe.set(keys.run_batch(run_id), batch_id)
        pipe.execute()
        return batch

    def batch_of(self, run_id: str) -> str | None:
        """The id of the batch ``run_id`` was queued in, or None (a run of its own).

        Raises:
            InputError: ``run_id`` is ill-formed.
        """
        value = self.r.get(keys.run_batch(run_id))
        return str(value) if value else None

    def claim_announcement(self, batch_id: str) -> bool:
        """True for the one caller that first claims the announcement of the batch's end (Redis
        ``SET NX``): runs that end at once on several workers announce their batch once."""
        return bool(self.r.set(keys.batch_announced(batch_id), "1", nx=True, ex=ANNOUNCED_TTL_S))

    def get(self, batch_id: str) -> Batch | None:
        """The batch, or None when there is none with this id.

        Raises:
            InputError: ``batch_id`` is ill-formed.
        """
        data = self.r.hgetall(keys.batch(batch_id))
        if not data:
            return None
        return Batch(
            batch_id=batch_id,
            name=data.get("name", ""),
            created_at=float(data.get("created_at", "0") or 0),
            run_ids=[str(x) for x in json.loads(data.get("run_ids", "[]"))],
        )

    def list(self, limit: int = 50) -> list[Batch]:
        """The newest ``limit`` batches, newest first."""
        ids = self.r.zrevrange(keys.BATCHES_INDEX, 0, max(1, limit) - 1)
        out = [self.get(keys.check_batch_id(str(x))) for x in ids]
        return [b for b in out if b is not None]

    def delete(self, batch_id: str) -> None:
        """Forget the batch (its runs stay)."""
        pipe = self.r.pipeline()
        pipe.delete(keys.batch(batch_id), keys.batch_announced(batch_id))
        pipe.zrem(keys.BATCHES_INDEX, batch_id)
        pipe.execute()
