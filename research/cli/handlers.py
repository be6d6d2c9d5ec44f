"""Bodies of the ``research`` subcommands (``cmd_<name>``); ``research.cli.commands.main`` imports
this module only after the arguments parsed, so ``--help`` and argument errors stay fast.

Size: one short body per subcommand, kept in one module that loads only after parsing (the
larger commands already have their own modules).
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path

from research import jobs
from research.cli.batch import cmd_batch
from research.cli.common import EXIT_FAILED, EXIT_OK, _err, _print_json
from research.cli.embedded_redis import cmd_redis, cmd_server
from research.cli.mcp import cmd_mcp
from research.cli.outcome import (
    _print_outcome,
    _store,
    notification_lines,
    print_notifications,
    report_run_outcome,
)
from research.cli.progress import IndexBar
from research.cli.regenerate import cmd_regenerate
from research.cli.review import cmd_approve, cmd_plan
from research.cli.serve import cmd_serve
from research.cli.tokens import cmd_token
from research.config import job_backend, load_settings
from research.engines.labels import offline_label
from research.errors import InputError
from research.export import EXTENSIONS, export_markdown, export_run, safe_filename
from research.followup.ask import ask, audit_run, validate_question
from research.ingest import ingest, validate_corpus_name
from research.jobs import workers
from research.jobs.validation import validate_int
from research.llm.validate import parse_models
from research.search.index_progress import index_state
from research.store.comments import CommentStore
from research.store.connection import set_role
from research.store.keys import check_run_id
from research.store.versions import VersionStore

# ``research.cli.commands.main`` dispatches ``research NAME`` to ``cmd_NAME`` of this module.
__all__ = [
    "cmd_approve",
    "cmd_ask",
    "cmd_audit",
    "cmd_batch",
    "cmd_export",
    "cmd_ingest",
    "cmd_list",
    "cmd_mcp",
    "cmd_plan",
    "cmd_redis",
    "cmd_regenerate",
    "cmd_resume",
    "cmd_run",
    "cmd_serve",
    "cmd_server",
    "cmd_show",
    "cmd_token",
    "cmd_worker",
]

_POLL_S = 0.25  # s between progress polls


def cmd_run(args: argparse.Namespace) -> int:
    """``research run``: the flags as typed go through the one input gate
    (``jobs.make_config``, the messages the API, MCP and the dashboard give), then the run
    executes in this process and its outcome is reported."""

    options: dict = {
        "corpus": args.corpus,
        "template": args.template,
        "review": args.review,
        "max_perspectives": args.max_perspectives,
        "max_turns": args.max_turns,
        "gap_turns": args.gap_turns,
        "depth": args.depth,
        "engine": args.engine,
        "mode": args.mode,
    }
    if args.mode == "costorm":
        options["costorm"] = _costorm_options(args)
    for option in ("search", "corpora", "min_databases", "since", "language", "notify"):
        if getattr(args, option):
            options[option] = getattr(args, option)
    options.update(_llm_options(args))
    config = jobs.make_config(args.topic, **options)
    index_bar = IndexBar()  # stderr only: --json stdout stays pure JSON
    # say at once that the index must be built, before the run (and the pipeline) starts
    if config.corpus and "local" in config.search:
        if index_state(config.corpus, load_settings().index_dir)["state"] == "missing":
            index_bar.update({"state": "loading_model", "done": 0, "total": 0})
    t0 = time.monotonic()
    state = _run_with_progress(jobs, config, quiet=args.json, index_bar=index_bar)
    summary = jobs.run_summary(state.run_id)
    if args.json:
        _print_json(summary)
    else:
        _print_outcome(summary, elapsed_s=summary["wall_s"] or time.monotonic() - t0)
        print_notifications(state.run_id)
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
    """``--model/--models/--budget-usd/--budget-tokens`` → make_config kwargs;
    ``--record/--replay`` → the run's cassette (``RunConfig.cassette_mode`` / ``cassette_path``)."""

    if args.record and args.replay:
        raise InputError("Use either --record or --replay, not both.")
    if args.replay and not Path(args.replay).is_file():
        raise InputError(f"Cassette '{args.replay}' does not exist; record one with --record PATH.")
    out: dict = jobs.engine_options(args.engine, args.model, parse_models(args.models))
    for flag, mode in ((args.record, "record"), (args.replay, "replay")):
        if flag:
            out.update(cassette_mode=mode, cassette_path=str(Path(flag).expanduser().resolve()))
            out["engine"] = args.engine or "litellm"  # a cassette holds model calls
    if args.budget_usd is not None:
        out["budget_usd"] = args.budget_usd
    if args.budget_tokens is not None:
        out["budget_tokens"] = args.budget_tokens
    return out


def _costorm_options(args: argparse.Namespace) -> dict:
    """Co-STORM settings from ``--experts/--max-node-items/--moderator-after/--alpha/
    --query-budget/--costorm-turns`` as typed (unset → defaults); the input gate checks them
    (``research.costorm.settings.validate_costorm``)."""

    flags = {
        "experts": "experts",
        "max_node_items": "max_node_items",
        "moderator_after": "moderator_after",
        "alpha": "alpha",
        "query_budget": "query_budget",
        "max_turns": "costorm_turns",
    }
    return {
        field: getattr(args, flag)
        for field, flag in flags.items()
        if getattr(args, flag) is not None
    }


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
        except BaseException as exc:
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
    backend = job_backend()  # a bad backend fails before anything is written
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
        except SystemExit:
            # SIGTERM (research.cli.commands): this process ends now; the run says so at once
            # (instead of looking active until its lease lapses) and resumes later
            store.set_status(run_id, "interrupted", error="stopped by SIGTERM")
            sys.stderr.write(f"stopped; `research resume {run_id}` continues the run\n")
            raise
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

    limit = validate_int("--limit", args.limit, 1, 100_000)
    store = _store()
    store.reconcile_dead_runs()  # explicit: reads are pure; listing persists dead runs as interrupted
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

    return datetime.fromtimestamp(ts, tz=UTC).isoformat(timespec="seconds")


# ---------------------------------------------------------------------------------- show
def cmd_show(args: argparse.Namespace) -> int:
    """``research show RUN_ID``: the whole run as JSON (``--json``) or a short summary."""

    run_id = check_run_id(args.run_id.strip())
    _store().get_run(run_id)  # RunNotFoundError before the pipeline is imported

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
    for line in notification_lines(run_id):
        print(line)
    return EXIT_OK


def _version_arg(raw: str | None) -> int | None:
    """``--version N`` as an int (None when absent). Raises InputError for anything else."""
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
    """``research resume RUN_ID``: continue an interrupted run in this process."""

    run_id = check_run_id(args.run_id.strip())

    status = jobs.resume_run(run_id, foreground=True, by="cli")
    return report_run_outcome(run_id, status, args.json)


def cmd_worker(args: argparse.Namespace) -> int:
    """``research worker``: resume interrupted runs (queued for any worker), then an RQ worker
    executing queued runs (``research.jobs.workers``)."""

    set_role("worker")  # its lease keeps the embedded server up while it serves
    if not args.no_resume:
        jobs.resume_interrupted(by="worker", backend="rq")
    workers.start_worker(burst=args.burst, name=args.name)
    return EXIT_OK


# ---------------------------------------------------------------------------------- ingest
def cmd_ingest(args: argparse.Namespace) -> int:
    """``research ingest NAME PATH...``: add documents to a named corpus. Exit 0 when
    every file was ingested, 1 when some files failed (the others are kept), 2 on bad input."""

    report = ingest(validate_corpus_name(args.name), args.paths)
    if args.json:
        _print_json(asdict(report))
    else:
        print(
            f"corpus {report.corpus}: {len(report.added)} added, {len(report.updated)} updated, "
            f"{len(report.unchanged)} unchanged, {len(report.errors)} failed; {report.files} files, "
            f"{report.chunks} chunks in {report.seconds:.1f} s"
        )
        for _path, message in report.errors.items():
            _err("ingest_file_error", message)
    return EXIT_FAILED if report.errors else EXIT_OK


# -- research ask / research audit (parsers in research.cli.followup)
def _print_json_followup(obj) -> None:
    sys.stdout.write(json.dumps(obj, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def cmd_ask(args: argparse.Namespace) -> int:
    """``research ask RUN_ID "question" [--research] [--json]``."""

    validate_question(args.question)  # cheap checks first: a bad question never loads a model
    say = None if args.json else (lambda msg: print(f"… {msg}", file=sys.stderr, flush=True))
    f = ask(args.run_id, args.question, research=args.research, on_progress=say)
    if args.json:
        _print_json_followup(f.cli_dict())
        return 0
    label = f" ({offline_label(with_note=True)})" if f.extractive else ""
    print(f"Q: {f.question}\nA{label}: {f.answer}")
    for r in f.new_references:
        print(f"  new reference [{r.number}] {r.title} — {r.url}")
    if f.sources_added:
        print(f"  research-more saved {f.sources_added} new source(s)")
    for c in f.audit:
        print(f"  [{c.number}] {c.verdict} (score {c.score:.2f})")
    return 0


def cmd_audit(args: argparse.Namespace) -> int:
    """``research audit RUN_ID [--json]``: the report's citation audit (stored with the run)."""

    audit = audit_run(args.run_id, refresh=args.refresh)
    if args.json:
        _print_json_followup(audit.model_dump(mode="json"))
        return 0
    print(audit.line())
    for c in audit.checks:
        if c.verdict != "supported":
            print(f"  [{c.number}] {c.verdict} {c.score:.2f}: {c.sentence[:120]}")
    return 0
