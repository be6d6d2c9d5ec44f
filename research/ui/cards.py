"""Summary cards and raw artifacts for the Artifacts page (docs/design.md § Tool-result compression).

Cards are ``ArtifactRecord`` s from ``RunStore.get_cards``; raw files are read only through
``research.artifacts.artifact_path`` so a stored name can never reach outside the run's
artifacts dir.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar

from research.artifacts import artifact_path
from research.errors import ArtifactError, InputError
from research.models import ArtifactRecord

Usefulness = Literal["all", "useful", "not useful"]
USEFULNESS: tuple[Usefulness, ...] = ("all", "useful", "not useful")
DISPLAY_MAX_CHARS = 20_000  # raw text shown on the page; the download is always the whole file
T = TypeVar("T")


def tool_names(cards: Iterable[ArtifactRecord]) -> list[str]:
    """Distinct tool names, sorted."""
    return sorted({c.tool_name for c in cards})


def filter_cards(
    cards: Sequence[ArtifactRecord],
    usefulness: Usefulness = "all",
    tools: Iterable[str] | None = None,
) -> list[ArtifactRecord]:
    """Cards matching the filters, in stored (call) order.

    Args:
        usefulness: ``"all"``, ``"useful"`` (``card.is_useful``) or ``"not useful"``.
        tools: keep only these tool names; None or empty keeps every tool.

    Raises:
        InputError: unknown ``usefulness`` value.
    """
    if usefulness not in USEFULNESS:
        raise InputError(f"usefulness must be one of {', '.join(USEFULNESS)}; got {usefulness!r}.")
    wanted = set(tools or ())
    out = []
    for c in cards:
        if usefulness == "useful" and not c.card.is_useful:
            continue
        if usefulness == "not useful" and c.card.is_useful:
            continue
        if wanted and c.tool_name not in wanted:
            continue
        out.append(c)
    return out


def paginate(items: Sequence[T], page: int, per_page: int) -> tuple[list[T], int]:
    """``(items on page, number of pages)``; ``page`` is 1-based and clamped to ``1..pages``."""
    if per_page < 1:
        raise ValueError("per_page must be >= 1")
    pages = max(1, math.ceil(len(items) / per_page))
    page = min(max(1, int(page)), pages)
    start = (page - 1) * per_page
    return list(items[start : start + per_page]), pages


@dataclass(frozen=True)
class RawView:
    """What the page shows of one raw artifact.

    Attributes:
        path: absolute file path.
        size_bytes: file size in bytes.
        text: the first ``DISPLAY_MAX_CHARS`` characters (all of it when not truncated).
        truncated: True when the file holds more than ``text``.
        parsed: the decoded JSON value when the file is ``.json``, not truncated and valid; else None.
    """

    path: Path
    size_bytes: int
    text: str
    truncated: bool
    parsed: Any = None

    @property
    def language(self) -> str:
        """Syntax-highlighting language for ``st.code``: ``"json"`` or ``"text"``."""
        return "json" if self.path.suffix.lower() == ".json" else "text"


def load_raw(run_id: str, artifact_file: str, max_chars: int = DISPLAY_MAX_CHARS) -> RawView:
    """Read the start of a run's raw artifact for display.

    Raises:
        ArtifactError: unsafe name, missing or unreadable file.
    """
    path = artifact_path(run_id, artifact_file)
    try:
        size = path.stat().st_size
        with path.open("r", encoding="utf-8", errors="replace") as fh:
            text = fh.read(max_chars + 1)
    except OSError as exc:
        raise ArtifactError(
            f"Cannot read artifact '{artifact_file[:80]}': {exc.strerror or exc}."
        ) from exc
    truncated = len(text) > max_chars
    text = text[:max_chars]
    parsed = None
    if not truncated and path.suffix.lower() == ".json":
        try:
            parsed = json.loads(text)
        except json.JSONDecodeError:
            parsed = None
    return RawView(path=path, size_bytes=size, text=text, truncated=truncated, parsed=parsed)


def raw_bytes(run_id: str, artifact_file: str) -> bytes:
    """The whole raw artifact (for ``st.download_button``). Raises ArtifactError."""
    path = artifact_path(run_id, artifact_file)
    try:
        return path.read_bytes()
    except OSError as exc:
        raise ArtifactError(
            f"Cannot read artifact '{artifact_file[:80]}': {exc.strerror or exc}."
        ) from exc


def mime_type(artifact_file: str) -> str:
    """``application/json`` for ``.json`` files, else ``text/plain``."""
    return "application/json" if artifact_file.lower().endswith(".json") else "text/plain"


def human_size(n_bytes: int) -> str:
    """``512 B``, ``12.3 KB``, ``4.0 MB`` (1 KB = 1024 B)."""
    size = float(n_bytes)
    for unit in ("B", "KB", "MB"):
        if size < 1024 or unit == "MB":
            return f"{int(size)} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} MB"  # pragma: no cover


def reduction_pct(cards: Sequence[ArtifactRecord]) -> float | None:
    """Seed 001 §10 context reduction in percent: ``100 * (1 − card_tokens / raw_tokens)``
    over the useful cards' injected tokens vs all raw tokens; None when no raw tokens."""
    raw = sum(c.raw_tokens for c in cards)
    if raw <= 0:
        return None
    injected = sum(c.card_tokens for c in cards if c.card.is_useful)
    return round(100.0 * (1 - injected / raw), 1)
