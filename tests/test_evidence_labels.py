"""The evidence-judgement labelled set (bench/data/evidence_labels.jsonl): schema, balance, and
that it is exactly the seeded candidates joined with the hand judgements. No model is loaded."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from bench import evidence_bench, evidence_sample, question_judge_bench, question_judge_sample
from research.planning.syllabus import GENERAL_QUESTIONS, STORM_QUESTIONS

ROOT = Path(__file__).resolve().parents[1]
LABELS = ROOT / "bench" / "data" / "evidence_labels.jsonl"
FIELDS = {
    "id",
    "topic",
    "question_key",
    "label",
    "description",
    "passage",
    "doc_id",
    "answers",
    "note",
}
QUESTIONS = {**STORM_QUESTIONS, **GENERAL_QUESTIONS}
# questions whose answers the corpus barely holds (see evidence_labels.md): only negatives count
NO_POSITIVES_IN_CORPUS = {"market.status", "ip.patents"}


@pytest.fixture(scope="module")
def pairs() -> list[dict]:
    with LABELS.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


def test_every_pair_has_the_schema(pairs):
    assert len(pairs) >= 400
    for p in pairs:
        assert set(p) == FIELDS, p["id"]
        assert isinstance(p["answers"], bool)
        assert p["passage"].strip() and p["note"].strip() and p["doc_id"].strip()
        q = QUESTIONS[p["question_key"]]
        assert (p["label"], p["description"]) == (q["label"], q["description"])
        assert p["id"] == evidence_sample.pair_id(p["topic"], p["question_key"], p["passage"])
    assert len({p["id"] for p in pairs}) == len(pairs)


def test_topics_are_the_drug_run_and_freshwiki(pairs):
    topics = Counter(p["topic"] for p in pairs)
    assert evidence_sample.DRUG_TOPIC in topics
    fresh = [t for t in topics if t.startswith("FreshWiki: ")]
    assert 3 <= len(fresh) <= 4
    for p in pairs:
        keys = STORM_QUESTIONS if p["topic"] == evidence_sample.DRUG_TOPIC else GENERAL_QUESTIONS
        assert p["question_key"] in keys


def test_balance(pairs):
    pos = sum(p["answers"] for p in pairs)
    assert 0.25 <= pos / len(pairs) <= 0.45
    by_q = Counter((p["question_key"], p["answers"]) for p in pairs)
    for key in QUESTIONS:
        assert by_q[(key, False)] >= 15, key
        if key not in NO_POSITIVES_IN_CORPUS:
            assert by_q[(key, True)] >= 6, key


def test_notes_say_why(pairs):
    for p in pairs:
        tag = p["note"].split(":", 1)[0].split(";", 1)[0].strip()
        assert tag in ({"yes"} if p["answers"] else {"none", "other-q", "off-topic"}), p["id"]


def test_labels_are_the_candidates_joined_with_the_judgements(pairs):
    assert evidence_sample.build() == pairs


def test_calibration_split_is_deterministic_and_near_half(pairs):
    cal = [evidence_bench.is_calibration(p["id"]) for p in pairs]
    assert cal == [evidence_bench.is_calibration(p["id"]) for p in pairs]
    assert 0.4 <= sum(cal) / len(cal) <= 0.6


QJ_FIELDS = {
    "id",
    "qid",
    "kind",
    "question",
    "question_key",
    "label",
    "description",
    "passage",
    "doc_id",
    "grade",
    "score",
    "answers",
    "note",
}


@pytest.fixture(scope="module")
def question_pairs() -> list[dict]:
    with question_judge_sample.LABELS.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


def test_question_labels_are_the_candidates_joined_with_the_judgements(question_pairs):
    assert question_judge_sample.build() == question_pairs


def test_question_labels_span_the_bench_questions(question_pairs):
    assert 280 <= len(question_pairs) <= 400
    for p in question_pairs:
        assert set(p) == QJ_FIELDS, p["id"]
        assert isinstance(p["answers"], bool) and p["note"].strip()
        assert p["id"] == question_judge_sample.pair_id(p["qid"], p["question_key"], p["passage"])
        tag = p["note"].split(":", 1)[0].split(";", 1)[0].strip()
        assert tag in ({"yes"} if p["answers"] else {"none", "other-q", "off-topic"}), p["id"]
    assert len({p["id"] for p in question_pairs}) == len(question_pairs)
    qids = Counter(p["qid"] for p in question_pairs)
    cal = {q for q in qids if question_judge_bench.is_calibration(q)}
    assert len(cal) >= 12 and len(set(qids) - cal) >= 12
    kinds = {p["kind"] for p in question_pairs if not question_judge_bench.is_calibration(p["qid"])}
    assert len(kinds) >= 3
