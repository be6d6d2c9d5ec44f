"""The dating line every rendering of a report carries (page, md, HTML, PDF, DOCX): the date of
the run ("as of"), the ``--since`` window and the backends that could not apply it, and the
language note (the extractive engine cannot translate).

Built at render time from the run's state and its ``since.unsupported`` event, so every report —
also one written before this line existed — says as of when it is.
"""

from __future__ import annotations

from datetime import UTC, datetime

from research.engines.labels import OFFLINE_LABEL
from research.llm.language import LANGUAGES
from research.models import RunState
from research.search.since import window_line
from research.store.runs import RunStore


def run_date(state: RunState) -> str:
    """The date of the run (``YYYY-MM-DD``, UTC): when it started."""
    return datetime.fromtimestamp(state.created_at, tz=UTC).date().isoformat()


def unsupported_backends(store: RunStore, state: RunState) -> list[str]:
    """Backends that could not apply the run's ``--since`` window (its ``since.unsupported``
    event; [] without a window)."""
    if not state.config.since:
        return []
    for e in store.events(state.run_id):
        if e.type == "since.unsupported":
            return list(e.data.get("backends") or [])
    return []


def header_line(store: RunStore, state: RunState) -> str:
    """One plain sentence group, e.g. ``As of 2026-11-20 (the date of the run). Sources
    published since 2015 (…); not applied by: wikipedia. Written in German.``"""
    parts = [f"As of {run_date(state)} (the date of the run)."]
    window = window_line(state.config.since, unsupported_backends(store, state))
    if window:
        parts.append(window)
    lang = state.config.language or "en"
    if lang != "en":
        name = LANGUAGES.get(lang, lang)
        if state.config.engine == "extractive":
            parts.append(
                f"{name} was asked, but {OFFLINE_LABEL} cannot translate: the text is quoted "
                "from the sources in their own language."
            )
        else:
            parts.append(f"Written in {name}; search queries were sent in English.")
    return " ".join(parts)


def with_header(markdown: str, line: str) -> str:
    """``markdown`` with ``> line`` as a block quote after its first ``# `` title line (at the
    top when it has none)."""
    lines = markdown.split("\n")
    at = next((i + 1 for i, ln in enumerate(lines) if ln.startswith("# ")), 0)
    rest = "\n".join(lines[at:]).lstrip("\n")
    head = "\n".join(lines[:at])
    return (f"{head}\n\n" if head else "") + f"> {line}\n\n{rest}"
