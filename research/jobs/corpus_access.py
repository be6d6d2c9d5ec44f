"""Which corpora a run started over the HTTP API or MCP may search: only corpora registered on
the server.

A token holder or an assistant is not the owner of the server's files, so ``corpus`` there is not
any path the server process can read (as it is for ``research run``, whose user owns the
machine). It may name:

- nothing: the server's default corpus (``RESEARCH_CORPUS``, set by whoever runs the server);
- a path inside a folder an admin listed in ``RESEARCH_CORPUS_ROOTS`` (``:``- or
  newline-separated); a relative path is taken inside each root in turn;
- the default corpus's own path.

The path is resolved first (``os.path.realpath``: ``..`` and every symlink), so neither a
``..`` path nor a symlink leads out of a root. Named corpora (the Corpora page, ``research
ingest``, ``PUT /corpora/{name}/documents/{file}``) are searched with ``corpora`` and are
registered by being in the data dir. Anything else is refused with :class:`AccessError` code
``corpus_not_registered`` before any file is read. (Jupyter Server's ``root_dir`` and Label
Studio's local-files root confine file access the same way.)
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
        corpus: the request's ``corpus`` (a path; relative paths are taken inside each root).
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
    if "\x00" not in text:
        default = Path(os.path.realpath(settings.default_corpus))
        candidates = [Path(text)] if os.path.isabs(text) else [root / text for root in roots]
        for candidate in candidates:
            real = Path(os.path.realpath(candidate))
            if real == default or any(_inside(real, root) for root in roots):
                return str(real)
    raise AccessError(refusal(text, roots), code=CODE)


def refusal(corpus: str, roots: list[Path]) -> str:
    """The 403 message: what was refused and the ways to register a corpus."""
    where = (
        f"a folder under {', '.join(str(r) for r in roots)} (RESEARCH_CORPUS_ROOTS)"
        if roots
        else "a folder under a root an admin lists in RESEARCH_CORPUS_ROOTS (none is set)"
    )
    return (
        f"The corpus '{corpus[:200]}' is not registered on this server: runs started over the "
        "HTTP API or MCP search only registered corpora. Name a named corpus in 'corpora' "
        "(GET /corpora lists them; an admin token uploads documents into one with "
        f"PUT /corpora/{{name}}/documents/{{filename}}), or give {where}, or leave 'corpus' out "
        "for the server's default corpus."
    )
