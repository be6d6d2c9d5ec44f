"""A run's date window (``--since YYYY[-MM[-DD]]``): which backends can apply it, and the filter
that applies it.

Backends that know a publication date apply the window: PubMed (esearch ``mindate``, publication
date), ClinicalTrials.gov (``filter.advanced`` on the study start date), and corpora whose
documents carry a date (the shared corpus: ``year`` on 942 of its 2,011 PubMed documents; an
ingested corpus has none). Every result they return is checked again here: a result whose latest
possible date (``2014`` → 2014-12-31) falls before the window's first day is dropped.

Undated documents (a corpus document without ``year``, a study without a start date) are
**kept**: their date is unknown, not early, and dropping them would empty most local runs
(1,069 of the shared corpus's 2,011 PubMed documents have no year). The report header says so.
Web backends (Wikipedia, Brave, Tavily, Serper, SearXNG) return no reliable date, so the window
is not applied to them and the run says which ones (event ``since.unsupported``, warning,
report header).
"""

from __future__ import annotations

import calendar
import re
from datetime import date

from research.errors import InputError
from research.models import SearchResult

_SINCE_RE = re.compile(r"^(\d{4})(?:-(\d{1,2}))?(?:-(\d{1,2}))?$")
DATE_AWARE = ("pubmed", "clinicaltrials")  # backends whose API takes a date filter
OVERFETCH = 3  # ask a filtered backend for k × 3 results, so k remain after dropping early ones


def parse_since(text: str | None) -> str | None:
    """``"2015"``, ``"2015-6"``, ``"2015-06-01"`` → ``"2015"``, ``"2015-06"``, ``"2015-06-01"``;
    None/empty → None.

    Raises:
        InputError (code ``bad_since``): not a date of that shape, not a real date, or after today.
    """
    if text is None or not str(text).strip():
        return None
    m = _SINCE_RE.fullmatch(str(text).strip())
    if not m:
        raise InputError(
            f"--since {str(text)[:40]!r} is not a date: use YYYY, YYYY-MM or YYYY-MM-DD "
            "(e.g. 2015 or 2015-06).",
            code="bad_since",
        )
    y, mo, d = (int(x) if x else None for x in m.groups())
    try:
        first = date(y or 1, mo or 1, d or 1)  # the pattern always captures the year
    except ValueError:
        raise InputError(f"--since {text!r} is not a real date.", code="bad_since") from None
    if first > date.today():
        raise InputError(f"--since {text!r} is in the future.", code="bad_since")
    return f"{y:04d}" + (f"-{mo:02d}" if mo else "") + (f"-{d:02d}" if d else "")


def first_day(since: str) -> date:
    """The first day of the window ``since`` (``2015`` → 2015-01-01)."""
    parts = [int(x) for x in since.split("-")]
    return date(parts[0], parts[1] if len(parts) > 1 else 1, parts[2] if len(parts) > 2 else 1)


def last_day(published: str | None) -> date | None:
    """The latest day a ``YYYY[-MM[-DD]]`` date can mean (``2014`` → 2014-12-31); None when
    there is no parseable year."""
    m = re.match(r"^(\d{4})(?:-(\d{1,2}))?(?:-(\d{1,2}))?", str(published or "").strip())
    if not m:
        return None
    y = int(m.group(1))
    mo = int(m.group(2)) if m.group(2) else 12
    if not 1 <= mo <= 12:
        mo = 12
    d = int(m.group(3)) if m.group(3) else calendar.monthrange(y, mo)[1]
    try:
        return date(y, mo, min(d, calendar.monthrange(y, mo)[1]))
    except ValueError:
        return None


def before(result: SearchResult, since: str) -> bool:
    """True when ``result`` was certainly published before the window (undated: False)."""
    last = last_day(result.published)
    return last is not None and last < first_day(since)


class SinceFilter:
    """A retriever that applies the window to a date-aware backend: it passes ``since`` to the
    backend's API when the backend takes it (``backend.since``), over-fetches ``OVERFETCH``×,
    and drops results published before the window. ``dropped`` counts them, ``undated`` counts
    the undated results kept (for the run's header)."""

    def __init__(self, inner, since: str) -> None:
        self.inner = inner
        self.since = since
        self.name = inner.name
        self.dropped = 0
        self.undated = 0
        if hasattr(inner, "since"):
            inner.since = since

    def __getattr__(self, attr: str):
        return getattr(self.inner, attr)

    def search(self, query: str, k: int = 5) -> list[SearchResult]:
        """Up to ``k`` results of the inner backend inside the window (undated ones kept)."""
        results = self.inner.search(query, k * OVERFETCH)
        kept = [r for r in results if not before(r, self.since)]
        self.dropped += len(results) - len(kept)
        kept = kept[:k]
        self.undated += sum(1 for r in kept if not r.published)
        return kept


def window_line(since: str | None, unsupported: list[str] | None = None) -> str:
    """The report header's sentence about the window ('' without one)."""
    if not since:
        return ""
    line = (
        f"Sources published since {since} (PubMed, ClinicalTrials.gov and dated corpus "
        "documents; undated documents are kept)"
    )
    if unsupported:
        line += f"; not applied by: {', '.join(unsupported)}"
    return line + "."
