"""The layer contracts of pyproject.toml (import-linter, docs/architecture.md) hold on the code,
and they bite: on a copy of the package where the store imports the pipeline (a lower layer
importing a higher one), ``lint-imports`` fails and names that import."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


def _lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` over the package under ``root`` with ``root``'s pyproject.toml."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run(
        [str(LINT_IMPORTS), "--config", str(root / "pyproject.toml"), "--no-cache"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def _copy(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    shutil.copytree(
        REPO / "research", root / "research", ignore=shutil.ignore_patterns("__pycache__")
    )
    shutil.copy(REPO / "pyproject.toml", root / "pyproject.toml")
    return root


def test_contracts_are_kept(tmp_path):
    result = _lint_imports(_copy(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def test_an_upward_import_breaks_the_layers(tmp_path):
    root = _copy(tmp_path)
    keys = root / "research" / "store" / "keys.py"
    keys.write_text(
        keys.read_text(encoding="utf-8") + "\nfrom research.pipeline import runner\n",
        encoding="utf-8",
    )
    result = _lint_imports(root)
    assert result.returncode != 0
    assert "Imports go down the layers BROKEN" in result.stdout
    assert "research.store.keys -> research.pipeline.runner" in result.stdout
