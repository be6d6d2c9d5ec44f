"""research/_compat.py: ``ast.parse`` is safe to call from several threads at once (the
dashboard's background indexing imports torch while Streamlit parses a page)."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from research._compat import serialise_ast_parse

ROOT = Path(__file__).resolve().parents[1]

# Three threads parse the same module source; a GC callback that sleeps releases the GIL in the
# middle of the AST construction, which is what a busy process does by chance.
STRESS = """
import ast, gc, json, sys, threading, time
if sys.argv[1] == "patched":
    import research  # installs research._compat.serialise_ast_parse
src = "\\n".join(f"def f{i}(a, b):\\n    return [x * {i} for x in range(a) if x % b]" for i in range(300))
gc.callbacks.append(lambda phase, info: time.sleep(0))
gc.set_threshold(50)
errors = []
def work():
    for _ in range(int(sys.argv[2])):
        try:
            ast.parse(src)
        except SystemError as exc:
            errors.append(str(exc))
threads = [threading.Thread(target=work) for _ in range(3)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(json.dumps(errors))
"""


def _stress(mode: str, rounds: int) -> list[str]:
    out = subprocess.run(
        [sys.executable, "-c", STRESS, mode, str(rounds)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        timeout=120,
        check=True,
    )
    return json.loads(out.stdout)


@pytest.mark.skipif(sys.version_info >= (3, 13), reason="the interpreter bug is 3.11/3.12 only")
def test_concurrent_ast_parse_fails_without_the_lock_and_not_with_it():
    unpatched = _stress("plain", 30)
    assert (
        unpatched and "AST constructor recursion depth mismatch" in unpatched[0]
    )  # the bug is real here
    assert _stress("patched", 30) == []


def test_the_wrapper_is_installed_once_and_keeps_parse_working():

    first = ast.parse
    assert serialise_ast_parse() is (sys.version_info < (3, 13))
    assert ast.parse is first  # idempotent: no wrapper around the wrapper
    assert isinstance(ast.parse("x = 1", mode="exec"), ast.Module)
    with pytest.raises(SyntaxError):
        ast.parse("def (")
