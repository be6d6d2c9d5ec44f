"""The MCP tool ``search_corpus``: the local corpus (and named corpora) searched as a run
searches them (``research.search.multi.build_retriever``: hybrid BM25 + MiniLM). A corpus whose
index is not built yet is built in a background thread, waited for at most ``INDEX_WAIT_S`` s;
then the tool says to call again instead of blocking past the client's timeout."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from research.config import load_settings
from research.jobs.corpus_access import served_corpus
from research.jobs.validation import validate_corpus
from research.mcp_server.tools import tool_errors
from research.search.index_progress import index_state
from research.search.local import start_background_build
from research.search.multi import build_retriever, validate_search

INDEX_WAIT_S = 20.0  # s search_corpus waits for a corpus index build before saying "call again"


@tool_errors
def search_corpus(
    query: Annotated[str, Field(description="words to search for")],
    k: Annotated[int, Field(ge=1, le=20, description="at most this many results")] = 5,
    corpus: Annotated[
        str | None,
        Field(
            description="a local corpus registered on the server (a path under "
            "RESEARCH_CORPUS_ROOTS); default: the configured corpus"
        ),
    ] = None,
    corpora: Annotated[
        list[str] | None, Field(description="ingested corpora to search instead of / besides it")
    ] = None,
    include_local: Annotated[
        bool, Field(description="search the local corpus (false: only the named corpora)")
    ] = True,
) -> dict[str, Any]:
    """Hybrid BM25 + MiniLM search of the local corpus (and named corpora), as a run searches:
    ``{results: [{title, url, source_type, external_id, published, score, snippets, backend}]}``."""
    settings = load_settings()
    backends, names = validate_search(["local"] if include_local else [], corpora, settings)
    served = served_corpus(corpus, settings)  # refused before any file is read
    path = str(validate_corpus(served or settings.default_corpus)) if "local" in backends else ""
    if path:
        _wait_for_index(path, settings.index_dir)
    found = build_retriever(backends, path, names, settings).search_all(query, k)
    return {
        "results": [
            {
                "title": r.title,
                "url": r.url,
                "source_type": r.source_type,
                "external_id": r.external_id,
                "published": r.published,
                "score": round(r.score, 4),
                "snippets": r.snippets,
                "backend": r.backend,
            }
            for r in found.results
        ],
        "issues": [i.message for i in found.issues if i.kind == "failed"],
    }


def _wait_for_index(corpus: str, index_dir: Path) -> None:
    """Return once the corpus's search index is ready (built in a background thread, waited
    for at most ``INDEX_WAIT_S`` s). Raises ToolError with the build's progress otherwise."""
    if index_state(corpus, index_dir)["state"] == "ready":
        return
    build = start_background_build(corpus, index_dir)
    build.join(INDEX_WAIT_S)
    if build.is_alive():
        state = index_state(corpus, index_dir)
        raise ToolError(
            f"The search index of {corpus} is being built ({state['done']} of "
            f"{state['total'] or '?'} documents embedded); call search_corpus again in a minute."
        )
