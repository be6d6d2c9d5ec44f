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
from collections.abc import Mapping
from pathlib import Path

import bm25s
import numpy as np

from bench.question_metrics import CitedSentence
from research.search.corpus import Document
from research.search.local import LocalSearch, _stemmer, _tokens, get_local_search
from research.text import split_sentences

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


def snippets(
    docs: Mapping[str, Document], question: str, ranked: list[str], budget: int
) -> list[CitedSentence]:
    """The result page of a plain search at a report's length: ``budget`` sentences of the
    ``ranked`` documents (corpus ids, best first, looked up in ``docs``: id → ``Document``),
    each citing its own document. Every
    document's sentences (``split_sentences`` of title and text) are ordered by BM25 against
    ``question`` (bm25s, Lucene variant, fitted on these sentences alone); one is taken from each
    document in rank order, round after round, until ``budget`` are taken or none is left —
    the snippets a search engine shows, as many as the report quotes."""
    per_doc: list[list[str]] = []
    for doc_id in ranked:
        d = docs.get(doc_id)
        per_doc.append(split_sentences(f"{d.title}.\n{d.text}") if d else [])
    flat = [(i, s) for i, sents in enumerate(per_doc) for s in sents]
    if not flat or budget <= 0:
        return []
    bm25 = bm25s.BM25(k1=1.5, b=0.75, method="lucene")
    bm25.index(
        bm25s.tokenize(
            [s for _, s in flat], stopwords="en", stemmer=_stemmer(), show_progress=False
        ),
        show_progress=False,
    )
    ids = bm25.get_tokens_ids(_tokens([question])[0])
    scores = np.asarray(bm25.get_scores_from_ids(ids)) if ids else np.zeros(len(flat))
    queues: list[list[str]] = [[] for _ in ranked]
    for j in np.argsort(-scores, kind="stable"):
        i, sentence = flat[int(j)]
        queues[i].append(sentence)
    out: list[CitedSentence] = []
    while len(out) < budget and any(queues):
        for i, queue in enumerate(queues):
            if queue and len(out) < budget:
                out.append(CitedSentence(text=queue.pop(0), docs=[ranked[i]]))
    return out


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
