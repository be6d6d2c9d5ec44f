"""Evidence judgement per bench question, split by question (calibration c01–c12, test u01–u12).

The pairs are ``bench/data/question_judge_labels.jsonl`` (built by
``bench/question_judge_sample.py``; see ``bench/data/question_judge_labels.md``): (syllabus
question of the run's ``auto`` syllabus, passage of a corpus document graded for the bench
question) with a hand label "answers". Each pair is scored as a run scores it
(``question_judge_sample.pipeline_scores``: the gate of ``result_evidence``, then
``score_passages(fixed=True)``; a refused pair scores 0). Predicted "answers": ``score >= bar``.

Reported, with the test half = the questions of ``questions_unseen.jsonl``, never used to pick a
bar: precision, recall and F1 at ``EVIDENCE_MIN`` on the test questions (overall, per question,
mean per kind); the bar with the best F1 on the calibration questions and the test figures at
it. Baselines, scored with the same MiniLM vectors and their own bar calibrated the same way:
cosine of the passage to ``"<question>: <label>"`` and to ``"<label>: <description>"``.
"""

from __future__ import annotations

import time
from collections import defaultdict

import numpy as np

from bench import question_judge_sample as qs
from bench.common import Figure, not_measured
from bench.evidence_bench import best_bar, curve, load_labels, prf

ITEM = 23
NAME = "judge-questions"


def is_calibration(qid: str) -> bool:
    """Calibration questions are the ``c`` ones (``questions_calibration.jsonl``)."""
    return qid.startswith("c")


def asked_now(pairs: list[dict]) -> tuple[list[dict], int]:
    """``(pairs whose syllabus question the question's syllabus still asks, how many do not)``:
    a question framed as another kind since it was labelled (a condition's own sections instead
    of the general template's) no longer asks some labelled questions, and the judgement cannot
    be measured on a question the pipeline does not ask."""
    questions = {q["qid"]: q["question"] for q in qs.load_questions()}
    keys = {qid: {s.key for s in qs.syllabus_questions(q)} for qid, q in questions.items()}
    kept = [p for p in pairs if p["question_key"] in keys.get(p["qid"], set())]
    return kept, len(pairs) - len(kept)


def score_pairs(pairs: list[dict], vectors) -> dict[str, np.ndarray]:
    """``{scorer: scores (n_pairs,)}`` for the judge as the pipeline applies it and the two
    cosine baselines."""
    questions = {q["qid"]: q for q in qs.load_questions()}
    docs = qs.load_docs({p["doc_id"] for p in pairs})
    judge = np.zeros(len(pairs), dtype=float)
    groups: dict[tuple[str, str], list[int]] = defaultdict(list)
    for i, p in enumerate(pairs):
        groups[(p["qid"], p["doc_id"])].append(i)
    syllabi: dict[str, list] = {}
    for (qid, doc_id), idx in groups.items():
        q = questions[qid]["question"]
        syllabus = syllabi.setdefault(qid, qs.syllabus_questions(q))
        keys = [s.key for s in syllabus]
        texts = list(dict.fromkeys(pairs[i]["passage"] for i in idx))
        scored = dict(qs.pipeline_scores(q, syllabus, docs[doc_id], vectors, passages=texts))
        for i in idx:
            s = scored.get(pairs[i]["passage"])
            judge[i] = 0.0 if s is None else float(s[keys.index(pairs[i]["question_key"])])
    pv = vectors.encode([p["passage"] for p in pairs])
    q_label = vectors.encode([f"{p['question']}: {p['label']}" for p in pairs])
    label_desc = vectors.encode([f"{p['label']}: {p['description']}" for p in pairs])
    return {
        "judge": judge,
        "cosine_question_label": np.sum(pv * q_label, axis=1),
        "cosine_label_description": np.sum(pv * label_desc, axis=1),
    }


def report(pairs: list[dict], scores: dict[str, np.ndarray], evidence_min: float) -> dict:
    """All figures as one JSON-able dict (module docstring); per-question rows are keyed by qid."""
    gold = np.array([bool(p["answers"]) for p in pairs])
    cal = np.array([is_calibration(p["qid"]) for p in pairs])
    qids = sorted({p["qid"] for p in pairs})
    kind = {p["qid"]: p["kind"] for p in pairs}
    question = {p["qid"]: p["question"] for p in pairs}
    out: dict = {
        "n_pairs": len(pairs),
        "n_positive": int(gold.sum()),
        "n_calibration_pairs": int(cal.sum()),
        "calibration_questions": [q for q in qids if is_calibration(q)],
        "test_questions": [q for q in qids if not is_calibration(q)],
        "evidence_min": evidence_min,
        "scorers": {},
    }
    for name, s in scores.items():
        bar = best_bar(s[cal], gold[cal])
        row = {
            "calibrated_bar": bar,
            "calibration_at_bar": prf(s[cal] >= bar, gold[cal]),
            "test_at_bar": prf(s[~cal] >= bar, gold[~cal]),
            "test_curve": curve(s[~cal], gold[~cal]),
        }
        if name == "judge":
            row["test_at_evidence_min"] = prf(s[~cal] >= evidence_min, gold[~cal])
            row["calibration_at_evidence_min"] = prf(s[cal] >= evidence_min, gold[cal])
        per_q = {}
        for qid in qids:
            m = np.array([p["qid"] == qid for p in pairs])
            cell = {"kind": kind[qid], "question": question[qid], "positives": int(gold[m].sum())}
            cell["at_bar"] = prf(s[m] >= bar, gold[m])
            if name == "judge":
                cell["at_evidence_min"] = prf(s[m] >= evidence_min, gold[m])
            per_q[qid] = cell
        row["per_question"] = per_q
        row["test_kind_means"] = kind_means(
            per_q, "at_evidence_min" if name == "judge" else "at_bar"
        )
        out["scorers"][name] = row
    return out


def kind_means(per_q: dict, col: str) -> dict:
    """``kind → {precision, recall, f1, questions}``: means over the test questions of a kind
    (a question without gold positives adds to precision only)."""
    acc: dict[str, dict[str, list]] = defaultdict(lambda: defaultdict(list))
    for qid, cell in per_q.items():
        if is_calibration(qid):
            continue
        for k in ("precision", "recall", "f1"):
            if cell[col][k] is not None:
                acc[cell["kind"]][k].append(cell[col][k])
        acc[cell["kind"]]["questions"].append(qid)
    return {
        kind: {
            **{k: (float(np.mean(v[k])) if v[k] else None) for k in ("precision", "recall", "f1")},
            "questions": v["questions"],
        }
        for kind, v in sorted(acc.items())
    }


def run(vectors=None) -> tuple[list[Figure], dict]:
    """Figures of the item and the full report (for the results JSON)."""
    try:
        from research.evidence.judge import EVIDENCE_MIN  # noqa: PLC0415 - the item is optional
    except ImportError as exc:
        return [not_measured(ITEM, "judge_questions", f"no judge to measure: {exc}")], {}
    if vectors is None:
        from research.text.vectors import Vectors  # noqa: PLC0415 - loads torch

        vectors = Vectors()
    pairs, unasked = asked_now(load_labels(qs.LABELS))
    t0 = time.perf_counter()
    rep = report(pairs, score_pairs(pairs, vectors), EVIDENCE_MIN)
    rep["seconds"] = round(time.perf_counter() - t0, 1)
    rep["unasked_pairs"] = unasked
    j, a, b = (
        rep["scorers"][k] for k in ("judge", "cosine_question_label", "cosine_label_description")
    )
    at_min = j["test_at_evidence_min"]
    per_q = {q: c["at_evidence_min"] for q, c in j["per_question"].items() if not is_calibration(q)}
    worst = min(per_q, key=lambda q: per_q[q]["f1"] if per_q[q]["f1"] is not None else 2.0)
    n = (
        f"{rep['n_pairs']} pairs over {len(j['per_question'])} questions; test = "
        f"{len(rep['test_questions'])} unseen questions, {rep['n_pairs'] - rep['n_calibration_pairs']} pairs"
        + (
            f"; {unasked} pairs on questions the syllabus no longer asks left out"
            if unasked
            else ""
        )
    )
    base = "cosine to 'question: label', test questions, bar calibrated on c01–c12"
    return [
        Figure(
            ITEM,
            "judge_questions.test_f1_at_EVIDENCE_MIN",
            at_min["f1"],
            baseline=a["test_at_bar"]["f1"],
            baseline_label=base,
            target=">= 1.0",
            note=f"{n}; precision {at_min['precision']:.3f}, recall {at_min['recall']:.3f} at "
            f"EVIDENCE_MIN={EVIDENCE_MIN}; worst question {worst} F1 {per_q[worst]['f1']}",
        ),
        Figure(
            ITEM,
            "judge_questions.test_precision_at_EVIDENCE_MIN",
            at_min["precision"],
            baseline=a["test_at_bar"]["precision"],
            baseline_label=base,
            target=">= 1.0",
        ),
        Figure(
            ITEM,
            "judge_questions.test_recall_at_EVIDENCE_MIN",
            at_min["recall"],
            baseline=a["test_at_bar"]["recall"],
            baseline_label=base,
            target=">= 0.5",
            note="a judge may trade recall for precision, but not miss more than half as many "
            "answers as the baseline finds",
        ),
        Figure(
            ITEM,
            "judge_questions.test_f1_at_calibrated_bar",
            j["test_at_bar"]["f1"],
            baseline=a["test_at_bar"]["f1"],
            baseline_label=base,
            target=">= 1.0",
            note=f"bars chosen on c01–c12: judge {j['calibrated_bar']}, 'question: label' "
            f"{a['calibrated_bar']}, 'label: description' {b['calibrated_bar']} (test F1 "
            f"{b['test_at_bar']['f1']:.3f}); judge test precision/recall "
            f"{j['test_at_bar']['precision']:.3f}/{j['test_at_bar']['recall']:.3f}",
        ),
    ], rep
