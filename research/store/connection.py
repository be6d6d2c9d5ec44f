"""The process-wide Redis client: ``REDIS_URL`` when set, else the embedded server.

``get_redis()`` returns one shared ``redis.Redis`` (thread-safe connection pool,
``decode_responses=True``) per URL. The client rides out a Redis restart: on a
connection error, timeout or "loading" reply it reconnects and retries the command with
exponential backoff (redis-py ``Retry`` + ``ExponentialBackoff``; ~30 s in all), so a run keeps
going; past that the job stops and its run resumes later (``research.pipeline.runner``).

The embedded server is shared by every process on the data dir and stopped by the last one out:
the first ``redis_url()`` of a process writes its lease (``research.store.holders``) and, at exit,
removes it and shuts the server down unless another live process holds a lease or a connection.
So ``research`` commands leave no ``redis-server`` behind, while a dashboard or a worker keeps its
server up for as long as it runs (``set_role`` names the process in the lease and its connections).
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
from pathlib import Path
from typing import Any

import redis
from redis.backoff import ExponentialBackoff, NoBackoff
from redis.exceptions import (
    BusyLoadingError,
)
from redis.exceptions import (
    ConnectionError as RedisConnectionError,
)
from redis.exceptions import (
    TimeoutError as RedisTimeoutError,
)
from redis.retry import Retry

from research.config import Settings, load_settings
from research.errors import InputError, StoreError
from research.store import holders
from research.store.server import EmbeddedRedis, probe_client

log = logging.getLogger(__name__)

# redis-py types every reply as ``bytes | str`` (a pipeline's as a list of anything), whatever
# the client's ``decode_responses``. Every client here decodes replies to ``str``
# (``make_client``), so the store modules hold their client as ``TextRedis`` and parse the
# replies where they read them.
TextRedis = Any

_lock = threading.Lock()
_clients: dict[str, redis.Redis] = {}
_servers: dict[str, EmbeddedRedis] = {}
_leased: dict[str, int] = {}  # redis dir -> pid of the process that holds a lease on it
_left: set[str] = set()  # redis dirs this process has left (at exit): no server is started again
_role = "cli"
ROLES = ("cli", "dashboard", "worker", "api", "mcp")

RETRIES = 12  # attempts after the first; backoff 0.05 s doubling, capped at 4 s → ~30 s in all
RETRY_ERRORS = (RedisConnectionError, RedisTimeoutError, BusyLoadingError)


def retry_policy() -> Retry:
    """The reconnect policy of every client: exponential backoff (0.05 s doubling, cap 4 s),
    ``RETRIES`` retries on connection errors, timeouts and "loading the dataset" replies."""
    return Retry(ExponentialBackoff(cap=4.0, base=0.05), RETRIES, supported_errors=RETRY_ERRORS)


def make_client(url: str, *, decode_responses: bool = True) -> redis.Redis:
    """A new client for ``url`` with the reconnect policy (RQ needs ``decode_responses=False``).

    Raises:
        StoreError: when nothing answers at ``url`` (checked once, without retries, in ≤ 3 s).
    """
    probe = redis.Redis.from_url(
        url,
        socket_connect_timeout=3,
        socket_timeout=3,
        retry=Retry(NoBackoff(), 0),
        client_name=_name(url),
    )
    try:
        probe.ping()
    except redis.RedisError as exc:
        raise StoreError(
            f"Cannot reach Redis at {url.split('@')[-1]}: {exc}. "
            "Check REDIS_URL or unset it to use the embedded server."
        ) from exc
    finally:
        probe.close()
    return redis.Redis.from_url(
        url,
        decode_responses=decode_responses,
        socket_timeout=30,
        socket_connect_timeout=5,
        health_check_interval=30,
        retry=retry_policy(),
        retry_on_error=list(RETRY_ERRORS),
        client_name=_name(url),
    )


def _name(url: str) -> str | None:
    """Connection name for ``url``: ours on the embedded server (unix socket), so ``CLIENT LIST``
    tells our connections apart; none elsewhere (an ACL-restricted Redis may refuse SETNAME)."""
    return holders.client_name(_role) if url.startswith("unix://") else None


def set_role(role: str) -> None:
    """Name this process's use of the embedded server: ``cli`` (default), ``dashboard``,
    ``worker``, ``api`` (``research serve``) or ``mcp`` (the MCP server); shown by ``research redis status`` and in
    ``research redis stop``'s refusal.
    Call it before the first ``get_redis``; a lease already written is rewritten with the role.

    Raises:
        ValueError: for a role outside ``ROLES``.
    """
    global _role
    if role not in ROLES:
        raise ValueError(f"role must be one of {', '.join(ROLES)}, not {role!r}")
    with _lock:
        if role == _role:
            return  # every dashboard page load calls this: no file writes when nothing changes
        _role = role
        for key in _leased:
            holders.write_lease(Path(key), role)


def redis_url(settings: Settings | None = None, *, keep_server: bool = False) -> str:
    """URL of the Redis to use, starting the embedded server if needed.

    Args:
        settings: resolved settings (default: ``load_settings()``).
        keep_server: leave the embedded server running at exit even when this process is its
            last user (default False: the last user out stops it).

    Raises:
        StoreError: when the embedded server cannot be started.
    """
    settings = settings or load_settings()
    if settings.redis_url:
        return settings.redis_url
    redis_dir = settings.data_dir / "redis"
    key = str(redis_dir)
    with _lock:
        if key in _left:
            # a thread still running while the process exits (a run's worker, after SIGTERM)
            # must not start the server the last user out has just shut down: nobody would stop it
            raise StoreError(
                f"This process is exiting: the embedded Redis in {key} is not restarted."
            )
        server = _servers.get(key)
        if server is None:
            # keep=True: this module, not EmbeddedRedis's own atexit hook, decides at exit.
            server = _servers[key] = EmbeddedRedis(redis_dir, keep=True)
        if key in _leased and server.ping():  # every get_redis: no file lock, no file write
            return server.url
        with holders.lifecycle_lock(redis_dir):
            # Lease before connecting: a last user leaving now sees it and leaves the server up.
            if key not in _leased:
                holders.write_lease(redis_dir, _role)
                _leased[key] = os.getpid()
                atexit.register(_leave, key, keep_server)
            return server.start()


def get_redis(settings: Settings | None = None) -> redis.Redis:
    """Shared client for the configured Redis.

    Raises:
        StoreError: when Redis cannot be reached.
    """
    url = redis_url(settings)
    with _lock:
        client = _clients.get(url)
        if client is None:
            client = _clients[url] = make_client(url)
        return client


def _leave(key: str, keep: bool) -> None:
    """At exit: drop this process's lease on the embedded server in ``key`` and shut the server
    down when no other process uses it. Never raises (it runs in ``atexit``)."""
    if _leased.get(key) != os.getpid():
        return  # a forked child inherits the hook, not the lease
    redis_dir = Path(key)
    server = _servers[key]
    with _lock:
        _left.add(key)
    try:
        with holders.lifecycle_lock(redis_dir):
            holders.remove_lease(redis_dir)
            del _leased[key]
            if keep or holders.live_leases(redis_dir) or not server.ping():
                return
            probe = probe_client(server.socket, 2)
            try:
                if holders.lasting_foreign(probe):
                    return
            finally:
                probe.close()
            client = _clients.pop(server.url, None)
            if client is not None:
                client.close()
            server.shutdown()
    except Exception as exc:
        # atexit: say why the server stays up, never turn a clean exit into a traceback
        log.warning("embedded Redis in %s left running: %s", key, exc)


def embedded_status(settings: Settings | None = None) -> dict[str, Any]:
    """The embedded server of the data dir, without starting it.

    Returns:
        ``{"data_dir", "external_redis" (REDIS_URL is set: the embedded server is not used),
        "servers": [{"redis_dir", "socket", "running", "pid", "users": [lease dicts],
        "connections": other connections' count, "in_use_by": phrase}]}`` (one server per
        data dir; a list so that the shape can grow).
    """
    settings = settings or load_settings()
    redis_dir = settings.data_dir / "redis"
    server = EmbeddedRedis(redis_dir, keep=True)
    pid = server.server_pid()
    leases = holders.live_leases(redis_dir) if redis_dir.is_dir() else []
    others: list[dict[str, Any]] = []
    if pid is not None:
        probe = probe_client(server.socket, 2)
        try:
            others = holders.other_connections(probe)
        except redis.RedisError:
            pass
        finally:
            probe.close()
    return {
        "data_dir": str(settings.data_dir),
        "external_redis": bool(settings.redis_url),
        "servers": [
            {
                "redis_dir": str(redis_dir),
                "socket": str(server.socket),
                "running": pid is not None,
                "pid": pid,
                "users": [x.as_dict() for x in leases],
                "connections": len(others),
                "in_use_by": holders.describe(leases, others),
            }
        ],
    }


def stop_embedded(settings: Settings | None = None, *, force: bool = False) -> dict[str, Any]:
    """Stop the embedded server of the data dir (plain SHUTDOWN: the AOF is flushed first).

    Args:
        settings: resolved settings (default: ``load_settings()``).
        force: stop it even while other processes use it (a dashboard or worker starts a new one
            on its next request; a run in progress may fail and be resumed later).

    Returns:
        ``{"data_dir", "stopped": bool (False: none was running), "pid", "users"}``.
    Raises:
        InputError: (code ``server_in_use``) when a live process uses it and not ``force``.
        StoreError: when the server does not stop.
    """
    settings = settings or load_settings()
    redis_dir = settings.data_dir / "redis"
    server = EmbeddedRedis(redis_dir, keep=True)
    with holders.lifecycle_lock(redis_dir):
        pid = server.server_pid()
        if pid is None:
            return {"data_dir": str(settings.data_dir), "stopped": False, "pid": None, "users": ""}
        leases = holders.live_leases(redis_dir, exclude_pid=os.getpid())
        probe = probe_client(server.socket, 2)
        try:
            others = holders.other_connections(probe)
        finally:
            probe.close()
        users = holders.describe(leases, others)
        if users and not force:
            raise InputError(
                f"The embedded Redis of {settings.data_dir} (pid {pid}) is in use by {users}. "
                "Stop those first, or pass --force (a dashboard or worker starts it again on its "
                "next request; a run in progress may fail and can be resumed).",
                code="server_in_use",
            )
        server.shutdown()
    return {"data_dir": str(settings.data_dir), "stopped": True, "pid": pid, "users": users}
