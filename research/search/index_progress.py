"""Where a local-corpus index build stands, for everyone who waits on it.

A build (``research.search.local.LocalSearch``) reports into a process-wide registry keyed by
its index folder: ``loading_model`` → ``embedding`` (``done`` / ``total`` documents) →
``writing`` → ``ready`` (or ``failed``). Readers never touch the build:

* :func:`index_state` — the state of one corpus's index: the live build in this process when
  there is one, else what is on disk (``ready`` with its document count, or ``missing``).
* :func:`watch` — a thread that calls ``emit(state)`` whenever the build's state or count
  changes (at most every ``interval_s`` seconds); runs turn these into ``index.progress`` events.
* ``research.search.local.start_background_build`` builds (or loads) an index in a daemon
  thread; the dashboard calls it at server start for the default corpus.

States are plain dicts ``{state, done, total, corpus, index, started, updated, error,
embedding_since, eta_s}`` (times in Unix seconds; ``eta_s``: seconds left at the embedding rate so
far, None until the first chunk), JSON-safe for event payloads.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path

from research.search.corpus import DOC_SUFFIXES
from research.search.embeddings import MODEL_NAME

log = logging.getLogger(__name__)

INDEX_VERSION = 2  # 2: documents embedded with DOC_TOKENS = 128 word pieces (was the 256 window)

ACTIVE = ("loading_model", "embedding", "writing")
_LOCK = threading.Lock()
_LIVE: dict[str, dict] = {}


def report(
    index_path: Path | str,
    state: str,
    *,
    done: int = 0,
    total: int = 0,
    corpus: str = "",
    error: str = "",
) -> None:
    """Record that the build into ``index_path`` is in ``state`` with ``done`` of ``total`` docs."""
    key = str(index_path)
    t = time.time()
    with _LOCK:
        prev = _LIVE.get(key) or {"started": t}
        embedding_since = prev.get("embedding_since") if prev.get("state") == "embedding" else None
        if state == "embedding" and embedding_since is None:
            embedding_since = t
        _LIVE[key] = {
            "state": state,
            "done": int(done),
            "total": int(total),
            "corpus": corpus or prev.get("corpus", ""),
            "index": key,
            "started": prev["started"] if prev.get("state") in ACTIVE else t,
            "updated": t,
            "error": error,
            "embedding_since": embedding_since,
            "eta_s": eta_s(int(done), int(total), t - embedding_since) if embedding_since else None,
        }


def eta_s(done: int, total: int, elapsed_s: float) -> float | None:
    """Seconds left for the ``total - done`` documents still to embed at the rate so far
    (``done`` in ``elapsed_s`` s), rounded to 0.1 s; None before the first chunk is done."""
    if done <= 0 or total <= done or elapsed_s <= 0:
        return None
    return round((total - done) * elapsed_s / done, 1)


def live_state(index_path: Path | str) -> dict | None:
    """The latest reported state of a build into ``index_path`` in this process, or None."""
    with _LOCK:
        s = _LIVE.get(str(index_path))
        return dict(s) if s else None


def corpus_fingerprint(path: Path) -> str:
    """sha1 over the index version, model, resolved path, mtime (ns) and size of the corpus
    (for a folder: of every supported file in it). Hex string, 40 chars: the name of the
    corpus's index folder."""
    path = path.resolve()
    parts = [str(INDEX_VERSION), MODEL_NAME, str(path)]
    files = (
        sorted(f for f in path.rglob("*") if f.suffix.lower() in DOC_SUFFIXES)
        if path.is_dir()
        else [path]
    )
    for f in files:
        st = f.stat()
        parts.append(
            f"{f.relative_to(path) if path.is_dir() else ''}|{st.st_mtime_ns}|{st.st_size}"
        )
    return hashlib.sha1("\n".join(parts).encode()).hexdigest()


def index_path_for(corpus_path: Path | str, index_dir: Path | str) -> Path:
    """The folder the index of ``corpus_path`` is cached in under ``index_dir``.

    Raises:
        OSError: the corpus cannot be read (stat).
    """
    path = Path(corpus_path).expanduser().resolve()
    return Path(index_dir).expanduser().resolve() / corpus_fingerprint(path)


def index_state(corpus_path: Path | str, index_dir: Path | str) -> dict:
    """State of the index of ``corpus_path``: a live build in this process, else ``ready``
    (``done`` = ``total`` = documents, ``updated`` = build time) when a cached index is on
    disk, else ``missing``; ``unavailable`` (with ``error``) when the corpus cannot be read."""
    try:
        ipath = index_path_for(corpus_path, index_dir)
    except OSError as exc:
        return {
            "state": "unavailable",
            "done": 0,
            "total": 0,
            "corpus": str(corpus_path),
            "index": "",
            "started": 0.0,
            "updated": 0.0,
            "error": str(exc),
        }
    live = live_state(ipath)
    if live and live["state"] in ACTIVE + ("failed",):
        return live
    try:
        meta = json.loads((ipath / "meta.json").read_text())
        n = int(meta.get("docs", 0))
        return {
            "state": "ready",
            "done": n,
            "total": n,
            "corpus": str(corpus_path),
            "index": str(ipath),
            "started": 0.0,
            "updated": float(meta.get("created", 0.0)),
            "error": "",
        }
    except (OSError, ValueError, TypeError):
        return live or {
            "state": "missing",
            "done": 0,
            "total": 0,
            "corpus": str(corpus_path),
            "index": str(ipath),
            "started": 0.0,
            "updated": 0.0,
            "error": "",
        }


def watch(
    index_path: Path | str,
    emit: Callable[[dict], None],
    stop: threading.Event,
    interval_s: float = 0.5,
) -> threading.Thread:
    """Start a daemon thread calling ``emit(state)`` each time the live build into ``index_path``
    changes state or count (polled every ``interval_s`` s) until ``stop`` is set (then once more,
    so the last state is told; join the thread to wait for it). An exception
    from ``emit`` is logged and ends the thread (progress must never break the run)."""

    def loop() -> None:
        last = None
        while True:
            stopping = stop.is_set()  # after stop: one last look, so the final state is told
            s = live_state(index_path)
            sig = (s["state"], s["done"], s["total"]) if s else None
            if s and sig != last:
                last = sig
                try:
                    emit(s)
                except Exception:
                    log.exception("index progress reporting failed")
                    return
            if stopping:
                return
            stop.wait(interval_s)

    t = threading.Thread(target=loop, name="index-progress", daemon=True)
    t.start()
    return t
