"""The parsers of ``research serve`` and ``research token`` (their bodies are ``research.cli.serve``
and ``research.cli.tokens``), kept light for ``--help``. Exit codes follow ``research.cli``: 0 ok,
2 bad input (nothing stored)."""

from __future__ import annotations

import argparse

DEFAULT_HOST = "127.0.0.1"  # as research.api.app, which --help must not import
DEFAULT_PORT = 8600


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``serve`` and ``token`` subparsers to ``sub`` (bodies: ``cmd_serve``, ``cmd_token``)."""
    srv = sub.add_parser(
        "serve",
        help="serve the HTTP API (runs, events, reports, follow-ups; bearer tokens)",
        description="Serve the HTTP API with uvicorn until Ctrl-C. Every endpoint but /health "
        "needs a token from `research token create NAME`; the OpenAPI docs are at /docs.",
    )
    srv.add_argument(
        "--host", default=DEFAULT_HOST, help=f"address to listen on (default {DEFAULT_HOST})"
    )
    srv.add_argument(
        "--port", default=str(DEFAULT_PORT), metavar="N", help=f"port (default {DEFAULT_PORT})"
    )
    srv.add_argument(
        "--no-resume",
        action="store_true",
        help="do not resume interrupted runs at start (thread job backend)",
    )

    tok = sub.add_parser(
        "token",
        help="create, list or revoke the HTTP API's bearer tokens",
        description="Bearer tokens of the HTTP API. A token is printed once, when created; "
        "only its SHA-256 digest is stored.",
    )
    # the CLI's parser class (its one error format and exit code 2), as `research` passed it
    tok_sub = tok.add_subparsers(
        dest="token_command", required=True, metavar="ACTION", parser_class=sub._parser_class
    )
    create = tok_sub.add_parser("create", help="create a token and print it (once)")
    create.add_argument("name", metavar="NAME", help="letters, digits, '.', '_' or '-' (≤ 64)")
    create.add_argument(
        "--scope",
        choices=("read", "run", "admin"),
        default="run",
        help="read: list, show, download; run (default): also start runs and ask, approve and "
        "cancel its own; admin: also delete runs, act on every run and manage corpora",
    )
    create.add_argument(
        "--json", action="store_true", help="print {name, scope, token, created_at}"
    )
    revoke = tok_sub.add_parser("revoke", help="revoke a token: requests with it get 401")
    revoke.add_argument("name", metavar="NAME")
    lst = tok_sub.add_parser("list", help="list tokens with their created and last-use times")
    lst.add_argument("--json", action="store_true", help="print a JSON array")
