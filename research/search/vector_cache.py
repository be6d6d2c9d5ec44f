"""A shared, persistent cache of sentence vectors: each distinct (model, window, text) is
embedded once and then read back by every run, process and worker on the machine.

Why: a run embeds the same corpus sentences and passages that earlier runs embedded (report
material, the on-topic filter, evidence scoring, follow-ups, the citation audit), and MiniLM's
forward pass was most of a run's CPU. The store sits beside the search indexes
(``{index_dir}/vectors.sqlite``) because it is keyed like them: by model and text, not by run.

Storage is SQLite (the standard library's ``sqlite3``) in WAL mode, so readers never block a
writer and several processes (the dashboard, CLI runs, RQ workers) share one file safely. A row
is ``(key BLOB PRIMARY KEY, vec BLOB)`` (~2.1 kB on disk): ``key`` is the 20-byte SHA-1 of
``"{model}\\x1f{window}\\x1f{text}"`` and ``vec`` the float32 vector's bytes (1,536 bytes for
all-MiniLM-L6-v2's 384 dimensions). A vector read back is bit-identical to the one stored; the
encoder makes each text's vector independent of the batch it was computed in
(``research.search.embeddings.Embedder.encode``), so a report is the same byte for byte with
the cache and without it.

A broken or unwritable file never fails a run: the cache turns itself off for the process and
says so once on stderr.
"""

from __future__ import annotations

import hashlib
import sqlite3
import sys
import threading
from collections.abc import Iterable
from pathlib import Path

import numpy as np

FILE_NAME = "vectors.sqlite"
_CHUNK = 500  # keys per SELECT … IN (…): below SQLite's default limit of 999 variables
_TIMEOUT_S = 30.0  # wait this long for another process's write lock before giving up


def vector_key(model: str, window: int, text: str) -> bytes:
    """The 20-byte cache key of ``text`` embedded by ``model`` truncated to ``window`` tokens."""
    material = f"{model}\x1f{int(window)}\x1f{text}".encode("utf-8", "surrogatepass")
    return hashlib.sha1(material).digest()


class VectorCache:
    """One SQLite file of vectors, safe to share between threads and processes.

    Args:
        path: the database file (created with its folder when missing).
        dim: the vectors' dimension; a stored row of another size is ignored (read as a miss).

    ``get`` and ``put`` never raise on a storage error: they log once and act as an empty,
    read-only cache from then on (``disabled`` tells).
    """

    def __init__(self, path: Path, dim: int) -> None:
        self.path = Path(path)
        self.dim = int(dim)
        self.disabled = False
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None

    def _connect(self) -> sqlite3.Connection | None:
        if self._conn is None and not self.disabled:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                conn = sqlite3.connect(str(self.path), timeout=_TIMEOUT_S, check_same_thread=False)
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=NORMAL")
                # a rowid table: rows of ~1.5 kB are too big for WITHOUT ROWID's index pages
                # (measured 4.7 kB per vector on disk there, 2.1 kB here)
                conn.execute(
                    "CREATE TABLE IF NOT EXISTS vectors (key BLOB PRIMARY KEY, vec BLOB NOT NULL)"
                )
                conn.commit()
                self._conn = conn
            except (sqlite3.Error, OSError) as exc:
                self._fail(exc)
        return self._conn

    def _fail(self, exc: Exception) -> None:
        if not self.disabled:
            print(
                f"research: vector cache {self.path} is unusable ({exc}); embedding without it",
                file=sys.stderr,
            )
        self.disabled = True
        self._conn = None

    def get(self, keys: list[bytes]) -> dict[bytes, np.ndarray]:
        """The stored vectors of ``keys`` (float32 ``(dim,)`` each); absent keys are left out."""
        found: dict[bytes, np.ndarray] = {}
        if not keys:
            return found
        with self._lock:
            conn = self._connect()
            if conn is None:
                return found
            try:
                for start in range(0, len(keys), _CHUNK):
                    chunk = keys[start : start + _CHUNK]
                    marks = ",".join("?" * len(chunk))
                    rows = conn.execute(
                        f"SELECT key, vec FROM vectors WHERE key IN ({marks})",  # noqa: S608 - placeholders only
                        chunk,
                    ).fetchall()
                    for key, blob in rows:
                        vec = np.frombuffer(blob, dtype=np.float32)
                        if vec.shape == (self.dim,):
                            found[bytes(key)] = vec
            except sqlite3.Error as exc:
                self._fail(exc)
        return found

    def put(self, items: Iterable[tuple[bytes, np.ndarray]]) -> None:
        """Store vectors (float32 ``(dim,)`` each); a key already present keeps its vector."""
        rows = [(k, np.ascontiguousarray(v, dtype=np.float32).tobytes()) for k, v in items]
        if not rows:
            return
        with self._lock:
            conn = self._connect()
            if conn is None:
                return
            try:
                conn.executemany("INSERT OR IGNORE INTO vectors (key, vec) VALUES (?, ?)", rows)
                conn.commit()
            except sqlite3.Error as exc:
                self._fail(exc)

    def count(self) -> int:
        """How many vectors the file holds (0 when it cannot be read)."""
        with self._lock:
            conn = self._connect()
            if conn is None:
                return 0
            try:
                return int(conn.execute("SELECT COUNT(*) FROM vectors").fetchone()[0])
            except sqlite3.Error as exc:
                self._fail(exc)
                return 0


_CACHES: dict[tuple[Path, int], VectorCache] = {}
_CACHES_LOCK = threading.Lock()


def shared_cache(index_dir: Path, dim: int) -> VectorCache:
    """The process's ``VectorCache`` at ``{index_dir}/vectors.sqlite`` (one per file and size)."""
    key = (Path(index_dir).resolve() / FILE_NAME, int(dim))
    with _CACHES_LOCK:
        cache = _CACHES.get(key)
        if cache is None:
            cache = _CACHES[key] = VectorCache(key[0], key[1])
        return cache
