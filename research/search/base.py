"""The retriever interface every search backend implements, plus the id/type mapping rules.

A retriever turns a query into ranked ``research.models.SearchResult`` objects. Each result
carries ``snippets`` (the 1-3 most query-relevant passages, about 600 characters in all, the
only text engines see), ``text`` (the full document, for the raw artifact), ``source_type``
and ``external_id`` (what the ``save_source`` (docs/design.md § Collector tools) registers as the citation).
"""

from __future__ import annotations

import re
from typing import Protocol, runtime_checkable

from research.models import SearchResult

SOURCE_TYPES = ("pubmed", "clinicaltrials.gov", "wikipedia", "web", "local")

_ALIASES = {
    "pubmed": "pubmed",
    "pmid": "pubmed",
    "medline": "pubmed",
    "pmc": "pubmed",
    "clinicaltrials.gov": "clinicaltrials.gov",
    "clinicaltrials": "clinicaltrials.gov",
    "ctgov": "clinicaltrials.gov",
    "ct.gov": "clinicaltrials.gov",
    "nct": "clinicaltrials.gov",
    "wikipedia": "wikipedia",
    "wiki": "wikipedia",
    "freshwiki": "wikipedia",
    "web": "web",
    "local": "local",
    "file": "local",
}
_PMID = re.compile(r"^pubmed:(\d+)$", re.I)
_NCT = re.compile(r"^nct:(NCT\d+)$", re.I)


@runtime_checkable
class Retriever(Protocol):
    """A search backend.

    Attributes:
        name: backend label stored on results and artifacts, e.g. ``"local"``.
    """

    name: str

    def search(self, query: str, k: int) -> list[SearchResult]:
        """Up to ``k`` results, best first.

        Raises:
            research.errors.InputError: empty or whitespace-only query, or ``k < 1``.
        """
        ...


def source_type_for(source: str, url: str = "") -> str:
    """Map a corpus ``source`` label to one of ``SOURCE_TYPES``.

    Known labels and aliases map directly (``"clinicaltrials"`` → ``"clinicaltrials.gov"``);
    an unknown label becomes ``"web"`` when the URL is http(s), else ``"local"``.
    """
    key = (source or "").strip().lower()
    if key in _ALIASES:
        return _ALIASES[key]
    return "web" if url.lower().startswith(("http://", "https://")) else "local"


def external_id_for(doc_id: str) -> str:
    """The citable id of a corpus document: the PMID of ``pubmed:<PMID>``, the NCT number of
    ``nct:<NCT>``, else the document id itself."""
    for pattern in (_PMID, _NCT):
        m = pattern.match(doc_id.strip())
        if m:
            return m.group(1).upper()
    return doc_id
