"""Layer boundaries of ``research/``, checked by walking the code with ``ast``:

- no import cycles among ``research`` modules (module-level and function-level imports alike);
- the raw Redis client (``.r`` of a RunStore / collector, ``get_redis()``) is used only inside
  ``research/store/`` — everything else goes through the store's methods;
- ``os.environ`` / ``os.getenv`` are read only by the settings module (``research/config.py``) and
  the CLI entry point (``research/cli/commands.py``);
- every event emitted with a literal name is declared in ``research/events.py`` and no event
  name is built at run time (an f-string).
"""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

from research.events import EVENTS

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "research"
ENV_READERS = {"research/config.py", "research/cli/commands.py"}


@cache
def _modules() -> dict[str, Path]:
    """Dotted module name → file, for every module under ``research/``."""
    out = {}
    for path in PKG.rglob("*.py"):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _resolve(name: str) -> str | None:
    mods = _modules()
    while name and name not in mods:
        name = name.rpartition(".")[0]
    return name or None


def _imports(mod: str, path: Path) -> set[str]:
    """``research`` modules imported anywhere in ``path`` (top level or inside functions)."""
    pkg = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [_resolve(a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = pkg.split(".")[: len(pkg.split(".")) - (node.level - 1)]
                base = ".".join(up + ([node.module] if node.module else []))
            targets = [
                _resolve(f"{base}.{a.name}") if f"{base}.{a.name}" in _modules() else _resolve(base)
                for a in node.names
            ]
        else:
            continue
        out |= {t for t in targets if t and t != mod}
    return out


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_cycles():
    graph = {mod: _imports(mod, path) for mod, path in _modules().items()}
    assert _cycles(graph) == []


def _rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def _raw_redis_uses(source: str, label: str) -> list[str]:
    """Lines using the raw client: attribute ``.r`` (``store.r``, ``ctx.store.r``, ``self.r``)
    or calling ``get_redis`` (the client factory)."""
    hits = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr == "r":
            hits.append(f"{label}:{node.lineno} .r")
        elif (
            isinstance(node, ast.Call)
            and getattr(node.func, "id", getattr(node.func, "attr", "")) == "get_redis"
        ):
            hits.append(f"{label}:{node.lineno} get_redis()")
    return hits


def test_raw_redis_client_only_inside_the_store():
    outside = [p for p in sorted(PKG.rglob("*.py")) if not _rel(p).startswith("research/store/")]
    pages = sorted((ROOT / "app_pages").glob("*.py")) + [ROOT / "streamlit_app.py"]
    hits = [
        h for p in outside + pages for h in _raw_redis_uses(p.read_text(encoding="utf-8"), _rel(p))
    ]
    assert hits == []


def _environ_reads(source: str, label: str) -> list[str]:
    """Lines touching ``os.environ`` / ``os.getenv`` (``from os import environ`` counts too)."""
    hits = []
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.Attribute)
            and node.attr in ("environ", "getenv")
            and getattr(node.value, "id", "") == "os"
        ):
            hits.append(f"{label}:{node.lineno} os.{node.attr}")
        elif (
            isinstance(node, ast.ImportFrom)
            and node.module == "os"
            and any(a.name in ("environ", "getenv") for a in node.names)
        ):
            hits.append(f"{label}:{node.lineno} from os import")
    return hits


def test_environment_read_only_by_settings_and_cli():
    files = [p for p in sorted(PKG.rglob("*.py")) if _rel(p) not in ENV_READERS]
    pages = sorted((ROOT / "app_pages").glob("*.py")) + [ROOT / "streamlit_app.py"]
    hits = [
        h for p in files + pages for h in _environ_reads(p.read_text(encoding="utf-8"), _rel(p))
    ]
    assert hits == []


def test_checks_see_real_violations():
    """The walkers are not vacuous: they find a cycle, a raw client use and an env read."""
    assert _cycles({"a": {"b"}, "b": {"a"}, "c": set()}) == [["a", "b"]]
    src = (
        "import os\nv = os.environ.get('X')\nstore.r.get('k')\nget_redis()\nfrom os import getenv\n"
    )
    assert sorted(_environ_reads(src, "x")) == ["x:2 os.environ", "x:5 from os import"]
    assert sorted(_raw_redis_uses(src, "x")) == ["x:3 .r", "x:4 get_redis()"]


def test_only_pages_and_ui_import_the_ui_layer():
    """Layers point down: nothing under ``research/`` outside ``research/ui/`` imports it (the
    exports use the neutral ``research.export.rendering``)."""
    graph = {mod: _imports(mod, path) for mod, path in _modules().items()}
    up = sorted(
        f"{m} → {t}"
        for m, targets in graph.items()
        if not m.startswith("research.ui")
        for t in targets
        if t == "research.ui" or t.startswith("research.ui.")
    )
    assert up == []


def test_one_citation_regex():
    """Every citation-marker regex (``[n]``) is built in research/citations.py."""
    marker = re.compile(
        r"""re\.(?:compile|sub|findall|fullmatch|match|search|finditer|split)\(\s*r?["'][^"']*\\\[\(?\\d"""
    )
    files = [p for p in sorted(PKG.rglob("*.py")) if _rel(p) != "research/citations.py"]
    hits = [
        f"{_rel(p)}:{n}"
        for p in files
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if marker.search(line)
    ]
    assert hits == []


def _emitted_events(source: str, label: str) -> list[tuple[str, str]]:
    """``(label:line, event name)`` of every ``.emit(...)`` / ``._emit(...)`` call whose event
    argument (first or second positional) is a string literal; an f-string reads ``<f-string>``."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("emit", "_emit")
        ):
            continue
        for arg in node.args[:2]:
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                out.append((f"{label}:{node.lineno}", arg.value))
                break
            if isinstance(arg, ast.JoinedStr):
                out.append((f"{label}:{node.lineno}", "<f-string>"))
                break
    return out


def test_every_emitted_event_is_declared():
    """Each literal event name passed to ``emit`` is in research/events.py (typed events)."""
    files = sorted(PKG.rglob("*.py")) + sorted((ROOT / "app_pages").glob("*.py"))
    found = [e for p in files for e in _emitted_events(p.read_text(encoding="utf-8"), _rel(p))]
    assert len(found) > 40  # the walker sees the real emitters
    assert [f"{where} {name}" for where, name in found if name not in EVENTS] == []


def test_event_walker_sees_undeclared_names():
    src = (
        'store.emit(run_id, "plan.ready", {})\nctx.emit("plan.redy", {})\n'
        'self._emit(f"search.{kind}", {})\nemit(state)\n'
    )
    assert _emitted_events(src, "x") == [
        ("x:1", "plan.ready"),
        ("x:2", "plan.redy"),
        ("x:3", "<f-string>"),
    ]


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the docstring nodes (first statement string of a module, class or function, and
    the attribute docstring right after an assignment)."""
    out = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if not isinstance(body, list):
            continue
        for i, stmt in enumerate(body):
            if (
                isinstance(stmt, ast.Expr)
                and isinstance(stmt.value, ast.Constant)
                and isinstance(stmt.value.value, str)
                and (i == 0 or isinstance(body[i - 1], (ast.Assign, ast.AnnAssign)))
            ):
                out.add(id(stmt.value))
    return out


def _offline_wordings(source: str, label: str) -> list[str]:
    """Lines with a string (not a docstring) that spells the offline engine's label itself."""
    tree = ast.parse(source)
    docs = _docstrings(tree)
    return [
        f"{label}:{n.lineno}"
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant)
        and isinstance(n.value, str)
        and id(n) not in docs
        and "offline extractive" in n.value.lower()
    ]


def test_offline_label_spelled_once():
    """Every page, export, follow-up and CLI line takes the label from research/engines/labels.py."""
    files = [p for p in sorted(PKG.rglob("*.py")) if _rel(p) != "research/engines/labels.py"]
    files += sorted((ROOT / "app_pages").glob("*.py")) + [ROOT / "streamlit_app.py"]
    hits = [h for p in files for h in _offline_wordings(p.read_text(encoding="utf-8"), _rel(p))]
    assert hits == []
    src = '"""Docs may say offline extractive mode."""\nx = "Offline extractive mode"\ny = f"{a} offline extractive"\n'
    assert _offline_wordings(src, "x") == ["x:2", "x:3"]
