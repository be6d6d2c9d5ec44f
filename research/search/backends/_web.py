"""Helpers shared by the web-search backends (Brave, Tavily, Serper, SearXNG): snippet
cleaning and the ``SearchResult`` shape of a web hit (``source_type="web"``, no external id
unless the URL is a DOI/PubMed/ClinicalTrials.gov link, see ``research.search.multi``)."""

from __future__ import annotations

import html
import re

from research.models import SearchResult

SNIPPET_CHARS = 600
_TAG = re.compile(r"<[^>]+>")


def clean(text: object) -> str:
    """HTML tags and entities removed, whitespace collapsed; ``""`` for non-strings."""
    if not isinstance(text, str):
        return ""
    return " ".join(html.unescape(_TAG.sub("", text)).split())


def clip(text: str, n: int = SNIPPET_CHARS) -> str:
    """``text`` cut at a word boundary to at most ``n`` characters (``…`` marks a cut)."""
    return text if len(text) <= n else text[: n - 1].rsplit(" ", 1)[0] + "…"


def web_result(
    backend: str,
    url: str,
    title: str,
    snippets: list[str],
    query: str,
    published: str | None = None,
    text: str = "",
) -> SearchResult:
    """A web hit as a SearchResult; empty snippets dropped, each clipped to 600 chars."""
    snips = [clip(s) for s in (clean(x) for x in snippets) if s]
    return SearchResult(
        url=url,
        title=clean(title) or url,
        snippets=snips[:3],
        text=clean(text) or "\n".join(snips),
        source_type="web",
        external_id="",
        doc_id="",
        published=published,
        backend=backend,
        query=query,
    )
