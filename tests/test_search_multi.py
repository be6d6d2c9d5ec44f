"""Merging/dedup across backends, visible failures, the input gate, and full runs with
``--search local,pubmed,clinicaltrials,wikipedia`` against the loopback fixture server."""

from __future__ import annotations

import pytest

from research import jobs
from research.errors import InputError
from research.models import Report, SearchResult
from research.search.multi import MultiRetriever, identity_keys, merge, validate_backends
from research.store.collector import SourceCollector
from research.store.connection import get_redis
from research.store.runs import RunStore
from research.ui.warnings import search_warnings

SEARCH = "local,pubmed,clinicaltrials,wikipedia"


def _r(url, backend, ext="", st="web", doc_id=""):
    return SearchResult(
        url=url,
        title=url,
        source_type=st,
        external_id=ext,
        doc_id=doc_id,
        backend=backend,
        found_by=[{"backend": backend, "query": "q"}],
    )


def test_identity_and_merge_dedups_by_pmid_nct_doi_url():
    a = _r(
        "https://pubmed.ncbi.nlm.nih.gov/123/",
        "pubmed",
        "PMID:123",
        "pubmed",
        "DOI:10.1056/NEJMoa1",
    )
    b = _r("https://doi.org/10.1056/nejmoa1", "brave")  # same DOI (case-insensitive)
    c = _r("https://clinicaltrials.gov/study/NCT01234567", "brave")
    d = _r("https://x.org/p", "local", "NCT01234567", "clinicaltrials.gov", "nct:NCT01234567")
    e = _r("https://www.Example.com/a/?utm_source=z", "brave")
    f = _r("https://www.example.com/a", "tavily")
    assert "pmid:123" in identity_keys(a) and "doi:10.1056/nejmoa1" in identity_keys(b)
    merged = merge([[a, c, e], [b, d, f]], 10)
    assert [m.url for m in merged] == [a.url, c.url, e.url]
    assert merged[0].found_by == [
        {"backend": "pubmed", "query": "q"},
        {"backend": "brave", "query": "q"},
    ]
    assert {x["backend"] for x in merged[2].found_by} == {"brave", "tavily"}
    # sections of one local page (same URL, different doc ids) stay separate
    s1, s2 = (
        _r("https://w.org/T#A", "local", "fw#1", "wikipedia", "fw#1"),
        _r("https://w.org/T#B", "local", "fw#2", "wikipedia", "fw#2"),
    )
    assert len(merge([[s1, s2]], 10)) == 2


class _Boom:
    name = "boom"

    def search(self, query, k):
        raise RuntimeError("kaput")


class _Empty:
    name = "empty"

    def search(self, query, k):
        return []


class _One:
    name = "one"

    def search(self, query, k):
        return [
            SearchResult(url="https://a.org", title="A", source_type="pubmed", external_id="77")
        ]


def test_multi_reports_failures_and_empties():
    out = MultiRetriever([_One(), _Boom(), _Empty()]).search_all("q", 5)
    assert [r.external_id for r in out.results] == ["PMID:77"]  # normalised pubmed id
    assert out.results[0].found_by == [{"backend": "one", "query": "q"}]
    kinds = {(i.backend, i.kind, i.reason) for i in out.issues}
    assert kinds == {("boom", "failed", "error"), ("empty", "empty", "no_results")}


def test_validate_backends(monkeypatch):
    assert validate_backends(" Local, pubmed ,pubmed") == ["local", "pubmed"]
    with pytest.raises(InputError, match="valid backends are local, pubmed, clinicaltrials"):
        validate_backends("local,google")
    monkeypatch.delenv("BRAVE_API_KEY", raising=False)
    with pytest.raises(InputError, match="BRAVE_API_KEY"):
        validate_backends("brave")
    monkeypatch.setenv("BRAVE_API_KEY", "k")
    assert validate_backends("brave") == ["brave"]


def test_make_config_gate(data_dir, corpus_path):
    cfg = jobs.make_config("Trastuzumab", corpus=str(corpus_path), search=SEARCH)
    assert cfg.search == SEARCH.split(",") and cfg.corpora == []
    assert jobs.make_config("Trastuzumab", corpus=str(corpus_path)).search == ["local"]
    with pytest.raises(InputError, match="unknown search backend"):
        jobs.make_config("Trastuzumab", corpus=str(corpus_path), search="local,bing")
    with pytest.raises(Exception, match="no ingested corpus named 'nope'"):
        jobs.make_config("Trastuzumab", corpus=str(corpus_path), corpora="nope")


def _run(tmp_path, **options):
    """A small run whose local corpus is one note, so most evidence comes from the remote backends."""
    local = tmp_path / "local_corpus"
    local.mkdir(exist_ok=True)
    (local / "note.md").write_text(
        "# Semaglutide note\n\nSemaglutide is a GLP-1 receptor agonist studied in adults "
        "with type 2 diabetes; trials report efficacy and safety outcomes.\n"
    )
    cfg = jobs.make_config(
        "Semaglutide in type 2 diabetes",
        corpus=str(local),
        template="drug",
        max_perspectives=1,
        max_turns=1,
        search=SEARCH,
        **options,
    )
    return jobs.run_foreground(cfg)


@pytest.mark.slow
def test_run_with_four_backends_saves_typed_sources(data_dir, tmp_path, backends_env):
    state = _run(tmp_path)
    assert state.status == "complete", state.error
    sources = SourceCollector(get_redis(), state.run_id).all_sources()
    by_backend: dict[str, set] = {}
    for s in sources:
        for fb in s.found_by:
            by_backend.setdefault(fb.split(":")[0], set()).add(s.source_type)
    remote = {b for b in by_backend if b != "local"}
    assert len(remote) >= 2, by_backend
    types = {s.source_type for s in sources}
    assert len(types) >= 3, types
    assert any(s.external_id.startswith("PMID:") for s in sources)
    assert any(s.external_id.startswith("NCT") for s in sources)
    assert (
        backends_env.hits.get("pubmed")
        and backends_env.hits.get("clinicaltrials")
        and backends_env.hits.get("wikipedia")
    )
    events = RunStore(get_redis()).events(state.run_id)
    assert not [e for e in events if e.type == "search.failed"]


@pytest.mark.slow
def test_backend_500s_warn_and_run_completes(data_dir, tmp_path, backends_env):
    backends_env.modes["pubmed"] = "500"
    state = _run(tmp_path)
    assert state.status == "complete", state.error
    store = RunStore(get_redis())
    failed = [e for e in store.events(state.run_id) if e.type == "search.failed"]
    assert failed and all(
        e.data["backend"] == "pubmed" and e.data["reason"] == "http_error" for e in failed
    )
    assert failed[0].data["query"]
    report = store.get_doc(state.run_id, "report", Report)
    assert "Search backends that failed during this run: pubmed (http_error" in report.markdown

    rows = search_warnings(store.events(state.run_id))
    assert rows[0]["backend"] == "pubmed" and rows[0]["kind"] == "failed"


@pytest.mark.slow
def test_a_costorm_report_says_which_backends_failed_too(data_dir, tmp_path, backends_env):
    backends_env.modes["pubmed"] = "500"
    state = _run(tmp_path, mode="costorm")
    assert state.status == "complete", state.error
    report = RunStore(get_redis()).get_doc(state.run_id, "report", Report)
    assert "from the Co-STORM mind map" in report.markdown
    assert "Search backends that failed during this run: pubmed (http_error" in report.markdown
