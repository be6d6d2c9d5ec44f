"""The process-wide Redis client: ``REDIS_URL`` when set, else the embedded server.

``get_redis()`` returns one shared ``redis.Redis`` (thread-safe connection pool,
``decode_responses=True``) per URL.
"""

from __future__ import annotations

import threading

import redis

from research.config import Settings, load_settings
from research.errors import StoreError
from research.store.server import EmbeddedRedis

_lock = threading.Lock()
_clients: dict[str, redis.Redis] = {}
_servers: dict[str, EmbeddedRedis] = {}


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
            client = redis.Redis.from_url(url, decode_responses=True, socket_timeout=30,
                                          health_check_interval=30)
            try:
                client.ping()
            except redis.RedisError as exc:
                raise StoreError(f"Cannot reach Redis at {url.split('@')[-1]}: {exc}. "
                                 "Check REDIS_URL or unset it to use the embedded server.") from exc
            _clients[url] = client
        return client
