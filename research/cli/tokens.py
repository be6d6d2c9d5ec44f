"""Body of ``research token create|revoke|list`` (parser in ``research.cli.api_parsers``).

``research token create NAME [--scope read|run|admin]`` prints the new token once (``--json``:
``{name, scope, token, created_at}``); Redis keeps only its SHA-256 digest (``research.store.tokens``). ``research token
list`` shows each token's name, creation and last-use time, never the token.
"""

from __future__ import annotations

import argparse
from datetime import UTC, datetime

from research.cli.common import EXIT_OK, _print_json
from research.store import open_store


def _iso(ts: float | None) -> str | None:
    return None if ts is None else datetime.fromtimestamp(ts, tz=UTC).isoformat(timespec="seconds")


def cmd_token(args: argparse.Namespace) -> int:
    """``research token create NAME [--scope S] [--json]`` / ``revoke NAME`` / ``list [--json]``.

    Exit 0; 2 (``InputError``) for a bad name, an existing name on create, or an unknown one on
    revoke."""
    tokens = open_store().tokens
    if args.token_command == "create":
        info, token = tokens.create(args.name, args.scope)
        if args.json:
            _print_json(
                {
                    "name": info.name,
                    "scope": info.scope,
                    "token": token,
                    "created_at": info.created_at,
                }
            )
        else:
            print(
                f"Token '{info.name}' (scope {info.scope}) created. Copy it now: it is not shown "
                f"again.\n{token}\n"
                "Send it as the header 'Authorization: Bearer <token>'."
            )
        return EXIT_OK
    if args.token_command == "revoke":
        tokens.revoke(args.name)
        print(f"Token '{args.name}' revoked: requests with it now get 401.")
        return EXIT_OK
    infos = tokens.list()
    if args.json:
        _print_json(
            [
                {**t.public(), "created": _iso(t.created_at), "last_used": _iso(t.last_used_at)}
                for t in infos
            ]
        )
    elif not infos:
        print("No API tokens yet. Create one with: research token create NAME")
    else:
        print(f"{'NAME':<24} {'SCOPE':<6} {'CREATED (UTC)':<20} LAST USED (UTC)")
        for t in infos:
            created = (_iso(t.created_at) or "")[:19].replace("T", " ")
            used = (_iso(t.last_used_at) or "never")[:19].replace("T", " ")
            print(f"{t.name:<24} {t.scope:<6} {created:<20} {used}")
    return EXIT_OK
