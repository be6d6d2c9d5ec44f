"""Per-model call slots shared by every run of the process.

A model takes at most ``limit(model)`` requests at once: ``RESEARCH_LLM_CONCURRENCY`` when set,
else ``LOCAL_CONCURRENCY`` (1) for a local endpoint (``research.llm.local.is_local``: a
llama.cpp or Ollama server answers one request at a time, and a second request would wait in
its queue with its time-out running) and ``HOSTED_CONCURRENCY`` (4) for a hosted API. Every run
of the process draws from the same slots, so four runs against a one-slot server queue here,
where waiting costs no time-out: a call waits at most ``RESEARCH_LLM_QUEUE_S`` (s) for its slot,
then fails with ``queue_timeout``. ``waiting(model)`` says how many calls are queued (the run
page's "waiting for the model: 3 calls queued").
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from research.config import load_settings
from research.llm.local import api_base, is_local

LOCAL_CONCURRENCY = 1
HOSTED_CONCURRENCY = 4


def limit(model: str) -> int:
    """Requests of ``model`` in flight at once in this process (module doc); at least 1."""
    configured = load_settings().llm_concurrency
    if configured is not None:
        return max(1, configured)
    return LOCAL_CONCURRENCY if is_local(model) else HOSTED_CONCURRENCY


class ModelSlots:
    """The slots of one model (one endpoint and limit): a semaphore plus the count of callers
    waiting for it. Thread-safe."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._sem = threading.BoundedSemaphore(size)
        self._lock = threading.Lock()
        self.waiting = 0

    def acquire(
        self, timeout_s: float, on_wait: Callable[[int, int], object] | None = None
    ) -> bool:
        """Take a slot, waiting at most ``timeout_s`` (s). ``on_wait(n, change)`` is called
        with the number of callers waiting and ``change`` +1 when this one starts waiting, -1
        when it stops (never when a slot was free). Returns False when no slot came in time."""
        if self._sem.acquire(blocking=False):
            return True
        with self._lock:
            self.waiting += 1
            n = self.waiting
        if on_wait is not None:
            on_wait(n, 1)
        try:
            return self._sem.acquire(timeout=max(0.0, timeout_s))
        finally:
            with self._lock:
                self.waiting -= 1
                n = self.waiting
            if on_wait is not None:
                on_wait(n, -1)

    def release(self) -> None:
        """Give the slot back."""
        self._sem.release()


_slots: dict[tuple[str, str, int], ModelSlots] = {}
_lock = threading.Lock()


def slots(model: str) -> ModelSlots:
    """The process-wide slots of ``model`` at its endpoint (``research.llm.local.api_base``) and
    current ``limit``; a changed limit or endpoint gets fresh slots."""
    key = (model, api_base(model) or "", limit(model))
    with _lock:
        found = _slots.get(key)
        if found is None:
            found = _slots[key] = ModelSlots(key[2])
        return found


def waiting(model: str) -> int:
    """Calls of ``model`` waiting for a slot in this process now."""
    return slots(model).waiting
