"""Retrievers: the ``Retriever`` protocol, the local corpus loader and hybrid local search.

The embedding model (sentence-transformers, torch) loads lazily on first use, and the hybrid
index (bm25s, scipy) when ``LocalSearch`` or ``get_local_search`` is first asked for (PEP 562):
the CLI and the dashboard import this package's light modules before any run starts.
"""

from typing import Any

from research.search.base import Retriever, external_id_for, source_type_for
from research.search.corpus import CorpusLoad, Document, load_corpus, read_corpus

__all__ = [
    "CorpusLoad",
    "Document",
    "LocalSearch",
    "Retriever",
    "external_id_for",
    "get_local_search",
    "load_corpus",
    "read_corpus",
    "source_type_for",
]


def __getattr__(name: str) -> Any:
    if name in ("LocalSearch", "get_local_search"):
        from research.search import local  # noqa: PLC0415 - bm25s and scipy load on first use

        return getattr(local, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
