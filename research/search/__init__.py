"""Retrievers: the ``Retriever`` protocol, the local corpus loader and hybrid local search.

The embedding model (sentence-transformers, torch) loads lazily on first use.
"""

from research.search.base import Retriever, external_id_for, source_type_for
from research.search.corpus import CorpusLoad, Document, load_corpus, read_corpus
from research.search.local import LocalSearch, get_local_search

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
