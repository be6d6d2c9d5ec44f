"""Hybrid search over a local corpus: BM25 + dense embeddings, fused (docs/design.md § Search).

* BM25: bm25s (Lù 2024, arXiv:2407.03618), Lucene variant, k1=1.5, b=0.75, over
  ``title + text`` (Anserini's "flat" indexing), English stopwords, Snowball stemming (PyStemmer).
* Dense: all-MiniLM-L6-v2 (``research.search.embeddings``) over ``title + text`` truncated to
  ``DOC_TOKENS`` = 128 word pieces (the length the model was trained with; queries keep the
  256 window); cosine similarity. Measured: half the tokens of the 256 window make
  the document embedding 2.06x cheaper (CPU s); NFCorpus test half: hybrid nDCG@10 0.370 (was
  0.368), dense 0.333 (0.335), hybrid Recall@100 0.318 (0.330); SciFact test half: hybrid 0.7207
  (0.719). Fewer word pieces lose nDCG (64: SciFact 0.6973; README, item 13).
* Fusion: convex combination of min-max normalised scores, ``0.5·dense + 0.5·bm25``, over the
  union of each list's top 100 (Bruch, Gai & Ingber 2023, "An Analysis of Fusion Functions for
  Hybrid Retrieval", ACM TOIS 42(1): convex combination beats reciprocal rank fusion, Cormack
  et al. 2009).
  Measured here, nDCG@10 on the shared BEIR data (tuning split / shared test half):
  SciFact train 0.736 vs RRF(k=60) 0.718, test 0.719 vs 0.705; NFCorpus dev 0.336 vs 0.332,
  test 0.369 vs 0.367. The parts alone: BM25 0.671 / 0.332, MiniLM 0.629 / 0.336 (test halves).
* Snippets: the document's sentences ranked by the IDF mass of the query terms they contain
  (a BM25-style overlap on the same stemmed tokens), 1-3 passages, <= 600 characters in all.

The index (BM25 arrays, embeddings, documents) is cached under
``index_dir/<sha1(corpus path, mtime, size)>/`` and reloaded by later constructions.

Size: the index build, its cache and the hybrid ranking share the same arrays and tokenizer.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import threading
import time
import uuid
from pathlib import Path

import bm25s
import numpy as np
import Stemmer

from research.config import load_settings
from research.errors import CorpusError, InputError
from research.models import SearchResult
from research.search import index_progress
from research.search.base import external_id_for, source_type_for
from research.search.corpus import Document, read_corpus
from research.search.embeddings import DIM, MODEL_NAME, Embedder, get_embedder
from research.search.index_progress import INDEX_VERSION, corpus_fingerprint  # noqa: F401 - re-exported
from research.warmup import warm

log = logging.getLogger(__name__)

DOC_TOKENS = 128  # word pieces of a document that are embedded (INDEX_VERSION 2)
ALPHA = 0.5  # weight of the dense score in the convex fusion (tuned on SciFact train, NFCorpus dev)
CANDIDATES = 100  # top-N of each list that enter the fusion
SNIPPET_BUDGET = 600  # characters over all snippets of one result
MAX_SNIPPETS = 3
_DENSE_CHARS = 1000  # > 128 word pieces for English text; the tokenizer truncates the rest
EMBED_CHUNK = 128  # documents embedded between two progress reports
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])|\n+")
_local = threading.local()


def _stemmer():
    """A per-thread Snowball stemmer (PyStemmer objects are not thread-safe)."""
    if not hasattr(_local, "stemmer"):
        _local.stemmer = Stemmer.Stemmer("english")
    return _local.stemmer


def _tokens(texts: list[str]) -> list[list[str]]:
    """Lower-cased, stopword-free, stemmed tokens per text (the BM25 analyzer)."""

    return bm25s.tokenize(
        texts, stopwords="en", stemmer=_stemmer(), return_ids=False, show_progress=False
    )


class LocalSearch:
    """Hybrid BM25 + dense retriever over one corpus (implements ``Retriever``).

    Construction builds the index (2,972 shared-corpus docs: ~50 s on 2 idle cores, 43 s of it
    the float32 embedding) or loads it from ``index_dir`` (~0.2 s; a broken cache is rebuilt).
    ``built`` tells which; ``open_s`` is the time taken (s).

    Raises:
        CorpusError: the corpus is missing, empty or has no valid document.
    """

    name = "local"
    _embedder: Embedder | None

    @property
    def embedder(self) -> Embedder:
        """The query (and build) embedder: the process-wide one, waited for on first use."""
        if self._embedder is None:
            self._embedder = get_embedder()
        embedder: Embedder = self._embedder
        return embedder

    def __init__(
        self, corpus_path: str | Path, index_dir: str | Path, *, embedder: Embedder | None = None
    ) -> None:
        if corpus_path is None or not str(corpus_path).strip():
            raise CorpusError("no corpus path given: pass a JSONL file or a folder of documents")
        path = Path(corpus_path).expanduser()
        if not path.exists():
            read_corpus(path)  # raises the CorpusError that says what to fix
        self.corpus_path = path.resolve()
        self.index_path = Path(index_dir).expanduser().resolve() / corpus_fingerprint(
            self.corpus_path
        )
        t0 = time.monotonic()
        cached = (self.index_path / "meta.json").is_file()
        if not cached:  # say at once that a build is starting: loading the model takes seconds
            index_progress.report(self.index_path, "loading_model", corpus=str(self.corpus_path))
        self._embedder = embedder
        if embedder is None and cached:
            # the query embedder is needed at the first search, not to load the index: it loads
            # (torch, transformers: seconds) on the warm-up thread while the run plans
            warm("the embedding model", lambda: get_embedder().load())
        try:
            self.built = not self._try_load()
            if self.built:
                self._build()
            else:
                self._prune_superseded()
        except BaseException as exc:
            index_progress.report(
                self.index_path, "failed", corpus=str(self.corpus_path), error=str(exc)[:300]
            )
            raise
        index_progress.report(
            self.index_path,
            "ready",
            done=len(self.docs),
            total=len(self.docs),
            corpus=str(self.corpus_path),
        )
        self.open_s = time.monotonic() - t0
        log.info(
            "local index %s: %d docs %s in %.1f s",
            self.index_path.name,
            len(self.docs),
            "built" if self.built else "loaded",
            self.open_s,
        )

    # ------------------------------------------------------------ index build / load
    def _build(self) -> None:

        loaded = read_corpus(self.corpus_path)
        self.docs: list[Document] = loaded.documents
        self.skipped = loaded.skipped
        bm25 = bm25s.BM25(k1=1.5, b=0.75, method="lucene")
        bm25.index(
            bm25s.tokenize(
                [f"{d.title}\n{d.text}" for d in self.docs],
                stopwords="en",
                stemmer=_stemmer(),
                show_progress=False,
            ),
            show_progress=False,
        )
        self.bm25 = bm25
        self.embeddings = self._embed_docs()
        self._prepare()
        index_progress.report(self.index_path, "writing", done=len(self.docs), total=len(self.docs))
        tmp = self.index_path.with_name(f".{self.index_path.name}.{uuid.uuid4().hex[:8]}.tmp")
        try:
            tmp.mkdir(parents=True)
            bm25.save(str(tmp / "bm25"), show_progress=False)
            np.save(tmp / "embeddings.npy", self.embeddings)
            with (tmp / "docs.jsonl").open("w", encoding="utf-8") as fh:
                for d in self.docs:
                    fh.write(
                        json.dumps(
                            {
                                "id": d.id,
                                "title": d.title,
                                "url": d.url,
                                "text": d.text,
                                "source": d.source,
                                "published": d.published,
                            }
                        )
                        + "\n"
                    )
            (tmp / "meta.json").write_text(
                json.dumps(
                    {
                        "version": INDEX_VERSION,
                        "model": MODEL_NAME,
                        "corpus": str(self.corpus_path),
                        "docs": len(self.docs),
                        "skipped": self.skipped,
                        "created": time.time(),
                    }
                )
            )
            if self.index_path.exists():  # unloadable leftovers (we just failed to load them)
                shutil.rmtree(self.index_path, ignore_errors=True)
            os.replace(tmp, self.index_path)  # atomic; fails if another builder won the race
            self._prune_superseded()
        except OSError as exc:
            log.warning("index not cached at %s (%s)", self.index_path, exc)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def _prune_superseded(self) -> None:
        """Delete the other index folders of this corpus path under ``index_dir`` (after a build
        or a load): built from an earlier state of the corpus (its mtime/size changed) or by an
        earlier ``INDEX_VERSION``; nothing can load them any more, and each holds a copy of the
        corpus (tens of MB for the shared one). Folders of other corpora are never touched."""
        for meta_file in self.index_path.parent.glob("*/meta.json"):
            folder = meta_file.parent
            if folder == self.index_path:
                continue
            try:
                if json.loads(meta_file.read_text()).get("corpus") != str(self.corpus_path):
                    continue
            except (OSError, ValueError, AttributeError):
                continue
            shutil.rmtree(folder, ignore_errors=True)
            log.info("removed superseded index %s of %s", folder.name, self.corpus_path)

    def _embed_docs(self) -> np.ndarray:
        """Dense vectors of every document, ``(n_docs, dim)`` float32, embedded ``EMBED_CHUNK``
        documents at a time with a progress report after each chunk (CLI bar, run events)."""
        texts = [_dense_text(d) for d in self.docs]
        total = len(texts)
        parts = []
        index_progress.report(self.index_path, "embedding", done=0, total=total)
        for start in range(0, total, EMBED_CHUNK):
            parts.append(
                self.embedder.encode(texts[start : start + EMBED_CHUNK], max_tokens=DOC_TOKENS)
            )
            index_progress.report(
                self.index_path, "embedding", done=min(total, start + EMBED_CHUNK), total=total
            )
        return (
            np.concatenate(parts) if parts else np.zeros((0, self.embedder.dim), dtype=np.float32)
        )

    def _try_load(self) -> bool:

        meta_file = self.index_path / "meta.json"
        try:
            meta = json.loads(meta_file.read_text())
            if meta.get("version") != INDEX_VERSION or meta.get("model") != MODEL_NAME:
                return False
            with (self.index_path / "docs.jsonl").open(encoding="utf-8") as fh:
                rows = [json.loads(line) for line in fh]
            if rows and "published" not in rows[0]:
                rows = self._with_dates(rows)
            self.docs = [Document(**row) for row in rows]
            self.embeddings = np.load(self.index_path / "embeddings.npy")
            self.bm25 = bm25s.BM25.load(str(self.index_path / "bm25"), show_progress=False)
        except (OSError, ValueError, TypeError, KeyError) as exc:
            if meta_file.exists():
                log.warning("ignoring broken index cache %s: %s", self.index_path, exc)
            return False
        if len(self.docs) != meta["docs"] or self.embeddings.shape != (len(self.docs), DIM):
            return False
        self.skipped = int(meta.get("skipped", 0))
        self._prepare()
        return True

    def _with_dates(self, rows: list[dict]) -> list[dict]:
        """Rows of a cache written before documents kept their date: dates from the corpus
        itself (one read of the file, no re-embedding); rows unchanged if it cannot be read."""
        try:
            dated = {d.id: d.published for d in read_corpus(self.corpus_path).documents}
        except (OSError, CorpusError):
            return rows
        return [{**row, "published": dated.get(str(row.get("id")))} for row in rows]

    @property
    def dated(self) -> bool:
        """True when at least one document carries a date (the ``--since`` window applies)."""
        return any(d.published for d in self.docs)

    def _prepare(self) -> None:
        """Per-term IDF for snippet scoring, from the BM25 index's document frequencies."""
        df = np.diff(np.asarray(self.bm25.scores["indptr"]))
        n = len(self.docs)
        idf = np.log(1.0 + (n - df + 0.5) / (df + 0.5))
        self._idf = {tok: float(idf[i]) for tok, i in self.bm25.vocab_dict.items() if i < len(idf)}

    # ------------------------------------------------------------ search
    def bm25_scores(self, query_tokens: list[str]) -> np.ndarray:
        """BM25 score of every document for stemmed ``query_tokens``; shape ``(n_docs,)``."""
        ids = self.bm25.get_tokens_ids(query_tokens)
        if not ids:
            return np.zeros(len(self.docs), dtype=np.float32)
        return np.asarray(self.bm25.get_scores_from_ids(ids), dtype=np.float32)

    def prime(self, queries: list[str]) -> None:
        """Embed the query vectors of searches about to run in one batch, so that each search
        finds its vector ready (the embedder's memory and the shared vector cache keep them; a
        vector does not depend on its batch, so the results are those of unprimed searches).
        Does nothing with the vector cache off (``RESEARCH_VECTOR_CACHE=0``): nothing would keep
        them."""
        texts = [" ".join(q.split()) for q in queries if isinstance(q, str) and q.strip()]
        if texts and load_settings().vector_cache:
            self.embedder.encode(list(dict.fromkeys(texts)))

    def dense_scores(self, query: str) -> np.ndarray:
        """Cosine similarity of every document to ``query``; shape ``(n_docs,)``."""
        return self.embeddings @ self.embedder.encode_one(query)

    def rank(self, query: str, k: int) -> list[tuple[int, float]]:
        """Top ``k`` ``(doc index, fused score in [0, 1])`` pairs, best first.

        Each list's top ``CANDIDATES`` are pooled; on the pool each score is min-max scaled to
        [0, 1] and fused as ``ALPHA·dense + (1-ALPHA)·bm25`` (Bruch et al. 2023, convex
        combination). Cost: two ``argpartition`` over ``n_docs`` (well under 1 ms for 3k).
        """
        bm = self.bm25_scores(_tokens([query])[0])
        dense = self.dense_scores(query)
        pool = np.union1d(_top(bm, CANDIDATES), _top(dense, CANDIDATES))
        fused = ALPHA * _minmax(dense[pool]) + (1.0 - ALPHA) * _minmax(bm[pool])
        order = np.argsort(-fused, kind="stable")[:k]
        return [(int(pool[j]), float(fused[j])) for j in order]

    def search(self, query: str, k: int = 5) -> list[SearchResult]:
        """Up to ``k`` results, best first, with query-relevant ``snippets``.

        Raises:
            InputError: ``query`` is empty or whitespace, or ``k < 1``.
        """
        if not isinstance(query, str) or not query.strip():
            raise InputError("search query is empty: type some words to search for")
        if not isinstance(k, int) or k < 1:
            raise InputError(f"k must be a positive integer, got {k!r}")
        query = " ".join(query.split())
        qtokens = set(_tokens([query])[0])
        out = []
        for i, score in self.rank(query, k):
            d = self.docs[i]
            out.append(
                SearchResult(
                    url=d.url,
                    title=d.title,
                    snippets=self.snippets(d, qtokens),
                    text=d.text,
                    source_type=source_type_for(d.source, d.url),
                    external_id=external_id_for(d.id),
                    doc_id=d.id,
                    published=d.published,
                    score=round(score, 6),
                    backend=self.name,
                    query=query,
                )
            )
        return out

    def snippets(self, doc: Document, qtokens: set[str]) -> list[str]:
        """Up to 3 passages of ``doc`` (1-3 sentences each, <= 600 chars in all), best first.

        Sentences are scored by the summed IDF of the query terms they contain; a passage
        shorter than 150 chars is extended with the following sentence. With no overlap the
        lead sentences are used. A first sentence that repeats the title is left out.
        """
        sents = [s.strip() for s in _SENTENCE.split(doc.text) if s and s.strip()][:400]
        title = doc.title.strip().rstrip(".").lower()
        if len(sents) > 1 and sents[0].rstrip(".").lower() == title:
            sents = sents[1:]  # the title is shown anyway (PubMed texts repeat it)
        if not sents:
            return []
        toks = _tokens(sents)
        scores = [sum(self._idf.get(t, 0.0) for t in qtokens & set(ts)) for ts in toks]
        order = sorted(range(len(sents)), key=lambda j: (-scores[j], j))
        if scores[order[0]] <= 0:
            order = list(range(len(sents)))
        used: set[int] = set()
        passages: list[str] = []
        budget = SNIPPET_BUDGET
        for j in order:
            if len(passages) == MAX_SNIPPETS or budget < 40:
                break
            if j in used:
                continue
            span = [j]
            while (
                len(span) < 3
                and sum(len(sents[x]) for x in span) < 150
                and span[-1] + 1 < len(sents)
                and span[-1] + 1 not in used
            ):
                span.append(span[-1] + 1)
            used.update(span)
            text = _truncate(" ".join(sents[x] for x in span), budget)
            passages.append(text)
            budget -= len(text)
        return passages


def _top(scores: np.ndarray, n: int) -> np.ndarray:
    """Indices of the ``n`` highest scores (unordered)."""
    if n >= len(scores):
        return np.arange(len(scores))
    return np.argpartition(-scores, n - 1)[:n]


def _minmax(x: np.ndarray) -> np.ndarray:
    """Scale to [0, 1]; a constant vector maps to zeros."""
    lo, hi = float(x.min()), float(x.max())
    return (x - lo) / (hi - lo) if hi > lo else np.zeros_like(x, dtype=np.float64)


def _dense_text(d: Document) -> str:
    text = d.text if d.text.startswith(d.title[:60]) else f"{d.title}. {d.text}"
    return text[:_DENSE_CHARS]


def _truncate(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text[: max(0, limit - 1)].rsplit(" ", 1)[0]
    return cut.rstrip(" ,;:") + "…"


# ---------------------------------------------------------------- process-wide cache
_CACHE: dict[tuple[str, str, str], LocalSearch] = {}
_CACHE_LOCK = threading.Lock()
_KEY_LOCKS: dict[tuple[str, str, str], threading.Lock] = {}


def get_local_search(corpus_path: str | Path, index_dir: str | Path) -> LocalSearch:
    """The process-wide ``LocalSearch`` for this corpus (built or loaded once per process).

    Thread-safe: concurrent callers for the same corpus wait for one build. A corpus whose
    file changed (new mtime/size) gets a fresh index.

    Raises:
        CorpusError: as ``LocalSearch``.
    """
    if corpus_path is None or not str(corpus_path).strip():
        raise CorpusError("no corpus path given: pass a JSONL file or a folder of documents")
    path = Path(corpus_path).expanduser()
    if not path.exists():
        read_corpus(path)
    path = path.resolve()
    key = (str(path), str(Path(index_dir).expanduser().resolve()), corpus_fingerprint(path))
    with _CACHE_LOCK:
        if key in _CACHE:
            return _CACHE[key]
        lock = _KEY_LOCKS.setdefault(key, threading.Lock())
    with lock:
        if key not in _CACHE:
            _CACHE[key] = LocalSearch(path, index_dir)
        return _CACHE[key]


def start_background_build(corpus_path: str | Path, index_dir: str | Path) -> threading.Thread:
    """Build (or load) the index of ``corpus_path`` in a daemon thread through
    ``get_local_search`` (the process-wide cache, so a run that needs the same index waits for
    this build instead of starting a second one). Errors are logged only. The dashboard calls it
    at server start for the default corpus; progress: ``research.search.index_progress``."""

    def build() -> None:
        try:
            get_local_search(corpus_path, index_dir)
        except Exception:
            log.exception("background indexing of %s failed", corpus_path)

    t = threading.Thread(target=build, name="index-warmup", daemon=True)
    t.start()
    return t
