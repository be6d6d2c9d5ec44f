"""Tavily Search API: ``POST /search`` with ``Authorization: Bearer $TAVILY_API_KEY`` and body
``{query, max_results, search_depth}``; reads ``results[{url,title,content,score,raw_content,
published_date}]``.

Reference: https://docs.tavily.com/documentation/api-reference/endpoint/search. Base URL
``https://api.tavily.com`` (override: ``RESEARCH_TAVILY_URL``).
"""

from __future__ import annotations

from research.models import SearchResult
from research.search.backends._web import web_result
from research.search.http import BackendError, clean_query, env_url, get_json, require_key

DEFAULT_URL = "https://api.tavily.com"
KEY_VAR = "TAVILY_API_KEY"


def parse_response(payload: object, query: str = "") -> list[SearchResult]:
    """A Tavily ``/search`` body → SearchResults. Also reads recorded
    ``{request, response: {status, body}}`` extracts and LangChain's ``{"results": [{url,
    content}]}`` output.

    Raises:
        BackendError: an error body (``{"detail": {"error": ...}}``) or an unknown shape.
    """
    if (
        isinstance(payload, dict)
        and isinstance(payload.get("response"), dict)
        and "body" in payload["response"]
    ):
        payload = payload["response"]["body"]
    if not isinstance(payload, dict):
        raise BackendError("tavily", "bad_response", "expected a JSON object")
    if "detail" in payload or "error" in payload:
        detail = payload.get("detail") or payload.get("error")
        msg = detail.get("error", detail) if isinstance(detail, dict) else detail
        raise BackendError(
            "tavily", "quota" if "limit" in str(msg).lower() else "http_error", str(msg)[:200]
        )
    if "results" not in payload:
        raise BackendError(
            "tavily", "bad_response", f"no 'results' in body (keys {sorted(payload)[:5]})"
        )
    out = []
    for h in payload["results"] or []:
        if isinstance(h, dict) and h.get("url"):
            r = web_result(
                "tavily",
                h["url"],
                h.get("title") or "",
                [h.get("content", "")],
                query,
                published=h.get("published_date"),
                text=h.get("raw_content") or "",
            )
            r.score = float(h.get("score") or 0.0)
            out.append(r)
    return out


class TavilySearch:
    """Tavily retriever (implements ``Retriever``); needs ``TAVILY_API_KEY``.
    Raises BackendError (``missing_key`` names the variable), InputError on an empty query."""

    name = "tavily"

    def __init__(self, base_url: str | None = None) -> None:
        self.base_url = base_url or env_url("tavily", DEFAULT_URL)

    def search(self, query: str, k: int = 5) -> list[SearchResult]:
        """Up to ``k`` web results for ``query``."""
        query = clean_query(query)
        key = require_key("tavily", KEY_VAR)
        payload = get_json(
            "tavily",
            f"{self.base_url}/search",
            headers={"Authorization": f"Bearer {key}"},
            json={"query": query, "max_results": min(k, 20), "search_depth": "basic"},
            method="POST",
        )
        return parse_response(payload, query)[:k]
