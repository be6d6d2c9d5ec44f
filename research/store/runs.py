"""Run state in Redis (docs/design.md § State in Redis), and ``RunStore``, the one face of a run's
records.

A run is a hash ``run:{id}`` plus JSON documents, lists of turns and summary cards, a usage
hash and a Redis Stream of events; ``runs`` indexes them by creation time. Every status change
is also an event. This module keeps the run hash, the index, liveness, cancel and the steering
snapshots; the other parts live beside it (``run_events``, ``run_docs``, ``run_usage``,
``run_deletion``) and ``RunStore`` inherits them. Writers: jobs only. Readers: pages, CLI.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, cast

import redis

from research.errors import RunNotFoundError
from research.models import (
    ACTIVE_STATUSES,
    RunConfig,
    RunState,
    RunStatus,
    now,
)
from research.store import keys
from research.store.calls import ToolCalls
from research.store.collector import SourceCollector
from research.store.connection import TextRedis
from research.store.costorm import CoStormRecords
from research.store.lease import PENDING_GRACE_S, Lease, is_held
from research.store.notifications import NotificationStore
from research.store.passages import EvidenceStore
from research.store.run_deletion import RunDeletion
from research.store.run_docs import RunDocuments
from research.store.run_usage import RunUsage
from research.store.tokens import TokenStore

if TYPE_CHECKING:
    pass

# KEYS: run hash, lease, queued. ARGV: now (s), pending grace (s), active statuses...
_RECONCILE_LUA = """
local status = redis.call('HGET', KEYS[1], 'status')
if not status then return 0 end
local active = false
for i = 3, #ARGV do if ARGV[i] == status then active = true end end
if not active then return 0 end
if redis.call('EXISTS', KEYS[2]) == 1 or redis.call('EXISTS', KEYS[3]) == 1 then return 0 end
if status == 'pending' then
  local created = tonumber(redis.call('HGET', KEYS[1], 'created_at') or '0') or 0
  if tonumber(ARGV[1]) - created < tonumber(ARGV[2]) then return 0 end
end
redis.call('HSET', KEYS[1], 'status', 'interrupted', 'updated_at', ARGV[1], 'interrupted_phase', status)
return 1
"""


def new_run_id() -> str:
    """Random, unguessable run id: 16 lowercase hex chars (64 bits)."""
    return secrets.token_hex(8)


class RunStore(RunDocuments, RunUsage, RunDeletion):
    """Typed access to one Redis for runs: run state (this module), events
    (``research.store.run_events``), documents, turns and cards (``run_docs``), usage accounting
    (``run_usage``) and deletion (``run_deletion``).

    Args:
        r: a ``redis.Redis`` with ``decode_responses=True``.
    """

    def __init__(self, r: redis.Redis) -> None:
        self.r: TextRedis = r

    # ------------------------------------------------------------------ lifecycle
    def create_run(self, config: RunConfig, *, engine_label: str = "") -> RunState:
        """Store a new ``pending`` run and emit ``run.created``. Returns its state."""
        run_id = new_run_id()
        t = now()
        state = RunState(
            run_id=run_id,
            status="pending",
            topic=config.topic,
            mode=config.mode,
            config=config,
            created_at=t,
            updated_at=t,
            engine_label=engine_label,
        )
        pipe = self.r.pipeline()
        pipe.hset(keys.run(run_id), mapping=self._to_hash(state))
        pipe.zadd(keys.RUNS_INDEX, {run_id: t})
        pipe.execute()
        self.emit(run_id, "run.created", {"topic": config.topic, "mode": config.mode})
        return state

    def get_run(self, run_id: str) -> RunState:
        """The run's state. Raises RunNotFoundError."""
        data = self.r.hgetall(keys.run(run_id))
        if not data:
            raise RunNotFoundError(
                f"No run '{run_id}' in this store. Pick one from the run history."
            )
        return self._with_liveness([self._from_hash(data)])[0]  # dead job shown interrupted

    def exists(self, run_id: str) -> bool:
        return bool(self.r.exists(keys.run(run_id)))

    def list_runs(self, limit: int = 200) -> list[RunState]:
        """Newest first, at most ``limit``. A pure read, like ``get_run``."""
        ids = self.r.zrevrange(keys.RUNS_INDEX, 0, limit - 1)
        pipe = self.r.pipeline()
        for run_id in ids:
            pipe.hgetall(keys.run(run_id))
        return self._with_liveness([self._from_hash(d) for d in pipe.execute() if d])

    def dead_run_ids(self, states: Sequence[RunState]) -> set[str]:
        """Ids among ``states`` whose job is gone: active status, no lease, not queued (a
        ``pending`` one only ``PENDING_GRACE_S`` s after creation). Reads only (one pipelined
        round trip); the same test as the ``reconcile`` Lua script, which persists it."""
        active = [s for s in states if s.status in ACTIVE_STATUSES]
        if not active:
            return set()
        pipe = self.r.pipeline(transaction=False)
        for s in active:
            pipe.exists(keys.run_lease(s.run_id), keys.run_queued(s.run_id))
        t = time.time()
        return {
            s.run_id
            for s, alive in zip(active, pipe.execute(), strict=True)
            if not alive and not (s.status == "pending" and t - s.created_at < PENDING_GRACE_S)
        }

    def _with_liveness(self, states: list[RunState]) -> list[RunState]:
        """``states`` with a dead run's status shown as ``interrupted`` (nothing written; the
        stored status changes only in ``reconcile_dead_runs``)."""
        dead = self.dead_run_ids(states)
        return [
            s.model_copy(update={"status": "interrupted"}) if s.run_id in dead else s
            for s in states
        ]

    def reconcile_dead_runs(self, run_ids: Iterable[str] | None = None) -> list[str]:
        """Persist what reads show: mark each dead run (``dead_run_ids``) ``interrupted`` in Redis
        and emit ``run.interrupted`` (``reconcile``). ``run_ids`` default: every indexed run.
        Called explicitly at worker start, dashboard start, ``research list`` and before a resume.

        Returns:
            The ids marked now.
        """
        ids = list(self.r.zrange(keys.RUNS_INDEX, 0, -1) if run_ids is None else run_ids)
        pipe = self.r.pipeline(transaction=False)
        for run_id in ids:
            pipe.hget(keys.run(run_id), "status")
        active = [rid for rid, st in zip(ids, pipe.execute(), strict=True) if st in ACTIVE_STATUSES]
        return reconcile(self.r, active) if active else []

    def set_status(self, run_id: str, status: RunStatus, **fields: str | float) -> None:
        """Change status (plus optional hash fields) and emit ``status`` event."""
        t = now()
        mapping: dict[str, str | float] = {"status": status, "updated_at": t, **fields}
        if status in ("complete", "failed", "cancelled"):
            mapping["finished_at"] = t
        self.r.hset(keys.run(run_id), mapping={k: str(v) for k, v in mapping.items()})
        self.emit(
            run_id,
            "status",
            {"status": status, **{k: v for k, v in fields.items() if k != "report_path"}},
        )

    def set_fields(self, run_id: str, **fields: str | float) -> None:
        """Update hash fields without an event."""
        self.r.hset(
            keys.run(run_id),
            mapping={k: str(v) for k, v in {**fields, "updated_at": now()}.items()},
        )

    # ------------------------------------------------------------------ cancel
    def request_cancel(self, run_id: str, *, by: str | None = None) -> None:
        """Ask the job to stop at its next step boundary; ``by`` (``api``…) is recorded in the
        ``cancel.requested`` event when given."""
        self.r.set(keys.run_cancel(run_id), "1")
        self.emit(run_id, "cancel.requested", {"by": by} if by else {})

    def cancel_requested(self, run_id: str) -> bool:
        return cast(int, self.r.exists(keys.run_cancel(run_id))) == 1

    # ------------------------------------------------------------------ related records
    @property
    def calls(self) -> ToolCalls:
        """The idempotent tool-call records (reserved file numbers, recorded cards)."""
        return ToolCalls(self.r)

    @property
    def tokens(self) -> TokenStore:
        """The HTTP API's bearer tokens (``research.store.tokens``: digests only)."""
        return TokenStore(self.r)

    @property
    def costorm(self) -> CoStormRecords:
        """The Co-STORM round-table records (turns, mind map, pool, counters, analyst inbox)."""
        return CoStormRecords(self.r)

    @property
    def notifications(self) -> NotificationStore:
        """The runs' notification targets (encrypted) and delivery records."""
        return NotificationStore(self.r)

    def collector(self, run_id: str) -> SourceCollector:
        """The run's source collector (docs/design.md § Source collector) on this Redis."""
        return SourceCollector(self.r, run_id)

    def evidence(self, run_id: str) -> EvidenceStore:
        """The run's evidence passages per source (``research.store.passages``)."""
        return EvidenceStore(self.r, run_id)

    def lease(self, run_id: str, ttl_ms: int | None = None) -> Lease:
        """A (not yet acquired) lease on the run for a job (``research.store.lease.Lease``)."""
        return Lease(self.r, run_id, ttl_ms)

    def is_held(self, run_id: str) -> bool:
        """True while some job holds the run's lease."""
        return is_held(self.r, run_id)

    def has_doc(self, run_id: str, name: str) -> bool:
        """True when the run has stored document ``name`` (plan, survey, report...)."""
        return bool(self.r.exists(keys.run_doc(run_id, name)))

    def stored_status(self, run_id: str) -> str:
        """The status field as stored (no reconciliation); "unknown" when the run has none."""
        return self.r.hget(keys.run(run_id), "status") or "unknown"

    def mark_queued(self, run_id: str, ttl_s: int) -> None:
        """Mark the run as waiting in a job queue for ``ttl_s`` s (a lease-less pending run that is
        queued is not taken for a dead one)."""
        self.r.set(keys.run_queued(run_id), "1", ex=ttl_s)

    def clear_queued(self, run_id: str) -> None:
        self.r.delete(keys.run_queued(run_id))

    def add_retries(self, run_id: str, retries: int) -> None:
        """Count LLM retries of a call that failed after them (run usage hash)."""
        self.r.hincrby(keys.run_usage(run_id), "retries", retries)

    def round_focus(self, run_id: str, round_no: int | str, focus: Callable[[], object]) -> object:
        """The steering snapshot of conversation turn ``round_no`` (JSON: the focus keys, or
        now ``{"focus": [...], "cards": n}``): stored on first use (HSETNX, value from
        ``focus()``), so a resumed run reads exactly what the interrupted one used."""
        key = keys.run_rounds(run_id)
        stored = self.r.hget(key, str(round_no))
        if stored is None:
            self.r.hsetnx(key, str(round_no), json.dumps(focus()))
            stored = self.r.hget(key, str(round_no))
        return json.loads(stored)

    def source_counts(self, run_ids: Sequence[str]) -> dict[str, int]:
        """``run_id → number of sources`` saved by the collector (docs/design.md § Source collector: list
        ``source_collection:{run_id}:sources``), in one pipelined round trip; 0 when unreadable."""
        pipe = self.r.pipeline(transaction=False)
        for run_id in run_ids:
            pipe.llen(keys.sources(run_id))
        results = pipe.execute(raise_on_error=False)
        return {
            rid: (0 if isinstance(n, Exception) else int(n))
            for rid, n in zip(run_ids, results, strict=True)
        }

    def run_stats_raw(self, run_ids: Sequence[str]) -> list[tuple[Any, ...]]:
        """Per run ``(sources list length, usage cost_usd field, report JSON)`` in one pipelined
        round trip (items may be exceptions or None; ``research.ui.history.run_stats`` parses)."""
        pipe = self.r.pipeline(transaction=False)
        for run_id in run_ids:
            pipe.llen(keys.sources(run_id))
            pipe.hget(keys.run_usage(run_id), "cost_usd")
            pipe.get(keys.run_doc(run_id, "report"))
        res = pipe.execute(raise_on_error=False)
        return [tuple(res[3 * i : 3 * i + 3]) for i in range(len(run_ids))]

    # ------------------------------------------------------------------ helpers
    @staticmethod
    def _to_hash(state: RunState) -> dict[str, str]:
        d = state.model_dump(mode="json")
        d["config"] = state.config.model_dump_json()
        return {k: "" if v is None else str(v) for k, v in d.items()}

    @staticmethod
    def _from_hash(data: dict[str, str]) -> RunState:
        d: dict[str, Any] = dict(data)
        d["config"] = RunConfig.model_validate_json(d["config"])
        d["finished_at"] = float(d["finished_at"]) if d.get("finished_at") else None
        return RunState.model_validate(d)


def reconcile(r: redis.Redis, run_ids: Iterable[str]) -> list[str]:
    """Mark every listed run that is active without a lease (and not queued) ``interrupted``.

    A ``pending`` run gets ``PENDING_GRACE_S`` after creation before it counts. Atomic per run
    (Lua), so it never overrides a job that just took the lease. Emits ``run.interrupted``.

    Returns:
        The ids that were marked now.
    """
    script = r.register_script(_RECONCILE_LUA)
    marked = []
    t = time.time()
    for run_id in run_ids:
        if (
            script(
                keys=[keys.run(run_id), keys.run_lease(run_id), keys.run_queued(run_id)],
                args=[t, PENDING_GRACE_S, *ACTIVE_STATUSES],
            )
            == 1
        ):
            marked.append(run_id)
    if marked:
        store = RunStore(r)
        for run_id in marked:
            phase = r.hget(keys.run(run_id), "interrupted_phase") or ""
            store.emit(
                run_id,
                "run.interrupted",
                {
                    "phase": phase,
                    "reason": "the job's lease expired "
                    "(its process stopped); resume the run to continue",
                },
            )
            store.emit(run_id, "status", {"status": "interrupted"})
    return marked
