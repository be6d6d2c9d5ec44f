"""Body of ``research serve``, the HTTP API (parser in ``research.cli.api_parsers``).

FastAPI, uvicorn and the job code load only inside the command, so every other command starts
fast.
"""

from __future__ import annotations

import argparse

from research.cli.common import EXIT_OK
from research.jobs.validation import validate_int
from research.store import open_store
from research.store.connection import set_role


def cmd_serve(args: argparse.Namespace) -> int:
    """``research serve [--host H] [--port N] [--no-resume]``: the HTTP API until Ctrl-C.

    Exit 0 when stopped; 2 for a port outside 1–65535; 1 when uvicorn cannot bind the address.
    """
    port = validate_int("--port", args.port, 1, 65_535)
    set_role("api")  # its lease keeps the embedded server up while it serves
    open_store()  # Redis (embedded or REDIS_URL) is reachable before the server listens
    # FastAPI, uvicorn and the job code load only for `research serve`
    from research.api.app import serve  # noqa: PLC0415 - keeps every other command's start fast

    try:
        serve(args.host, port, resume=not args.no_resume)
    except SystemExit as exc:  # uvicorn exits 1 when it cannot bind (it logged why)
        return int(exc.code or 0)
    return EXIT_OK
