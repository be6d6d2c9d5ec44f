"""The warm-up thread: tasks run one after the other, in the order asked, off the caller's
thread; a failing task is logged and the next one still runs."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

from research.warmup import warm


def test_tasks_run_in_order_on_one_background_thread(caplog):
    done = threading.Event()
    seen: list[tuple[str, str]] = []

    def task(name: str):
        def run() -> None:
            seen.append((name, threading.current_thread().name))
            if name == "broken":
                raise RuntimeError("no such library")
            if name == "last":
                done.set()

        return run

    for name in ("first", "broken", "second", "last"):
        warm(name, task(name))
    assert done.wait(10)
    assert [n for n, _ in seen] == ["first", "broken", "second", "last"]
    assert {t for _, t in seen} == {"warmup"}
    assert "warm-up of broken failed: no such library" in caplog.text


def test_a_process_that_ends_mid_load_waits_for_it_and_exits():
    """The main thread ends while the warm-up thread imports torch: the process lets that import
    end and exits, quietly, running no further task (a daemon thread frozen mid-import kept the
    import lock, and the process hung at exit)."""
    code = (
        "import atexit, sys, threading\n"
        "from research.warmup import warm\n"
        "started = threading.Event()\n"
        "warm('torch', lambda: (started.set(), __import__('torch')))\n"
        "warm('never', lambda: print('a task after the end ran', flush=True))\n"
        "atexit.register(lambda: print('exiting', flush=True))\n"
        "started.wait(30)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=Path(__file__).resolve().parents[1],
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines() == ["exiting"]  # no task ran after the main thread
    assert "warm-up" not in out.stderr
