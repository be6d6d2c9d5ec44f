"""The ``research`` command line: its parser, its subcommands and their shared output format."""

from research.cli.commands import (
    main,
)

__all__ = [
    "main",
]
