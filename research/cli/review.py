"""Handlers of ``research plan`` and ``research approve`` (parsers in ``research.cli``).

``research plan RUN_ID [--json]`` prints the run's ``{plan, syllabus, perspectives}`` (JSON with
``--json``: the shape ``approve --plan`` accepts). ``research approve RUN_ID [--plan FILE]
[--json]`` applies the edit (any subset of the three keys; ``research.planning.edit`` validates it)
to a run in ``awaiting_review`` and runs it to completion in the foreground, printing the same
summary as ``research run`` — or, with ``RESEARCH_JOB_BACKEND=rq``, enqueues it for a worker and
waits. ``research approve RUN_ID --cancel`` cancels the run instead. Bad input (unknown run, run
not awaiting review, unreadable or invalid file) exits 2 with nothing changed.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from research import jobs
from research.cli.common import EXIT_OK, _print_json
from research.cli.outcome import _store, report_run_outcome
from research.config import job_backend
from research.errors import InputError
from research.jobs import review
from research.planning.edit import load_edit
from research.store.keys import check_run_id


def cmd_plan(args: argparse.Namespace) -> int:
    """``research plan RUN_ID``: the stored plan bundle (any status once planned)."""

    store = _store()
    run_id = check_run_id(args.run_id.strip())
    state = store.get_run(run_id)
    bundle = review.plan_bundle(run_id, store)
    if args.json:
        _print_json(bundle.model_dump(mode="json"))
        return EXIT_OK
    print(f"{state.topic} · {state.status}")
    print(f"{bundle.plan.plan_title}")
    for s in bundle.plan.steps:
        print(f"  {s.step_id}. {s.title}")
    print(f"syllabus {bundle.syllabus.name}:")
    for q in bundle.syllabus.questions:
        print(f"  {q.key:<32} {q.label} (min {q.min_sources})")
    print("perspectives: " + ", ".join(p.name for p in bundle.perspectives))
    if state.status == "awaiting_review":
        print(f"approve with: research approve {run_id} [--plan edited.json]")
    return EXIT_OK


def _read_edit(path: str | None) -> dict | None:

    if not path:
        return None
    p = Path(path).expanduser()
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(
            f"Cannot read the plan file '{path}' ({getattr(exc, 'strerror', None) or exc}); "
            "give a UTF-8 JSON file.",
            code="invalid_plan",
        ) from None
    return load_edit(text, f"The plan file '{p.name}'")


def cmd_approve(args: argparse.Namespace) -> int:
    """``research approve RUN_ID``: validate, store, run (or enqueue and wait); exit 0 when the
    run completes, 1 when it fails or is cancelled, 2 on bad input."""

    store = _store()
    run_id = check_run_id(args.run_id.strip())
    if args.cancel:
        review.cancel(run_id, by="cli", store=store)
        print(f"run {run_id} cancelled", file=sys.stderr if args.json else sys.stdout)
        if args.json:
            _print_json(jobs.run_summary(run_id))
        return EXIT_OK
    edit = _read_edit(args.plan)
    if job_backend() == "rq":
        review.approve(run_id, edit, by="cli", run="background", store=store)
        status: str = jobs.wait_for(run_id).status
    else:
        status = review.approve(run_id, edit, by="cli", run="foreground", store=store)
    return report_run_outcome(run_id, status, args.json)
