"""Check a labelled question set before use: every key finding is stated by its documents.

``python -m bench.check_findings bench/data/questions_holdout.jsonl [--corpus PATH]``

For each finding, each of its ``docs`` must be graded 2 and must hold all the finding's ``terms``
in one sentence, matched as ``bench.question_metrics.findings_stated`` matches a report (after
``normalize``: case, middle dot, dashes). Sentences are cut after ``.``, ``!`` or ``?`` (or one
followed by a closing quote) when the next word starts with a capital, a quote or a bracket, so
"vs. 0.92" stays whole; stricter than a report's cited stretch, never looser. Also checks that
every labelled id is in the corpus and every grade is 0, 1 or 2.

Prints one line per question (qid, kind, pool, grade counts, findings) and one per problem; names
no question text. Exit status 1 when any problem is found.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from bench.question_metrics import normalize
from bench.question_search import CORPUS

_SENTENCE_END = re.compile(r"(?:(?<=[.!?])|(?<=[.!?][\"\u201d]))\s+(?=[A-Z(\[\"\u201c])")


def sentences(text: str) -> list[str]:
    """The normalised sentences of a document's text."""
    return [normalize(s) for s in _SENTENCE_END.split(text) if s.strip()]


def check_question(q: dict, texts: dict[str, str]) -> list[str]:
    """Problems of one labelled question (empty when it is sound)."""
    problems = []
    labels = q["labels"]
    problems += [f"{q['qid']}: {d} is not in the corpus" for d in labels if d not in texts]
    problems += [f"{q['qid']}: {d} has grade {g}" for d, g in labels.items() if g not in (0, 1, 2)]
    for f in q.get("findings", []):
        terms = [normalize(t) for t in f["terms"]]
        if not 1 <= len(terms) <= 4 or any(t != t.lower() for t in f["terms"]):
            problems.append(f"{q['qid']} {f['id']}: needs 1-4 lower-case terms")
        for d in f["docs"]:
            if labels.get(d) != 2:
                problems.append(f"{q['qid']} {f['id']}: {d} is not graded 2")
            elif not any(all(t in s for t in terms) for s in sentences(texts.get(d, ""))):
                problems.append(f"{q['qid']} {f['id']}: no sentence of {d} holds {terms}")
    return problems


def main(argv: list[str] | None = None) -> int:
    """CLI entry point; returns the exit status."""
    ap = argparse.ArgumentParser(prog="python -m bench.check_findings")
    ap.add_argument("questions", help="a question set (JSON lines)")
    ap.add_argument("--corpus", default=str(CORPUS), help="the corpus the set is labelled on")
    args = ap.parse_args(argv)
    texts = {}
    for line in Path(args.corpus).read_text(encoding="utf-8").split("\n"):
        if line.strip():
            doc = json.loads(line)
            texts[doc["id"]] = doc.get("text") or ""
    problems: list[str] = []
    for line in Path(args.questions).read_text(encoding="utf-8").split("\n"):
        if not line.strip():
            continue
        q = json.loads(line)
        grades = list(q["labels"].values())
        print(
            f"{q['qid']} {q['kind']}: pool {q.get('pool_size')}, labelled {len(grades)}, "
            f"grade 2 {grades.count(2)}, grade 1 {grades.count(1)}, "
            f"findings {len(q.get('findings', []))}"
        )
        problems += check_question(q, texts)
    for p in problems:
        print("problem:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
