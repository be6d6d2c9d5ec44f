"""The docs site builds with ``mkdocs build --strict`` (a broken link, a missing page or a
docstring mkdocstrings cannot read fails it), and its CLI reference lists every subcommand."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from research.cli.commands import build_parser

REPO = Path(__file__).resolve().parents[1]
MKDOCS = Path(sys.executable).parent / "mkdocs"


def test_docs_build_strict_and_list_every_subcommand(tmp_path):
    site = tmp_path / "site"
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_MKDOCS_2_WARNING": "1"}
    result = subprocess.run(
        [str(MKDOCS), "build", "--strict", "--site-dir", str(site)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    cli_page = (site / "cli" / "index.html").read_text(encoding="utf-8")
    subcommands = next(a for a in build_parser()._actions if a.dest == "command").choices
    assert subcommands
    for name in subcommands:
        assert f'<h2 id="{name}"' in cli_page, name
