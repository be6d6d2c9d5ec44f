"""``python -m bench [--quick] [--topics PATH] [--only 3,4,5] [--out DIR]`` — run the benchmarks.

Prints the table (figure, value, baseline, ratio, target, result) and writes the JSON to
``bench/results/<date>-<host>.json`` and ``bench/results/latest.json``. Each item runs in turn;
an item that raises is reported as "not measured" with the error, and the others still run.
Exit status: 0 when every measured figure with a target passes, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
import traceback
from pathlib import Path

for _k, _v in (
    ("HF_HUB_OFFLINE", "1"),
    ("TRANSFORMERS_OFFLINE", "1"),
    ("LITELLM_LOCAL_MODEL_COST_MAP", "True"),
    ("TOKENIZERS_PARALLELISM", "false"),
):
    os.environ.setdefault(_k, _v)

from bench import (  # noqa: E402 - the offline environment above must be set before research is imported
    coldstart_bench,
    collector_bench,
    dashboard_bench,
    embed_bench,
    llm_bench,
    quality_bench,
    report_quality_bench,
    search_bench,
)
from bench.common import RESULTS_DIR, Figure, machine, not_measured, table, write_results  # noqa: E402 - the offline environment above must be set before research is imported

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
ITEM_NAMES = {"questions": "22", "judge-questions": "23"}

FULL = {
    "collector": dict(sizes=(10, 1_000, 10_000), reps=200, reps_save=200),
    "embed": dict(n=5000, rounds=2, fp32_n=1000),
    "search_build": dict(n_queries=100, max_docs=None),
    "beir": dict(datasets=("scifact", "nfcorpus"), limit=None),
    "quality": dict(limit=None, max_perspectives=3, max_turns=2),
    "report_quality": dict(max_perspectives=4, max_turns=3),
    "dashboard": dict(sources=1000, turns=100, artifacts=500, reps=2),
    "llm": dict(perspectives=4, turns=3, concurrency=8, latency_ms=300),
    "coldstart": dict(reps=2),
    "evidence": dict(placement_limit=None),
    "budget": dict(reps=2),
    "load": dict(runs=40, workers=2),
}
QUICK = {
    "collector": dict(sizes=(10, 10_000), reps=100, reps_save=100),
    "embed": dict(n=500, rounds=2, fp32_n=250),
    "search_build": dict(n_queries=20, max_docs=150),
    "beir": dict(datasets=("scifact",), limit=50),
    "quality": dict(limit=1, max_perspectives=2, max_turns=1),
    "report_quality": dict(max_perspectives=2, max_turns=1),
    "dashboard": dict(sources=1000, turns=100, artifacts=500, reps=1),
    "llm": dict(perspectives=2, turns=1, concurrency=2, latency_ms=300, reps=1),
    "coldstart": dict(reps=1),
    "evidence": dict(placement_limit=10),
    "budget": dict(reps=1),
    "load": dict(runs=8, workers=2),
}


def _items(cfg: dict, args: argparse.Namespace) -> tuple[list[tuple[int, str, object]], dict]:

    corpus = SHARED / "corpus" / "docs.jsonl"
    topics = Path(args.topics) if args.topics else SHARED / "freshwiki"
    extra: dict = {}
    freshwiki: dict = {}  # items 8 and 12 share one pass over the FreshWiki topics

    def freshwiki_pass() -> tuple[list[Figure], list[dict]]:
        if "rows" not in freshwiki:
            freshwiki["figs"], freshwiki["rows"] = quality_bench.run(topics, **cfg["quality"])
            extra["quality_topics"] = freshwiki["rows"]
        return freshwiki["figs"], freshwiki["rows"]

    def quality() -> list[Figure]:
        return freshwiki_pass()[0]

    def report_quality() -> list[Figure]:
        figs, rows = report_quality_bench.run(
            freshwiki_pass()[1], topics, corpus, **cfg["report_quality"]
        )
        extra["report_quality"] = rows
        return figs

    def coldstart() -> list[Figure]:

        return coldstart_bench.run(corpus, **cfg["coldstart"])

    def evidence_runs() -> list[Figure]:
        from bench import evidence_run_bench  # noqa: PLC0415 - four runs, only when asked

        figs, rows = evidence_run_bench.run(corpus)
        extra["evidence_runs"] = rows
        return figs

    def llm() -> list[Figure]:

        return llm_bench.run(corpus, **cfg["llm"])

    def evidence_judgement() -> list[Figure]:
        from bench import evidence_bench  # noqa: PLC0415 - only when the item runs

        figs, extra["evidence_judgement"] = evidence_bench.run_judgement()
        return figs

    def judge_questions() -> list[Figure]:
        from bench import question_judge_bench  # noqa: PLC0415 - only when the item runs

        figs, extra["judge_questions"] = question_judge_bench.run()
        return figs

    def placement() -> list[Figure]:
        from bench import evidence_bench  # noqa: PLC0415 - only when the item runs

        figs, extra["placement"] = evidence_bench.run_placement(
            topics / "json", limit=cfg["evidence"]["placement_limit"]
        )
        return figs

    def budget() -> list[Figure]:
        from bench import budget_bench  # noqa: PLC0415 - bench modules load what their item needs, when it runs

        before = Path(args.budget_baseline) if args.budget_baseline else None
        baseline = json.loads(before.read_text())["medians"] if before else None
        figs = budget_bench.run(corpus, baseline=baseline, targets=bool(baseline), **cfg["budget"])
        extra["budget"] = figs[0].extra.get("medians")
        return figs

    def questions() -> list[Figure]:
        from bench import question_bench  # noqa: PLC0415 - twelve product runs, only when asked

        modes = ("storm", "costorm") if args.costorm else ("storm",)
        reports = Path(args.question_reports) if args.question_reports else None
        questions_file = question_bench.QUESTION_SETS[args.question_set]
        figs, extra["questions"] = question_bench.run(
            corpus, questions=questions_file, modes=modes, reports_dir=reports
        )
        return figs

    def load() -> list[Figure]:
        from bench import load_bench  # noqa: PLC0415 - API and worker processes, only when asked

        return load_bench.run(corpus, **cfg["load"])

    return [
        (3, "collector at scale", lambda: collector_bench.run(**cfg["collector"])),
        (4, "embeddings", lambda: embed_bench.run(corpus, **cfg["embed"])),
        (
            5,
            "local search",
            lambda: (
                search_bench.build_and_latency(corpus, **cfg["search_build"])
                + search_bench.quality_figures(SHARED / "beir", **cfg["beir"])
            ),
        ),
        (8, "report quality (FreshWiki)", quality),
        (
            12,
            "report quality as read: duplicates, fragments, section fit, questions (FreshWiki + drug run)",
            report_quality,
        ),
        (7, "dashboard", lambda: dashboard_bench.run(**cfg["dashboard"])),
        (1, "parallelism / context / concurrency (items 1, 2, 6)", llm),
        (13, "cold start: first run on an empty index dir vs a warm one", coldstart),
        (14, "evidence judgement (labelled set)", evidence_judgement),
        (23, "evidence judgement per question: held-back bench questions", judge_questions),
        (15, "placement accuracy (FreshWiki headings)", placement),
        (20, "evidence per question: drug, cardiotoxicity, depth", evidence_runs),
        (16, "run budget: calls, tokens, waiting (drug 4×3, litellm, 0 / 0.3 s per call)", budget),
        (21, "load test: runs via the HTTP API on 2 RQ workers, one killed and restarted", load),
        (22, "questions nobody tuned: cited sources, findings, on-question sentences", questions),
    ], extra


def main(argv: list[str] | None = None) -> int:
    """CLI entry point; returns the exit status."""
    ap = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer sizes/queries/topics (< 3 min)")
    ap.add_argument("--topics", help="a FreshWiki-layout folder (topic_list.csv, json/, txt/)")
    ap.add_argument(
        "--topic-limit",
        type=int,
        default=None,
        help="FreshWiki topics to score (default: all full / 1 quick; 0 = all)",
    )
    ap.add_argument(
        "--only",
        help="comma-separated item numbers or names, e.g. 3,5 or questions (1 also runs 2 and 6)",
    )
    ap.add_argument(
        "--costorm", action="store_true", help="item 22: also run every question in Co-STORM mode"
    )
    ap.add_argument(
        "--question-set",
        choices=("unseen", "holdout", "dev"),
        default="unseen",
        help="item 22: the labelled question set to score (default unseen; holdout measures only; "
        "dev is read while building)",
    )
    ap.add_argument(
        "--question-reports",
        help="item 22: folder of <mode>/<qid>.md reports to rescore (missing ones are run and saved)",
    )
    ap.add_argument(
        "--out", default=str(RESULTS_DIR), help="results folder (default bench/results)"
    )
    ap.add_argument(
        "--budget-baseline",
        help="item 14: a JSON file with the baseline medians (e.g. /work/notes/lean_before.json)",
    )
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    cfg = {k: dict(v) for k, v in (QUICK if args.quick else FULL).items()}
    if args.topic_limit is not None:
        cfg["quality"]["limit"] = args.topic_limit or None
    only = {ITEM_NAMES.get(x, x) for x in args.only.split(",")} if args.only else None
    only = {int(x) for x in only} if only else None
    items, extra = _items(cfg, args)
    figures: list[Figure] = []
    timings = {}
    t_all = time.perf_counter()
    load_start = [round(x, 2) for x in os.getloadavg()]
    for num, label, fn in items:
        if only and num not in only:
            continue
        print(f"[bench] item {num}: {label} ...", file=sys.stderr, flush=True)
        t0 = time.perf_counter()
        try:
            figures.extend(fn())
        except Exception as exc:
            traceback.print_exc()
            figures.append(not_measured(num, label, f"{type(exc).__name__}: {str(exc)[:200]}"))
        timings[num] = round(time.perf_counter() - t0, 1)
        print(f"[bench] item {num} took {timings[num]} s", file=sys.stderr, flush=True)
    total = round(time.perf_counter() - t_all, 1)
    figures.sort(key=lambda f: f.item)
    m = machine()
    title = (
        f"Research Desk benchmarks ({'quick' if args.quick else 'full'}), "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {m['host']}: {m['cores']} cores, "
        f"{m['cpu']}; total {total:.0f} s; load average {load_start[0]} at start, "
        f"{m['loadavg_1_5_15'][0]} at end"
    )
    print(table(figures, title))
    path = write_results(
        figures,
        {
            "mode": "quick" if args.quick else "full",
            "config": cfg,
            "item_seconds": timings,
            "total_s": total,
            "loadavg_at_start": load_start,
            **extra,
        },
        Path(args.out),
    )
    print(f"\nresults: {path}")
    return 1 if any(f.status == "FAIL" for f in figures) else 0


if __name__ == "__main__":
    sys.exit(main())
