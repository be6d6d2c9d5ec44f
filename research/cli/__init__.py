"""The ``research`` command line: its parser, its subcommands and their shared output format."""

from research.cli.commands import build_parser, main

__all__ = ["build_parser", "main"]
