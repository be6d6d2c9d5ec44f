"""``research mcp [--http PORT] [--host HOST]``: the MCP server (``research.mcp_server``)."""

from __future__ import annotations

import argparse

from research.cli.common import EXIT_OK
from research.jobs.validation import validate_int
from research.store.connection import set_role


def cmd_mcp(args: argparse.Namespace) -> int:
    """Serve on stdio, or streamable HTTP on ``--http PORT`` (1–65535), until stopped."""
    port = None if args.http is None else validate_int("--http", args.http, 1, 65535)
    # the MCP SDK (starlette, uvicorn: ~1 s) loads only for this command
    from research.mcp_server.server import serve  # noqa: PLC0415 - see above

    set_role("mcp")  # its lease keeps the embedded server up while it serves (and runs its runs)
    serve(port, host=args.host)
    return EXIT_OK
