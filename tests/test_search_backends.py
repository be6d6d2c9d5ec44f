"""Each backend's parser over every recorded payload of its kind, and the real clients
against the loopback fixture server (incl. 500s, 429 + Retry-After, a hang, an API error body,
missing keys)."""

from __future__ import annotations

import json
import re
import time

import pytest
import yaml
from fixture_server import FIXTURES

from research.search.backends import brave, clinicaltrials, pubmed, serper, tavily, wikipedia
from research.search.http import BackendError, rate_for, wait_turn

if not FIXTURES.is_dir():
    pytest.skip(
        f"shared API fixtures not found at {FIXTURES} (set RESEARCH_SHARED_DATA)",
        allow_module_level=True,
    )
ENTREZ = FIXTURES / "pubmed" / "biopython_Tests_Entrez"
CASSETTES = FIXTURES / "pubmed" / "biocommons_eutils_cassettes"


# ---------------------------------------------------------------- PubMed
def test_pubmed_esearch_every_fixture():
    counts = {}
    for f in sorted(ENTREZ.glob("esearch*.xml")):
        out = pubmed.parse_esearch(f.read_bytes())
        counts[f.name] = out["count"]
        assert all(i.isdigit() for i in out["ids"])
    assert counts["esearch1.xml"] == 63 and counts["esearch8.xml"] == 0
    assert pubmed.parse_esearch((ENTREZ / "esearch8.xml").read_bytes())["errors"] == [
        "PhraseNotFound: abcXYZ"
    ]
    assert pubmed.parse_esearch((ENTREZ / "esearch1.xml").read_bytes())["ids"][0] == "41282813"


def test_pubmed_efetch_every_fixture_with_identifiers():
    seen = {}
    for f in sorted(ENTREZ.glob("pubmed*.xml")) + [ENTREZ / "efetch_pmc.xml"]:
        for r in pubmed.parse_efetch(f.read_bytes()):
            assert (
                r.source_type == "pubmed" and r.title and re.fullmatch(r"PMID:\d+", r.external_id)
            )
            assert r.url == f"https://pubmed.ncbi.nlm.nih.gov/{r.external_id[5:]}/"
            seen[r.external_id] = r
    assert seen["PMID:27797938"].doc_id == "DOI:10.1136/gutjnl-2016-312510"
    assert (
        seen["PMID:27797938"].published == "2017-06" and "Objective:" in seen["PMID:27797938"].text
    )
    assert seen["PMID:9997"].published == "1976-09-28"
    assert seen["PMID:34527728"].doc_id == "DOI:10.1183/23120541.50193-2021"  # PMC (JATS) body
    assert {"PMID:11748933", "PMID:11700088"} <= set(seen)  # two articles in pubmed2.xml


def test_pubmed_cassettes_every_interaction():
    pmids = []
    for f in sorted(CASSETTES.glob("*.yaml")):
        for it in yaml.safe_load(f.read_text())["interactions"]:
            body, uri = it["response"]["body"]["string"], it["request"]["uri"]
            if "esearch" in uri:
                assert pubmed.parse_esearch(body)["count"] >= 0
            elif "efetch" in uri and "<PubmedArticleSet" in body:
                pmids += [r.external_id for r in pubmed.parse_efetch(body)]
            elif "efetch" in uri:  # a GenBank efetch: not an article set
                with pytest.raises(BackendError) as exc:
                    pubmed.parse_efetch(body)
                assert exc.value.reason == "bad_response"
    assert {"PMID:1234567", "PMID:23121403", "PMID:29915538", "PMID:20412080"} <= set(pmids)


def test_pubmed_rejects_other_eutils_bodies():
    for name in ("einfo1.xml", "epost1.xml", "espell.xml", "esummary1.xml"):
        with pytest.raises(BackendError, match="expected PubmedArticleSet"):
            pubmed.parse_efetch((ENTREZ / name).read_bytes())


# ---------------------------------------------------------------- ClinicalTrials.gov
def test_clinicaltrials_every_fixture():
    for f in sorted((FIXTURES / "clinicaltrials_gov").glob("*/*.json")):
        results = clinicaltrials.parse_studies(json.loads(f.read_text()))
        assert results, f.name
        for r in results:
            assert (
                re.fullmatch(r"NCT\d{8}", r.external_id) and r.source_type == "clinicaltrials.gov"
            )
            assert r.url == f"https://clinicaltrials.gov/study/{r.external_id}"
        if f.parent.name == "v2_study":
            assert results[0].external_id == f.stem
    covid = clinicaltrials.parse_studies(
        json.loads(
            (FIXTURES / "clinicaltrials_gov/v1_classic_retired/covid-19-search.json").read_text()
        )
    )
    assert len(covid) == 100
    r = clinicaltrials.parse_studies(
        json.loads((FIXTURES / "clinicaltrials_gov/v2_study/NCT02210780.json").read_text())
    )[0]
    assert r.published == "2014-08-05" and "Status: COMPLETED" in r.snippets[-1]


# ---------------------------------------------------------------- Wikipedia
def test_wikipedia_every_fixture():
    for f in sorted((FIXTURES / "wikipedia/pymediawiki_tests_2017/individual").glob("*.json")):
        resp = json.loads(f.read_text())["response"]
        if "error" in resp:
            with pytest.raises(BackendError, match="gs_invalid-coord"):
                wikipedia.parse_search(resp)
        elif f.name.startswith("prop_extracts"):
            assert all(v["extract"] for v in wikipedia.parse_extracts(resp).values())
        else:
            assert wikipedia.parse_search(resp), f.name
    recorded = json.loads(
        (
            FIXTURES / "wikipedia/pymediawiki_tests_2017/en_wikipedia_recorded_responses.json"
        ).read_text()
    )
    for pair in recorded:
        p = pair["params"]
        if (
            p.get("list") in ("search", "prefixsearch", "geosearch")
            or p.get("action") == "opensearch"
        ):
            try:
                wikipedia.parse_search(pair["response"])
            except BackendError as exc:
                assert "error" in pair["response"], exc
    hits = wikipedia.parse_search(
        json.loads(
            (
                FIXTURES / "wikipedia/pymediawiki_tests_2017/individual/prefixsearch__ba__1.json"
            ).read_text()
        )["response"]
    )
    results = wikipedia.to_results(hits, {}, "ba")
    assert (
        results[1].url == "https://en.wikipedia.org/wiki/Barack_Obama"
        and results[1].external_id == "enwiki:534366"
    )


# ---------------------------------------------------------------- web backends
def test_brave_every_fixture():
    sizes = []
    for f in sorted((FIXTURES / "brave").rglob("*.json")):
        results = brave.parse_response(json.loads(f.read_text()))
        sizes.append(len(results))
        assert all(
            r.url.startswith("http")
            and r.source_type == "web"
            and "<strong>" not in " ".join(r.snippets)
            for r in results
        )
    assert sizes.count(0) == 4 and max(sizes) >= 20


def test_tavily_every_fixture():
    for f in sorted((FIXTURES / "tavily").rglob("*.json")):
        assert tavily.parse_response(json.loads(f.read_text())), f.name
    for f in sorted((FIXTURES / "tavily/pydantic_ai_cassettes").glob("*.yaml")):
        for it in yaml.safe_load(f.read_text())["interactions"]:
            resp = it["response"]
            payload = (
                resp["parsed_body"] if "parsed_body" in resp else json.loads(resp["body"]["string"])
            )
            results = tavily.parse_response(payload)
            assert results and all(r.url.startswith("http") for r in results)


def test_serper_every_fixture():
    got = {
        f.stem: serper.parse_response(json.loads(f.read_text()))
        for f in sorted((FIXTURES / "serper").rglob("*.json"))
    }
    assert got["search_apple_inc"][0].url == "http://www.apple.com/"  # knowledge graph first
    assert got["news_tesla_inc"] and got["images_lion"]
    assert got["places_italian_restaurants_upper_east_side"] == []  # places have no links
    with pytest.raises(BackendError) as exc:
        serper.parse_response({"message": "Not enough credits", "statusCode": 400})
    assert exc.value.reason == "quota"


# ---------------------------------------------------------------- clients over HTTP
def test_clients_against_loopback_server(backends_env):
    pm = pubmed.PubMedSearch().search("semaglutide efficacy", 5)
    assert pm[0].external_id == "PMID:29915538" and "Semaglutide" in pm[0].title
    assert [r.external_id for r in pubmed.PubMedSearch().search("biopython", 2)] == [
        "PMID:11748933",
        "PMID:11700088",
    ]
    assert pubmed.PubMedSearch().search("abcXYZ", 5) == []
    ct = clinicaltrials.ClinicalTrialsSearch().search("dupilumab", 4)
    assert ct[0].external_id == "NCT02210780" and all(r.external_id.startswith("NCT") for r in ct)
    wk = wikipedia.WikipediaSearch().search("chess set", 3)
    assert [r.title for r in wk] == ["Chess set", "Staunton chess set", "Dubrovnik chess set"]


def test_web_backends_need_keys(backends_env, monkeypatch):
    for mod, var in (
        (brave, "BRAVE_API_KEY"),
        (tavily, "TAVILY_API_KEY"),
        (serper, "SERPER_API_KEY"),
    ):
        monkeypatch.delenv(var, raising=False)
        cls = [getattr(mod, n) for n in dir(mod) if n.endswith("Search")][0]
        with pytest.raises(BackendError, match=var) as exc:
            cls().search("x", 3)
        assert exc.value.reason == "missing_key"
        monkeypatch.setenv(var, "test-key-123")
        results = cls().search("state farm", 3)
        assert results and all(r.source_type == "web" for r in results)


def test_http_failures_are_typed(backends_env):
    backends_env.modes["pubmed"] = "500"
    with pytest.raises(BackendError) as exc:
        pubmed.PubMedSearch().search("x", 3)
    assert exc.value.reason == "http_error" and exc.value.status == 500
    assert backends_env.hits["pubmed"] == 2  # RESEARCH_HTTP_RETRIES=2: retried once
    backends_env.modes["clinicaltrials"] = "429"
    with pytest.raises(BackendError) as exc:
        clinicaltrials.ClinicalTrialsSearch().search("x", 3)
    assert exc.value.reason == "quota"
    backends_env.modes["wikipedia"] = "error_body"
    with pytest.raises(BackendError, match="gs_invalid-coord"):
        wikipedia.WikipediaSearch().search("x", 3)
    backends_env.modes["wikipedia"] = "hang"
    backends_env.hang_s = 2.5
    t0 = time.monotonic()
    with pytest.raises(BackendError) as exc:
        wikipedia.WikipediaSearch().search("x", 3)
    assert exc.value.reason == "timeout" and time.monotonic() - t0 < 6


def test_ncbi_rate_limit(monkeypatch):
    monkeypatch.delenv("NCBI_API_KEY", raising=False)
    assert rate_for("pubmed") == 3.0
    monkeypatch.setenv("NCBI_API_KEY", "k")
    assert rate_for("pubmed") == 10.0
    monkeypatch.delenv("NCBI_API_KEY", raising=False)
    t0 = time.monotonic()
    for _ in range(4):
        wait_turn("pubmed")
    assert time.monotonic() - t0 >= 0.99  # 4 requests at 3/s span ≥ 1 s
