"""Which corpora a run started over the HTTP API or MCP may search: only corpora registered on
the server.

A token holder or an assistant is not the owner of the server's files, so ``corpus`` there is not
any path the server process can read (as it is for ``research run``, whose user owns the
machine). It may name:

- nothing: the server's default corpus (``RESEARCH_CORPUS``, set by whoever runs the server);
- a path inside a folder an admin listed in ``RESEARCH_CORPUS_ROOTS`` (``:``- or
  newline-separated); a relative path is taken inside the first root that has it;
- the default corpus's own path.

The path is resolved first (``os.path.realpath``: ``..`` and every symlink), so neither a
``..`` path nor a symlink leads out of a root; a folder is refused too when a file or folder in
it is a symlink to somewhere outside every root (the folder reader would follow a linked file).
Named corpora (the Corpora page, ``research ingest``, ``PUT /corpora/{name}/documents/{file}``)
are searched with ``corpora`` and are registered by being in the data dir. Anything else is
refused with :class:`AccessError` code ``corpus_not_registered`` before any file is read.
(Jupyter Server's ``root_dir`` and Label Studio's local-files root confine file access the same
way.)
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from research.config import Settings, load_settings
from research.errors import AccessError

CODE = "corpus_not_registered"
_SPLIT = re.compile(rf"[\n{re.escape(os.pathsep)}]+")


def corpus_roots(settings: Settings | None = None) -> list[Path]:
    """The folders of ``RESEARCH_CORPUS_ROOTS``, resolved (symlinks followed), in order."""
    text = (settings or load_settings()).corpus_roots
    return [
        Path(os.path.realpath(Path(p.strip()).expanduser()))
        for p in _SPLIT.split(text)
        if p.strip()
    ]


def _inside(path: Path, root: Path) -> bool:
    return path == root or path.is_relative_to(root)


def served_corpus(corpus: str | None, settings: Settings | None = None) -> str | None:
    """The resolved path of ``corpus`` when a served run may search it; None for "the default
    corpus" (``corpus`` empty).

    Args:
        corpus: the request's ``corpus`` (a path; a relative one is taken inside the first
            root that has it).
        settings: resolved settings (default ``load_settings()``).

    Returns:
        The real path (``..`` and symlinks resolved) inside a registered root, or None.
    Raises:
        AccessError: code ``corpus_not_registered``, with how to register a corpus. No file is
            read before this check.
    """
    if corpus is None or not str(corpus).strip():
        return None
    settings = settings or load_settings()
    text = str(corpus).strip()
    roots = corpus_roots(settings)
    named = _named_path(text, roots) if "\x00" not in text else None
    if named is not None:
        real = Path(os.path.realpath(named))
        if real == Path(os.path.realpath(settings.default_corpus)):
            return str(real)
        if any(_inside(real, root) for root in roots):
            link = _link_out(real, roots)
            if link is None:
                return str(real)
            raise AccessError(refusal(text, roots, link=link), code=CODE)
    raise AccessError(refusal(text, roots), code=CODE)


def _named_path(text: str, roots: list[Path]) -> Path | None:
    """The path ``text`` names: itself when absolute; a relative one inside the first root
    that has it (a dangling symlink counts), else inside the first root; None with no roots."""
    if os.path.isabs(text):
        return Path(text)
    inside = [root / text for root in roots]
    return next((p for p in inside if os.path.lexists(p)), inside[0] if inside else None)


def _link_out(folder: Path, roots: list[Path]) -> str | None:
    """The first entry under ``folder`` (a path relative to it) that is a symlink resolving
    outside every root, or None. Only names and link targets are read (no file contents);
    symlinked folders are not descended into (nor does the folder reader descend into them).
    A ``folder`` that is a file has no entries: None."""
    for here, dirs, files in os.walk(folder):
        for name in sorted(dirs) + sorted(files):
            entry = Path(here) / name
            if not entry.is_symlink():
                continue
            real = Path(os.path.realpath(entry))
            if not any(_inside(real, root) for root in roots):
                return entry.relative_to(folder).as_posix()
    return None


def refusal(corpus: str, roots: list[Path], link: str | None = None) -> str:
    """The 403 message: what was refused (``link``: the entry of a folder that links outside
    every root, relative to the folder) and the ways to register a corpus."""
    where = (
        f"a folder under {', '.join(str(r) for r in roots)} (RESEARCH_CORPUS_ROOTS)"
        if roots
        else "a folder under a root an admin lists in RESEARCH_CORPUS_ROOTS (none is set)"
    )
    why = (
        f"its entry '{link[:200]}' is a symlink to a path outside every registered root"
        if link
        else "runs started over the HTTP API or MCP search only registered corpora"
    )
    return (
        f"The corpus '{corpus[:200]}' is not registered on this server: {why}. Runs started "
        "over the HTTP API or MCP search only registered corpora: "
        "name a named corpus in 'corpora' "
        "(GET /corpora lists them; an admin token uploads documents into one with "
        f"PUT /corpora/{{name}}/documents/{{filename}}), or give {where}, or leave 'corpus' out "
        "for the server's default corpus."
    )
