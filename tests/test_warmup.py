"""The warm-up thread: tasks run one after the other, in the order asked, off the caller's
thread; a failing task is logged and the next one still runs."""

from __future__ import annotations

import threading

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
