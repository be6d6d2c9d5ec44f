"""Item 4 — embedding throughput: the project's embedder ÷ raw ``SentenceTransformer.encode``.

Texts: the first ``n`` sentences (≥ 20 characters) of the shared corpus, in file order. The
project embedder (``research.search.embeddings.get_embedder``) runs under bf16 autocast when the CPU has
native bfloat16, so the like-for-like baseline is a separately loaded ``SentenceTransformer`` on
the same weights encoding the same texts under the same autocast; plain float32
``SentenceTransformer.encode`` (its defaults: batch 32) is reported as a second baseline.
The project and like-for-like sides run ``rounds`` times each, alternating which goes first, and
the best time counts (the machine is shared); the fp32 baseline runs once, on the first
``fp32_n`` texts (it is the slowest pass and only informative).
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

from bench.common import Figure
from research.search.embeddings import get_embedder

_SENT = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9])")


def corpus_sentences(corpus: Path, n: int) -> list[str]:
    """The first ``n`` sentences of ``corpus`` (JSONL with ``text``), each ≥ 20 characters."""
    out: list[str] = []
    with corpus.open(encoding="utf-8") as fh:
        for line in fh:
            for s in _SENT.split(json.loads(line).get("text", "")):
                if len(s.strip()) >= 20:
                    out.append(s.strip())
                    if len(out) == n:
                        return out
    return out


def run(corpus: Path, n: int = 5000, rounds: int = 2, fp32_n: int = 1000) -> list[Figure]:
    """Measure; returns the item-4 figures (throughput in sentences/s)."""
    import torch  # noqa: PLC0415 - torch loads in seconds; only when embedding
    from sentence_transformers import SentenceTransformer  # noqa: PLC0415 - sentence-transformers pulls in torch; only when embedding

    texts = corpus_sentences(corpus, n)
    emb = get_embedder()
    raw = SentenceTransformer(str(emb.path), device="cpu")
    raw.eval()
    bf16 = emb.precision == "bf16"

    def project() -> None:
        emb.encode(texts)

    def raw_like() -> None:
        with torch.inference_mode(), torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            raw.encode(
                texts,
                batch_size=64,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )

    fp32_texts = texts[:fp32_n]

    def raw_fp32() -> None:
        raw.encode(fp32_texts, convert_to_numpy=True, show_progress_bar=False)

    emb.encode(texts[:64])
    raw.encode(texts[:64], show_progress_bar=False)
    best = {"project": float("inf"), "raw_like": float("inf"), "raw_fp32": float("inf")}
    pair = [("project", project), ("raw_like", raw_like)]
    for r in range(rounds):  # alternate the order so neither side always runs first
        for name, fn in (pair if r % 2 == 0 else pair[::-1]) + (
            [("raw_fp32", raw_fp32)] if r == 0 else []
        ):
            t0 = time.perf_counter()
            fn()
            best[name] = min(best[name], time.perf_counter() - t0)
    rate = {k: (len(fp32_texts) if k == "raw_fp32" else len(texts)) / v for k, v in best.items()}
    prec = emb.precision
    return [
        Figure(
            4,
            f"embeddings.project ÷ raw ST.encode ({prec}, same texts)",
            rate["project"],
            "sent/s",
            baseline=rate["raw_like"],
            baseline_label=f"raw ST {prec}, batch 64",
            target=">= 0.9",
            note=f"{len(texts):,} corpus sentences; best of {rounds} alternating rounds",
        ),
        Figure(
            4,
            "embeddings.project ÷ raw ST.encode (fp32 defaults)",
            rate["project"],
            "sent/s",
            baseline=rate["raw_fp32"],
            baseline_label="raw ST fp32, batch 32",
            note=f"info: the project's precision choice vs library defaults; fp32 side timed on the first "
            f"{len(fp32_texts):,} texts (rate in sentences/s)",
        ),
    ]
