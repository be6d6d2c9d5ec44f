"""The parser of ``research regenerate`` (its body is ``research.cli.regenerate``), kept light for
``--help``. Exit codes follow ``research.cli``: 0 ok, 2 bad input (nothing stored)."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``regenerate`` subparser to ``sub`` (its body: ``cmd_regenerate``)."""
    reg = sub.add_parser(
        "regenerate",
        help="write one section of a run's report again with an instruction (a new version)",
    )
    reg.add_argument("run_id", metavar="RUN_ID")
    reg.add_argument(
        "heading", metavar="HEADING", help='the section\'s heading (quote it: "Clinical Efficacy")'
    )
    reg.add_argument(
        "--instruction",
        required=True,
        metavar="TEXT",
        help='how to rewrite it: "shorter", "only phase III trials", "focus on elderly patients"',
    )
    reg.add_argument(
        "--research",
        action="store_true",
        help="research more first: one Analyst follow-up dialogue turn (as `research ask "
        "--research`)",
    )
    reg.add_argument(
        "--author", metavar="NAME", help='who the new version is by (default: "analyst")'
    )
    reg.add_argument(
        "--json", action="store_true", help="print {version, heading, changed, engine_label, …}"
    )
