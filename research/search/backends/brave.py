"""Brave Web Search API: ``GET /res/v1/web/search?q=...`` with header
``X-Subscription-Token: $BRAVE_API_KEY``; reads ``web.results[{url,title,description,
extra_snippets,page_age}]``.

Reference: https://api-dashboard.search.brave.com/app/documentation/web-search/get-started.
Base URL ``https://api.search.brave.com/res/v1`` (override: ``RESEARCH_BRAVE_URL``).
"""

from __future__ import annotations

from research.models import SearchResult
from research.search.backends._web import web_result
from research.search.http import BackendError, clean_query, env_url, get_json, require_key

DEFAULT_URL = "https://api.search.brave.com/res/v1"
KEY_VAR = "BRAVE_API_KEY"


def parse_response(payload: object, query: str = "") -> list[SearchResult]:
    """A Brave web-search body → SearchResults (``[]`` when it has no ``web`` block, i.e. no
    hits). Also reads recorded ``{request, response}`` wrappers and LangChain's
    ``{"results": [{title, link, snippet}]}`` output.

    Raises:
        BackendError: a Brave error body (``{"type": "ErrorResponse", "error": {...}}``;
            ``quota`` for RATE_LIMITED / quota codes) or an unknown shape (``bad_response``).
    """
    if isinstance(payload, dict) and "response" in payload and "request" in payload:
        payload = payload["response"]
    if not isinstance(payload, dict):
        raise BackendError("brave", "bad_response", "expected a JSON object")
    if payload.get("type") == "ErrorResponse" or "error" in payload:
        err = payload.get("error") or {}
        code = str(err.get("code", "")) if isinstance(err, dict) else str(err)
        reason = "quota" if "RATE" in code.upper() or "QUOTA" in code.upper() else "http_error"
        raise BackendError(
            "brave",
            reason,
            f"API error {code}: {str(err.get('detail', '') if isinstance(err, dict) else '')[:160]}",
        )
    if "results" in payload and "web" not in payload:  # LangChain BraveSearch output
        return [
            web_result(
                "brave", r.get("link", ""), r.get("title", ""), [r.get("snippet", "")], query
            )
            for r in payload["results"]
            if isinstance(r, dict) and r.get("link")
        ]
    if payload.get("type") != "search" and "web" not in payload and "query" not in payload:
        raise BackendError("brave", "bad_response", f"unknown body with keys {sorted(payload)[:5]}")
    hits = (payload.get("web") or {}).get("results") or []
    return [
        web_result(
            "brave",
            h["url"],
            h.get("title", ""),
            [h.get("description", ""), *(h.get("extra_snippets") or [])],
            query,
            published=h.get("page_age") or h.get("age"),
        )
        for h in hits
        if isinstance(h, dict) and h.get("url")
    ]


class BraveSearch:
    """Brave retriever (implements ``Retriever``); needs ``BRAVE_API_KEY``.
    Raises BackendError (``missing_key`` names the variable), InputError on an empty query."""

    name = "brave"

    def __init__(self, base_url: str | None = None) -> None:
        self.base_url = base_url or env_url("brave", DEFAULT_URL)

    def search(self, query: str, k: int = 5) -> list[SearchResult]:
        """Up to ``k`` web results for ``query``."""
        query = clean_query(query)
        key = require_key("brave", KEY_VAR)
        payload = get_json(
            "brave",
            f"{self.base_url}/web/search",
            params={"q": query, "count": min(k, 20)},
            headers={"X-Subscription-Token": key, "Accept": "application/json"},
        )
        return parse_response(payload, query)[:k]
