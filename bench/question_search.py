"""Plain-search rankings of a question as typed: BM25 only, dense only, and the product's hybrid.

Used twice: to pool documents for relevance labelling (union of BM25 and dense top-40) and as
the anchors the question bench compares a report against (BM25 top-k and hybrid top-k at the
report's own k). All three come from the product's ``LocalSearch`` over the shared corpus, so
the anchor is exactly "what a plain search of the question would have cited".

``python -m bench.question_search "QUESTION" [--k 40]`` prints the pool with each document's
title and the start of its text, for a person to read and grade.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import numpy as np

from research.search.local import LocalSearch, _tokens, get_local_search

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
CORPUS = SHARED / "corpus" / "docs.jsonl"
POOL_K = 40


def open_search(corpus: Path = CORPUS) -> LocalSearch:
    """The process-wide ``LocalSearch`` of ``corpus``; index cache from ``RESEARCH_INDEX_DIR``
    (else ``.cache/bench/indexes`` under the repo, built on first use: ~1 min on 2 cores)."""
    default = Path(__file__).resolve().parents[1] / ".cache" / "bench" / "indexes"
    return get_local_search(corpus, os.environ.get("RESEARCH_INDEX_DIR") or default)


def bm25_top(search: LocalSearch, question: str, k: int) -> list[str]:
    """Corpus ids of the ``k`` best BM25 documents for ``question`` as typed, best first
    (documents scoring 0 — no query term — are left out, so the list may be shorter)."""
    scores = search.bm25_scores(_tokens([question])[0])
    order = np.argsort(-scores, kind="stable")[:k]
    return [search.docs[int(i)].id for i in order if scores[int(i)] > 0]


def dense_top(search: LocalSearch, question: str, k: int) -> list[str]:
    """Corpus ids of the ``k`` documents nearest to ``question`` by MiniLM cosine, best first."""
    order = np.argsort(-search.dense_scores(question), kind="stable")[:k]
    return [search.docs[int(i)].id for i in order]


def hybrid_top(search: LocalSearch, question: str, k: int) -> list[str]:
    """Corpus ids of the product's fused BM25 + dense top ``k`` (``LocalSearch.rank``)."""
    return [search.docs[i].id for i, _ in search.rank(" ".join(question.split()), k)]


def pool(search: LocalSearch, question: str, k: int = POOL_K) -> list[str]:
    """Union of BM25 top-``k`` and dense top-``k`` (ids; BM25 order first, then dense-only)."""
    return list(dict.fromkeys(bm25_top(search, question, k) + dense_top(search, question, k)))


def main(argv: list[str] | None = None) -> None:
    """Print the labelling pool of one question: rank lists, then id, title and text start."""
    ap = argparse.ArgumentParser(prog="python -m bench.question_search")
    ap.add_argument("question")
    ap.add_argument("--k", type=int, default=POOL_K)
    ap.add_argument("--chars", type=int, default=300, help="text characters shown per document")
    args = ap.parse_args(argv)
    search = open_search()
    by_id = {d.id: d for d in search.docs}
    bm, dn = bm25_top(search, args.question, args.k), dense_top(search, args.question, args.k)
    ids = list(dict.fromkeys(bm + dn))
    print(f"# {args.question}: pool {len(ids)} (bm25 {len(bm)}, dense {len(dn)})")
    for doc_id in ids:
        d = by_id[doc_id]
        tag = ("B" if doc_id in bm else "-") + ("D" if doc_id in dn else "-")
        text = " ".join(d.text.split())[: args.chars]
        print(f"[{tag}] {doc_id} | {d.title[:140]} | {text}")


if __name__ == "__main__":
    main()
