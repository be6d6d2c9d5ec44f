"""Embedding access for the extractive engine: a cached, thread-safe wrapper around the
project embedder (``research.search.embeddings.get_embedder()``: all-MiniLM-L6-v2, 384-d, rows
L2-normalised, so cosine = dot product) and the ranking helpers every step shares.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

import numpy as np

from research.text.words import overlap

CACHE_SIZE = 50_000  # texts; ~77 MB of float32 vectors at most


class Vectors:
    """Embeds texts once per engine (LRU cache of ``CACHE_SIZE`` texts).

    Args:
        embedder: anything with ``encode(list[str]) -> np.ndarray (n, d)`` with L2-normalised
            rows; None → ``research.search.embeddings.get_embedder()`` on first use (the model loads
            lazily, ~5 s).
    """

    def __init__(self, embedder: Any | None = None) -> None:
        self._embedder = embedder
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def embedder(self) -> Any:
        """The underlying embedder (loaded on first access)."""
        if self._embedder is None:
            from research.search.embeddings import get_embedder  # noqa: PLC0415 - the search package (bm25s, scipy) and torch load with the first embedding

            self._embedder = get_embedder()
        return self._embedder

    def encode(self, texts: list[str]) -> np.ndarray:
        """float32 ``(len(texts), d)`` unit vectors; ``(0, d)`` or ``(0, 0)`` for no texts."""
        texts = [t if t.strip() else "(empty)" for t in texts]
        if not texts:
            dim = getattr(self._embedder, "dim", 384)
            return np.zeros((0, dim), dtype=np.float32)
        with self._lock:
            missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
        if missing:
            vecs = np.asarray(self.embedder.encode(missing), dtype=np.float32)
            with self._lock:
                for t, v in zip(missing, vecs, strict=True):
                    self._cache[t] = v
                    self._cache.move_to_end(t)
                while len(self._cache) > CACHE_SIZE:
                    self._cache.popitem(last=False)
        with self._lock:
            rows = []
            for t in texts:
                v = self._cache.get(t)
                if v is None:  # evicted by a concurrent caller: recompute this one
                    v = np.asarray(self.embedder.encode([t]), dtype=np.float32)[0]
                rows.append(v)
        return np.vstack(rows)

    def sim(self, a: list[str], b: list[str]) -> np.ndarray:
        """Cosine similarities ``(len(a), len(b))``, rounded to 4 decimals (so rankings do not
        hinge on sub-1e-4 float noise between batch compositions)."""
        if not a or not b:
            return np.zeros((len(a), len(b)), dtype=np.float32)
        return np.round(self.encode(a) @ self.encode(b).T, 4)


def rank(scores: np.ndarray) -> list[int]:
    """Indices of ``scores`` best first; ties keep input order (deterministic)."""
    return sorted(range(len(scores)), key=lambda i: (-float(scores[i]), i))


def pick_diverse(
    order: list[int],
    vecs: np.ndarray,
    limit: int,
    max_sim: float = 0.9,
    texts: list[str] | None = None,
    max_overlap: float = 0.7,
) -> list[int]:
    """Walk ``order`` and keep items whose cosine to every kept item is < ``max_sim`` (and, when
    ``texts`` are given, whose content-word Jaccard overlap with every kept text is <
    ``max_overlap``: catches the same sentence quoted with cuts or ellipses).

    Near-duplicate removal (greedy, in rank order); returns at most ``limit`` indices.
    """
    kept: list[int] = []
    for i in order:
        if kept and float(np.max(vecs[kept] @ vecs[i])) >= max_sim:
            continue
        if texts is not None and any(overlap(texts[i], texts[j]) >= max_overlap for j in kept):
            continue
        kept.append(i)
        if len(kept) >= limit:
            break
    return kept
