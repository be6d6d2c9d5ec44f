"""Sample (syllabus question, passage) pairs over the bench's question sets, and build the set.

``python -m bench.question_judge_sample sample`` writes
``bench/data/question_judge_candidates.jsonl``; ``python -m bench.question_judge_sample build``
joins it with the hand judgements of ``bench/data/question_judge_judgements.tsv``
(``id<TAB>1|0<TAB>note``) and writes ``bench/data/question_judge_labels.jsonl``.

For every question of ``questions_calibration.jsonl`` and ``questions_unseen.jsonl`` the run's
syllabus is ``base_template("auto", question)`` (the syllabus an offline run keeps: fitting it
needs a language model). Its documents are the corpus documents graded ≥ 1 for the question plus
``GRADE0_DOCS`` graded 0 (seeded). Each document is gated and split as
``research.evidence.passages.result_evidence`` does (``pipeline_scores``) and every
(syllabus question, passage) pair is scored; a pair the gate refuses scores 0. Per question
``OVER`` pairs at or over ``EVIDENCE_MIN`` and ``UNDER`` under it are drawn (seeded, round-robin
over the syllabus keys so that each question's pairs spread over its syllabus), each stratum with
a share from grade-0 documents. See ``bench/data/question_judge_labels.md`` for the counts.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

from bench.evidence_sample import _load_jsonl, _write, read_judgements

SEED = 31
ROOT = Path(__file__).resolve().parent
DATA = ROOT / "data"
CORPUS = ROOT.parents[1] / "shared" / "data" / "corpus" / "docs.jsonl"
QUESTION_FILES = (DATA / "questions_calibration.jsonl", DATA / "questions_unseen.jsonl")
CANDIDATES = DATA / "question_judge_candidates.jsonl"
JUDGEMENTS = DATA / "question_judge_judgements.tsv"
LABELS = DATA / "question_judge_labels.jsonl"
GRADE0_DOCS = 6  # graded-0 documents scored per question (hard negatives: same search, no answer)
OVER, OVER_GRADE0 = 7, 1  # pairs at or over EVIDENCE_MIN, of which from grade-0 documents
UNDER, UNDER_GRADE0, UNDER_NEAR = 6, 2, 2  # under it; of which grade-0, and 0 < score < bar


def pair_id(qid: str, key: str, passage: str) -> str:
    """Stable id of a pair: ``ev-`` + the first 10 hex digits of sha1(qid|key|passage)."""
    return "ev-" + hashlib.sha1(f"{qid}|{key}|{passage}".encode()).hexdigest()[:10]


def load_questions() -> list[dict]:
    """The bench questions (calibration then unseen), one dict per question."""
    return [q for path in QUESTION_FILES for q in _load_jsonl(path)]


def load_docs(ids: set[str], path: Path = CORPUS) -> dict[str, dict]:
    """``id → corpus document`` for the ids wanted."""
    out = {}
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            d = json.loads(line)
            if d["id"] in ids:
                out[d["id"]] = d
    return out


def syllabus_questions(question: str) -> list:
    """The run's syllabus questions (``research.models.Question``) for ``question``."""
    from research.planning.syllabus import base_template  # noqa: PLC0415 - research is optional

    return list(base_template("auto", question).questions)


def pipeline_scores(
    question: str, syllabus: list, doc: dict, vectors, passages: list[str] | None = None
) -> list[tuple[str, np.ndarray]]:
    """``[(passage, scores (len(syllabus),))]`` of one corpus document as a run scores it.

    The document's passages (``passage_split.split_passages``; ``passages`` instead when given,
    e.g. the labelled ones) scored with ``score_passages(fixed=True)``; a score is 0 where the pipeline
    would never count it: the document fails the gate (framed question: ``about_question`` and
    not ``contradicts_setting``; else a close title or ``about_topic``), the passage does not
    name the topic's drug in a document whose title does not, an ``ON_BOTH_ARMS`` key in a source
    that does not ``compares`` or a passage with a ``third_arm``, a ``FOUND`` key of a registry
    record without results. Passages that repeat the title are left out, as the pipeline does.
    """
    # research is imported when the item runs, not when the bench starts
    from research.evidence import judge, passage_split  # noqa: PLC0415
    from research.evidence.passages import (  # noqa: PLC0415
        FOUND,
        TITLE_ON_TOPIC,
        about_topic,
        compares,
        registration_only,
        third_arm,
    )
    from research.models import SearchResult  # noqa: PLC0415
    from research.planning.question_roles import ON_BOTH_ARMS  # noqa: PLC0415
    from research.search.base import source_type_for  # noqa: PLC0415
    from research.text import norm_key, subject_of  # noqa: PLC0415
    from research.text.entities import drug_names  # noqa: PLC0415
    from research.text.frame import frame_question  # noqa: PLC0415
    from research.text.frame_match import about_question  # noqa: PLC0415
    from research.text.populations import contradicts_setting  # noqa: PLC0415

    r = SearchResult(
        url=doc.get("url", ""),
        title=doc.get("title", ""),
        text=doc["text"],
        source_type=source_type_for(doc.get("source", ""), doc.get("url", "")),
    )
    whole = f"{r.title}\n{r.text}"
    frame = frame_question(question)
    head = judge.fixed_encode(vectors, [subject_of(question), r.title or r.url])
    close_title = float(np.round(head[1] @ head[0], 4)) >= TITLE_ON_TOPIC
    gate = (
        not (frame.framed and not about_question(whole, frame))
        and not (frame.framed and contradicts_setting(r.title, frame))
        and (close_title or about_topic(whole, question))
    )
    title = norm_key(r.title)
    texts = passages
    if texts is None:
        texts = [p.text for p in passage_split.split_passages(r.text)]
    texts = [t for t in texts if not (title and norm_key(t).startswith(title))]
    if not texts:
        return []
    if not gate:  # refused before its passages are read: nothing of it counts
        return [(t, np.zeros(len(syllabus))) for t in texts]
    drugs = [d.lower() for d in drug_names(question)]
    named = not drugs or any(d in r.title.lower() for d in drugs)
    scores = judge.score_passages(syllabus, texts, topic=question, vectors=vectors, fixed=True)
    both = frame.framed and len(frame.arms) > 1 and compares(whole, frame)
    planned = registration_only(r)
    out = []
    for col, t in enumerate(texts):
        s = np.array(scores[:, col], dtype=float)
        if not (named or any(d in t.lower() for d in drugs)):
            s[:] = 0.0
        for i, q in enumerate(syllabus):
            if frame.framed and len(frame.arms) > 1 and q.key in ON_BOTH_ARMS:
                if not both or third_arm(t, frame):
                    s[i] = 0.0
            if planned and q.key in FOUND:
                s[i] = 0.0
        out.append((t, s))
    return out


def _round_robin(rng: random.Random, pool: list[dict], n: int, seen: set[str]) -> list[dict]:
    """Up to ``n`` rows of ``pool`` not in ``seen`` (by passage), one syllabus key after another
    so that the picks spread over the syllabus."""
    by_key: dict[str, list[dict]] = defaultdict(list)
    for row in pool:
        by_key[row["question_key"]].append(row)
    for rows in by_key.values():
        rng.shuffle(rows)
    keys = sorted(by_key)
    rng.shuffle(keys)
    out: list[dict] = []
    while len(out) < n and any(by_key[k] for k in keys):
        for k in keys:
            while by_key[k] and by_key[k][-1]["passage"] in seen:
                by_key[k].pop()
            if by_key[k] and len(out) < n:
                row = by_key[k].pop()
                seen.add(row["passage"])
                out.append(row)
    return out


def sample(vectors=None) -> list[dict]:
    """The candidate pairs, in a deterministic order (seeded by ``SEED``)."""
    from research.evidence.judge import EVIDENCE_MIN  # noqa: PLC0415 - research is optional

    if vectors is None:
        from research.text.vectors import Vectors  # noqa: PLC0415 - loads torch

        vectors = Vectors()
    rng = random.Random(SEED)
    questions = load_questions()
    docs = load_docs({d for q in questions for d in q["labels"]})
    rows: list[dict] = []
    for q in questions:
        syllabus = syllabus_questions(q["question"])
        graded = sorted(d for d, g in q["labels"].items() if g >= 1 and d in docs)
        zero = sorted(d for d, g in q["labels"].items() if g == 0 and d in docs)
        zero = rng.sample(zero, min(GRADE0_DOCS, len(zero)))
        pool = []
        for doc_id in graded + zero:
            for text, s in pipeline_scores(q["question"], syllabus, docs[doc_id], vectors):
                for i, sq in enumerate(syllabus):
                    pool.append(
                        {
                            "id": pair_id(q["qid"], sq.key, text),
                            "qid": q["qid"],
                            "kind": q["kind"],
                            "question": q["question"],
                            "question_key": sq.key,
                            "label": sq.label,
                            "description": sq.description,
                            "passage": text,
                            "doc_id": doc_id,
                            "grade": q["labels"][doc_id],
                            "score": round(float(s[i]), 4),
                        }
                    )
        over = [r for r in pool if r["score"] >= EVIDENCE_MIN]
        under = [r for r in pool if r["score"] < EVIDENCE_MIN]
        seen: set[str] = set()
        picks = _round_robin(rng, [r for r in over if r["grade"] == 0], OVER_GRADE0, seen)
        picks += _round_robin(rng, [r for r in over if r["grade"] > 0], OVER - len(picks), seen)
        near = [r for r in under if r["grade"] > 0 and r["score"] > 0]
        low = _round_robin(rng, [r for r in under if r["grade"] == 0], UNDER_GRADE0, seen)
        low += _round_robin(rng, near, UNDER_NEAR, seen)
        low += _round_robin(rng, [r for r in under if r["grade"] > 0], UNDER - len(low), seen)
        # a question with few passages over the bar gets its missing pairs under it
        low += _round_robin(rng, under, OVER + UNDER - len(picks) - len(low), seen)
        rows += picks + low
    ids = [r["id"] for r in rows]
    if len(ids) != len(set(ids)):
        raise RuntimeError("duplicate pair ids in the sample")
    return rows


def build() -> list[dict]:
    """Candidates joined with their judgements (``answers``, ``note``; the sample-time
    ``score`` and ``grade`` kept); raises ``ValueError`` naming unjudged ids."""
    cands = _load_jsonl(CANDIDATES)
    judged = read_judgements(JUDGEMENTS)
    missing = [c["id"] for c in cands if c["id"] not in judged]
    if missing:
        raise ValueError(f"{len(missing)} candidates have no judgement, e.g. {missing[:5]}")
    return [{**c, "answers": judged[c["id"]][0], "note": judged[c["id"]][1]} for c in cands]


def main(argv: list[str] | None = None) -> int:
    """CLI: ``sample`` writes the candidates, ``build`` writes the labelled set."""
    ap = argparse.ArgumentParser(prog="python -m bench.question_judge_sample")
    ap.add_argument("step", choices=("sample", "build"))
    args = ap.parse_args(argv)
    if args.step == "sample":
        rows = sample()
        _write(rows, CANDIDATES)
        print(f"{len(rows)} candidates → {CANDIDATES}")
    else:
        rows = build()
        _write(rows, LABELS)
        pos = sum(r["answers"] for r in rows)
        print(f"{len(rows)} pairs, {pos} positive ({pos / len(rows):.0%}) → {LABELS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
