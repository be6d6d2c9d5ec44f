"""Handler of ``research regenerate RUN "Section heading" --instruction "…" [--research]
[--json]``: the section is written again (``research.desk.regenerate``) and stored as a new
version at once (the command has no one to ask); it prints ``{version, heading, changed}`` with
``--json``. Bad input (unknown run or heading, empty instruction) exits 2 with nothing stored."""

from __future__ import annotations

import argparse
import sys

from research.cli.common import EXIT_OK, _print_json
from research.cli.outcome import _store
from research.desk.regenerate import regenerate, validate_instruction


def cmd_regenerate(args: argparse.Namespace) -> int:
    """``research regenerate RUN_ID HEADING --instruction TEXT [--research] [--json]``."""
    validate_instruction(args.instruction)  # cheap check first: a bad instruction loads no model
    say = None if args.json else (lambda msg: print(f"… {msg}", file=sys.stderr, flush=True))
    candidate, outcome = regenerate(
        _store(),
        args.run_id,
        args.heading,
        args.instruction,
        research=args.research,
        author=args.author,
        on_progress=say,
    )
    if args.json:
        _print_json(
            {
                "version": outcome.version.number,
                "heading": candidate.heading,
                "changed": outcome.changed,
                "engine_label": candidate.engine_label,
                "citations": candidate.cited,
                "uncited": outcome.uncited,
                "followup": candidate.followup_id,
                "sources_added": candidate.sources_added,
            }
        )
        return EXIT_OK
    print(outcome.message())
    print(f"## {candidate.heading} ({candidate.engine_label})\n\n{candidate.new_text}")
    return EXIT_OK
