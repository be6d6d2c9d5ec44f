"""Work-arounds for interpreter bugs that this product's threads can hit.

``serialise_ast_parse``: on CPython 3.11 and 3.12 the AST constructor's recursion counter lives
in interpreter-wide state (``Python/Python-ast.c``, ``state->recursion_depth``; gh-95185 added
the check, gh-106905 reports the error). When two threads turn a parse tree into ``ast`` objects
at once and the interpreter switches threads in between (a garbage-collection pass can release
the GIL), the later one raises ``SystemError: AST constructor recursion depth mismatch
(before=45, after=34)``. It happens here: the dashboard starts indexing the default corpus in a
background thread, whose ``import torch`` calls ``ast.parse`` ~100 times (``inspect``
signatures, ``torch._sources``), while the script thread ``ast.parse``-s the page for Streamlit's
magic — a fresh server's first page load failed that way in a CI run (tests/test_pages.py).
Reproduced on 3.11.2 and 3.11.7 by ``tests/test_compat.py``.
"""

from __future__ import annotations

import ast
import functools
import sys
import threading
from typing import Any

_LOCK = threading.RLock()  # re-entrant: a finaliser run by the GC may itself parse


def serialise_ast_parse() -> bool:
    """Make ``ast.parse`` hold one process-wide lock, on CPython < 3.13 (idempotent).

    ``ast.parse`` is looked up as a module attribute by its callers (Streamlit's magic,
    ``inspect``, torch), so wrapping it there covers them; ``compile()`` without
    ``PyCF_ONLY_AST`` (imports) builds no ``ast`` objects and is not affected. Cost: parses in
    different threads run one after another (they held the GIL anyway).

    Returns:
        True when the wrapper is installed (now or before), False on interpreters without the bug.
    """
    if sys.version_info >= (3, 13) or sys.implementation.name != "cpython":
        return False
    if getattr(ast.parse, "_research_serialised", False):
        return True
    original = ast.parse

    @functools.wraps(original)
    def parse(*args: Any, **kwargs: Any) -> Any:
        with _LOCK:
            return original(*args, **kwargs)

    parse._research_serialised = True  # type: ignore[attr-defined]  # marks the wrapper as installed
    ast.parse = parse
    return True
