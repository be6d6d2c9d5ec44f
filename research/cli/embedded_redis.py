"""``research redis status|stop``: the data dir's embedded Redis, seen and stopped by hand.

``research server`` is the old name of the command, kept one release as an alias that says so on
stderr; it was too easily mistaken for ``research serve`` (the HTTP API).

Neither action starts the server or takes a lease on it (``research.store.holders``): looking at
it must not keep it alive, and stopping it must not count this command as one of its users.
"""

from __future__ import annotations

import argparse
import sys

from research.cli.common import EXIT_OK, _print_json
from research.store.connection import embedded_status, stop_embedded


def cmd_redis(args: argparse.Namespace) -> int:
    """``research redis status [--json]`` / ``research redis stop [--force] [--json]``.

    Exit 0; 2 (``server_in_use``, via ``InputError``) when ``stop`` is refused because a live
    dashboard, worker or other command uses the server and ``--force`` was not given.
    """
    if args.redis_command == "stop":
        out = stop_embedded(force=args.force)
        if args.json:
            _print_json(out)
        elif not out["stopped"]:
            print(f"No embedded Redis is running for {out['data_dir']}.")
        else:
            note = f" (it was in use by {out['users']})" if out["users"] else ""
            print(
                f"Stopped the embedded Redis (pid {out['pid']}) of {out['data_dir']}{note}; "
                "its data is saved and the next command starts it again."
            )
        return EXIT_OK
    status = embedded_status()
    if args.json:
        _print_json(status)
        return EXIT_OK
    print(f"Data dir: {status['data_dir']}")
    if status["external_redis"]:
        print("REDIS_URL is set: commands use that Redis, not the embedded one.")
    for srv in status["servers"]:
        state = f"running (pid {srv['pid']})" if srv["running"] else "not running"
        print(f"Embedded Redis: {state} on {srv['socket']}")
        if srv["running"]:
            print(f"In use by: {srv['in_use_by'] or 'nobody (the next command to end stops it)'}")
    return EXIT_OK


def cmd_server(args: argparse.Namespace) -> int:
    """``research server …``: the deprecated name of ``research redis``; same arguments, same
    exit codes, plus a note on stderr naming the new command."""
    print(
        "research server is deprecated and will be removed: use `research redis "
        f"{args.redis_command}` (`research serve` is the HTTP API).",
        file=sys.stderr,
    )
    return cmd_redis(args)
