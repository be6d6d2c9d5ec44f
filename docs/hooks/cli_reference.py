"""MkDocs hook: the CLI reference page, generated from ``research``'s argparse parser at build
time, so it lists every subcommand and option the code has and cannot drift from it."""

from __future__ import annotations

import argparse

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files

from research.cli.commands import build_parser


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _help_of(parser: argparse.ArgumentParser, name: str) -> str:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for choice in action._choices_actions:
                if choice.dest == name:
                    return choice.help or ""
    return ""


def cli_reference() -> str:
    """Markdown: one section per ``research`` subcommand with its ``--help`` text."""
    parser = build_parser()
    parser.prog = "research"
    subs = _subparsers(parser)
    out = [
        "# CLI reference",
        "",
        "Generated from the `research` command's argparse parser when the site is built.",
        f"`research` has {len(subs)} subcommands:",
        "",
        "| Subcommand | What it does |",
        "|---|---|",
    ]
    out += [f"| [`{name}`](#{name}) | {_help_of(parser, name)} |" for name in subs]
    out += ["", "```text", parser.format_help().rstrip(), "```", ""]
    for name, sub in subs.items():
        sub.prog = f"research {name}"
        out += [
            f"## {name}",
            "",
            _help_of(parser, name),
            "",
            "```text",
            sub.format_help().rstrip(),
            "```",
            "",
        ]
    return "\n".join(out)


def on_files(files: Files, config: MkDocsConfig) -> Files:
    """Add the generated ``cli.md`` to the site's files."""
    files.append(File.generated(config, "cli.md", content=cli_reference()))
    return files
