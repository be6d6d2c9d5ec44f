"""The docs site builds with ``mkdocs build --strict`` (a broken link, a missing page or a
docstring mkdocstrings cannot read fails it), and its CLI reference lists every subcommand."""

from __future__ import annotations

import os
import re
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


DOC_FILES = sorted((REPO / "docs").glob("*.md")) + [REPO / "README.md"]
# A backticked repository path: a top-level folder of the repository, then a path with a suffix
# or a trailing slash (``research/store/keys.py``, ``tests/``, ``bench/results/``).
REPO_PATH = re.compile(
    r"`((?:research|tests|bench|docs|app_pages|\.streamlit)/[A-Za-z0-9_./-]*)`"
    r"|`((?:streamlit_app|pyproject|mkdocs|Makefile|constraints|CHANGELOG)[A-Za-z0-9_.]*)`"
)
# Files the docs name that the docs build or the analyst makes (secrets are never committed).
GENERATED = ("docs/cli.md", ".streamlit/secrets.toml")


def _named_paths(text: str) -> set[str]:
    """Repository paths named in backticks in ``text``; globs and placeholders left out."""
    found = set()
    for m in REPO_PATH.finditer(text):
        path = (m.group(1) or m.group(2)).rstrip(".,")
        if any(c in path for c in "*{}<>…") or path in GENERATED:
            continue
        found.add(path)
    return found


# A backticked name relative to a folder named earlier on the same line (``keys.py`` in the row
# of ``research/store/``).
BARE = re.compile(r"`([A-Za-z0-9_]+(?:/[A-Za-z0-9_]+)*(?:\.(?:py|md|json|toml|txt|yml)|/))`")


def _row_names(line: str, named: set[str]) -> list[tuple[str, list[str]]]:
    """Bare names of a table row with the folders they may be relative to."""
    bases = sorted({p if p.endswith("/") else p.rsplit("/", 1)[0] + "/" for p in named if "/" in p})
    if not bases:
        return []
    return [
        (name, [*bases, "research/"])
        for name in BARE.findall(line)
        if not any(p == name or p.endswith("/" + name) for p in named) and "/" not in name[:-1]
    ]


def _diagram_names(line: str) -> list[tuple[str, list[str]]]:
    """The paths of a layer diagram line: ``research/store/, llm/   Redis…``."""
    head = re.split(r"\s{2,}", line.strip())[0]
    items = [i.strip() for i in head.split(",") if i.strip()]
    if not items or not items[0].startswith(("research/", "app_pages/")):
        return []
    return [(items[0], [""])] + [(i, ["research/", ""]) for i in items[1:]]


def _missing(doc: Path) -> list[str]:
    """Repository paths ``doc`` names that are not in the tree."""
    missing = []
    fenced = False
    for line in doc.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fenced = not fenced
            continue
        checks: list[tuple[str, list[str]]]
        if fenced:
            checks = _diagram_names(line)
        else:
            named = _named_paths(line)
            checks = [(p, [""]) for p in named]
            if line.startswith("|"):
                checks += _row_names(line, named)
        for name, bases in checks:
            if not any((REPO / base / name).exists() for base in bases):
                missing.append(f"{doc.relative_to(REPO)}: {name}")
    return missing


def test_every_repository_path_the_docs_name_exists():
    missing = [m for doc in DOC_FILES for m in _missing(doc)]
    assert not missing, "\n".join(missing)


def test_nothing_points_at_the_design_files_outside_the_repository():
    # The design lives in docs/design.md; the specs it was drawn from are not in the repository.
    pattern = re.compile(r"DESIGN\.md|seed 00[0-9]|seeds?/")
    roots = ["research", "app_pages", "bench", "tests", "docs"]
    files = [REPO / "README.md", REPO / "streamlit_app.py"]
    for root in roots:
        files += [p for p in (REPO / root).rglob("*") if p.suffix in {".py", ".md", ".json"}]
    hits = [
        f"{p.relative_to(REPO)}:{n}"
        for p in files
        if p != Path(__file__).resolve()
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if pattern.search(line)
    ]
    assert not hits, "\n".join(hits)
