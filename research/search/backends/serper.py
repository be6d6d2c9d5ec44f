"""Serper.dev Google Search API: ``POST /search`` (or ``/news``) with header
``X-API-KEY: $SERPER_API_KEY`` and body ``{q, num}``; reads ``organic[{link,title,snippet,
date}]``, ``news[...]`` and the ``knowledgeGraph``.

Reference: https://serper.dev (API playground). Base URL ``https://google.serper.dev``
(override: ``RESEARCH_SERPER_URL``).
"""

from __future__ import annotations

from research.models import SearchResult
from research.search.backends._web import web_result
from research.search.http import BackendError, clean_query, env_url, get_json, require_key

DEFAULT_URL = "https://google.serper.dev"
KEY_VAR = "SERPER_API_KEY"


def parse_response(payload: object, query: str = "") -> list[SearchResult]:
    """A Serper body (search, news, images or places) → SearchResults: the knowledge graph
    (when it has a link) first, then ``organic`` / ``news`` / ``images`` / ``places`` with a
    link, then ``peopleAlsoAsk`` answers. ``[]`` when none has a link.

    Raises:
        BackendError: an error body (``{"message": ..., "statusCode": ...}``) or not an object.
    """
    if not isinstance(payload, dict):
        raise BackendError("serper", "bad_response", "expected a JSON object")
    if "message" in payload and "searchParameters" not in payload:
        msg = str(payload["message"])
        raise BackendError(
            "serper",
            "quota" if "credit" in msg.lower() or "limit" in msg.lower() else "http_error",
            msg[:200],
        )
    if "searchParameters" not in payload:
        raise BackendError(
            "serper", "bad_response", f"unknown body with keys {sorted(payload)[:5]}"
        )
    out = []
    kg = payload.get("knowledgeGraph") or {}
    link = kg.get("website") or kg.get("descriptionLink")
    if link and kg.get("description"):
        attrs = "; ".join(f"{k}: {v}" for k, v in (kg.get("attributes") or {}).items())
        out.append(
            web_result("serper", link, kg.get("title", ""), [kg["description"], attrs], query)
        )
    for block in ("organic", "news", "images", "places"):
        for h in payload.get(block) or []:
            if isinstance(h, dict) and h.get("link"):
                snips = [
                    h.get("snippet", ""),
                    *[
                        f"{s.get('title', '')}: {s.get('snippet', '')}"
                        for s in (h.get("sitelinks") or [])
                        if s.get("snippet")
                    ],
                ]
                out.append(
                    web_result(
                        "serper",
                        h["link"],
                        h.get("title", ""),
                        snips,
                        query,
                        published=h.get("date"),
                    )
                )
    for h in payload.get("peopleAlsoAsk") or []:
        if isinstance(h, dict) and h.get("link"):
            out.append(
                web_result(
                    "serper",
                    h["link"],
                    h.get("title") or h.get("question", ""),
                    [h.get("snippet", "")],
                    query,
                )
            )
    return out


class SerperSearch:
    """Serper retriever (implements ``Retriever``); needs ``SERPER_API_KEY``.
    Raises BackendError (``missing_key`` names the variable), InputError on an empty query."""

    name = "serper"

    def __init__(self, base_url: str | None = None) -> None:
        self.base_url = base_url or env_url("serper", DEFAULT_URL)

    def search(self, query: str, k: int = 5) -> list[SearchResult]:
        """Up to ``k`` web results for ``query``."""
        query = clean_query(query)
        key = require_key("serper", KEY_VAR)
        payload = get_json(
            "serper",
            f"{self.base_url}/search",
            headers={"X-API-KEY": key},
            json={"q": query, "num": min(k, 20)},
            method="POST",
        )
        return parse_response(payload, query)[:k]
