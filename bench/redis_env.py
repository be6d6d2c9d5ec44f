"""A private Redis for one benchmark (``research.store.server.EmbeddedRedis`` in a temp dir),
and round-trip counting.

Round trips are counted on the client: ``CountingConnection`` is a real redis-py unix-socket
connection that increments a counter each time a request is written (a pipeline's batch counts
once — it is one round trip). The server's ``total_commands_processed`` delta is reported too,
but it also counts the commands a Lua script runs inside the server, so it is not round trips.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import redis

from research.store.server import EmbeddedRedis


class CountingConnection(redis.UnixDomainSocketConnection):
    """A unix-socket connection that counts the requests it sends (``counter["sent"]``)."""

    counter = {"sent": 0}

    def send_packed_command(self, command, check_health=True):
        type(self).counter["sent"] += 1
        return super().send_packed_command(command, check_health=check_health)


@contextmanager
def private_redis() -> Iterator[tuple[str, Path]]:
    """Start a private redis-server in a temp dir; yields ``(url, dir)``; stops and removes it."""
    d = Path(tempfile.mkdtemp(prefix="bench-redis-"))
    server = EmbeddedRedis(d / "r")
    try:
        yield server.start(), d
    finally:
        server.stop()
        shutil.rmtree(d, ignore_errors=True)


def counting_client(socket_path: str) -> redis.Redis:
    """A ``decode_responses`` client whose pool uses ``CountingConnection``."""
    pool = redis.ConnectionPool(
        connection_class=CountingConnection, path=socket_path, decode_responses=True
    )
    return redis.Redis(connection_pool=pool)
