"""Pins the benchmark metric functions (bench/metrics.py, bench/llm_bench.py) on hand-built cases."""

from __future__ import annotations

import math

import numpy as np
import pytest

from bench.llm_bench import critical_path_from_log
from bench.metrics import critical_path_s, heading_soft_recall, retrieval_scores, soft_cardinality


def _onehot(names: dict[str, list[float]]):
    """An encoder over fixed vectors: each heading maps to a given (unnormalised) vector."""
    return lambda items: np.array([names[h] for h in items], dtype=float)


def test_soft_cardinality_counts_identical_once_and_orthogonal_each():
    assert soft_cardinality(np.eye(3)) == pytest.approx(3.0)
    assert soft_cardinality(np.array([[1.0, 0.0], [2.0, 0.0]])) == pytest.approx(
        1.0
    )  # same direction
    # two vectors at cos = 0.5: each counts 1/(1+0.5)
    v = np.array([[1.0, 0.0], [0.5, math.sqrt(3) / 2]])
    assert soft_cardinality(v) == pytest.approx(2 / 1.5)
    assert soft_cardinality(np.zeros((0, 4))) == 0.0


def test_heading_soft_recall_exact_disjoint_and_partial():
    enc = _onehot(
        {
            "Background": [1, 0, 0],
            "Results": [0, 1, 0],
            "Reception": [0, 0, 1],
            "History": [1, 0, 0.0001],
        }
    )
    gold = ["Background", "Results"]
    assert heading_soft_recall(gold, gold, enc) == pytest.approx(1.0)
    assert heading_soft_recall(gold, ["Reception"], enc) == pytest.approx(0.0, abs=1e-9)
    assert heading_soft_recall(gold, ["Background"], enc) == pytest.approx(0.5)
    # a near-synonym (cos ≈ 1 with "Background") recovers that heading softly
    assert heading_soft_recall(gold, ["History"], enc) == pytest.approx(0.5, abs=1e-3)
    assert heading_soft_recall(gold, [], enc) == 0.0
    with pytest.raises(ValueError):
        heading_soft_recall([], ["Background"], enc)


def test_retrieval_scores_ndcg_and_recall_by_hand():
    qrels = {"q1": {"d1": 1, "d3": 2}, "q2": {"d9": 1}}
    run = {"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}, "q2": {"d5": 1.0}}
    # q1: DCG = 1/log2(2) + 2/log2(4) = 2; ideal = 2/1 + 1/log2(3)
    ndcg_q1 = 2.0 / (2.0 + 1.0 / math.log2(3))
    out = retrieval_scores(qrels, run, ndcg_k=10, recall_k=100)
    assert out["queries"] == 2
    assert out["ndcg@10"] == pytest.approx((ndcg_q1 + 0.0) / 2, abs=1e-4)
    assert out["recall@100"] == pytest.approx((1.0 + 0.0) / 2)
    # a query missing from the run scores 0, it is not dropped
    assert retrieval_scores(qrels, {"q1": run["q1"]})["ndcg@10"] == pytest.approx(
        ndcg_q1 / 2, abs=1e-4
    )


def test_critical_path_sums_phases_and_takes_the_longest_lane():
    calls = [
        {"phase": "plan", "start": 0.0, "end": 0.3},
        {"phase": "plan", "start": 0.3, "end": 0.6},  # sequential: 0.6
        {"phase": "conv.r1", "lane": "A", "start": 1.0, "end": 1.3},
        {"phase": "conv.r1", "lane": "A", "start": 1.3, "end": 1.6},
        {"phase": "conv.r1", "lane": "B", "start": 1.0, "end": 1.3},  # parallel: max(0.6, 0.3)
        {"phase": "write", "start": 2.0, "end": 2.5},
    ]
    assert critical_path_s(calls) == pytest.approx(0.6 + 0.6 + 0.5)
    assert critical_path_s([]) == 0.0


def test_annotate_lanes_splits_rounds_and_follows_the_thread():

    def call(step, start, persp=None):
        mat = f'{{"perspective": {{"name": "{persp}"}}}}' if persp else '{"results": []}'
        return {
            "phase": "conversations",
            "step": step,
            "start": start,
            "end": start + 0.3,
            "messages": [{"role": "user", "content": f"<material>{mat}</material>"}],
        }

    calls = [
        call("ask_question", 0.0, "A"),
        call("ask_question", 0.0, "B"),
        call("answer_question", 0.31),  # no perspective: joins a lane that just ended
        call("answer_question", 0.31),
        call("ask_question", 1.0, "A"),
        call("ask_question", 1.0, "B"),
    ]
    # round 1: A and B each ask + answer (0.6 in parallel); round 2: one ask each (0.3)
    assert critical_path_from_log(sorted(calls, key=lambda c: c["start"])) == pytest.approx(0.9)
