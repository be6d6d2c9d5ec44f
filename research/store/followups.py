"""Follow-ups and the citation audit in Redis: the one place that reads and writes
``run:{id}:followups``, the pending follow-ups (``run:{id}:followups:pending``, their leases and
queued markers) and the ``audit`` run document (keys from ``research.store.keys``)."""

from __future__ import annotations

import builtins
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from research.errors import StoreError
from research.models import Reference, Report, now
from research.store import keys
from research.store.followup_models import AuditSummary, Followup, PendingFollowup
from research.store.lease import PENDING_GRACE_S, Lease
from research.store.runs import RunStore

LOCK_TIMEOUT_S = (
    600  # s a follow-up waits for the one before it on the same run (research-more: minutes)
)
# KEYS: pending hash, followups list. ARGV: follow-up id, Followup JSON.
_APPEND_LUA = """
if redis.call('HDEL', KEYS[1], ARGV[1]) == 1 then redis.call('RPUSH', KEYS[2], ARGV[2]) return 1 end
return 0
"""


class FollowupStore:
    """Typed access to a run's follow-ups and audit.

    Args:
        store: the ``RunStore`` (its Redis client is used; events go to the run's stream).
    """

    def __init__(self, store: RunStore) -> None:
        self.store = store
        self.r = store.r

    def list(self, run_id: str) -> builtins.list[Followup]:
        """Follow-ups of the run, oldest first."""
        return [
            Followup.model_validate_json(x)
            for x in self.r.lrange(keys.run_followups(run_id), 0, -1)
        ]

    def answered(self, run_id: str, followup_id: str) -> Followup | None:
        """The stored answer of follow-up ``followup_id``, or None."""
        return next((f for f in self.list(run_id) if f.id == followup_id), None)

    def append(self, run_id: str, followup: Followup) -> bool:
        """Store an answered follow-up in place of its pending record (atomic, one Lua script:
        only while the record is pending, so a follow-up is answered once even if two jobs ran
        it) and emit ``followup.answered``. Returns False when it was not pending (nothing stored)."""
        script = self.r.register_script(_APPEND_LUA)
        if not script(
            keys=[keys.run_followups_pending(run_id), keys.run_followups(run_id)],
            args=[followup.id, followup.model_dump_json()],
        ):
            return False
        self.store.emit(
            run_id,
            "followup.answered",
            {
                "id": followup.id,
                "question": followup.question[:200],
                "citations": len(followup.citations),
                "new_references": len(followup.new_references),
                "sources_added": followup.sources_added,
                "found": followup.found,
            },
        )
        return True

    def references(self, run_id: str, report: Report | None) -> builtins.list[Reference]:
        """The run's whole reference list: the report's, then each follow-up's new ones (1..N)."""
        refs = list(report.references) if report else []
        for f in self.list(run_id):
            refs += f.new_references
        return refs

    # ------------------------------------------------------------------ pending follow-ups
    def put_pending(self, run_id: str, pending: PendingFollowup) -> None:
        """Store (or update) a pending follow-up; ``updated_at`` is set to now."""
        pending.updated_at = now()
        self.r.hset(keys.run_followups_pending(run_id), pending.id, pending.model_dump_json())

    def get_pending(self, run_id: str, followup_id: str) -> PendingFollowup | None:
        raw = self.r.hget(keys.run_followups_pending(run_id), followup_id)
        return PendingFollowup.model_validate_json(raw) if raw else None

    def list_pending(self, run_id: str) -> builtins.list[PendingFollowup]:
        """Pending follow-ups of the run, oldest asked first."""
        rows = self.r.hvals(keys.run_followups_pending(run_id))
        return sorted(
            (PendingFollowup.model_validate_json(x) for x in rows), key=lambda p: p.asked_at
        )

    def drop_pending(self, run_id: str, followup_id: str) -> None:
        """Forget a pending follow-up (it failed for good) and its queued marker."""
        self.r.delete(keys.followup_queued(run_id, followup_id))
        self.r.hdel(keys.run_followups_pending(run_id), followup_id)

    def runs_with_pending(self, run_ids: Sequence[str]) -> builtins.list[str]:
        """The ids among ``run_ids`` with at least one pending follow-up (one pipelined round trip)."""
        pipe = self.r.pipeline(transaction=False)
        for run_id in run_ids:
            pipe.hlen(keys.run_followups_pending(run_id))
        return [rid for rid, n in zip(run_ids, pipe.execute(), strict=True) if n]

    def lease(self, run_id: str, followup_id: str) -> Lease:
        """A (not yet acquired) lease on one follow-up for the job answering it."""
        return Lease(self.r, run_id, key=keys.followup_lease(run_id, followup_id))

    def mark_queued(self, run_id: str, followup_id: str, ttl_s: int) -> None:
        """Mark the follow-up's job as waiting in a job queue for ``ttl_s`` s."""
        self.r.set(keys.followup_queued(run_id, followup_id), "1", ex=ttl_s)

    def clear_queued(self, run_id: str, followup_id: str) -> None:
        self.r.delete(keys.followup_queued(run_id, followup_id))

    def dead_pending(self, run_id: str) -> builtins.list[PendingFollowup]:
        """Pending follow-ups whose job is gone: no lease and not queued; one still ``queued``
        (its job never started) only ``PENDING_GRACE_S`` s after it was asked. Reads only."""
        pending = self.list_pending(run_id)
        if not pending:
            return []
        pipe = self.r.pipeline(transaction=False)
        for p in pending:
            pipe.exists(keys.followup_lease(run_id, p.id), keys.followup_queued(run_id, p.id))
        t = time.time()
        return [
            p
            for p, alive in zip(pending, pipe.execute(), strict=True)
            if not alive and not (p.stage == "queued" and t - p.updated_at < PENDING_GRACE_S)
        ]

    @contextmanager
    def lock(self, run_id: str) -> Iterator[None]:
        """Serialise follow-ups of one run (reference numbers are handed out in order): a
        ``Lease`` on ``run:{id}:followups:lock`` (heartbeat-renewed, so a dead holder's lock
        expires after ``lease_ttl_ms``), waited for up to ``LOCK_TIMEOUT_S`` s.

        Raises:
            StoreError (code ``followup_busy``): another follow-up held it for ``LOCK_TIMEOUT_S`` s.
        """
        lease = Lease(self.r, run_id, key=keys.run_followup_lock(run_id))
        deadline = time.monotonic() + LOCK_TIMEOUT_S
        while not lease.acquire():
            if time.monotonic() > deadline:
                raise StoreError(
                    f"Another follow-up on run {run_id} has been answering for {LOCK_TIMEOUT_S} s; "
                    "ask again when it is done.",
                    code="followup_busy",
                )
            time.sleep(0.2)
        try:
            yield
        finally:
            lease.release()

    def clear(self, run_id: str) -> None:
        """Remove the run's follow-ups, pending follow-ups and audit (the run itself is untouched)."""
        self.r.delete(
            keys.run_followups(run_id),
            keys.run_followups_pending(run_id),
            keys.run_doc(run_id, "audit"),
        )

    def put_audit(self, run_id: str, audit: AuditSummary) -> None:
        """Store the report's audit (run document ``audit``) and emit ``audit.finished``."""
        self.store.put_doc(run_id, "audit", audit)
        self.store.emit(
            run_id,
            "audit.finished",
            {
                "total": audit.total,
                "supported": audit.supported,
                "weak": audit.weak,
                "unsupported": audit.unsupported,
            },
        )

    def get_audit(self, run_id: str) -> AuditSummary | None:
        """The stored audit of the report, or None."""
        return self.store.get_doc(run_id, "audit", AuditSummary)
