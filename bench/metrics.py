"""Metric functions used by the benchmarks (pinned by tests/test_bench_metrics.py).

* ``soft_cardinality`` / ``heading_soft_recall``: STORM's outline metric (Shao et al., NAACL
  2024, §5 "Evaluation" / Table 2 "Heading Soft Recall"; eval code ``eval/metrics.py`` on the
  ``NAACL-2024-code-backup`` branch), after Fränti & Mariescu-Istodor 2023 (soft cardinality,
  Pattern Recognition Letters): ``card(S) = Σ_i 1 / Σ_j sim(i, j)`` with ``sim`` the cosine of
  sentence embeddings; recall ``= (card(G) + card(P) − card(G ∪ P)) / card(G)``. STORM encodes with
  paraphrase-MiniLM-L6-v2; we use the project's all-MiniLM-L6-v2 (the only model shipped).
* ``retrieval_scores``: nDCG@k and Recall@k through ``pytrec_eval`` (the trec_eval measures
  ``ndcg_cut`` and ``recall``; graded relevance, gain = rel, log2 discount).
* ``critical_path_s``: the longest chain of dependent LLM calls (rule documented there).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence

import numpy as np


def soft_cardinality(vectors: np.ndarray) -> float:
    """Soft cardinality of a set given its embeddings ``(n, d)``: ``Σ_i 1 / Σ_j cos(i, j)``.

    Identical items count once together; orthogonal items count once each. 0.0 for an empty set.
    Rows need not be normalised.
    """
    v = np.asarray(vectors, dtype=np.float64)
    if v.size == 0:
        return 0.0
    v = v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)
    sim = v @ v.T
    return float((1.0 / sim.sum(axis=1)).sum())


def heading_soft_recall(
    golden: Sequence[str], predicted: Sequence[str], encode: Callable[[list[str]], np.ndarray]
) -> float:
    """STORM's heading soft recall of ``predicted`` headings against ``golden`` ones.

    Both are de-duplicated as sets first (as STORM does). ``encode(list[str]) -> (n, d)``.
    Returns a value in about [0, 1]; 0.0 when ``predicted`` is empty.

    Raises:
        ValueError: ``golden`` is empty (recall is undefined).
    """
    g, p = sorted(set(golden)), sorted(set(predicted))
    if not g:
        raise ValueError("heading_soft_recall needs at least one golden heading")
    if not p:
        return 0.0
    union = sorted(set(g) | set(p))
    vecs = encode(union)
    idx = {h: i for i, h in enumerate(union)}

    def card(items):
        return soft_cardinality(vecs[[idx[h] for h in items]])

    card_g = card(g)
    return (card_g + card(p) - card(union)) / card_g


def retrieval_scores(
    qrels: Mapping[str, Mapping[str, int]],
    run: Mapping[str, Mapping[str, float]],
    ndcg_k: int = 10,
    recall_k: int = 100,
) -> dict[str, float]:
    """Mean nDCG@ndcg_k and Recall@recall_k over the queries of ``qrels`` (trec_eval via pytrec_eval).

    Args:
        qrels: ``{query_id: {doc_id: relevance >= 0}}``.
        run: ``{query_id: {doc_id: score}}`` (higher = better); queries missing from ``run``
            score 0 (as trec_eval's ``-c`` would).

    Returns:
        ``{"ndcg@10": float, "recall@100": float, "queries": int}`` (keys follow ndcg_k/recall_k).
    """
    import pytrec_eval  # noqa: PLC0415 - the bench extra (make bench installs it)

    m_ndcg, m_rec = f"ndcg_cut_{ndcg_k}", f"recall_{recall_k}"
    ev = pytrec_eval.RelevanceEvaluator(
        {q: dict(d) for q, d in qrels.items()}, {f"ndcg_cut.{ndcg_k}", f"recall.{recall_k}"}
    )
    per = ev.evaluate({q: {d: float(s) for d, s in docs.items()} for q, docs in run.items()})
    judged = [q for q, d in qrels.items() if any(v > 0 for v in d.values())]
    n = max(1, len(judged))
    return {
        f"ndcg@{ndcg_k}": sum(per.get(q, {}).get(m_ndcg, 0.0) for q in judged) / n,
        f"recall@{recall_k}": sum(per.get(q, {}).get(m_rec, 0.0) for q in judged) / n,
        "queries": len(judged),
    }


def critical_path_s(
    calls: Iterable[Mapping], phase_key: str = "phase", lane_key: str = "lane"
) -> float:
    """Critical path (s) of a run from its LLM call log.

    Rule (documented choice): a run's phases are sequential (STORM: plan → survey → personas →
    conversations → analysis → outline → writing), so the path is the sum over phases; inside a
    phase, calls in the same lane (one perspective's conversation, one section) depend on each
    other and run one after another, while different lanes are independent. So

        critical = Σ_phase max_lane Σ_{call in lane} (end − start)

    Calls with no lane form a lane of their own per phase (all sequential). Each call is a
    mapping with ``start`` and ``end`` (s, any epoch), ``phase_key`` and optional ``lane_key``.
    Returns 0.0 for no calls.
    """
    per: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for c in calls:
        dur = float(c["end"]) - float(c["start"])
        per[str(c.get(phase_key) or "")][str(c.get(lane_key) or "")] += max(0.0, dur)
    return float(sum(max(lanes.values()) for lanes in per.values()))
