"""Warm-up: the heavy libraries a process is about to need, loaded ahead of their first use on
one background thread, one after the other.

Two heavy imports on two threads at once (litellm ~4 CPU-s, torch with transformers ~5 CPU-s)
each take about as long as both in a row: import work is Python code that holds the
interpreter lock. So the process's warm-up tasks run in the order they were asked for, on one
thread (``warmup``): ``research run`` on the litellm engine asks for litellm as soon as
its arguments are parsed (the run's first model call needs it), and opening a search index asks
for the embedding model (the first search whose query vector is not cached needs it).

A task only loads what its first caller would load anyway, under that library's own lock (the
import lock, ``Embedder.load``'s lock), so a caller that gets there first simply waits for it or
does it itself. A task that fails is logged and dropped: the caller meets the real error.

The thread is not a daemon, and takes no new task once the main thread has finished: a daemon
thread frozen by the interpreter's exit in the middle of an import keeps the import lock, and
the next import during finalisation (litellm imports in its ``__del__`` methods) then waits for
ever. So a process that ends while a library is still loading lets that one load finish (or
fail: after the main thread ends, an import that registers an exit hook is refused) and exits;
the thread also ends whenever it has nothing left to do.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)

_TASKS: queue.SimpleQueue[tuple[str, Callable[[], object]]] = queue.SimpleQueue()
_LOCK = threading.Lock()
_THREAD: threading.Thread | None = None
IDLE_S = 0.5  # how long the thread waits for another task before it ends (s)


def warm(name: str, task: Callable[[], object]) -> None:
    """Queue ``task`` (no arguments; its result is dropped) on the process's warm-up thread,
    starting the thread when none is running. ``name`` says what it loads, for the log. Never
    raises."""
    global _THREAD
    _TASKS.put((name, task))
    with _LOCK:
        if _THREAD is None:
            _THREAD = threading.Thread(target=_work, name="warmup")
            try:
                _THREAD.start()
            except RuntimeError:  # the interpreter is shutting down: nothing is warmed now
                _THREAD = None


def _work() -> None:
    global _THREAD
    while threading.main_thread().is_alive():
        try:
            name, task = _TASKS.get(timeout=IDLE_S)
        except queue.Empty:
            with _LOCK:  # a task queued now finds no thread and starts one
                if _TASKS.empty():
                    _THREAD = None
                    return
            continue
        try:
            task()
        except Exception as exc:  # noqa: BLE001 - the task's first real caller meets the error
            # after the main thread ended, imports that register exit hooks refuse to load
            ending = not threading.main_thread().is_alive()
            log.log(
                logging.DEBUG if ending else logging.WARNING, "warm-up of %s failed: %s", name, exc
            )
    with _LOCK:
        _THREAD = None
