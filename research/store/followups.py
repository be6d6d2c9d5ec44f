"""Follow-ups and the citation audit in Redis (issue 13): the one place that reads and writes
``run:{id}:followups`` and the ``audit`` run document (keys from ``research.store.keys``)."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

from research.followup.models import AuditSummary, Followup
from research.models import Reference, Report
from research.store import keys
from research.store.runs import RunStore

LOCK_TIMEOUT_S = 600  # a follow-up with research-more can take minutes


class FollowupStore:
    """Typed access to a run's follow-ups and audit.

    Args:
        store: the ``RunStore`` (its Redis client is used; events go to the run's stream).
    """

    def __init__(self, store: RunStore) -> None:
        self.store = store
        self.r = store.r

    def list(self, run_id: str) -> list[Followup]:
        """Follow-ups of the run, oldest first."""
        return [Followup.model_validate_json(x) for x in self.r.lrange(keys.run_followups(run_id), 0, -1)]

    def append(self, run_id: str, followup: Followup) -> None:
        """Store an answered follow-up and emit ``followup.answered``."""
        self.r.rpush(keys.run_followups(run_id), followup.model_dump_json())
        self.store.emit(run_id, "followup.answered", {
            "id": followup.id, "question": followup.question[:200], "citations": len(followup.citations),
            "new_references": len(followup.new_references), "sources_added": followup.sources_added,
            "found": followup.found})

    def references(self, run_id: str, report: Report | None) -> list[Reference]:
        """The run's whole reference list: the report's, then each follow-up's new ones (1..N)."""
        refs = list(report.references) if report else []
        for f in self.list(run_id):
            refs += f.new_references
        return refs

    @contextmanager
    def lock(self, run_id: str) -> Iterator[None]:
        """Serialise follow-ups of one run (reference numbers are handed out in order).
        redis-py's ``Lock`` (token-checked release, expires after ``LOCK_TIMEOUT_S`` s)."""
        with self.r.lock(keys.run_followup_lock(run_id), timeout=LOCK_TIMEOUT_S, blocking_timeout=LOCK_TIMEOUT_S):
            yield

    def clear(self, run_id: str) -> None:
        """Remove the run's follow-ups and audit (the run itself is untouched)."""
        self.r.delete(keys.run_followups(run_id), keys.run_doc(run_id, "audit"))

    def put_audit(self, run_id: str, audit: AuditSummary) -> None:
        """Store the report's audit (run document ``audit``) and emit ``audit.finished``."""
        self.store.put_doc(run_id, "audit", audit)
        self.store.emit(run_id, "audit.finished", {"total": audit.total, "supported": audit.supported,
                                                   "weak": audit.weak, "unsupported": audit.unsupported})

    def get_audit(self, run_id: str) -> AuditSummary | None:
        """The stored audit of the report, or None."""
        return self.store.get_doc(run_id, "audit", AuditSummary)
