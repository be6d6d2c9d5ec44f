"""Who uses an embedded Redis, so that the last process out stops it.

Every process that uses the embedded server of a data dir (a ``research`` command, the dashboard,
a ``research worker``) writes a lease file ``<redis dir>/users/<pid>.json`` before it connects and
removes it when it exits. On exit a process shuts the server down (``connection.redis_url``) when
no other live process holds a lease and no other process has a connection open. A lease file is
the rule rather than ``CLIENT LIST`` alone because a process may hold no connection at a given
instant (the dashboard between page loads); the connection check is a second guard for a client
that writes no lease (``redis-cli``, an older version). Our clients are named
``research:<role>:<pid>`` (:func:`client_name`), so connections of this process are told apart.

A lease of a process that died without cleaning up (``kill -9``) does not count: its pid is gone
or belongs to another process (the start time differs). :func:`lifecycle_lock` serialises
"write lease + start" against "check + shutdown", so a process that arrives while the last one
leaves either finds the server kept up or starts a fresh one.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

USERS_DIR = "users"
LOCK_FILE = "lifecycle.lock"
CLIENT_PREFIX = "research"


@dataclass(frozen=True)
class Lease:
    """One process's claim on an embedded server.

    Attributes:
        pid: the process id.
        role: ``cli``, ``dashboard``, ``worker``, ``api`` or ``mcp``.
        since: ISO-8601 UTC time the lease was written.
        start: the process's start time in clock ticks since boot (``/proc/<pid>/stat`` field 22),
            or None where ``/proc`` is not readable; tells a reused pid from the lease's process.
    """

    pid: int
    role: str
    since: str
    start: int | None

    def as_dict(self) -> dict[str, Any]:
        """The lease as a JSON-ready dict."""
        return asdict(self)


def client_name(role: str, pid: int | None = None) -> str:
    """The ``CLIENT SETNAME`` of this process's connections: ``research:<role>:<pid>``."""
    return f"{CLIENT_PREFIX}:{role}:{os.getpid() if pid is None else pid}"


def proc_start(pid: int) -> int | None:
    """Start time of ``pid`` in clock ticks since boot, or None when ``/proc`` cannot tell."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may contain spaces: split after it.
    fields = stat.rsplit(")", 1)[-1].split()
    try:
        return int(fields[19])  # field 22 overall; fields[0] is field 3
    except (IndexError, ValueError):
        return None


def pid_alive(pid: int, start: int | None = None) -> bool:
    """True when ``pid`` is a live (not zombie) process, and the same one when ``start`` is given.

    Args:
        pid: process id.
        start: the start time recorded with the pid (:func:`proc_start`), or None.
    """
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # exists, owned by another user
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        if stat.rsplit(")", 1)[-1].split()[0] == "Z":
            return False
    except (OSError, IndexError):
        pass
    return start is None or proc_start(pid) in (None, start)


@contextmanager
def lifecycle_lock(redis_dir: Path) -> Iterator[None]:
    """Hold the data dir's lifecycle lock (an exclusive ``flock`` on ``<redis dir>/lifecycle.lock``,
    created if missing; released when the block ends or the process dies)."""
    redis_dir.mkdir(parents=True, exist_ok=True)
    with open(redis_dir / LOCK_FILE, "a") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def write_lease(redis_dir: Path, role: str) -> Lease:
    """Write (or rewrite, e.g. with a new role) this process's lease; returns it."""
    pid = os.getpid()
    lease = Lease(
        pid=pid,
        role=role,
        since=datetime.now(UTC).isoformat(timespec="seconds"),
        start=proc_start(pid),
    )
    folder = redis_dir / USERS_DIR
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / f".{pid}.json.tmp"
    tmp.write_text(json.dumps(lease.as_dict()))
    tmp.replace(folder / f"{pid}.json")  # atomic: a reader never sees half a lease
    return lease


def remove_lease(redis_dir: Path, pid: int | None = None) -> None:
    """Remove the lease of ``pid`` (default: this process); no error when there is none."""
    (redis_dir / USERS_DIR / f"{os.getpid() if pid is None else pid}.json").unlink(missing_ok=True)


def live_leases(redis_dir: Path, *, exclude_pid: int | None = None) -> list[Lease]:
    """Leases of live processes, oldest first; leases of dead processes are removed.

    Args:
        redis_dir: the server's directory.
        exclude_pid: leave this process out (e.g. the caller's own pid).
    """
    folder = redis_dir / USERS_DIR
    found: list[Lease] = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            raw = json.loads(path.read_text())
            lease = Lease(
                pid=int(raw["pid"]),
                role=str(raw["role"]),
                since=str(raw["since"]),
                start=None if raw.get("start") is None else int(raw["start"]),
            )
        except (OSError, ValueError, KeyError, TypeError):
            path.unlink(missing_ok=True)  # unreadable: not a claim anyone can make good on
            continue
        if not pid_alive(lease.pid, lease.start):
            path.unlink(missing_ok=True)
            continue
        if lease.pid != exclude_pid:
            found.append(lease)
    return sorted(found, key=lambda x: x.since)


def other_connections(client: Any, *, pid: int | None = None) -> list[dict[str, Any]]:
    """Connections on the server other than this process's (``CLIENT LIST``).

    A connection counts as ours when its name ends in ``:<pid>`` (:func:`client_name`) or it is
    the connection asking. Returns the ``CLIENT LIST`` entries (dicts with ``name``, ``addr``...)
    of the others; unnamed ones included. Raises ``redis.RedisError`` when the server is down.
    """
    me = str(os.getpid() if pid is None else pid)
    own_id = str(client.client_id())
    return [
        c
        for c in client.client_list()
        if str(c.get("id")) != own_id and not str(c.get("name") or "").endswith(f":{me}")
    ]


def foreign(connections: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The connections that keep a server up for a process leaving it: all but those of our
    clients (``research:<role>:<pid>``). Asked under the lifecycle lock when no live lease is
    left, so a connection of ours belongs to a process that has removed its lease and is
    leaving too (a dashboard and an API stopped by the same Ctrl-C): counting it would leave
    the server to nobody."""
    return [c for c in connections if not str(c.get("name") or "").startswith(f"{CLIENT_PREFIX}:")]


def lasting_foreign(
    client: Any, *, checks: int = 3, interval_s: float = 0.1
) -> list[dict[str, Any]]:
    """The :func:`foreign` connections that are there at each of ``checks`` looks, ``interval_s``
    seconds apart (≈ 0.2 s in all by default). A connection is listed by the server from its
    connect, before its client has named it (``CLIENT SETNAME`` comes next) or while it is being
    closed: a probe of a thread of ours caught in that moment must not read as another user's,
    while another user's connection (``redis-cli``, an unnamed client) stays. Returns the last
    look's entries of those. Raises ``redis.RedisError`` when the server is down."""
    lasting: dict[str, dict[str, Any]] | None = None
    for look in range(checks):
        if look:
            time.sleep(interval_s)
        now = {str(c.get("id")): c for c in foreign(other_connections(client))}
        lasting = now if lasting is None else {k: now[k] for k in lasting if k in now}
        if not lasting:
            return []
    return list((lasting or {}).values())


def describe(leases: list[Lease], connections: list[dict[str, Any]]) -> str:
    """One phrase naming the users, e.g. ``dashboard (pid 12), 1 other connection``."""
    parts = [f"{x.role} (pid {x.pid})" for x in leases]
    lease_pids = {str(x.pid) for x in leases}
    unclaimed = [
        c for c in connections if str(c.get("name") or "").rsplit(":", 1)[-1] not in lease_pids
    ]
    if unclaimed:
        n = len(unclaimed)
        parts.append(f"{n} other connection{'s' if n != 1 else ''}")
    return ", ".join(parts)
