"""The process-wide Redis client: ``REDIS_URL`` when set, else the embedded server.

``get_redis()`` returns one shared ``redis.Redis`` (thread-safe connection pool,
``decode_responses=True``) per URL. The client rides out a Redis restart: on a
connection error, timeout or "loading" reply it reconnects and retries the command with
exponential backoff (redis-py ``Retry`` + ``ExponentialBackoff``; ~30 s in all), so a run keeps
going; past that the job stops and its run resumes later (``research.pipeline.runner``).
"""

from __future__ import annotations

import threading
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
from research.errors import StoreError
from research.store.server import EmbeddedRedis

# redis-py types every reply as ``bytes | str`` (a pipeline's as a list of anything), whatever
# the client's ``decode_responses``. Every client here decodes replies to ``str``
# (``make_client``), so the store modules hold their client as ``TextRedis`` and parse the
# replies where they read them.
TextRedis = Any

_lock = threading.Lock()
_clients: dict[str, redis.Redis] = {}
_servers: dict[str, EmbeddedRedis] = {}

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
        url, socket_connect_timeout=3, socket_timeout=3, retry=Retry(NoBackoff(), 0)
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
    )


def redis_url(settings: Settings | None = None, *, keep_server: bool = True) -> str:
    """URL of the Redis to use, starting the embedded server if needed.

    Args:
        settings: resolved settings (default: ``load_settings()``).
        keep_server: leave an embedded server we start running after exit (dashboard, CLI),
            so later commands reuse it; tests pass False.
    """
    settings = settings or load_settings()
    if settings.redis_url:
        return settings.redis_url
    redis_dir = settings.data_dir / "redis"
    key = str(redis_dir)
    with _lock:
        server = _servers.get(key)
        if server is None:
            server = _servers[key] = EmbeddedRedis(redis_dir, keep=keep_server)
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
