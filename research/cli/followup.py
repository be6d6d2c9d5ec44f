"""``research ask`` and ``research audit``: parsers and command bodies, kept out of
``research/cli/commands.py``. Exit codes follow ``research.cli``: 0 ok, 2 bad input (nothing stored)."""

from __future__ import annotations

import argparse
import json
import sys

from research.engines.labels import offline_label
from research.followup.ask import ask, audit_run, validate_question


def register(sub) -> dict:
    """Add the ``ask`` and ``audit`` subparsers to ``sub``; returns ``{command: handler}``."""
    ask = sub.add_parser("ask", help="ask a run a follow-up question, answered from its sources")
    ask.add_argument("run_id", metavar="RUN_ID")
    ask.add_argument(
        "question", metavar="QUESTION", help="the question (quote it; up to 1,000 characters)"
    )
    ask.add_argument(
        "--research",
        action="store_true",
        help="research more first: one Analyst follow-up dialogue turn on the run's backends",
    )
    ask.add_argument(
        "--json",
        action="store_true",
        help="print {answer, citations, new_references, sources_added, audit}",
    )
    aud = sub.add_parser(
        "audit", help="audit every citation of a run's report (supported / weak / unsupported)"
    )
    aud.add_argument("run_id", metavar="RUN_ID")
    aud.add_argument(
        "--refresh", action="store_true", help="recompute even when an audit is stored"
    )
    aud.add_argument("--json", action="store_true", help="print the audit as JSON")
    return {"ask": cmd_ask, "audit": cmd_audit}


def _print_json(obj) -> None:
    sys.stdout.write(json.dumps(obj, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def cmd_ask(args: argparse.Namespace) -> int:
    """``research ask RUN_ID "question" [--research] [--json]``."""

    validate_question(args.question)  # cheap checks first: a bad question never loads a model
    say = None if args.json else (lambda msg: print(f"… {msg}", file=sys.stderr, flush=True))
    f = ask(args.run_id, args.question, research=args.research, on_progress=say)
    if args.json:
        _print_json(f.cli_dict())
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
        _print_json(audit.model_dump(mode="json"))
        return 0
    print(audit.line())
    for c in audit.checks:
        if c.verdict != "supported":
            print(f"  [{c.number}] {c.verdict} {c.score:.2f}: {c.sentence[:120]}")
    return 0
