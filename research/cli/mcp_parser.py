"""The parser of ``research mcp`` (its body is ``research.cli.mcp``), kept light for ``--help``."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``mcp`` subparser to ``sub`` (its body: ``cmd_mcp``)."""
    mcp = sub.add_parser(
        "mcp",
        help="serve Research Desk to MCP clients (Claude Desktop...): stdio, or HTTP with --http",
        description="A Model Context Protocol server with the tools start_research, get_run, "
        "get_report, ask_run, get_answer, list_runs and search_corpus. Runs it starts execute in "
        "this process (thread backend) or on RQ workers, exactly as from the dashboard.",
    )
    mcp.add_argument(
        "--http", metavar="PORT", help="serve streamable HTTP on this port (path /mcp)"
    )
    mcp.add_argument(
        "--host", default="127.0.0.1", metavar="HOST", help="HTTP bind address (default 127.0.0.1)"
    )
