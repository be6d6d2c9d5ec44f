"""Item 5 — local search: index build, query latency, and retrieval quality on BEIR.

* Build: ``LocalSearch`` over the shared corpus into a fresh temp index dir; baseline = the
  unavoidable part, embedding the same documents' dense texts (``Embedder.encode``), timed on a
  seeded sample of ``embed_sample`` documents and scaled linearly to the corpus.
* Latency: ``LocalSearch.search(q, k=5)`` (hybrid rank + snippets) over ``n_queries`` titles
  sampled (seed 8) from the corpus; baseline = embedding the query alone (``encode_one``).
* Quality: nDCG@10 and Recall@100 on the shared BEIR test halves (SciFact, NFCorpus) for BM25
  alone, dense alone and the hybrid, scored with the functions ``LocalSearch`` itself uses
  (``bm25_scores`` / ``dense_scores`` / ``rank``). BEIR corpora are converted once to
  ``.cache/bench/beir-<name>.jsonl`` and indexed under ``.cache/bench/indexes`` (fingerprinted
  by path, mtime, size), so later runs reuse the index; the build is timed on the shared corpus.
"""

from __future__ import annotations

import json
import random
import shutil
import tempfile
import time
from pathlib import Path

from bench.common import Figure, percentile
from bench.metrics import retrieval_scores
from research.search.corpus import read_corpus
from research.search.embeddings import get_embedder
from research.search.local import DOC_TOKENS, LocalSearch, _dense_text, _tokens, _top

REPO = Path(__file__).resolve().parents[1]
CACHE = REPO / ".cache" / "bench"


def beir_jsonl(dataset_dir: Path) -> Path:
    """The BEIR corpus of ``dataset_dir`` as a project JSONL (``id,title,url,text,source``), cached."""
    out = CACHE / f"beir-{dataset_dir.name}.jsonl"
    if out.is_file():
        return out
    CACHE.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    with (
        (dataset_dir / "corpus.jsonl").open(encoding="utf-8") as src,
        tmp.open("w", encoding="utf-8") as dst,
    ):
        for line in src:
            d = json.loads(line)
            text = (d.get("text") or "").strip() or (d.get("title") or "").strip() or d["_id"]
            dst.write(
                json.dumps(
                    {
                        "id": d["_id"],
                        "title": d.get("title") or "",
                        "text": text,
                        "url": f"beir://{dataset_dir.name}/{d['_id']}",
                        "source": "beir",
                    }
                )
                + "\n"
            )
    tmp.replace(out)
    return out


def load_beir(dataset_dir: Path, split: str = "test", limit: int | None = None):
    """``(queries {qid: text}, qrels {qid: {doc_id: rel}})`` of one split (CRLF-safe)."""
    qrels: dict[str, dict[str, int]] = {}
    with (dataset_dir / "qrels" / f"{split}.tsv").open(encoding="utf-8") as fh:
        next(fh)
        for line in fh:
            parts = line.rstrip("\r\n").split("\t")
            if len(parts) == 3:
                qrels.setdefault(parts[0], {})[parts[1]] = int(parts[2])
    queries = {}
    with (dataset_dir / "queries.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            q = json.loads(line)
            if q["_id"] in qrels:
                queries[q["_id"]] = q["text"]  # never the metadata (SciFact's holds the answer)
    ids = sorted(queries)
    if limit:
        ids = sorted(random.Random(8).sample(ids, min(limit, len(ids))))
    return {q: queries[q] for q in ids}, {q: qrels[q] for q in ids}


def beir_quality(dataset_dir: Path, limit: int | None = None) -> dict[str, dict]:
    """``{"bm25"|"dense"|"hybrid": {"ndcg@10", "recall@100", "queries"}}`` on the test split."""

    ls = LocalSearch(beir_jsonl(dataset_dir), CACHE / "indexes")
    queries, qrels = load_beir(dataset_dir, limit=limit)
    ids = [d.id for d in ls.docs]
    runs: dict[str, dict] = {"bm25": {}, "dense": {}, "hybrid": {}}
    for qid, text in queries.items():
        text = " ".join(text.split())
        bm = ls.bm25_scores(_tokens([text])[0])
        dense = ls.dense_scores(text)
        for name, scores in (("bm25", bm), ("dense", dense)):
            top = _top(scores, 100)
            runs[name][qid] = {ids[i]: float(scores[i]) for i in top}
        ranked = ls.rank(text, 100)
        # scores from rank order (ties in fused score are broken by rank() itself)
        runs["hybrid"][qid] = {ids[i]: float(len(ranked) - j) for j, (i, _) in enumerate(ranked)}
    return {name: retrieval_scores(qrels, run) for name, run in runs.items()}


def build_and_latency(
    corpus: Path, n_queries: int = 100, max_docs: int | None = None, embed_sample: int = 400
) -> list[Figure]:
    """Index build time (fresh temp dir) and query p50/p95 on ``corpus``; ``max_docs`` slices it."""

    emb = get_embedder()
    tmp = Path(tempfile.mkdtemp(prefix="bench-index-"))
    try:
        src = corpus
        if max_docs:
            src = tmp / "slice.jsonl"
            with corpus.open(encoding="utf-8") as fh, src.open("w", encoding="utf-8") as out:
                for i, line in enumerate(fh):
                    if i >= max_docs:
                        break
                    out.write(line)
        docs = read_corpus(src).documents
        t0 = time.perf_counter()
        ls = LocalSearch(src, tmp / "idx", embedder=emb)
        build_s = time.perf_counter() - t0
        # baseline: embedding the same docs' dense texts; on at most `embed_sample` docs (seed 8),
        # scaled linearly to the whole corpus, so the big build is not paid twice
        sample = docs if len(docs) <= embed_sample else random.Random(8).sample(docs, embed_sample)
        t0 = time.perf_counter()
        emb.encode([_dense_text(d) for d in sample], max_tokens=DOC_TOKENS)
        embed_s = (time.perf_counter() - t0) * len(docs) / len(sample)
        titles = [
            d.title
            for d in random.Random(8).sample(docs, min(n_queries, len(docs)))
            if d.title.strip()
        ]
        for q in titles[:5]:
            ls.search(q, k=5)
        lat, enc = [], []
        for q in titles:
            t0 = time.perf_counter()
            ls.search(q, k=5)
            lat.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            emb.encode_one(q)
            enc.append(time.perf_counter() - t0)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    label = f"{len(docs):,} docs" + (" (slice)" if max_docs else "")
    ms = 1000.0
    return [
        Figure(
            5,
            f"search.index build ({label})",
            build_s,
            "s",
            baseline=embed_s,
            baseline_label="embedding the docs alone"
            + (" (est.)" if len(docs) > embed_sample else ""),
            note=f"fresh temp index dir, {emb.precision}; ratio = overhead of BM25 + caching over embedding",
        ),
        Figure(
            5,
            "search.query p50 (search k=5)",
            percentile(lat, 50) * ms,
            "ms",
            baseline=percentile(enc, 50) * ms,
            baseline_label="query embedding p50",
        ),
        Figure(
            5,
            "search.query p95 (search k=5)",
            percentile(lat, 95) * ms,
            "ms",
            baseline=percentile(enc, 95) * ms,
            baseline_label="query embedding p95",
            note=f"{len(lat)} corpus titles as queries (seed 8)",
        ),
    ]


def quality_figures(
    beir_root: Path, datasets: tuple[str, ...] = ("scifact", "nfcorpus"), limit: int | None = None
) -> list[Figure]:
    """Item-5 quality rows: per dataset, hybrid ÷ max(BM25, dense) for nDCG@10 and Recall@100."""
    figs: list[Figure] = []
    for name in datasets:
        d = beir_root / name
        if not (d / "corpus.jsonl").is_file():
            continue
        q = beir_quality(d, limit=limit)
        nq = q["hybrid"]["queries"]
        for metric in ("ndcg@10", "recall@100"):
            b, dn, h = q["bm25"][metric], q["dense"][metric], q["hybrid"][metric]
            best = max(b, dn)
            figs.append(
                Figure(
                    5,
                    f"search.{name} {metric} hybrid ÷ best single",
                    h,
                    "",
                    baseline=best,
                    baseline_label=f"BM25 {b:.3f} / dense {dn:.3f}",
                    target="> 1",
                    note=f"{nq} test queries (shared half)" if metric == "ndcg@10" else "",
                    extra={"bm25": b, "dense": dn, "hybrid": h, "queries": nq},
                )
            )
    return figs
