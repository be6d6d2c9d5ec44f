"""Run leases: a job executing a run holds ``run:{id}:lease`` and renews it.

The lease is a Redis string set with ``SET NX PX`` to a random token; a heartbeat thread renews
it every ``ttl/3`` and the job deletes it when it ends (compare-and-delete, so it never deletes a
lease another process took over). A run whose status is active but that has no lease (and is
not waiting in a queue) was being executed by a process that died: ``reconcile`` marks it
``interrupted`` atomically (one Lua script) and emits ``run.interrupted``; it can then be
resumed (``research.jobs.resume_run``). Reconciliation lives with the run records
(``reconcile`` in ``research.store.runs``), which read this module's leases.

The pattern is the single-instance Redis lock of the Redis docs ("Distributed locks with
Redis", correct single-instance implementation: SET NX PX + token-checked release).
"""

from __future__ import annotations

import logging
import os
import secrets
import socket
import threading

import redis

from research.config import load_settings
from research.store import keys
from research.store.connection import TextRedis

log = logging.getLogger(__name__)
_held: set[Lease] = set()  # leases this process holds now
_held_lock = threading.Lock()
_leaving = threading.Event()  # set by stop_all: this process takes no new lease

DEFAULT_TTL_MS = 15_000
PENDING_GRACE_S = 120.0  # s a pending run may wait for its job before it counts as interrupted

_RENEW_LUA = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
if redis.call('EXISTS', KEYS[1]) == 0 then
  return redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) and 1 or 0
end
return -1
"""
_RELEASE_LUA = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


def lease_ttl_ms() -> int:
    """Lease time-to-live in ms: ``RESEARCH_LEASE_TTL_MS`` (tests use ~1500), default 15 000."""
    try:
        return max(300, int(load_settings().lease_ttl_ms))
    except ValueError:
        return DEFAULT_TTL_MS


def holder_name() -> str:
    """``host:pid`` of this process (stored on the run as ``worker``)."""
    return f"{socket.gethostname()}:{os.getpid()}"


class Lease:
    """A renewable lease on one run.

    Args:
        r: Redis client (``decode_responses=True``).
        run_id: the run.
        ttl_ms: time-to-live (ms); renewed every ``ttl_ms / 3``.
        key: the lease key (default the run's ``run:{id}:lease``; follow-up jobs lease
            ``keys.followup_lease`` and the run's follow-up lock).

    Attributes:
        lost: set when another process holds the lease (the job must stop touching the run).
    """

    def __init__(
        self, r: redis.Redis, run_id: str, ttl_ms: int | None = None, *, key: str | None = None
    ) -> None:
        self.r: TextRedis = r
        self.key = key or keys.run_lease(run_id)
        self.ttl_ms = ttl_ms or lease_ttl_ms()
        self.token = f"{holder_name()}:{secrets.token_hex(8)}"
        self.lost = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._renew = r.register_script(_RENEW_LUA)
        self._release = r.register_script(_RELEASE_LUA)

    def acquire(self) -> bool:
        """Take the lease (SET NX PX) and start the heartbeat. False when another job holds it,
        or when this process is leaving (:func:`stop_all`)."""
        if _leaving.is_set() or not self.r.set(self.key, self.token, nx=True, px=self.ttl_ms):
            return False
        with _held_lock:
            _held.add(self)
        self._thread = threading.Thread(target=self._beat, name=f"lease-{self.key}", daemon=True)
        self._thread.start()
        return True

    def _beat(self) -> None:
        period = self.ttl_ms / 3000.0
        while not self._stop.wait(period):
            try:
                if self._renew(keys=[self.key], args=[self.token, self.ttl_ms]) == -1:
                    log.warning("lease %s taken over by another job", self.key)
                    self.lost.set()
                    return
            except redis.RedisError as exc:  # Redis restarting: keep trying until it is back
                log.warning("lease %s renewal failed: %s", self.key, exc)

    def release(self) -> None:
        """Stop the heartbeat and delete the lease if it is still ours."""
        with _held_lock:
            _held.discard(self)
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        try:
            self._release(keys=[self.key], args=[self.token])
        except redis.RedisError as exc:  # it expires by itself
            log.warning("lease %s release failed: %s", self.key, exc)

    def __enter__(self) -> Lease:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def stop_all() -> int:
    """Ask every job of this process to stop at its next step, as if its lease were lost, and
    take no new lease: for a server that is shutting down (``research serve``), whose runs are
    then left ``interrupted`` and resume later instead of holding the process until they end.
    Returns the number of leases that were held."""
    _leaving.set()
    with _held_lock:
        held = list(_held)
    for lease in held:
        lease.lost.set()
    return len(held)


def is_held(r: redis.Redis, run_id: str) -> bool:
    """True while some job holds the run's lease."""
    return bool(r.exists(keys.run_lease(run_id)))
