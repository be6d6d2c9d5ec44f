"""Document text read back from a run's raw tool-output artifacts.

Every search is a recorded tool call whose raw JSON artifact holds each result's full document
``text`` next to the ``snippets`` shown to engines (docs/design.md, "Artifacts"); a scrape's
artifact is one document. Two readers share one parser (``artifact_results``):

* ``source_texts``: the report's material. Each collector source maps to the first full text
  found in the raw search artifacts of the run's dialogue turns, by canonical URL or by
  ``(source_type, external_id)``; a source with none falls back to its snippets and key excerpts.
* ``artifact_texts``: a follow-up's corpus. URL → the longest text (or joined snippets) that any
  raw JSON artifact of the run holds, scrapes included.
* ``search_results``: every search result of the run as it was retrieved (``SearchResult``),
  saved as a source or not: the report's indirect evidence reads them
  (``research.evidence.indirect``).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from research.artifacts import artifact_path, artifacts_dir
from research.config import Settings
from research.errors import ArtifactError
from research.models import ConversationResult, SearchResult, SourceRecord
from research.store.source_input import canonical_url

log = logging.getLogger(__name__)


def artifact_results(raw: Any, single: bool = False) -> list[dict[str, Any]]:
    """The result records of one parsed raw artifact: its ``results`` list (dict items only);
    with ``single``, an artifact without a ``results`` list counts as one record (a scrape)."""
    if not isinstance(raw, dict):
        return []
    results = raw.get("results")
    if isinstance(results, list):
        return [r for r in results if isinstance(r, dict)]
    return [raw] if single else []


def _read(path: Path) -> Any:
    """Parsed JSON of ``path``; raises OSError or ValueError when unreadable."""
    return json.loads(path.read_text(encoding="utf-8", errors="replace"))


def source_texts(
    run_id: str,
    conversations: list[ConversationResult],
    sources: list[SourceRecord],
    settings: Settings | None = None,
) -> dict[str, str]:
    """``source_id → full document text`` for the run's saved sources (module doc).

    Reads the raw JSON artifacts listed on the dialogue turns (``DialogueTurn.artifact_files``).
    Sources with no text in any artifact get their turn snippets plus ``key_excerpts`` (may be
    cut with ``…``). Unreadable artifacts are skipped (logged).
    """
    by_url: dict[str, str] = {}
    by_ext: dict[tuple[str, str], str] = {}
    snippets: dict[str, list[str]] = {}
    seen_files: set[str] = set()
    for conv in conversations:
        for turn in conv.turns:
            for ts in turn.sources:
                if ts.snippet:
                    snippets.setdefault(ts.source_id, []).append(ts.snippet)
            for name in turn.artifact_files:
                if not name.endswith(".json") or name in seen_files:
                    continue
                seen_files.add(name)
                for res in _turn_results(run_id, name, settings):
                    text = str(res.get("text") or "")
                    if not text.strip():
                        continue
                    url = str(res.get("url") or "")
                    if url:
                        by_url.setdefault(canonical_url(url), text)
                    ext = str(res.get("external_id") or "").strip().lower()
                    if ext:
                        by_ext.setdefault((str(res.get("source_type") or "").lower(), ext), text)
    out: dict[str, str] = {}
    for s in sources:
        text = by_url.get(canonical_url(s.url)) or by_ext.get(
            (s.source_type, s.external_id.strip().lower()), ""
        )
        if not text and s.external_id.strip():
            text = next(
                (t for (_, e), t in by_ext.items() if e == s.external_id.strip().lower()), ""
            )
        out[s.source_id] = text or "\n".join([*snippets.get(s.source_id, []), s.key_excerpts])
    return out


def _turn_results(run_id: str, name: str, settings: Settings | None) -> list[dict[str, Any]]:
    try:
        raw = _read(artifact_path(run_id, name, settings))
    except (ArtifactError, OSError, ValueError) as exc:
        log.info("run %s: artifact %s not readable for report material (%s)", run_id, name, exc)
        return []
    return artifact_results(raw)


def artifact_texts(run_id: str, settings: Settings | None = None) -> dict[str, str]:
    """URL → longest text found for it in the run's raw JSON artifacts (search results'
    ``text``/``snippets``, scraped pages' ``text``). Unreadable files are skipped."""
    out: dict[str, str] = {}
    for item in _run_records(run_id, settings, single=True):
        if not isinstance(item.get("url"), str):
            continue
        text = item.get("text") or " ".join(
            x for x in item.get("snippets") or [] if isinstance(x, str)
        )
        if isinstance(text, str) and len(text) > len(out.get(item["url"], "")):
            out[item["url"]] = text
    return out


def _run_records(
    run_id: str, settings: Settings | None, *, single: bool
) -> Iterator[dict[str, Any]]:
    """The result records of every readable raw JSON artifact of the run, in file order
    (``artifact_results``; ``single``: a scrape counts as one record)."""
    root = artifacts_dir(run_id, settings)
    if not root.is_dir():
        return
    for path in sorted(root.rglob("*.json")):
        try:
            raw = _read(path)
        except (OSError, ValueError):
            continue
        yield from artifact_results(raw, single=single)


def search_results(run_id: str, settings: Settings | None = None) -> list[SearchResult]:
    """Every search result the run's raw JSON artifacts hold (scrapes left out), one per URL
    with its longest text, in artifact file order. Unreadable files and records that do not
    parse as a ``SearchResult`` are skipped."""
    out: dict[str, SearchResult] = {}
    for item in _run_records(run_id, settings, single=False):
        try:
            r = SearchResult.model_validate(item)
        except ValidationError:
            continue
        old = out.get(r.url)
        if old is None or len(r.text) > len(old.text):
            out[r.url] = r
    return list(out.values())
