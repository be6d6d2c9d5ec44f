"""The parsers of ``research ask`` and ``research audit`` (their bodies are in ``research.cli.handlers``),
kept light for ``--help``. Exit codes follow ``research.cli``: 0 ok, 2 bad input (nothing stored)."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``ask`` and ``audit`` subparsers to ``sub`` (their bodies: ``cmd_ask``, ``cmd_audit``)."""
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
