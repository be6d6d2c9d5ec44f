"""The ``research`` command: run, list, show and export research runs from a terminal.

Exit codes: 0 success (a run that completed), 1 a run that failed or was cancelled, or the
store was unreachable, 2 bad input (message on stderr as ``error [code]: message``; nothing is
written). Heavy modules (the pipeline, torch) are imported only by the subcommands that need
them, so ``research --help`` stays fast.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from datetime import UTC
from pathlib import Path

from research.cli.common import (
    EXIT_BAD_INPUT,
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    _err,  # noqa: F401
    _print_json,
    _print_outcome,
    _store,
    report_run_outcome,
)
from research.cli.progress import IndexBar
from research.engines.labels import OFFLINE_LABEL
from research.models import (
    ENGINES,
    MIN_DATABASES_RANGE,
    MODES,
    PERSPECTIVES_RANGE,
    TEMPLATE_CHOICES,
    TURNS_RANGE,
)

_OFFLINE_ENV = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "TOKENIZERS_PARALLELISM": "false",
}
_POLL_S = 0.25  # s between progress polls


class _Parser(argparse.ArgumentParser):
    """argparse with the CLI's one error format and exit code 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        sys.stderr.write(f"error [invalid_input]: {message}\n")
        raise SystemExit(EXIT_BAD_INPUT)


def build_parser() -> argparse.ArgumentParser:
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
        "--engine", choices=list(ENGINES), default=None, help=f"engine (default: {OFFLINE_LABEL})"
    )
    run.add_argument(
        "--mode",
        choices=list(MODES),
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
    from research.cli.followup import register  # issue 13: ask, audit

    p.followup_handlers = register(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``research``. Returns the exit code (see module docstring)."""
    for k, v in _OFFLINE_ENV.items():
        os.environ.setdefault(k, v)
    parser = build_parser()
    args = parser.parse_args(argv)
    from research.cli.review import cmd_approve, cmd_plan
    from research.errors import CorpusError, InputError, ResearchError, RunNotFoundError

    handlers = {
        "run": cmd_run,
        "list": cmd_list,
        "show": cmd_show,
        "export": cmd_export,
        "resume": cmd_resume,
        "worker": cmd_worker,
        "ingest": cmd_ingest,
        "plan": cmd_plan,
        "approve": cmd_approve,
        **parser.followup_handlers,
    }
    try:
        return handlers[args.command](args)
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
def cmd_run(args: argparse.Namespace) -> int:
    """``research run``: validate (cheaply, before any heavy import), run in this process, report."""
    from research.config import load_settings
    from research.jobs.validation import validate_corpus, validate_int, validate_topic

    topic = validate_topic(args.topic)
    max_p = validate_int("--max-perspectives", args.max_perspectives, *PERSPECTIVES_RANGE)
    max_t = validate_int("--max-turns", args.max_turns, *TURNS_RANGE)
    from research.planning.syllabus import check_template

    check_template(args.template)  # a bad template name is reported before any corpus problem
    backends = [b.strip().lower() for b in (args.search or "").split(",") if b.strip()]
    uses_local = "local" in backends or not (
        backends or args.corpora
    )  # else no default corpus needed
    corpus = (
        validate_corpus(args.corpus or load_settings().default_corpus)
        if args.corpus or uses_local
        else None
    )
    index_bar = IndexBar()  # stderr only: --json stdout stays pure JSON
    if (
        corpus and uses_local
    ):  # say at once that the index must be built, before the heavy imports below
        from research.search.index_progress import index_state

        if index_state(corpus, load_settings().index_dir)["state"] == "missing":
            index_bar.update({"state": "loading_model", "done": 0, "total": 0})

    from research import jobs

    extra = {"engine": args.engine} if args.engine else {}
    if args.review:
        extra["review"] = True
    if args.mode == "costorm":
        extra.update(mode="costorm", costorm=_costorm_options(args))
    if args.search or args.corpora:
        extra.update(search=args.search, corpora=args.corpora)
    if args.min_databases:
        extra["min_databases"] = validate_int(
            "--min-databases", args.min_databases, *MIN_DATABASES_RANGE
        )
    extra.update(_llm_options(args))
    if args.since:
        extra["since"] = args.since
    if args.language:
        extra["language"] = args.language
    config = jobs.make_config(
        topic,
        corpus=str(corpus) if corpus else None,
        template=args.template,
        max_perspectives=max_p,
        max_turns=max_t,
        **extra,
    )
    t0 = time.monotonic()
    state = _run_with_progress(jobs, config, quiet=args.json, index_bar=index_bar)
    summary = jobs.run_summary(state.run_id)
    if args.json:
        _print_json(summary)
    else:
        _print_outcome(summary, elapsed_s=summary["wall_s"] or time.monotonic() - t0)
    if state.status == "complete":
        return EXIT_OK
    if state.status == "awaiting_review":
        if not args.json:
            print(
                f"plan ready for review: research plan {state.run_id}; then research approve {state.run_id}"
            )
        return EXIT_OK
    _err(
        state.error_code or state.status, state.error or f"run {state.run_id} ended {state.status}"
    )
    return EXIT_FAILED


def _llm_options(args: argparse.Namespace) -> dict:
    """Issue 3: ``--model/--models/--budget-usd/--budget-tokens`` → make_config kwargs;
    ``--record/--replay`` → the run's cassette (``RunConfig.cassette_mode`` / ``cassette_path``)."""
    from research.errors import InputError
    from research.llm.validate import parse_models

    if args.record and args.replay:
        raise InputError("Use either --record or --replay, not both.")
    if args.replay and not Path(args.replay).is_file():
        raise InputError(f"Cassette '{args.replay}' does not exist; record one with --record PATH.")
    models = parse_models(args.models)
    if args.model:
        models = {"*": args.model.strip(), **models}
    out: dict = {}
    for flag, mode in ((args.record, "record"), (args.replay, "replay")):
        if flag:
            out.update(cassette_mode=mode, cassette_path=str(Path(flag).expanduser().resolve()))
    if models:
        out["models"] = models
    if models or args.record or args.replay:
        out["engine"] = args.engine or "litellm"
    if args.budget_usd is not None:
        out["budget_usd"] = args.budget_usd
    if args.budget_tokens is not None:
        out["budget_tokens"] = args.budget_tokens
    return out


def _costorm_options(args: argparse.Namespace) -> dict:
    """Co-STORM settings from ``--experts/--max-node-items/--moderator-after/--alpha/
    --query-budget/--costorm-turns`` (unset → defaults). Raises InputError for non-numbers."""
    from research.errors import InputError

    out: dict = {}
    for field, flag, kind in (
        ("experts", "experts", int),
        ("max_node_items", "max_node_items", int),
        ("moderator_after", "moderator_after", int),
        ("alpha", "alpha", float),
        ("query_budget", "query_budget", int),
        ("max_turns", "costorm_turns", int),
    ):
        raw = getattr(args, flag)
        if raw is None:
            continue
        try:
            out[field] = kind(raw)
        except ValueError:
            raise InputError(
                f"--{flag.replace('_', '-')} must be a {'number' if kind is float else 'whole number'} "
                f"(got {raw!r})."
            ) from None
    return out


class _Worker(threading.Thread):
    """Runs ``jobs.execute_created(run_id)`` so the main thread can show progress and catch Ctrl-C."""

    def __init__(self, jobs, run_id: str, backend: str) -> None:
        super().__init__(name="research-run", daemon=True)
        self.jobs, self.run_id, self.backend = jobs, run_id, backend
        self.state = None
        self.exc: BaseException | None = None
        self.done = threading.Event()

    def run(self) -> None:
        try:
            self.state = self.jobs.execute_created(self.run_id, self.backend)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the main thread
            self.exc = exc
        finally:
            self.done.set()


def _run_with_progress(jobs, config, *, quiet: bool, index_bar: IndexBar | None = None):
    """Create the run here, execute it in a worker thread; print a line per phase and turn unless
    ``quiet``; ``index.progress`` events drive ``index_bar`` (a new stderr bar when None). The
    CLI follows the run id it created (never a look-alike run of another process).

    First Ctrl-C asks the run to cancel at its next step boundary; a second one quits at once.
    """
    store = _store()
    t0 = time.time()
    backend = jobs.job_backend()  # a bad backend fails before anything is written
    run_id = jobs.create_run(config)
    if not quiet:
        print(f"run {run_id}: {config.topic}", flush=True)
    worker = _Worker(jobs, run_id, backend)
    worker.start()
    last_event, cancelling = "-", False
    index_bar = index_bar or IndexBar()  # stderr only: --json stdout stays pure JSON

    def drain() -> None:
        nonlocal last_event
        for ev in store.events(run_id, after=last_event):
            last_event = ev.id
            if ev.type == "index.progress":
                index_bar.update(ev.data)
            elif not quiet:
                _print_event(ev, ev.ts - t0)

    # Poll with time.sleep, not Thread.join: a Ctrl-C inside join() leaves the Thread object
    # reporting is_alive() == False on Python 3.11 while the run goes on.
    while not worker.done.is_set():
        try:
            time.sleep(_POLL_S)
            drain()
        except KeyboardInterrupt:
            if cancelling:
                raise
            cancelling = True
            store.request_cancel(run_id)
            sys.stderr.write(
                f"cancelling run {run_id} at the next step (Ctrl-C again to quit now)...\n"
            )
    if worker.exc is not None:
        index_bar.close()
        raise worker.exc
    drain()
    index_bar.close()
    return worker.state


def _print_event(ev, elapsed: float) -> None:
    stamp = f"[{elapsed:7.1f}s]"
    if ev.type == "status":
        print(f"{stamp} {ev.data.get('status', '?')}", flush=True)
    elif ev.type == "turn.finished":
        q = str(ev.data.get("question", ""))[:90]
        print(
            f"{stamp}   {ev.data.get('perspective', '?')} · turn {ev.data.get('turn', '?')} · "
            f"{ev.data.get('sources', 0)} sources · {q}",
            flush=True,
        )


# ---------------------------------------------------------------------------------- list
def cmd_list(args: argparse.Namespace) -> int:
    """``research list``: runs newest first (run_id, status, topic, created, sources)."""
    from research.jobs.validation import validate_int

    limit = validate_int("--limit", args.limit, 1, 100_000)
    store = _store()
    store.reconcile_dead_runs()  # explicit: reads are pure (issue 15); listing persists dead runs as interrupted
    runs = store.list_runs(limit=limit)
    counts = store.source_counts([st.run_id for st in runs])
    rows = [
        {
            "run_id": st.run_id,
            "status": st.status,
            "topic": st.topic,
            "created": _iso(st.created_at),
            "created_at": st.created_at,
            "sources": counts[st.run_id],
        }
        for st in runs
    ]
    if args.json:
        _print_json(rows)
    elif not rows:
        print('No runs yet. Start one with: research run "YOUR TOPIC"')
    else:
        print(f"{'RUN ID':<16}  {'STATUS':<13} {'CREATED (UTC)':<20} {'SOURCES':>7}  TOPIC")
        for row in rows:
            topic = row["topic"] if len(row["topic"]) <= 70 else row["topic"][:69] + "…"
            print(
                f"{row['run_id']:<16}  {row['status']:<13} {row['created'][:19].replace('T', ' '):<20} "
                f"{row['sources']:>7}  {topic}"
            )
    return EXIT_OK


def _iso(ts: float) -> str:
    from datetime import datetime

    return datetime.fromtimestamp(ts, tz=UTC).isoformat(timespec="seconds")


# ---------------------------------------------------------------------------------- show
def cmd_show(args: argparse.Namespace) -> int:
    """``research show RUN_ID``: the whole run as JSON (``--json``) or a short summary."""
    from research.store.keys import check_run_id

    run_id = check_run_id(args.run_id.strip())
    _store().get_run(run_id)  # RunNotFoundError before the pipeline is imported
    from research import jobs

    version = _version_arg(args.version)
    if args.json:
        _print_json(jobs.run_snapshot(run_id, version=version))
        return EXIT_OK
    state = _store().get_run(run_id)
    print(f"topic:   {state.topic}")
    print(
        f"status:  {state.status}"
        + (f" ({state.error_code}: {state.error})" if state.error else "")
    )
    print(f"created: {_iso(state.created_at)}")
    print(f"engine:  {state.engine_label or state.config.engine}")
    _print_outcome(jobs.run_summary(run_id))
    _print_desk(run_id, version)
    return EXIT_OK


def _version_arg(raw: str | None) -> int | None:
    """``--version N`` as an int (None when absent). Raises InputError for anything else."""
    from research.errors import InputError  # noqa: PLC0415 - the CLI imports lazily

    if raw is None:
        return None
    text = raw.strip()
    if not text.isdigit() or int(text) < 1:
        raise InputError(
            f"--version {raw!r} is not a version number; use 1, 2, 3… "
            "(`research show RUN --json` lists them).",
            code="no_such_version",
        )
    return int(text)


def _print_desk(run_id: str, version: int | None) -> None:
    """The report version shown and the comment counts (``research show`` without --json)."""
    from research.store.comments import CommentStore  # noqa: PLC0415 - the CLI imports lazily
    from research.store.versions import VersionStore  # noqa: PLC0415

    store = _store()
    shown = VersionStore(store).get(run_id, version)
    if shown is None:
        return
    total = VersionStore(store).count(run_id)
    print(
        f"report:  version {shown.number} of {total} ({shown.note}, {shown.author}, "
        f"{_iso(shown.created_at)})"
    )
    c = CommentStore(store).counts(run_id)
    if c["total"]:
        print(f"comments: {c['open']} open, {c['resolved']} resolved")


# ---------------------------------------------------------------------------------- export
def cmd_export(args: argparse.Namespace) -> int:
    """``research export RUN_ID --format md|html|pdf|docx|zip|ris|bibtex|csljson [--out PATH]
    [--version N] [--comments]``: writes the export, prints the path."""
    from research.export import EXTENSIONS, export_markdown, export_run, safe_filename
    from research.store.keys import check_run_id

    run_id = check_run_id(args.run_id.strip())
    version = _version_arg(args.version)
    store = _store()
    ext = EXTENSIONS.get(args.format, args.format)
    out = (
        Path(args.out) if args.out else Path.cwd() / safe_filename(store.get_run(run_id).topic, ext)
    )
    if args.format == "md" and not args.comments:
        print(export_markdown(run_id, out, store=store, version=version))
    else:
        print(
            export_run(
                run_id, args.format, out, store=store, version=version, comments=args.comments
            )
        )
    return EXIT_OK


# ---------------------------------------------------------------------------------- resume / worker
def cmd_resume(args: argparse.Namespace) -> int:
    """``research resume RUN_ID``: continue an interrupted run in this process (issue 7)."""
    from research.store.keys import check_run_id

    run_id = check_run_id(args.run_id.strip())
    from research import jobs

    status = jobs.resume_run(run_id, foreground=True, by="cli")
    return report_run_outcome(run_id, status, args.json)


def cmd_worker(args: argparse.Namespace) -> int:
    """``research worker``: resume interrupted runs (queued for any worker), then an RQ worker
    executing queued runs (``research.jobs.workers``)."""
    from research import jobs
    from research.jobs import workers

    if not args.no_resume:
        jobs.resume_interrupted(by="worker", backend="rq")
    workers.start_worker(burst=args.burst, name=args.name)
    return EXIT_OK


# ---------------------------------------------------------------------------------- ingest
def cmd_ingest(args: argparse.Namespace) -> int:
    """``research ingest NAME PATH...``: add documents to a named corpus (issue 5). Exit 0 when
    every file was ingested, 1 when some files failed (the others are kept), 2 on bad input."""
    from research.ingest import ingest, validate_corpus_name

    report = ingest(validate_corpus_name(args.name), args.paths)
    if args.json:
        from dataclasses import asdict

        _print_json(asdict(report))
    else:
        print(
            f"corpus {report.corpus}: {len(report.added)} added, {len(report.updated)} updated, "
            f"{len(report.unchanged)} unchanged, {len(report.errors)} failed; {report.files} files, "
            f"{report.chunks} chunks in {report.seconds:.1f} s"
        )
        for path, message in report.errors.items():
            _err("ingest_file_error", message)
    return EXIT_FAILED if report.errors else EXIT_OK
