"""Calibrate the citation audit's thresholds (research.followup.audit) on a labelled sample.

Sample (real, from ``shared/data/beir/scifact``; SciFact, Wadden et al. 2020): train claims whose
query metadata lists evidence abstracts with a SUPPORT or CONTRADICT label.
  * positive: (claim, abstract labelled SUPPORT);
  * negative "wrong source": the same claim with the abstract sharing the most content words with
    it among every other claim's evidence abstracts (a plausible but wrong citation);
  * contradict: (claim, abstract labelled CONTRADICT), reported separately.
The claims are shuffled with a fixed seed; the first half tunes (grid over W_COSINE and the two
thresholds), the second half reports precision/recall with the chosen values.

    python -m bench.audit_calibration [--n 300] [--out bench/results/audit_calibration.json]
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

import numpy as np

from research.followup.corpus import embed, passages
from research.text import content_words, split_sentences, word_key

SCIFACT = Path(__file__).resolve().parents[2] / "shared" / "data" / "beir" / "scifact"


def _keys(text: str) -> set[str]:
    return {k for w in content_words(text) if (k := word_key(w))}


def load_pairs(n: int, seed: int = 13) -> list[dict]:
    corpus = {}
    with (SCIFACT / "corpus.jsonl").open() as fh:
        for line in fh:
            d = json.loads(line)
            corpus[d["_id"]] = d
    claims = []
    with (SCIFACT / "queries.jsonl").open() as fh:
        for line in fh:
            q = json.loads(line)
            ev = q.get("metadata") or {}
            if ev:
                claims.append(
                    (
                        q["text"],
                        {doc: items[0]["label"] for doc, items in ev.items() if doc in corpus},
                    )
                )
    evidence_docs = sorted({d for _, ev in claims for d in ev})
    doc_keys = {d: _keys(corpus[d]["title"] + " " + corpus[d]["text"]) for d in evidence_docs}
    random.Random(seed).shuffle(claims)
    pairs = []
    n_pos = n_con = 0
    for claim, ev in claims:
        want = _keys(claim)
        for doc, label in ev.items():
            if label == "SUPPORT" and n_pos < n:
                pairs.append({"claim": claim, "doc": doc, "label": "supported"})
                wrong = max(
                    (d for d in evidence_docs if d not in ev),
                    key=lambda d: (len(want & doc_keys[d]), d),
                )
                pairs.append({"claim": claim, "doc": wrong, "label": "wrong_source"})
                n_pos += 1
            elif label == "CONTRADICT" and n_con < n // 2:
                pairs.append({"claim": claim, "doc": doc, "label": "contradict"})
                n_con += 1
    order = {c: i for i, c in enumerate(dict.fromkeys(p["claim"] for p in pairs))}
    for p in pairs:
        p["half"] = (
            "tune" if order[p["claim"]] % 2 == 0 else "test"
        )  # a claim's pairs stay together
        d = corpus[p["doc"]]
        p["sentences"] = split_sentences(d["text"]) or [d["title"]]
    return pairs


def score_components(pairs: list[dict]) -> None:
    """Adds ``cos`` and ``ov`` arrays (per passage) to every pair."""
    cache: dict[str, tuple[np.ndarray, list[set[str]]]] = {}
    claims = sorted({p["claim"] for p in pairs})
    cvec = dict(zip(claims, embed(claims), strict=True))
    for p in pairs:
        if p["doc"] not in cache:
            texts = [t for t, _ in passages(p["sentences"])]
            cache[p["doc"]] = (embed(texts), [_keys(t) for t in texts])
        vecs, keys = cache[p["doc"]]
        want = _keys(p["claim"])
        p["cos"] = np.clip(vecs @ cvec[p["claim"]], 0, 1)
        p["ov"] = np.array([len(want & k) / len(want) if want else 0.0 for k in keys])


def best(p: dict, w: float) -> float:
    return float(np.max(w * p["cos"] + (1 - w) * p["ov"]))


def metrics(pairs: list[dict], w: float, sup: float, weak: float) -> dict:
    pos = [best(p, w) for p in pairs if p["label"] == "supported"]
    neg = [best(p, w) for p in pairs if p["label"] == "wrong_source"]
    con = [best(p, w) for p in pairs if p["label"] == "contradict"]
    tp = sum(s >= sup for s in pos)
    fp = sum(s >= sup for s in neg)
    un_true = sum(s < weak for s in neg)
    un_false = sum(s < weak for s in pos)
    return {
        "supported_precision": round(tp / (tp + fp), 3) if tp + fp else None,
        "supported_recall": round(tp / len(pos), 3) if pos else None,
        "unsupported_precision": round(un_true / (un_true + un_false), 3)
        if un_true + un_false
        else None,
        "wrong_source_flagged": round(sum(s < sup for s in neg) / len(neg), 3) if neg else None,
        "positives_weak_or_worse": round(sum(s < sup for s in pos) / len(pos), 3) if pos else None,
        "contradict_called_supported": round(sum(s >= sup for s in con) / len(con), 3)
        if con
        else None,
        "n_pos": len(pos),
        "n_neg": len(neg),
        "n_contradict": len(con),
    }


def tune(pairs: list[dict]) -> tuple[float, float, float]:
    """Max supported recall subject to supported precision >= 0.95, then the WEAK threshold with
    unsupported precision >= 0.9 and the most negatives below it."""
    best_cfg, best_key = (0.6, 0.6, 0.45), (-1.0,)
    for w in np.arange(0.0, 1.01, 0.1):
        for sup in np.arange(0.30, 0.95, 0.01):
            m = metrics(pairs, w, sup, sup)
            if (m["supported_precision"] or 0) >= 0.95 and m["supported_recall"] > best_key[0]:
                best_key, best_cfg = (
                    (m["supported_recall"],),
                    (round(float(w), 2), round(float(sup), 2), 0.0),
                )
    w, sup, _ = best_cfg
    weak = sup
    for t in np.arange(sup, 0.1, -0.01):
        m = metrics(pairs, w, sup, t)
        if (m["unsupported_precision"] or 0) >= 0.9:
            weak = round(float(t), 2)
            break
    return w, sup, weak


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=300)
    ap.add_argument(
        "--out", default=str(Path(__file__).resolve().parent / "results" / "audit_calibration.json")
    )
    args = ap.parse_args()
    pairs = load_pairs(args.n)
    score_components(pairs)
    tune_set = [p for p in pairs if p["half"] == "tune"]
    test_set = [p for p in pairs if p["half"] == "test"]
    w, sup, weak = tune(tune_set)
    out = {
        "W_COSINE": w,
        "SUPPORTED": sup,
        "WEAK": weak,
        "tune": metrics(tune_set, w, sup, weak),
        "test": metrics(test_set, w, sup, weak),
        "all": metrics(pairs, w, sup, weak),
    }
    Path(args.out).write_text(json.dumps(out, indent=2))
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
