"""The ``research`` command: run, list, show and export research runs from a terminal.

Exit codes: 0 success (a run that completed), 1 a run that failed or was cancelled, or the
store was unreachable, 2 bad input (message on stderr as ``error [code]: message``; nothing is
written). Heavy modules (the pipeline, torch) are imported only by the subcommands that need
them, so ``research --help`` stays fast.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from typing import NoReturn

from research.cli.api_parsers import register as register_api
from research.cli.batch_parser import register as register_batch
from research.cli.common import EXIT_BAD_INPUT, EXIT_FAILED, EXIT_INTERRUPTED, _err
from research.cli.desk import register as register_desk
from research.cli.followup import register
from research.cli.mcp_parser import register as register_mcp
from research.errors import CorpusError, InputError, ResearchError, RunNotFoundError
from research.llm.model_map import litellm
from research.models import (
    DEPTHS,
    ENGINES,
    GAP_TURNS_RANGE,
    MODES,
    PERSPECTIVES_RANGE,
    TEMPLATE_CHOICES,
    TURNS_RANGE,
)
from research.warmup import warm

_OFFLINE_ENV = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "TOKENIZERS_PARALLELISM": "false",
}


class _Parser(argparse.ArgumentParser):
    """argparse with the CLI's one error format and exit code 2."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        sys.stderr.write(f"error [invalid_input]: {message}\n")
        raise SystemExit(EXIT_BAD_INPUT)


def build_parser() -> _Parser:
    """The argument parser (subcommands ``run``, ``list``, ``show``, ``export``)."""
    p = _Parser(prog="research", description="Research Desk: STORM-style cited research reports.")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=_Parser)

    run = sub.add_parser("run", help="research a topic and write a cited report")
    run.add_argument(
        "topic", metavar="TOPIC", help="the research question (quote it; up to 500 characters)"
    )
    run.add_argument(
        "--corpus",
        metavar="PATH",
        help="a .jsonl file or a folder of documents "
        "(default: RESEARCH_CORPUS or the shared corpus)",
    )
    run.add_argument(
        "--template",
        default=TEMPLATE_CHOICES[0],
        metavar="NAME",
        help=f"question syllabus: {', '.join(TEMPLATE_CHOICES)} (default {TEMPLATE_CHOICES[0]}: fitted to "
        "the topic)",
    )
    run.add_argument(
        "--review",
        action="store_true",
        help="stop after planning for plan review "
        "(status awaiting_review; then `research plan` / `research approve`)",
    )
    run.add_argument(
        "--max-perspectives",
        default="4",
        metavar="N",
        help="personas, {}–{} (default 4)".format(*PERSPECTIVES_RANGE),
    )
    run.add_argument(
        "--max-turns",
        default="3",
        metavar="N",
        help="dialogue turns per persona, {}–{} (default 3)".format(*TURNS_RANGE),
    )
    run.add_argument(
        "--gap-turns",
        default=None,
        metavar="N",
        help="rounds of gap searches for questions still unanswered after the turns, "
        "{}–{} (default 2, or RESEARCH_LOCAL_GAP_TURNS (0) when every model is local; "
        "0 stops at the turn cap)".format(*GAP_TURNS_RANGE),
    )
    # the names are checked by the input gate (jobs.make_config), in the words the API uses
    run.add_argument(
        "--depth",
        metavar="|".join(DEPTHS),
        default="standard",
        help="report length: brief (~300 words), standard (~1,000, default) or deep (~2,500)",
    )
    run.add_argument(
        "--engine",
        metavar="|".join(ENGINES),
        default=None,
        help="engine (default: extractive, which needs no model or key)",
    )
    run.add_argument(
        "--mode",
        metavar="|".join(MODES),
        default="storm",
        help="storm (perspective conversations) or costorm (round-table with moderator and mind map)",
    )
    run.add_argument("--experts", metavar="N", help="Co-STORM experts, 1–8 (default 3)")
    run.add_argument(
        "--max-node-items",
        metavar="K",
        help="Co-STORM items before a mind-map node is reorganized, 2–100 (default 10)",
    )
    run.add_argument(
        "--moderator-after",
        metavar="L",
        help="Co-STORM consecutive answer turns before the moderator speaks, 1–10 (default 2)",
    )
    run.add_argument(
        "--alpha", metavar="A", help="Co-STORM moderator rerank exponent, 0–1 (default 0.5)"
    )
    run.add_argument(
        "--query-budget",
        metavar="N",
        help="Co-STORM search queries before it stops, 1–500 (default 30)",
    )
    run.add_argument(
        "--costorm-turns", metavar="N", help="Co-STORM round-table turn cap, 1–200 (default 20)"
    )
    run.add_argument(
        "--search",
        metavar="B,B",
        help="search backends, comma-separated: local, pubmed, "
        "clinicaltrials, wikipedia, brave, tavily, serper, searxng (default: local)",
    )
    run.add_argument(
        "--corpora",
        metavar="NAME,NAME",
        help="ingested corpora to search too (see `research ingest`)",
    )
    run.add_argument(
        "--min-databases",
        metavar="N",
        help="coverage is complete only with sources from N "
        "source types, e.g. PubMed + trials registry, 1–8 (default 1 = no such criterion)",
    )
    run.add_argument(
        "--model",
        metavar="MODEL",
        help="litellm model for every role, e.g. openai/gpt-4o-mini "
        "(implies --engine litellm; default: RESEARCH_LLM_MODEL)",
    )
    run.add_argument(
        "--models",
        metavar="ROLE=MODEL,...",
        help="model per role: planner, question_asker, expert, compressor, outline, writer, polish",
    )
    run.add_argument(
        "--budget-usd", metavar="USD", help="stop LLM calls after this many US dollars"
    )
    run.add_argument("--budget-tokens", metavar="N", help="stop LLM calls after this many tokens")
    run.add_argument(
        "--record", metavar="PATH", help="record every LLM call to this cassette (JSONL)"
    )
    run.add_argument(
        "--replay", metavar="PATH", help="answer every LLM call from this cassette, no network"
    )
    run.add_argument(
        "--since",
        metavar="YYYY[-MM[-DD]]",
        help="only sources published since this date (PubMed, ClinicalTrials.gov, dated corpus "
        "documents; undated ones are kept; the run says which backends cannot apply it)",
    )
    run.add_argument(
        "--language",
        metavar="CODE",
        help="language of the report, e.g. de (litellm engine; default en; the extractive "
        "engine cannot translate)",
    )
    run.add_argument(
        "--notify",
        action="append",
        metavar="URL",
        help="notify this target when the run completes, fails or awaits plan review "
        "(repeatable): an http(s) webhook (signed JSON POST) or an Apprise URL such as "
        "slack://…, msteams://…, mailto://… (stored encrypted; see docs/notifications.md)",
    )
    run.add_argument(
        "--json", action="store_true", help="print one JSON summary object instead of progress"
    )

    lst = sub.add_parser("list", help="list runs, newest first")
    lst.add_argument("--limit", default="200", metavar="N", help="at most N runs (default 200)")
    lst.add_argument("--json", action="store_true", help="print a JSON array")

    show = sub.add_parser("show", help="show one run")
    show.add_argument("run_id", metavar="RUN_ID")
    show.add_argument(
        "--json", action="store_true", help="print the whole stored run state as JSON"
    )
    show.add_argument(
        "--version",
        metavar="N",
        help="report version to show (default: the current one; 1 = as generated)",
    )

    ing = sub.add_parser(
        "ingest", help="add documents (PDF, DOCX, HTML, Markdown, text) to a named corpus"
    )
    ing.add_argument("name", metavar="NAME", help="corpus name (letters, digits, - and _)")
    ing.add_argument("paths", metavar="PATH", nargs="+", help="files or folders to ingest")
    ing.add_argument("--json", action="store_true", help="print the ingest report as JSON")

    exp = sub.add_parser("export", help="export a run's report")
    exp.add_argument("run_id", metavar="RUN_ID")
    exp.add_argument(
        "--format",
        choices=["md", "html", "pdf", "docx", "zip", "ris", "bibtex", "csljson"],
        default="md",
        help="md, html (self-contained), pdf, docx, zip (the whole run with every artifact), or "
        "the references for a reference manager: ris, bibtex, csljson",
    )
    exp.add_argument("--out", metavar="PATH", help="output file (default: ./<topic>.<format>)")
    exp.add_argument(
        "--version",
        metavar="N",
        help="report version to export (default: the current one; 1 = as generated)",
    )
    exp.add_argument(
        "--comments", action="store_true", help="add the comments appendix (md, html, pdf, docx)"
    )

    res = sub.add_parser("resume", help="continue an interrupted run from its stored state")
    res.add_argument("run_id", metavar="RUN_ID")
    res.add_argument(
        "--json", action="store_true", help="print one JSON summary object instead of progress"
    )

    pl = sub.add_parser("plan", help="show a run's plan, syllabus and perspectives (plan review)")
    ap = sub.add_parser(
        "approve", help="approve (optionally edit) the plan of a run awaiting review, then run it"
    )
    ap.add_argument(
        "--plan",
        metavar="FILE",
        help="JSON with any of plan, syllabus, perspectives (as `research plan "
        "--json` prints them)",
    )
    ap.add_argument("--cancel", action="store_true", help="cancel the run instead of approving it")
    for x in (pl, ap):
        x.add_argument("run_id", metavar="RUN_ID")
        x.add_argument("--json", action="store_true", help="print JSON")
    wrk = sub.add_parser("worker", help="serve queued runs (RQ worker on the shared Redis)")
    wrk.add_argument("--burst", action="store_true", help="exit when the queue is empty")
    wrk.add_argument(
        "--no-resume", action="store_true", help="do not resume interrupted runs at start"
    )
    wrk.add_argument("--name", metavar="NAME", help="worker name (default: RQ's)")

    _add_redis_parser(
        sub,
        "redis",
        help="the data dir's embedded Redis: who uses it (status) or stop it (stop)",
        description="The embedded redis-server of RESEARCH_DATA_DIR. A `research` command stops "
        "it when it ends unless another process (the dashboard, a worker) uses it; these show "
        "and stop it by hand.",
    )
    # The old name, kept one release; it was too easily mistaken for `research serve`.
    _add_redis_parser(
        sub,
        "server",
        help="deprecated: the old name of `research redis` (same actions)",
        description="Deprecated: use `research redis`. Same actions and options; a note on "
        "stderr names the new command.",
    )

    register(sub)
    register_desk(sub)
    register_api(sub)
    register_mcp(sub)
    register_batch(sub)
    return p


def _add_redis_parser(
    sub: argparse._SubParsersAction, name: str, *, help: str, description: str
) -> None:
    """Add ``research NAME status|stop`` to ``sub`` (``research redis`` and its old name)."""
    srv = sub.add_parser(name, help=help, description=description)
    srv_sub = srv.add_subparsers(
        dest="redis_command", required=True, metavar="ACTION", parser_class=_Parser
    )
    srv_status = srv_sub.add_parser(
        "status", help="the embedded server: socket, pid, running or not, who uses it"
    )
    srv_status.add_argument("--json", action="store_true", help="print one JSON object")
    srv_stop = srv_sub.add_parser(
        "stop", help="stop it (refused with exit 2 while a dashboard, worker or run uses it)"
    )
    srv_stop.add_argument(
        "--force", action="store_true", help="stop it even while other processes use it"
    )
    srv_stop.add_argument("--json", action="store_true", help="print one JSON object")


def _calls_models(args: argparse.Namespace) -> bool:
    """Whether the command is a ``research run`` on the litellm engine (``--engine litellm``, or
    a model, models or cassette given without ``--engine``, as the run handler reads them)."""
    if getattr(args, "command", None) != "run":
        return False
    engine = getattr(args, "engine", None)
    if engine:
        return str(engine) == "litellm"
    return any(getattr(args, k, None) for k in ("model", "models", "record", "replay"))


def _terminated(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``research``. Returns the exit code (see module docstring)."""
    for k, v in _OFFLINE_ENV.items():
        os.environ.setdefault(k, v)
    parser = build_parser()
    args = parser.parse_args(argv)
    # SIGTERM (`timeout`, `kill`, a service manager) ends the process through its exit hooks, as
    # Ctrl-C does: the embedded Redis is stopped when this was its last user, and a run in
    # progress is left interrupted (its lease lapses), to resume later
    signal.signal(signal.SIGTERM, _terminated)
    if _calls_models(args):  # litellm (seconds) loads while the handlers and the run start
        warm("litellm", litellm)

    # The handlers pull in the pipeline, Redis and scikit-learn (seconds): only after parsing.
    from research.cli import handlers  # noqa: PLC0415 - keeps --help and argument errors fast

    try:
        return getattr(handlers, f"cmd_{args.command}")(args)
    except (InputError, CorpusError, RunNotFoundError) as exc:
        _err(exc.code, exc.message)
        return EXIT_BAD_INPUT
    except ResearchError as exc:
        _err(exc.code, exc.message)
        return EXIT_FAILED
    except KeyboardInterrupt:
        _err("interrupted", "stopped by Ctrl-C")
        return EXIT_INTERRUPTED


# ---------------------------------------------------------------------------------- run
