"""Remote search backends. Each module has a ``Retriever`` class (``name``,
``search(query, k) -> list[SearchResult]``) plus pure ``parse_*`` functions over the service's
raw response bodies, so the parsers are tested on the recorded payloads in
``shared/data/api_fixtures``.

``BACKENDS`` maps the names accepted by ``RunConfig.search`` / ``--search`` to
``(module, class name, env var of the required key or None)``; ``local`` is the run's corpus.
"""

from __future__ import annotations

import importlib

BACKENDS: dict[str, tuple[str, str, str | None]] = {
    "pubmed": ("research.search.backends.pubmed", "PubMedSearch", None),
    "clinicaltrials": ("research.search.backends.clinicaltrials", "ClinicalTrialsSearch", None),
    "wikipedia": ("research.search.backends.wikipedia", "WikipediaSearch", None),
    "brave": ("research.search.backends.brave", "BraveSearch", "BRAVE_API_KEY"),
    "tavily": ("research.search.backends.tavily", "TavilySearch", "TAVILY_API_KEY"),
    "serper": ("research.search.backends.serper", "SerperSearch", "SERPER_API_KEY"),
    "searxng": ("research.search.backends.searxng", "SearxngSearch", "SEARXNG_URL"),
}
VALID_BACKENDS = ("local", *BACKENDS)


def make_backend(name: str):
    """A new retriever for remote backend ``name`` (a key of ``BACKENDS``).

    Raises:
        KeyError: unknown name (validate first with ``research.search.multi.validate_backends``).
    """
    module, cls, _ = BACKENDS[name]
    return getattr(importlib.import_module(module), cls)()
