"""What every ``research`` subcommand shares, kept light for the parser: exit codes, the one error
line format, JSON output. The run store and the outcome summary are ``research.cli.outcome``."""

from __future__ import annotations

import json
import sys

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT, EXIT_INTERRUPTED = 0, 1, 2, 130


def _err(code: str, message: str) -> None:
    sys.stderr.write(f"error [{code}]: {message}\n")


def _print_json(obj) -> None:
    sys.stdout.write(json.dumps(obj, ensure_ascii=False, indent=None) + "\n")
    sys.stdout.flush()
