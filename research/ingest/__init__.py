"""Ingestion of the analyst's own documents into named corpora: PDF (per page), DOCX,
HTML, Markdown and text files are extracted (``extract``), chunked with file + page kept, and
indexed incrementally for hybrid BM25 + dense search (``store``)."""

from research.ingest.store import (
    IngestReport,
    corpus_retriever,
    ingest,
    list_corpora,
    validate_corpus_name,
)

__all__ = ["IngestReport", "corpus_retriever", "ingest", "list_corpora", "validate_corpus_name"]
