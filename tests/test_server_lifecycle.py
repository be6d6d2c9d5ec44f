"""The embedded redis-server's lifecycle across processes (real CLI subprocesses, real servers).

A ``research`` command stops the embedded server of its data dir when it ends, unless another
process (the dashboard, a worker) holds it; ``research redis status|stop`` shows and stops it.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil
import redis
from served_api import own_redis_env

from research.store import holders
from research.store.server import EmbeddedRedis, probe_client, socket_path

# What the dashboard does (streamlit_app.py: set_role, then research.ui.health on every page
# load): one health line per line read from stdin; exits (and leaves the server) at EOF.
_HOLDER = """
import sys
from research.store.connection import set_role
from research.ui.health import redis_health
set_role("dashboard")
print(redis_health(), flush=True)
for _ in sys.stdin:
    print(redis_health(), flush=True)
"""


def _env(data_dir: Path) -> dict[str, str]:
    """A ``research`` command's environment on ``data_dir``'s own embedded Redis."""
    return own_redis_env(data_dir, RESEARCH_PREINDEX="0")


def _research(data_dir: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "research.cli", *args],
        env=_env(data_dir),
        capture_output=True,
        text=True,
        timeout=120,
    )


def _servers(data_dirs: list[Path]) -> list[psutil.Process]:
    """Live redis-server processes whose socket belongs to one of ``data_dirs``."""
    marks = {str(d) for d in data_dirs} | {str(socket_path(d / "redis")) for d in data_dirs}
    found = []
    for proc in psutil.process_iter(["name", "cmdline", "status"]):
        try:
            cmd = " ".join(proc.info["cmdline"] or [])
            if "redis-server" not in (proc.info["name"] or "") + cmd:
                continue
            if proc.info["status"] == psutil.STATUS_ZOMBIE:
                continue
            if any(m in cmd for m in marks):
                found.append(proc)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return found


def test_ten_commands_leave_no_server(tmp_path):
    """Ten commands, each on its own data dir (five at a time), leave no redis-server behind."""
    dirs = [tmp_path / f"d{i}" for i in range(10)]
    for batch in (dirs[:5], dirs[5:]):
        procs = [
            subprocess.Popen(
                [sys.executable, "-m", "research.cli", "list", "--json"],
                env=_env(d),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for d in batch
        ]
        for p in procs:
            out, err = p.communicate(timeout=120)
            assert p.returncode == 0, err
            assert json.loads(out) == []
    for d in dirs:
        assert (d / "redis" / "appendonlydir").is_dir(), "the command did use an embedded server"
        assert list((d / "redis" / "users").glob("*.json")) == []  # leases removed at exit
    assert _servers(dirs) == []


def test_dashboard_keeps_its_server_and_stop_refuses(tmp_path):
    """A command ending while the dashboard holds the server leaves it up; ``server stop``
    refuses (exit 2) until ``--force``; the dashboard starts it again on its next page load and
    stops it when it exits."""
    data = tmp_path / "data"
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER],
        env=_env(data),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdin is not None
        line = holder.stdout.readline()
        assert "kept running by this dashboard" in line, holder.stderr and holder.stderr.read()
        [server] = _servers([data])
        assert f"pid {server.pid}" in line

        listed = _research(data, "list", "--json")
        assert listed.returncode == 0, listed.stderr
        assert server.is_running() and _servers([data]) == [server]

        status = _research(data, "redis", "status", "--json")
        assert status.returncode == 0, status.stderr
        [entry] = json.loads(status.stdout)["servers"]
        assert entry["running"] and entry["pid"] == server.pid
        assert [(u["role"], u["pid"]) for u in entry["users"]] == [("dashboard", holder.pid)]
        text = _research(data, "redis", "status")
        assert f"dashboard (pid {holder.pid})" in text.stdout

        refused = _research(data, "redis", "stop")
        assert refused.returncode == 2
        assert "error [server_in_use]" in refused.stderr and "--force" in refused.stderr
        assert server.is_running()

        forced = _research(data, "redis", "stop", "--force", "--json")
        assert forced.returncode == 0, forced.stderr
        assert json.loads(forced.stdout)["stopped"] is True
        assert _servers([data]) == []
        [after] = json.loads(_research(data, "redis", "status", "--json").stdout)["servers"]
        assert after["running"] is False

        holder.stdin.write("page load\n")
        holder.stdin.flush()
        again = holder.stdout.readline()
        assert "kept running by this dashboard" in again
        assert len(_servers([data])) == 1
    finally:
        if holder.stdin is not None:
            holder.stdin.close()  # EOF: the holder exits
        holder.wait(timeout=60)
    assert holder.returncode == 0
    assert _servers([data]) == []  # the dashboard, last out, stopped its server
    gone = _research(data, "server", "stop")  # the old name still works, and says the new one
    assert gone.returncode == 0 and "No embedded Redis is running" in gone.stdout
    assert "deprecated" in gone.stderr and "research redis stop" in gone.stderr


def test_api_server_stopped_with_sigterm_leaves_no_server(serve_api):
    """`make run` stops `research serve` with SIGTERM: it exits 0 through its exit hooks, so the
    embedded server it held is stopped (uvicorn re-raises the signal after its shutdown)."""
    api = serve_api("lifecycle", own_redis=True, RESEARCH_PREINDEX="0")
    data = api.data
    assert len(_servers([data])) == 1
    assert api.stop(signal.SIGTERM, timeout=60) == 0
    deadline = time.monotonic() + 10
    while _servers([data]) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _servers([data]) == []


def test_probes_of_this_process_never_read_as_another_user(tmp_path):
    """While one thread of a process keeps checking that the server is up (every ``get_redis``
    does, and a run's worker thread goes on while the main thread exits), the last-user check of
    another thread (``CLIENT LIST``, looked at a few times) sees no connection it would count as
    another user's: every probe connection is named as this process's and closed after use, and
    one caught before it is named is gone or named at the next look."""
    server = EmbeddedRedis(tmp_path / "redis")
    server.start()
    stop = threading.Event()

    def keep_probing() -> None:
        while not stop.is_set():
            server.ping()
            server.server_pid()

    probers = [threading.Thread(target=keep_probing) for _ in range(2)]
    for t in probers:
        t.start()
    seen: list[dict] = []
    try:
        for _ in range(40):
            asking = probe_client(server.socket, 2)
            try:
                seen += holders.lasting_foreign(asking)
            finally:
                asking.close()
    finally:
        stop.set()
        for t in probers:
            t.join()
    # another user's connection (an unnamed client, as redis-cli's) is still seen, and keeps it
    other = redis.Redis(unix_socket_path=str(server.socket))
    asking = probe_client(server.socket, 2)
    try:
        other.ping()
        kept = holders.lasting_foreign(asking)
    finally:
        other.close()
        asking.close()
        server.stop()
    assert seen == [], seen[:3]
    assert len(kept) == 1, kept


# A process whose thread keeps using Redis while its main thread exits (a run's worker after
# SIGTERM): the thread's next command finds the server shut down by the exit hook.
_BUSY_AT_EXIT = """
import sys, threading, time
from research.store.connection import get_redis

get_redis().ping()

def keep_using():
    while True:
        try:
            get_redis().ping()
        except Exception:
            time.sleep(0.01)

threading.Thread(target=keep_using, daemon=True).start()
time.sleep(0.5)
sys.exit(0)
"""


def test_a_thread_still_using_redis_at_exit_does_not_start_it_again(tmp_path):
    """The last user out shuts the server down; a thread of its own that is still running does
    not start a new one (which nobody would stop) in the moments before the process ends."""
    for attempt in range(3):
        data = tmp_path / f"d{attempt}"
        done = subprocess.run(
            [sys.executable, "-c", _BUSY_AT_EXIT],
            env=_env(data),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr[-1500:]
        deadline = time.monotonic() + 5
        while _servers([data]) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _servers([data]) == [], done.stderr[-1500:]
