"""Evidence judgement on the labelled set, and FreshWiki placement accuracy.

**Evidence judgement** (``judgement``): ``research.evidence.judge.evidence_score`` on the pairs of
``bench/data/evidence_labels.jsonl`` (built by ``bench/evidence_sample.py``; see
``bench/data/evidence_labels.md``). A pair is predicted "answers" when ``score >= bar``. Reported:
precision, recall and F1 at ``EVIDENCE_MIN`` (overall and per question), the precision/recall
curve over ``BARS``, and a calibration/test split (by ``sha1(id)``: even first byte →
calibration): the bar with the best calibration F1, and the test half's figures at that bar.
The judge is scored as the pipeline uses it: a pair whose source document fails the topic gate
(``research.evidence.passages.about_topic``: a search result about another drug never has its
passages judged) scores 0; ``judge_without_topic_gate`` is the bare score. The same for two
baselines scored with the same MiniLM vectors: (a) cosine of the passage to
``"<topic>: <label>"`` (the old section-fit notion; the topic's words dominate it) and (b) cosine
to ``"<label>: <description>"``.

**Placement accuracy** (``placement``): for each FreshWiki article, its top-level headings that
hold sentences (their own or their subsections') become questions (``label`` = heading,
``description`` = heading; no other words of the article), every sentence of the article is
scored against all of them with ``score_passages`` (topic = the article title) and placed under
the best-scoring heading; accuracy = share of sentences placed under their own heading. The
baseline places by cosine to ``"<title>: <heading>"``; chance = mean of 1 / headings.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

from bench.common import Figure, not_measured
from research.models import Question

LABELS = Path(__file__).resolve().parent / "data" / "evidence_labels.jsonl"
CORPUS = Path(__file__).resolve().parents[2] / "shared" / "data" / "corpus" / "docs.jsonl"
BARS = tuple(round(x, 2) for x in np.arange(0.05, 1.0, 0.05))
ITEM_JUDGE, ITEM_PLACE = 14, 15


def load_labels(path: Path = LABELS) -> list[dict]:
    """The labelled pairs (one dict per line of ``path``)."""
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def is_calibration(pair_id: str) -> bool:
    """Deterministic half split: the first byte of ``sha1(id)`` is even."""
    return hashlib.sha1(pair_id.encode()).digest()[0] % 2 == 0


def plain_topic(topic: str) -> str:
    """``"FreshWiki: X"`` → ``"X"`` (the run's topic as an analyst types it)."""
    return topic.split(": ", 1)[1] if topic.startswith("FreshWiki: ") else topic


def prf(pred: np.ndarray, gold: np.ndarray) -> dict:
    """Precision, recall, F1 and counts of boolean predictions against boolean gold labels.

    Precision is 1.0 when nothing is predicted positive (no false claim made); recall is None
    when gold has no positive.
    """
    tp = int(np.sum(pred & gold))
    fp = int(np.sum(pred & ~gold))
    fn = int(np.sum(~pred & gold))
    p = tp / (tp + fp) if tp + fp else 1.0
    r = tp / (tp + fn) if tp + fn else None
    f1 = 2 * p * r / (p + r) if r is not None and p + r else (0.0 if r is not None else None)
    return {"precision": p, "recall": r, "f1": f1, "tp": tp, "fp": fp, "fn": fn, "n": len(gold)}


def curve(scores: np.ndarray, gold: np.ndarray, bars=BARS) -> list[dict]:
    """``prf`` at each bar of ``bars`` (``score >= bar``)."""
    return [{"bar": b, **prf(scores >= b, gold)} for b in bars]


def best_bar(scores: np.ndarray, gold: np.ndarray, bars=BARS) -> float:
    """The bar with the highest F1 (ties: the higher bar, i.e. the stricter claim)."""
    rows = curve(scores, gold, bars)
    return max(rows, key=lambda r: ((r["f1"] or 0.0), r["bar"]))["bar"]


def _pair_questions(pairs: list[dict]) -> list[Question]:
    return [
        Question(
            key=p["question_key"], label=p["label"], description=p["description"], min_sources=1
        )
        for p in pairs
    ]


def score_pairs(pairs: list[dict], vectors) -> dict[str, np.ndarray]:
    """``{scorer name: scores (n_pairs,)}`` for the judge and the two cosine baselines."""
    from research.evidence.judge import score_passages  # noqa: PLC0415 - the item is optional

    passages = [p["passage"] for p in pairs]
    judge = np.zeros(len(pairs), dtype=float)
    groups: dict[tuple[str, str], list[int]] = defaultdict(list)
    for i, p in enumerate(pairs):
        groups[(p["topic"], p["question_key"])].append(i)
    for (topic, _key), idx in groups.items():
        q = _pair_questions([pairs[idx[0]]])
        m = np.asarray(
            score_passages(q, [passages[i] for i in idx], topic=plain_topic(topic), vectors=vectors)
        )
        judge[idx] = m[0]
    pv = vectors.encode(passages)
    topic_label = vectors.encode([f"{plain_topic(p['topic'])}: {p['label']}" for p in pairs])
    label_desc = vectors.encode([f"{p['label']}: {p['description']}" for p in pairs])
    gate = topic_gate(pairs)
    return {
        "judge": judge * gate,
        "cosine_topic_label": np.sum(pv * topic_label, axis=1),
        "cosine_label_description": np.sum(pv * label_desc, axis=1),
        "judge_without_topic_gate": judge,
    }


def topic_gate(pairs: list[dict]) -> np.ndarray:
    """1.0 where the pair's source document passes the pipeline's topic gate
    (``research.evidence.passages.about_topic`` on the corpus document's title and text, the
    test a search result must pass before its passages are judged), else 0.0; 1.0 for documents
    not in the shared corpus (SciFact abstracts)."""
    from research.evidence.passages import about_topic  # noqa: PLC0415 - the item is optional

    wanted = {p["doc_id"] for p in pairs}
    docs: dict[str, str] = {}
    with CORPUS.open(encoding="utf-8") as fh:
        for line in fh:
            d = json.loads(line)
            if d["id"] in wanted:
                docs[d["id"]] = f"{d['title']}\n{d['text']}"
    return np.array(
        [
            1.0
            if p["doc_id"] not in docs
            else float(about_topic(docs[p["doc_id"]], plain_topic(p["topic"])))
            for p in pairs
        ]
    )


def judgement_report(pairs: list[dict], scores: dict[str, np.ndarray], evidence_min: float) -> dict:
    """All figures of the judgement item as one JSON-able dict (see the module docstring)."""
    gold = np.array([bool(p["answers"]) for p in pairs])
    cal = np.array([is_calibration(p["id"]) for p in pairs])
    keys = sorted({p["question_key"] for p in pairs})
    out: dict = {"n_pairs": len(pairs), "n_calibration": int(cal.sum()), "scorers": {}}
    for name, s in scores.items():
        bar = best_bar(s[cal], gold[cal])
        row = {
            "curve_all": curve(s, gold),
            "calibrated_bar": bar,
            "calibration_at_bar": prf(s[cal] >= bar, gold[cal]),
            "test_at_bar": prf(s[~cal] >= bar, gold[~cal]),
        }
        on = np.array([not str(p.get("note", "")).startswith("off-topic") for p in pairs])
        row["all_at_bar_without_off_topic"] = prf(s[on] >= bar, gold[on])
        if name == "judge":
            row["without_off_topic_at_evidence_min"] = prf(s[on] >= evidence_min, gold[on])
            row["at_evidence_min"] = prf(s >= evidence_min, gold)
            row["test_at_evidence_min"] = prf(s[~cal] >= evidence_min, gold[~cal])
        per_q = {}
        for k in keys:
            m = np.array([p["question_key"] == k for p in pairs])
            b = evidence_min if name == "judge" else bar
            per_q[k] = prf(s[m] >= b, gold[m])
        row["per_question"] = per_q
        out["scorers"][name] = row
    return out


def run_judgement(vectors=None) -> tuple[list[Figure], dict]:
    """Figures for the evidence-judgement item and the full report (for the results JSON)."""
    try:
        from research.evidence.judge import EVIDENCE_MIN  # noqa: PLC0415 - the item is optional
    except ImportError as exc:
        return [not_measured(ITEM_JUDGE, "evidence.judge", f"no judge to measure: {exc}")], {}
    if vectors is None:
        from research.text.vectors import Vectors  # noqa: PLC0415 - loads torch

        vectors = Vectors()
    pairs = load_labels()
    t0 = time.perf_counter()
    scores = score_pairs(pairs, vectors)
    rep = judgement_report(pairs, scores, EVIDENCE_MIN)
    rep["seconds"] = round(time.perf_counter() - t0, 1)
    rep["evidence_min"] = EVIDENCE_MIN
    j, a, b = (
        rep["scorers"][k] for k in ("judge", "cosine_topic_label", "cosine_label_description")
    )
    n = f"{rep['n_pairs']} labelled pairs ({rep['n_calibration']} calibration)"
    figs = [
        Figure(
            ITEM_JUDGE,
            "evidence.f1_at_EVIDENCE_MIN",
            j["at_evidence_min"]["f1"],
            baseline=a["test_at_bar"]["f1"],
            baseline_label="cosine to 'topic: label', test half, its calibrated bar",
            note=f"{n}; precision {j['at_evidence_min']['precision']:.3f}, recall "
            f"{j['at_evidence_min']['recall']:.3f} at EVIDENCE_MIN={EVIDENCE_MIN}",
        ),
        Figure(
            ITEM_JUDGE,
            "evidence.test_f1_at_calibrated_bar",
            j["test_at_bar"]["f1"],
            baseline=a["test_at_bar"]["f1"],
            baseline_label="cosine to 'topic: label'",
            note=f"bar chosen on the calibration half: judge {j['calibrated_bar']}, "
            f"'topic: label' {a['calibrated_bar']}, 'label: description' {b['calibrated_bar']} "
            f"(test F1 {b['test_at_bar']['f1']:.3f}); test precision/recall judge "
            f"{j['test_at_bar']['precision']:.3f}/{j['test_at_bar']['recall']:.3f}",
        ),
        Figure(
            ITEM_JUDGE,
            "evidence.test_precision_at_calibrated_bar",
            j["test_at_bar"]["precision"],
            baseline=a["test_at_bar"]["precision"],
            baseline_label="cosine to 'topic: label'",
        ),
        Figure(
            ITEM_JUDGE,
            "evidence.test_recall_at_calibrated_bar",
            j["test_at_bar"]["recall"],
            baseline=a["test_at_bar"]["recall"],
            baseline_label="cosine to 'topic: label'",
        ),
    ]
    return figs, rep


def freshwiki_sections(path: Path) -> tuple[str, list[str], list[tuple[str, int]]]:
    """``(title, headings, [(sentence, heading index)])`` of one FreshWiki JSON article; only
    top-level sections that hold sentences (in themselves or their subsections) count."""
    doc = json.loads(path.read_text(encoding="utf-8"))

    def sentences(sec: dict) -> list[str]:
        own = [s["sentence"] for s in sec.get("section_content", []) if s.get("sentence")]
        return own + [x for sub in sec.get("subsections", []) for x in sentences(sub)]

    headings, sents = [], []
    for sec in doc.get("content", []):
        ss = [s for s in sentences(sec) if len(s.split()) >= 3]
        if ss:
            sents += [(s, len(headings)) for s in ss]
            headings.append(sec["section_title"])
    return doc.get("title", path.stem), headings, sents


def placement(json_dir: Path, vectors, limit: int | None = None) -> dict:
    """Placement accuracy of the judge and the ``"title: heading"`` baseline over the articles
    of ``json_dir`` (sorted by file name, first ``limit``); articles with < 2 headings skipped."""
    from research.evidence.judge import score_passages  # noqa: PLC0415 - the item is optional

    files = sorted(json_dir.glob("*.json"))[:limit]
    rows, t0 = [], time.perf_counter()
    for f in files:
        title, heads, sents = freshwiki_sections(f)
        if len(heads) < 2:
            continue
        qs = [
            Question(key=f"s{i}", label=h, description=h, min_sources=1)
            for i, h in enumerate(heads)
        ]
        texts = [s for s, _ in sents]
        gold = np.array([g for _, g in sents])
        m = np.asarray(score_passages(qs, texts, topic=title, vectors=vectors))
        base = vectors.encode(texts) @ vectors.encode([f"{title}: {h}" for h in heads]).T
        rows.append(
            {
                "topic": title,
                "headings": len(heads),
                "sentences": len(texts),
                "judge_correct": int(np.sum(m.argmax(axis=0) == gold)),
                "baseline_correct": int(np.sum(base.argmax(axis=1) == gold)),
                "majority_correct": int(np.bincount(gold).max()),
            }
        )
    n = sum(r["sentences"] for r in rows)
    return {
        "topics": len(rows),
        "sentences": n,
        "seconds": round(time.perf_counter() - t0, 1),
        "judge_accuracy": sum(r["judge_correct"] for r in rows) / n if n else None,
        "baseline_accuracy": sum(r["baseline_correct"] for r in rows) / n if n else None,
        "majority_accuracy": sum(r["majority_correct"] for r in rows) / n if n else None,
        "chance_accuracy": float(np.mean([1 / r["headings"] for r in rows])) if rows else None,
        "per_topic": rows,
    }


def run_placement(json_dir: Path, vectors=None, limit: int | None = None) -> tuple[list, dict]:
    """Figures for the placement-accuracy item and its report."""
    try:
        import research.evidence.judge  # noqa: F401, PLC0415 - the item is optional
    except ImportError as exc:
        return [not_measured(ITEM_PLACE, "placement.accuracy", f"no judge to measure: {exc}")], {}
    if vectors is None:
        from research.text.vectors import Vectors  # noqa: PLC0415 - loads torch

        vectors = Vectors()
    rep = placement(json_dir, vectors, limit)
    fig = Figure(
        ITEM_PLACE,
        "placement.accuracy_freshwiki",
        rep["judge_accuracy"],
        baseline=rep["baseline_accuracy"],
        baseline_label="cosine to 'title: heading'",
        note=f"{rep['sentences']} sentences of {rep['topics']} FreshWiki articles under their "
        f"top-level headings (label = description = heading); chance "
        f"{rep['chance_accuracy']:.3f}, always-largest-section {rep['majority_accuracy']:.3f}; "
        f"{rep['seconds']} s",
    )
    return [fig], rep
