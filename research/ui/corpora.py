"""Corpora page helpers: table rows for the named corpora and their files, from
``research.ingest.list_corpora``. Pure functions of its dicts; the page only renders."""

from __future__ import annotations

import time
from pathlib import PurePath

from research.ui.history import eta_text


def _kb(size: int | None) -> str:
    """``size`` (bytes) as "900 B" / "12.3 kB" / "1.2 MB" ("–" when unknown)."""
    if size is None:
        return "–"
    if size < 1000:
        return f"{size} B"
    return f"{size / 1e6:.1f} MB" if size >= 1e6 else f"{size / 1e3:.1f} kB"


def _when(ts: float | None) -> str:
    """Unix seconds as local "YYYY-MM-DD HH:MM" ("–" when unknown)."""
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(ts)) if ts else "–"


def corpus_rows(corpora: list[dict]) -> list[dict]:
    """One row per corpus: ``{corpus, files, chunks, types, size, failed files, updated}``;
    ``types`` = the file suffixes present ("PDF, DOCX"), ``size`` = total of the readable files."""
    rows = []
    for c in corpora:
        files = c.get("file_list") or []
        ok = [f for f in files if not f.get("error")]
        types = sorted(
            {PurePath(f.get("name") or "").suffix.lstrip(".").upper() for f in ok} - {""}
        )
        rows.append(
            {
                "corpus": c["name"],
                "files": c["files"],
                "chunks": c["chunks"],
                "types": ", ".join(types),
                "size": _kb(sum(int(f.get("size") or 0) for f in ok)) if ok else "–",
                "failed files": len(c.get("errors") or {}),
                "updated": _when(c.get("updated")),
            }
        )
    return rows


def file_rows(corpus: dict) -> list[dict]:
    """One row per file of a corpus: ``{file, pages, chunks, size, status}``; status is "indexed"
    or the reason the file could not be read (without the file name it repeats). Failed files
    first, then by name."""

    def status(f: dict) -> str:
        err = f.get("error") or ""
        return "not indexed: " + err.removeprefix(f"{f.get('name')}: ") if err else "indexed"

    rows = [
        {
            "file": f.get("name") or "",
            "pages": f.get("pages") or 0,
            "chunks": f.get("chunks") or 0,
            "size": _kb(f.get("size")),
            "status": status(f),
        }
        for f in corpus.get("file_list") or []
    ]
    return sorted(rows, key=lambda r: (r["status"] == "indexed", r["file"].lower()))


def index_status_line(state: dict) -> tuple[float | None, str]:
    """``(fraction or None, text)`` for the default corpus's search index, from
    ``research.search.index_progress.index_state``: a fraction while it is being built (the page
    draws a progress bar), None when there is nothing to wait for."""
    name = PurePath(state.get("corpus") or "").name or "default corpus"
    done, total = int(state.get("done") or 0), int(state.get("total") or 0)
    st_ = state.get("state")
    if st_ == "ready":
        return (
            None,
            f"Search index of {name}: ready, {total:,} documents (built {_when(state.get('updated'))}).",
        )
    if st_ == "loading_model":
        return 0.0, f"Indexing {name}: loading the embedding model…"
    if st_ == "embedding":
        return (
            done / total if total else 0.0
        ), f"Indexing {name}: {done:,} / {total:,} documents{eta_text(state.get('eta_s'))}"
    if st_ == "writing":
        return 1.0, f"Indexing {name}: writing the index ({total:,} documents)"
    if st_ == "failed":
        return None, f"Indexing {name} failed: {state.get('error') or 'see the server log'}"
    if st_ == "unavailable":
        return None, f"Default corpus cannot be read: {state.get('error')}"
    return (
        None,
        f"Search index of {name}: not built yet (the first run that searches it builds it).",
    )
