"""The parser of ``research batch`` (its body is ``research.cli.batch``), kept light for
``--help``."""

from __future__ import annotations

import argparse

from research.models import DEPTHS, ENGINES, MODES, TEMPLATE_CHOICES

# option → help; each is a column name of a batch CSV too (research.jobs.batch_input.FIELDS)
SHARED_OPTIONS = {
    "corpus": "a .jsonl file or a folder of documents (default: RESEARCH_CORPUS or the shared one)",
    "template": f"question syllabus: {', '.join(TEMPLATE_CHOICES)}",
    "max-perspectives": "personas per run, 1–12 (default 4)",
    "max-turns": "dialogue turns per persona, 1–10 (default 3)",
    "gap-turns": "rounds of gap searches, 0–5 (default 2; RESEARCH_LOCAL_GAP_TURNS for local models)",
    "depth": f"report length: {', '.join(DEPTHS)}",
    "engine": f"engine: {', '.join(ENGINES)} (default extractive)",
    "mode": f"{' or '.join(MODES)}",
    "search": "search backends, comma-separated (default: local)",
    "corpora": "ingested corpora to search too, comma-separated",
    "min-databases": "distinct source types coverage requires, 1–8",
    "model": "litellm model for every role (implies --engine litellm)",
    "models": "model per role: role=model,...",
    "budget-usd": "stop each run's LLM calls after this many US dollars",
    "budget-tokens": "stop each run's LLM calls after this many tokens",
    "since": "only sources published since YYYY[-MM[-DD]]",
    "language": "report language code, e.g. de (litellm engine)",
}

_METAVARS = {
    "corpus": "PATH",
    "template": "NAME",
    "depth": "DEPTH",
    "engine": "ENGINE",
    "mode": "MODE",
    "search": "B,B",
    "corpora": "NAME,NAME",
    "model": "MODEL",
    "models": "ROLE=MODEL,...",
    "budget-usd": "USD",
    "since": "YYYY[-MM[-DD]]",
    "language": "CODE",
}


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``batch`` subparser to ``sub`` (its body: ``cmd_batch``)."""
    bat = sub.add_parser(
        "batch",
        help="queue many topics at once (a CSV or one topic per line), follow them, zip their reports",
        description="research batch FILE: check every row, then queue one run per topic on the "
        "job backend (with the thread backend this command stays and runs them; with RQ it "
        "returns at once unless --wait). FILE is a .csv/.tsv with a 'topic' column and optional "
        "option columns named like the options below (max_turns, depth, engine, ...), or a text "
        "file with one topic per line. A bad row queues nothing. "
        "research batch status [BATCH_ID]: the batch's progress table (no id: list the batches). "
        "research batch zip BATCH_ID: one zip of the batch's reports.",
    )
    bat.add_argument(
        "target",
        nargs="+",
        metavar="ARG",
        help="FILE (a batch to queue), or: status [BATCH_ID], or: zip BATCH_ID",
    )
    bat.add_argument("--name", metavar="NAME", help="the batch's name (default: the file name)")
    bat.add_argument(
        "--wait", action="store_true", help="wait until every run of the batch has stopped"
    )
    bat.add_argument("--timeout", metavar="S", help="with --wait: give up waiting after S seconds")
    bat.add_argument(
        "--zip", metavar="PATH", help="when the batch has stopped, write its reports to this zip"
    )
    bat.add_argument("--out", metavar="PATH", help="zip: output file (default ./<name>.zip)")
    bat.add_argument("--json", action="store_true", help="print one JSON object")
    opts = bat.add_argument_group("options for every run (a CSV column overrides them per row)")
    opts.add_argument("--review", action="store_true", help="stop each run for plan review")
    for flag, text in SHARED_OPTIONS.items():
        opts.add_argument(f"--{flag}", metavar=_METAVARS.get(flag, "N"), help=text)
