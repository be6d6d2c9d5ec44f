"""SearXNG (self-hosted metasearch): ``GET $SEARXNG_URL/search?q=...&format=json``; reads
``results[{url,title,content,publishedDate}]``. The instance must enable the JSON format
(``search.formats: [html, json]`` in its settings.yml).

Reference: https://docs.searxng.org/dev/search_api.html. No default URL: ``SEARXNG_URL``
(or ``RESEARCH_SEARXNG_URL``) must be set.
"""

from __future__ import annotations

from research.config import load_settings
from research.models import SearchResult
from research.search.backends._web import web_result
from research.search.http import BackendError, clean_query, get_json

URL_VAR = "SEARXNG_URL"


def parse_response(payload: object, query: str = "") -> list[SearchResult]:
    """A SearXNG JSON body → SearchResults (``[]`` when ``results`` is empty).

    Raises:
        BackendError (``bad_response``): not an object or no ``results`` list.
    """
    if not isinstance(payload, dict) or not isinstance(payload.get("results"), list):
        raise BackendError(
            "searxng", "bad_response", "expected a JSON object with a 'results' list"
        )
    return [
        web_result(
            "searxng",
            h["url"],
            h.get("title", ""),
            [h.get("content", "")],
            query,
            published=h.get("publishedDate"),
        )
        for h in payload["results"]
        if isinstance(h, dict) and h.get("url")
    ]


class SearxngSearch:
    """SearXNG retriever (implements ``Retriever``); needs ``SEARXNG_URL``.
    Raises BackendError (``missing_key`` names the variable), InputError on an empty query."""

    name = "searxng"

    def __init__(self, base_url: str | None = None) -> None:
        self.base_url = (base_url or load_settings().searxng_url or "").rstrip("/")

    def search(self, query: str, k: int = 5) -> list[SearchResult]:
        """Up to ``k`` web results for ``query``."""
        query = clean_query(query)
        if not self.base_url:
            raise BackendError(
                "searxng",
                "missing_key",
                f"the searxng backend needs its instance URL: set the environment variable {URL_VAR}",
            )
        payload = get_json(
            "searxng", f"{self.base_url}/search", params={"q": query, "format": "json"}
        )
        return parse_response(payload, query)[:k]
