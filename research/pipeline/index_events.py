"""``index.progress`` events on a run's stream while the run waits for its local index.

The local corpus index is built (or loaded) when the run's retriever is built, inside the
``planning`` phase; on a fresh index dir that takes minutes. :func:`index_progress_events`
wraps that wait: when the run searches the local corpus and its index is not on disk yet, a
watcher (``research.search.index_progress.watch``) turns each change of the build's state into
an event ``index.progress`` ``{state, done, total, corpus, eta_s}`` (``state``: ``loading_model``,
``embedding``, ``writing``, ``ready`` or ``failed``; ``done``/``total`` in documents; ``eta_s``:
seconds left at the build's rate so far, or None). The
CLI draws a progress bar from them and the run pages a progress bar.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from research.events import EventType
from research.models import RunConfig
from research.search import index_progress

EVENT: EventType = "index.progress"


def uses_local_corpus(config: RunConfig) -> bool:
    """True when the run searches the local corpus (``local`` backend, the default when no
    backend and no named corpus is chosen)."""
    names = [str(n).strip().lower() for n in (config.search or [])]
    return "local" in names if names else not config.corpora


def announce_index_build(store, run_id: str, config: RunConfig, index_dir) -> bool:
    """Emit one ``index.progress`` ``loading_model`` event on ``run_id``'s stream if the run uses
    the local corpus and its index is not on disk yet (called when the run is created, so the CLI
    bar and the run page show the wait within a second of the start). Returns whether it emitted;
    never raises for a reporting problem."""
    try:
        if not uses_local_corpus(config) or not config.corpus:
            return False
        state = index_progress.index_state(config.corpus, index_dir)
        if state["state"] != "missing":
            return False
        store.emit(run_id, EVENT, _payload({**state, "state": "loading_model"}))
        return True
    except Exception:
        return False


@contextmanager
def index_progress_events(store, run_id: str, config: RunConfig, index_dir) -> Iterator[None]:
    """Emit ``index.progress`` events on ``run_id``'s stream (through ``store.emit``) while the
    body runs, if the run's local index is not ready on disk when it starts. Emits nothing for a
    warm index or a run without the local corpus; never raises for a reporting problem."""
    if not uses_local_corpus(config) or not config.corpus:
        yield
        return
    state = index_progress.index_state(config.corpus, index_dir)
    if state["state"] in ("ready", "unavailable"):
        yield
        return
    ipath = state["index"]
    if state["state"] == "missing":  # the build has not reported yet: say now that it will
        store.emit(run_id, EVENT, _payload({**state, "state": "loading_model"}))
    stop = threading.Event()
    thread = index_progress.watch(ipath, lambda s: store.emit(run_id, EVENT, _payload(s)), stop)
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=5)


def _payload(state: dict) -> dict:
    return {
        "state": state["state"],
        "done": state["done"],
        "total": state["total"],
        "corpus": state.get("corpus", ""),
        "eta_s": state.get("eta_s"),
    }
