"""The run store and a run's outcome summary for the ``research`` subcommands that run jobs."""

from __future__ import annotations

import sys
from pathlib import Path

from research import jobs
from research.cli.common import EXIT_FAILED, EXIT_OK, _err, _print_json
from research.notify import wait_idle
from research.store import open_store

NOTIFY_WAIT_S = 120.0  # s: the deliveries of this process's run (retries included)


def _store():

    return open_store()


def _print_outcome(s: dict, elapsed_s: float | None = None) -> None:
    took = (
        f" in {elapsed_s:.1f}s"
        if elapsed_s is not None
        else (f" in {s['wall_s']:.1f}s" if s["wall_s"] else "")
    )
    print(
        f"{s['status']}{took} · {s['sources']} sources · {s['citations']} citations · "
        f"{s['llm_calls']} LLM calls (${s['cost_usd']:.4f})"
    )
    for key, count in (s.get("questions") or {}).items():
        print(f"  {key}: {count} sources")
    if s.get("report_path"):
        print(f"report: {s['report_path']}")
    if Path(s["artifacts_dir"]).is_dir():
        print(f"artifacts: {s['artifacts_dir']}")
    print(f"run id: {s['run_id']}")


def notification_lines(run_id: str) -> list[str]:
    """One line per delivery of the run's notifications: event, redacted target, sent or why not."""

    lines = []
    for rec in _store().notifications.list(run_id):
        how = (
            f"sent ({rec.attempts} attempt(s))"
            if rec.ok
            else f"FAILED after {rec.attempts} attempt(s): {rec.error}"
        )
        lines.append(f"notification {rec.event} → {rec.target}: {how}")
    return lines


def print_notifications(run_id: str) -> None:
    """Wait for this process's notification deliveries (at most ``NOTIFY_WAIT_S``), then print
    the run's ``notification_lines`` on stderr."""

    wait_idle(NOTIFY_WAIT_S)
    for line in notification_lines(run_id):
        print(line, file=sys.stderr)


def report_run_outcome(run_id: str, status: str, as_json: bool) -> int:
    """Print a finished run's summary (``--json`` or the outcome lines) and return the exit code:
    ``EXIT_OK`` when ``status`` is ``"complete"``, else an error line and ``EXIT_FAILED``.
    Shared by ``research resume`` and ``research approve``."""

    summary = jobs.run_summary(run_id)
    if as_json:
        _print_json(summary)
    else:
        _print_outcome(summary)
        print_notifications(run_id)
    if status == "complete":
        return EXIT_OK
    _err(status, summary.get("error") or f"run {run_id} ended {status}")
    return EXIT_FAILED
