"""``research batch FILE | status [BATCH_ID] | zip BATCH_ID`` (parser:
``research.cli.batch_parser``).

Exit codes: 0 queued (or, after waiting, every run complete); 1 some run failed, was cancelled
or is still running when ``--timeout`` ran out; 2 bad input (nothing queued); 130 Ctrl-C.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from research.cli.batch_parser import SHARED_OPTIONS
from research.cli.common import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, _err, _print_json
from research.config import job_backend
from research.errors import InputError
from research.export import safe_filename, write_atomic
from research.jobs.batch import (
    batch_status,
    batch_zip,
    cancel_batch,
    list_batches,
    submit_batch,
    wait_batch,
)
from research.jobs.batch_input import build_configs, read_batch_file

_POLL_S = 1.0


def cmd_batch(args: argparse.Namespace) -> int:
    """Dispatch on the first positional: ``status``, ``zip`` or a batch file."""
    action, rest = args.target[0], args.target[1:]
    if action == "status":
        if len(rest) > 1:
            raise InputError("research batch status takes one BATCH_ID (or none to list batches).")
        if not rest:
            return _list(args)
        return _follow(args, rest[0], waiting=args.wait)
    if action == "zip":
        if len(rest) != 1:
            raise InputError("research batch zip takes one BATCH_ID.")
        path = _write_zip(rest[0], args.out)
        return EXIT_OK if path else EXIT_FAILED
    if rest:
        raise InputError(
            f"research batch takes one FILE (got {len(args.target)} arguments); quote a path "
            "with spaces."
        )
    return _queue(args, Path(action))


def _shared(args: argparse.Namespace) -> dict[str, Any]:
    """The ``--option`` values given (field name → text) for every run of the batch."""
    out: dict[str, Any] = {
        flag.replace("-", "_"): getattr(args, flag.replace("-", "_")) for flag in SHARED_OPTIONS
    }
    out = {k: v for k, v in out.items() if v is not None}
    if args.review:
        out["review"] = True
    return out


def _queue(args: argparse.Namespace, path: Path) -> int:
    timeout = _timeout(args.timeout)
    backend = job_backend()  # a bad backend fails before anything is written
    configs = build_configs(read_batch_file(path), _shared(args))  # everything checked first
    batch = submit_batch(configs, args.name or path.name, backend=backend)
    if not args.json:
        print(f"batch {batch.batch_id}: {len(batch.run_ids)} runs queued ({backend} backend)")
        for run_id, config in zip(batch.run_ids, configs, strict=True):
            print(f"  {run_id}  {config.topic}")
    waiting = args.wait or backend == "thread" or bool(args.zip)
    if backend == "thread" and not args.json:
        print("the runs execute in this process: it stays until they stop (Ctrl-C cancels them)")
    return _follow(args, batch.batch_id, waiting=waiting, timeout=timeout)


def _timeout(raw: str | None) -> float | None:
    if raw is None:
        return None
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if value <= 0:
        raise InputError(f"--timeout must be a positive number of seconds; got {raw!r}.")
    return value


def _follow(
    args: argparse.Namespace, batch_id: str, *, waiting: bool, timeout: float | None = None
) -> int:
    """Print (or wait for, then print) the batch's status; write ``--zip`` when asked."""
    timeout = timeout if timeout is not None else _timeout(args.timeout)
    status = batch_status(batch_id)
    if waiting and not status["done"]:
        status = _wait(batch_id, quiet=args.json, timeout=timeout)
    if args.zip and status["done"]:
        _write_zip(batch_id, args.zip, quiet=args.json)
    if args.json:
        _print_json(status)
    else:
        _print_table(status)
    if not waiting:
        return EXIT_OK
    if status["counts"].get("complete", 0) == status["total"]:
        return EXIT_OK
    others = ", ".join(f"{n} {s}" for s, n in status["counts"].items() if s != "complete")
    _err("batch_incomplete", f"batch {batch_id}: {others}")
    return EXIT_FAILED


def _wait(batch_id: str, *, quiet: bool, timeout: float | None) -> dict[str, Any]:
    """``wait_batch`` printing each run's status changes (stderr); Ctrl-C cancels the active
    runs and keeps waiting until they stop, a second Ctrl-C quits."""
    seen: dict[str, str] = {}
    t0 = time.monotonic()

    def changed(status: dict[str, Any]) -> None:
        for i, row in enumerate(status["runs"], start=1):
            if seen.get(row["run_id"]) != row["status"] and not quiet:
                sys.stderr.write(
                    f"[{time.monotonic() - t0:7.1f}s] {i:>3}/{status['total']} {row['status']:<13} "
                    f"{row['run_id']}  {row['topic'][:70]}\n"
                )
            seen[row["run_id"]] = row["status"]

    try:
        return wait_batch(batch_id, poll_s=_POLL_S, timeout_s=timeout, on_poll=changed)
    except KeyboardInterrupt:
        asked = cancel_batch(batch_id)
        sys.stderr.write(
            f"cancelling {len(asked)} run(s) of batch {batch_id} at their next step "
            "(Ctrl-C again to quit now)...\n"
        )
        try:
            return wait_batch(batch_id, poll_s=_POLL_S, on_poll=changed)
        except KeyboardInterrupt:
            _err("interrupted", "stopped by Ctrl-C")
            raise SystemExit(EXIT_INTERRUPTED) from None


def _print_table(status: dict[str, Any]) -> None:
    counts = ", ".join(f"{n} {s}" for s, n in status["counts"].items())
    print(
        f"batch {status['batch_id']} ({status['name']}): {status['total']} runs · {counts} · "
        f"{status['progress']:.0%}"
    )
    print(f"  {'RUN ID':<16}  {'STATUS':<13} {'DONE':>5} {'SOURCES':>7} {'CITES':>5}  TOPIC")
    for row in status["runs"]:
        topic = row["topic"] if len(row["topic"]) <= 60 else row["topic"][:59] + "…"
        print(
            f"  {row['run_id']:<16}  {row['status']:<13} {row['progress']:>5.0%} "
            f"{row['sources']:>7} {row['citations']:>5}  {topic}"
        )


def _list(args: argparse.Namespace) -> int:
    rows = list_batches()
    if args.json:
        _print_json(rows)
    elif not rows:
        print("No batches yet. Queue one with: research batch topics.txt")
    else:
        for row in rows:
            print(f"{row['batch_id']}  {row['total']:>4} runs  {row['name']}")
    return EXIT_OK


def _write_zip(batch_id: str, out: str | None, *, quiet: bool = False) -> Path | None:
    """Write the batch's reports zip; returns its path (None, with an error line, when the
    batch has no report yet)."""
    data, count = batch_zip(batch_id)
    if not count:
        _err("report_not_ready", f"batch {batch_id} has no finished report yet")
        return None
    name = batch_status(batch_id)["name"]
    path = write_atomic(
        Path(out).expanduser() if out else Path.cwd() / safe_filename(name, "zip"), data
    )
    if not quiet:
        print(f"{path} ({count} reports)")
    return path
