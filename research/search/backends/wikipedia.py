"""Wikipedia through the MediaWiki Action API: ``list=search`` (titles + snippets), then
``prop=extracts`` (TextExtracts: plain-text intros) for those titles, two requests per search.

API reference: https://www.mediawiki.org/wiki/API:Search and
https://www.mediawiki.org/wiki/Extension:TextExtracts. Base URL
``https://en.wikipedia.org/w/api.php`` (override: ``RESEARCH_WIKIPEDIA_URL``, the full
``api.php`` URL). Results: ``source_type="wikipedia"``, ``external_id="enwiki:<pageid>"``
when the page id is known (else ""), ``url=https://en.wikipedia.org/wiki/<Title>``.
"""

from __future__ import annotations

import html
import re
from urllib.parse import quote

from research.models import SearchResult
from research.search.http import BackendError, clean_query, env_url, get_json

DEFAULT_URL = "https://en.wikipedia.org/w/api.php"
SNIPPET_CHARS = 600
_TAG = re.compile(r"<[^>]+>")


def page_url(title: str) -> str:
    """The article URL of ``title`` (spaces → underscores, percent-encoded)."""
    return "https://en.wikipedia.org/wiki/" + quote(title.replace(" ", "_"), safe="_()',-.:")


def _check(payload: object) -> dict | list:
    if isinstance(payload, dict) and "error" in payload:
        err = payload["error"] or {}
        code = str(err.get("code", "error"))
        reason = "quota" if code in ("ratelimited", "maxlag") else "http_error"
        raise BackendError(
            "wikipedia", reason, f"API error {code}: {str(err.get('info', ''))[:160]}"
        )
    if not isinstance(payload, (dict, list)):
        raise BackendError("wikipedia", "bad_response", "expected a JSON object")
    return payload


def parse_search(payload: object) -> list[dict]:
    """A search-style body → ``[{"title", "pageid" | None, "snippet"}]`` in rank order.

    Reads ``list=search`` (snippet HTML is stripped; ``srprop=""`` bodies have no snippets),
    ``list=prefixsearch``, ``list=geosearch`` and ``action=opensearch`` (``[query, titles,
    descriptions, urls]``).

    Raises:
        BackendError: an API ``{"error": {...}}`` (``http_error``, or ``quota`` when rate
            limited) or an unknown shape (``bad_response``).
    """
    payload = _check(payload)
    if isinstance(payload, list):  # opensearch
        if len(payload) < 2 or not isinstance(payload[1], list):
            raise BackendError("wikipedia", "bad_response", "opensearch body has no title list")
        descs = payload[2] if len(payload) > 2 and isinstance(payload[2], list) else []
        return [
            {"title": t, "pageid": None, "snippet": descs[i] if i < len(descs) else ""}
            for i, t in enumerate(payload[1])
        ]
    query = payload.get("query")
    if not isinstance(query, dict):
        if "batchcomplete" in payload:
            return []
        raise BackendError(
            "wikipedia", "bad_response", f"no 'query' in body (keys {sorted(payload)[:5]})"
        )
    for key in ("search", "prefixsearch", "geosearch"):
        if key in query:
            return [
                {
                    "title": h["title"],
                    "pageid": h.get("pageid"),
                    "snippet": html.unescape(_TAG.sub("", h.get("snippet", "") or "")),
                }
                for h in query[key]
                if isinstance(h, dict) and h.get("title")
            ]
    return []


def parse_extracts(payload: object) -> dict[str, dict]:
    """A ``prop=extracts`` body → ``{title: {"pageid", "extract"}}`` (missing pages skipped).

    Raises:
        BackendError: as ``parse_search``.
    """
    payload = _check(payload)
    pages = (payload.get("query") or {}).get("pages") if isinstance(payload, dict) else None
    if pages is None:
        return {}
    items = pages.values() if isinstance(pages, dict) else pages
    return {
        p["title"]: {"pageid": p.get("pageid"), "extract": p.get("extract", "") or ""}
        for p in items
        if isinstance(p, dict) and "missing" not in p and p.get("title")
    }


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= SNIPPET_CHARS else text[: SNIPPET_CHARS - 1].rsplit(" ", 1)[0] + "…"


def to_results(hits: list[dict], extracts: dict[str, dict], query: str = "") -> list[SearchResult]:
    """Join search hits with their extracts into SearchResults (hit order kept)."""
    out = []
    for h in hits:
        ex = extracts.get(h["title"], {})
        pageid = h.get("pageid") or ex.get("pageid")
        text = ex.get("extract") or h.get("snippet") or ""
        snippet = _clip(text) if text else ""
        out.append(
            SearchResult(
                url=page_url(h["title"]),
                title=h["title"],
                snippets=[snippet] if snippet else [],
                text=text,
                source_type="wikipedia",
                external_id=f"enwiki:{pageid}" if pageid else "",
                doc_id=f"wikipedia:{h['title']}",
                backend="wikipedia",
                query=query,
            )
        )
    return out


class WikipediaSearch:
    """Wikipedia retriever (implements ``Retriever``). Raises BackendError on HTTP/API errors,
    InputError on an empty query."""

    name = "wikipedia"

    def __init__(self, base_url: str | None = None) -> None:
        self.base_url = base_url or env_url("wikipedia", DEFAULT_URL)

    def search(self, query: str, k: int = 5) -> list[SearchResult]:
        """Up to ``k`` articles for ``query`` with their plain-text intros."""
        query = clean_query(query)
        hits = parse_search(
            get_json(
                "wikipedia",
                self.base_url,
                params={
                    "action": "query",
                    "list": "search",
                    "srsearch": query,
                    "srlimit": k,
                    "srprop": "snippet",
                    "format": "json",
                    "formatversion": "2",
                },
            )
        )[:k]
        if not hits:
            return []
        extracts = parse_extracts(
            get_json(
                "wikipedia",
                self.base_url,
                params={
                    "action": "query",
                    "prop": "extracts",
                    "exintro": "1",
                    "explaintext": "1",
                    "exlimit": len(hits),
                    "titles": "|".join(h["title"] for h in hits),
                    "format": "json",
                    "formatversion": "2",
                },
            )
        )
        return to_results(hits, extracts, query)
