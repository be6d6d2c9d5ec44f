"""One retriever over a run's backends: query every backend concurrently, merge,
deduplicate, and report each backend's failure or empty result instead of hiding it.

* Identity (dedup) keys of a result: ``pmid:<n>`` (from ``PMID:n``, a digit id of a pubmed
  result, or a pubmed.ncbi.nlm.nih.gov URL), ``nct:<NCT…>`` (id or clinicaltrials.gov URL),
  ``doi:<doi>`` (``DOI:`` ids or a doi.org URL, lowercase) and, for web results, the canonical
  URL (``research.store.source_input.canonical_url``); corpus results use ``doc:<backend>:<doc_id>``
  instead of their URL, since sections/pages of one file share it. Two results sharing any key
  are one source: the first (by merge order) is kept, and ``found_by`` lists every
  ``{"backend", "query"}`` that found it.
* Merge order: round-robin over the backends' ranked lists in the run's backend order (each
  backend's scores are on its own scale, so they are not compared); at most ``k`` results.
* PubMed ids are normalised to ``PMID:<n>`` (the local corpus stores bare digits) so the
  collector (docs/design.md § Source collector: dedup on ``source_type + external_id``) sees one source per article.
"""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from research.config import env_value, load_settings
from research.errors import CorpusError, InputError, ResearchError
from research.ingest.store import corpus_dir, corpus_retriever, list_corpora
from research.models import SearchResult
from research.search.backends import BACKENDS, VALID_BACKENDS, make_backend
from research.search.base import Retriever
from research.search.http import BackendError
from research.search.since import DATE_AWARE, SinceFilter
from research.store.source_input import canonical_url


def _local(corpus: str, index_dir: Path) -> Retriever:
    """The run's local corpus index (bm25s and scipy load here, when a run searches it)."""
    from research.search.local import get_local_search  # noqa: PLC0415 - see the docstring

    return get_local_search(corpus, index_dir)


_PMID_URL = re.compile(r"pubmed\.ncbi\.nlm\.nih\.gov/(\d+)", re.I)
_NCT = re.compile(r"\b(NCT\d{8})\b", re.I)
_DOI_URL = re.compile(r"doi\.org/(10\.\d{4,9}/\S+)", re.I)
CORPUS_PREFIX = "corpus:"


@dataclass
class BackendIssue:
    """A backend that failed or found nothing for one query.

    ``kind``: ``"failed"`` or ``"empty"``; ``reason``: ``timeout``, ``quota``, ``http_error``,
    ``network``, ``bad_response``, ``missing_key``, ``error`` or ``no_results``; ``message``:
    a short human sentence (never contains an API key).
    """

    backend: str
    query: str
    kind: str
    reason: str
    message: str = ""

    @property
    def event_type(self) -> Literal["search.failed", "search.empty"]:
        """The run event this issue becomes (declared in ``research/events.py``)."""
        return "search.failed" if self.kind == "failed" else "search.empty"

    def as_event(self) -> dict:
        """The event payload ``{backend, query, reason, message}``."""
        return {
            "backend": self.backend,
            "query": self.query,
            "reason": self.reason,
            "message": self.message[:300],
        }


@dataclass
class MultiSearch:
    """Outcome of one query over all backends: merged ``results``, ``issues`` and
    ``counts`` (backend → results it returned before dedup)."""

    results: list[SearchResult]
    issues: list[BackendIssue] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)


def normalize_ids(r: SearchResult) -> SearchResult:
    """``r`` with a digit-only pubmed external id rewritten as ``PMID:<n>`` (in place)."""
    if r.source_type == "pubmed" and r.external_id.isdigit():
        r.external_id = f"PMID:{r.external_id}"
    return r


def identity_keys(r: SearchResult) -> set[str]:
    """Every dedup key of ``r`` (see module docstring); never empty."""

    out: set[str] = set()
    ext = r.external_id.strip()
    for ident in (ext, r.doc_id.strip()):
        low = ident.lower()
        if low.startswith("pmid:"):
            out.add(f"pmid:{low[5:]}")
        elif low.startswith("doi:"):
            out.add(f"doi:{low[4:]}")
        elif low.startswith("pubmed:") and low[7:].isdigit():
            out.add(f"pmid:{low[7:]}")
    if r.source_type == "pubmed" and ext.isdigit():
        out.add(f"pmid:{ext}")
    for m in _NCT.finditer(f"{ext} {r.url if 'clinicaltrials.gov' in r.url.lower() else ''}"):
        out.add(f"nct:{m.group(1).upper()}")
    if pm := _PMID_URL.search(r.url):
        out.add(f"pmid:{pm.group(1)}")
    if doi := _DOI_URL.search(r.url):
        out.add(f"doi:{doi.group(1).lower()}")
    if r.backend == "local" or r.backend.startswith(CORPUS_PREFIX):
        out.add(f"doc:{r.backend}:{r.doc_id or r.url}")
    elif r.url.lower().startswith(("http://", "https://")):
        out.add(f"url:{canonical_url(r.url)}")
    elif not out:
        out.add(f"url:{r.url}")
    return out


def merge(lists: list[list[SearchResult]], k: int) -> list[SearchResult]:
    """Round-robin merge of ranked lists with dedup by ``identity_keys``; at most ``k``.

    A duplicate adds its ``found_by`` entries to the kept result and fills its empty
    ``external_id``/``published``/``snippets``.
    """
    kept: list[SearchResult] = []
    owner: dict[str, SearchResult] = {}
    depth = max((len(x) for x in lists), default=0)
    for i in range(depth):
        for lst in lists:
            if i >= len(lst):
                continue
            r = lst[i]
            keys = identity_keys(r)
            first = next((owner[key] for key in keys if key in owner), None)
            if first is None:
                if len(kept) >= k:
                    continue
                kept.append(r)
                first = r
            else:
                for fb in r.found_by:
                    if fb not in first.found_by:
                        first.found_by.append(fb)
                first.external_id = first.external_id or r.external_id
                first.published = first.published or r.published
                first.snippets = first.snippets or r.snippets
            for key in keys:
                owner.setdefault(key, first)
    return kept


class MultiRetriever:
    """A ``Retriever`` over several backends (``name`` = their names joined with ``+``).

    Args:
        retrievers: backends in the run's order (each has ``name`` and ``search``).
        workers: threads per query (default: one per backend, at most 8).
    """

    def __init__(self, retrievers: list[Retriever], *, workers: int | None = None) -> None:
        if not retrievers:
            raise InputError("no search backend selected: choose at least one (e.g. local)")
        self.retrievers = list(retrievers)
        self.since: str | None = None  # the run's date window (research.search.since)
        self.since_unsupported: dict[str, str] = {}  # backend → why the window is not applied
        self.names = [r.name for r in self.retrievers]
        self.name = "+".join(self.names)
        self.workers = workers or min(8, len(self.retrievers))

    def _one(
        self, retriever: Retriever, query: str, k: int
    ) -> tuple[list[SearchResult], BackendIssue | None]:
        name = retriever.name
        try:
            results = retriever.search(query, k)
        except BackendError as exc:
            return [], BackendIssue(name, query, "failed", exc.reason, exc.message)
        except InputError:
            raise
        except ResearchError as exc:
            return [], BackendIssue(name, query, "failed", exc.code, exc.message)
        except Exception as exc:
            return [], BackendIssue(
                name, query, "failed", "error", f"{type(exc).__name__}: {str(exc)[:200]}"
            )
        if not results:
            return [], BackendIssue(
                name, query, "empty", "no_results", f"{name} found nothing for this query"
            )
        for r in results:
            r.backend = r.backend if r.backend.startswith(CORPUS_PREFIX) else name
            r.query = r.query or query
            normalize_ids(r)
            entry = {"backend": name, "query": query}
            if entry not in r.found_by:
                r.found_by.append(entry)
        return results, None

    def search_all(self, query: str, k: int) -> MultiSearch:
        """Query every backend for up to ``k`` results each; merge to at most ``k``.

        Raises:
            InputError: empty query or ``k < 1`` (backend failures are returned as issues).
        """
        if not isinstance(query, str) or not query.strip():
            raise InputError("search query is empty: type some words to search for")
        if not isinstance(k, int) or k < 1:
            raise InputError(f"k must be a positive integer, got {k!r}")
        if len(self.retrievers) == 1:
            outcomes = [self._one(self.retrievers[0], query, k)]
        else:
            with ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="search") as pool:
                futures = [pool.submit(self._one, r, query, k) for r in self.retrievers]
                outcomes = [f.result() for f in futures]
        lists = [res for res, _ in outcomes]
        issues = [iss for _, iss in outcomes if iss is not None]
        counts = {name: len(res) for name, (res, _) in zip(self.names, outcomes, strict=True)}
        return MultiSearch(results=merge(lists, k), issues=issues, counts=counts)

    def prime(self, queries: list[str]) -> None:
        """Let every backend that can prepare for ``queries`` (e.g. the local index: their query
        vectors in one batch, ``LocalSearch.prime``) do so before they are searched."""
        for r in self.retrievers:
            prime = getattr(r, "prime", None)
            if prime is not None:
                prime(queries)

    def search(self, query: str, k: int = 5) -> list[SearchResult]:
        """``search_all(query, k).results`` (the ``Retriever`` protocol; issues dropped)."""
        return self.search_all(query, k).results


# ---------------------------------------------------------------- choosing backends
def parse_backends(value: str | list[str] | tuple[str, ...] | None) -> list[str]:
    """``"local, pubmed"`` or ``["local", "pubmed"]`` → lowercase names, order kept, no repeats."""
    if value is None:
        return []
    items = value.split(",") if isinstance(value, str) else list(value)
    out: list[str] = []
    for item in items:
        name = str(item).strip().lower()
        if name and name not in out:
            out.append(name)
    return out


def validate_backends(value: str | list[str] | None, *, check_keys: bool = True) -> list[str]:
    """Validated backend names for ``RunConfig.search``.

    Raises:
        InputError: an unknown name (the message lists the valid ones), or (``check_keys``) a
            web backend whose key/URL variable is unset (the message names it).
    """

    names = parse_backends(value)
    unknown = [n for n in names if n not in VALID_BACKENDS]
    if unknown:
        raise InputError(
            f"unknown search backend(s) {', '.join(unknown)}: valid backends are "
            f"{', '.join(VALID_BACKENDS)}",
            code="unknown_backend",
        )
    if check_keys:
        for n in names:
            var = BACKENDS[n][2] if n in BACKENDS else None
            if var and not (env_value(var) or (n == "searxng" and load_settings().searxng_url)):
                raise InputError(
                    f"the {n} search backend needs {'its instance URL' if n == 'searxng' else 'an API key'}: "
                    f"set the environment variable {var} (or drop {n} from the backends)",
                    code="missing_key",
                )
    return names


def validate_search(search, corpora, settings=None) -> tuple[list[str], list[str]]:
    """The input gate's check of a run's search choice: ``(backends, corpus names)``.

    ``search`` None/empty → ``["local"]`` unless corpora are given (then ``[]``); each corpus
    must exist under ``{data_dir}/corpora``.

    Raises:
        InputError: unknown backend (lists valid ones), web backend without its key (names the
            variable), bad corpus name. CorpusError: a corpus that was never ingested.
    """

    names = parse_backends(corpora)
    backends = validate_backends(search) or ([] if names else ["local"])
    out = []
    for name in names:
        d = corpus_dir(name, settings)
        if not (d / "chunks.jsonl").is_file():
            have = ", ".join(c["name"] for c in list_corpora(settings)) or "none yet"
            raise CorpusError(
                f"no ingested corpus named {d.name!r} (existing: {have}); create it with "
                f"`research ingest {d.name} PATH...` or on the Corpora page"
            )
        out.append(d.name)
    return backends, out


def build_retriever(
    search: list[str], corpus: str, corpora: list[str], settings, *, since: str | None = None
) -> MultiRetriever:
    """The run's retriever: ``search`` backends in order (``local`` = the run's ``corpus``;
    empty = ``["local"]`` unless ``corpora`` are given), then each named corpus in ``corpora``
    as backend ``corpus:<name>``. With ``since`` (``YYYY[-MM[-DD]]``) the date-aware backends
    are wrapped in ``research.search.since.SinceFilter``; the others are listed in
    ``since_unsupported`` with the reason.

    Raises:
        CorpusError: the local corpus or a named corpus is missing.
        InputError: unknown backend names, or nothing to search.
    """

    retrievers: list = []
    names = validate_backends(search, check_keys=False) or ([] if corpora else ["local"])
    for name in names:
        retrievers.append(
            _local(corpus, settings.index_dir) if name == "local" else make_backend(name)
        )
    if corpora:
        retrievers += [corpus_retriever(c, settings) for c in corpora]
    if not since:
        return MultiRetriever(retrievers)

    unsupported: dict[str, str] = {}
    wrapped: list[Retriever] = []
    for r in retrievers:
        if r.name in DATE_AWARE or getattr(r, "dated", False):
            wrapped.append(SinceFilter(r, since))
            continue
        wrapped.append(r)
        unsupported[r.name] = (
            "its documents carry no date"
            if r.name == "local" or r.name.startswith(CORPUS_PREFIX)
            else "the backend returns no publication date"
        )
    multi = MultiRetriever(wrapped)
    multi.since, multi.since_unsupported = since, unsupported
    return multi
