"""Item 22 — reports that answer the question asked, on questions nobody tuned for.

For each question of a labelled set (written and labelled by reading; see
``bench/data/QUESTIONS.md``) the product runs as an analyst would type it::

    research run "QUESTION" --corpus shared/data/corpus/docs.jsonl --json [--mode costorm]
    research export RUN_ID --format md

(offline extractive engine, every other option at its default; a temp data dir; the index cache
from ``RESEARCH_INDEX_DIR``). The report's references are mapped to corpus ids and scored by
``bench.question_metrics``. Anchors at the same k (the report's number of cited sources): plain
BM25 top-k and the product's hybrid top-k of the question as typed. A key finding is "stated"
by an anchor when its result page states it: as many sentences as the report cites, taken from
the top-k documents one per document in rank order, each document's best BM25 sentence first
(``question_search.snippets``); "held" (``findings_in_docs``) when a top-k document contains
it, stated or not. The report is scored by the same two rules: its cited sentences, and its
cited documents.

Targets (on the means, against the BM25 anchor): cited sentences on the question >= 0.95;
directly relevant share >= anchor + 0.15; key findings stated >= 0.7; recall of the directly
relevant documents >= 0.8; every figure above the anchor (key findings held included).
Co-STORM: on the question >= 0.95 and every figure above the anchor.

Three sets (``QUESTION_SETS``): ``unseen`` (``bench/data/questions_unseen.jsonl``, the default),
``holdout`` (``bench/data/questions_holdout.jsonl``, written after the unseen set had been
read while building; measure with it, never read it while tuning) and ``dev``
(``bench/data/questions_dev.jsonl``, written and graded before any report on it, to read and
build on once the other two had been read or looked at too often). ``python -m bench --only
questions --question-set holdout`` scores the hold-out set; its figures are ``questions.holdout.*``
(``questions.dev.*`` for the dev set).

Writes ``bench/results/<timestamp>-questions.json`` (``-questions-holdout.json`` for the hold-out
set; per question, per mode: figures, anchors, run id, cited ids) and prints a table per question
and the means.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from bench.common import RESULTS_DIR, Figure
from bench.question_metrics import FIGURES, CorpusIndex, score_ranking, score_report
from bench.question_search import bm25_top, hybrid_top, open_search, snippets

ITEM = 22
DATA = Path(__file__).resolve().parent / "data"
UNSEEN = DATA / "questions_unseen.jsonl"
HOLDOUT = DATA / "questions_holdout.jsonl"
DEV = DATA / "questions_dev.jsonl"
QUESTION_SETS = {"unseen": UNSEEN, "holdout": HOLDOUT, "dev": DEV}
_REPO = Path(__file__).resolve().parents[1]
RUN_TIMEOUT_S = 1800
LABEL = {
    "relevant": "cited sources relevant (grade >= 1)",
    "direct": "cited sources directly relevant (grade 2)",
    "direct_recall": "recall of directly relevant documents",
    "findings": "key findings stated (anchor: its result page's snippets)",
    "findings_in_docs": "key findings held by a cited document (stated or not)",
    "on_question": "cited sentences on the question",
}


def read_jsonl(path: Path) -> list[dict]:
    """Rows of a JSON-lines file (blank lines skipped)."""
    return [json.loads(x) for x in path.read_text(encoding="utf-8").split("\n") if x.strip()]


def run_report(question: str, mode: str, corpus: Path, data_dir: Path) -> tuple[str, str]:
    """Run the product on ``question`` through its CLI; returns ``(run id, report markdown)``.

    Raises:
        RuntimeError: the run printed no run id or the export failed (stderr tail in the text).
    """
    env = {**os.environ, "RESEARCH_DATA_DIR": str(data_dir)}
    extra = ["--mode", "costorm"] if mode == "costorm" else []
    cmd = [sys.executable, "-m", "research.cli", "run", question, "--corpus", str(corpus), "--json"]
    proc = subprocess.run(
        cmd + extra, cwd=_REPO, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT_S
    )
    events = [json.loads(x) for x in proc.stdout.split("\n") if x.strip().startswith("{")]
    ids = [e["run_id"] for e in events if "run_id" in e]
    if not ids:
        raise RuntimeError(f"no run id from `research run`: {proc.stderr[-400:]}")
    out = data_dir / f"{ids[-1]}.md"
    exp = subprocess.run(
        [
            sys.executable,
            "-m",
            "research.cli",
            "export",
            ids[-1],
            "--format",
            "md",
            "--out",
            str(out),
        ],
        cwd=_REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if exp.returncode != 0 or not out.is_file():
        raise RuntimeError(f"export of {ids[-1]} failed: {exp.stderr[-400:]}")
    return ids[-1], out.read_text(encoding="utf-8")


def _mean(rows: list[dict], key: str) -> float | None:
    xs = [r[key] for r in rows if r.get(key) is not None]
    return sum(xs) / len(xs) if xs else None


def _fmt(x: float | None) -> str:
    return "—" if x is None else f"{x:.2f}"


def score_question(q: dict, markdown: str, index: CorpusIndex, search) -> dict:
    """One question's row: the report's figures and both anchors at the report's k."""
    ours = score_report(markdown, index, q)
    k = max(ours["k"], 1)
    out = {"ours": ours}
    docs = {d.id: d for d in search.docs}
    for name, top in (("bm25", bm25_top), ("hybrid", hybrid_top)):
        ranked = top(search, q["question"], k)
        page = snippets(docs, q["question"], ranked, ours["sentences"])
        out[name] = score_ranking(ranked, q, page)
    return out


def table(rows: list[dict], mode: str) -> str:
    """Markdown table: per question, ours / BM25 / hybrid for each figure; then the means."""
    head = "| qid | kind | k | " + " | ".join(f"{f} (ours/bm25/hyb)" for f in FIGURES) + " |"
    lines = [f"### {mode}", "", head, "|" + "---|" * (3 + len(FIGURES))]
    for r in rows + [{"qid": "mean", "kind": "", **means(rows)}]:
        k = r["ours"]["k"] if "ours" in r and "k" in r["ours"] else ""
        cells = ["/".join(_fmt(r[a].get(f)) for a in ("ours", "bm25", "hybrid")) for f in FIGURES]
        lines.append(f"| {r['qid']} | {r['kind']} | {k} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def means(rows: list[dict]) -> dict:
    """``{ours|bm25|hybrid: {figure: mean over questions}}``."""
    return {
        a: {f: _mean([r[a] for r in rows], f) for f in FIGURES} for a in ("ours", "bm25", "hybrid")
    }


def set_name(questions: Path) -> str:
    """The name of a question file in ``QUESTION_SETS`` (``unseen``, ``holdout``, ``dev``), else
    its stem."""
    names = {path.resolve(): name for name, path in QUESTION_SETS.items()}
    return names.get(questions.resolve(), questions.stem)


def figures(mode: str, m: dict, prefix: str = "questions") -> list[Figure]:
    """Figures with the done-when targets, against the BM25 anchor's means, named
    ``<prefix>.<mode>.<figure>``."""
    out = []
    base = m["bm25"]
    for f in FIGURES:
        v, b = m["ours"][f], base[f]
        # an anchor at the ceiling (1.0) can only be matched, not beaten
        above = "" if b is None else (f"> {b:.3f}" if b < 1.0 else ">= 1.000")
        target = above
        if mode == "storm":
            bound = {"on_question": 0.95, "findings": 0.7, "direct_recall": 0.8}.get(f)
            if f == "direct" and b is not None:
                bound = b + 0.15
            if bound is not None and (b is None or bound > b):
                target = f">= {bound:.3f}"
        elif f == "on_question" and (b is None or b < 0.95):
            target = ">= 0.950"
        out.append(
            Figure(
                item=ITEM,
                name=f"{prefix}.{mode}.{f}",
                value=v,
                baseline=b,
                baseline_label="BM25 top-k",
                ratio=(v / b) if v is not None and b else None,
                target=target,
                target_on="value",
                note=f"{LABEL[f]}; hybrid top-k {_fmt(m['hybrid'][f])}; target also > anchor",
            )
        )
    return out


def run(
    corpus: Path,
    questions: Path = UNSEEN,
    modes: tuple[str, ...] = ("storm",),
    reports_dir: Path | None = None,
    out_dir: Path = RESULTS_DIR,
) -> tuple[list[Figure], dict]:
    """Run and score every question in every mode; returns ``(figures, results document)``.

    ``questions``: the labelled set (``QUESTION_SETS``); a set other than ``unseen`` names its
    figures ``questions.<set>.*`` and its results file ``<timestamp>-questions-<set>.json``.
    ``reports_dir``: reuse ``<reports_dir>/<mode>/<qid>.md`` when present (a previous pass's
    reports, rescored), else run the product and save the report there.
    """
    qs = read_jsonl(questions)
    name = set_name(questions)
    prefix = "questions" if name == "unseen" else f"questions.{name}"
    docs = read_jsonl(corpus)
    index = CorpusIndex.from_docs(docs)
    search = open_search(corpus)
    doc: dict = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "questions": str(questions),
        "question_set": name,
        "modes": {},
    }
    figs: list[Figure] = []
    with tempfile.TemporaryDirectory(prefix="bench-questions-") as tmp:
        for mode in modes:
            rows = []
            for q in qs:
                saved = reports_dir / mode / f"{q['qid']}.md" if reports_dir else None
                t0 = time.perf_counter()
                if saved and saved.is_file():
                    run_id, md = "reused", saved.read_text(encoding="utf-8")
                else:
                    run_id, md = run_report(q["question"], mode, corpus, Path(tmp))
                    if saved:
                        saved.parent.mkdir(parents=True, exist_ok=True)
                        saved.write_text(md, encoding="utf-8")
                row = {
                    "qid": q["qid"],
                    "kind": q["kind"],
                    "question": q["question"],
                    "run_id": run_id,
                }
                row.update(score_question(q, md, index, search))
                row["seconds"] = round(time.perf_counter() - t0, 1)
                rows.append(row)
                print(
                    f"[questions] {mode} {q['qid']}: k={row['ours']['k']} {row['seconds']} s",
                    file=sys.stderr,
                    flush=True,
                )
            m = means(rows)
            doc["modes"][mode] = {"rows": rows, "means": m}
            figs += figures(mode, m, prefix)
            print(table(rows, mode) + "\n")
    doc["figures"] = [f.__dict__ for f in figs]
    out_dir.mkdir(parents=True, exist_ok=True)
    suffix = "" if name == "unseen" else f"-{name}"
    path = out_dir / f"{datetime.now(UTC):%Y-%m-%dT%H%M%S}-questions{suffix}.json"
    path.write_text(json.dumps(doc, indent=2))
    print(f"questions results: {path}", file=sys.stderr)
    return figs, doc
