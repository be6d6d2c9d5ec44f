"""Dates and language: the ``--since`` window (parsing, the filter over a real dated corpus, the
PubMed and ClinicalTrials.gov API parameters, the backends that cannot apply it), the report's
"as of" line, and what every LLM prompt is told (today's date, the run's language)."""

from __future__ import annotations

import json

import pytest

from research.config import load_settings
from research.devtools.scale_run import build_scale_run
from research.engines.litellm.prompts import render
from research.engines.steps import step
from research.errors import InputError
from research.export import render_export
from research.export.dating import with_header
from research.jobs import make_config
from research.llm.language import today
from research.llm.session import LLMSession
from research.models import RunConfig
from research.search.backends.clinicaltrials import ClinicalTrialsSearch
from research.search.backends.pubmed import PubMedSearch
from research.search.multi import build_retriever
from research.search.since import before, last_day, parse_since
from research.store.runs import RunStore
from tests.conftest import CORPUS
from tests.llm_fixtures import MODEL


def test_parse_since():
    assert parse_since("2015") == "2015" and parse_since("2015-6") == "2015-06"
    assert parse_since(" 2015-06-01 ") == "2015-06-01" and parse_since("") is None
    for bad in ("15", "2015/06", "2015-13", "2015-02-30", "3000", "last year"):
        with pytest.raises(InputError) as exc:
            parse_since(bad)
        assert exc.value.code == "bad_since"
    assert str(last_day("2014")) == "2014-12-31" and str(last_day("2016-02")) == "2016-02-29"


@pytest.fixture(scope="module")
def dated_corpus(tmp_path_factory):
    """40 real PubMed documents of the shared corpus: 30 with a ``year`` (spread over the years
    they have), 10 without."""
    if not CORPUS.is_file():
        pytest.skip("shared corpus missing")
    dated, undated = [], []
    with CORPUS.open(encoding="utf-8") as fh:
        for line in fh:
            doc = json.loads(line)
            if doc["source"] != "pubmed":
                continue
            (dated if doc.get("year") else undated).append(doc)
    dated.sort(key=lambda d: int(d["year"]))
    picks = dated[:: max(1, len(dated) // 30)][:30] + undated[:10]
    out = tmp_path_factory.mktemp("dated") / "dated.jsonl"
    out.write_text("".join(json.dumps(d) + "\n" for d in picks), encoding="utf-8")
    years = sorted(int(d["year"]) for d in picks if d.get("year"))
    assert years[0] < 2010 < years[-1]  # the sample spans the window
    return out


def test_local_corpus_window_drops_early_documents_and_keeps_undated(
    dated_corpus, data_dir, tmp_path, monkeypatch
):
    monkeypatch.setenv("RESEARCH_INDEX_DIR", str(tmp_path / "idx"))
    settings = load_settings()
    plain = build_retriever(["local"], str(dated_corpus), [], settings)
    windowed = build_retriever(["local"], str(dated_corpus), [], settings, since="2010")
    assert windowed.since == "2010" and windowed.since_unsupported == {}
    queries = ["randomized trial outcome", "cancer risk", "patients treatment", "children"]
    seen_early = kept = undated = 0
    for q in queries:
        seen_early += sum(before(r, "2010") for r in plain.search(q, 10))
        for r in windowed.search(q, 10):
            assert not before(r, "2010"), (r.published, r.title)
            kept += 1
            undated += not r.published
    assert seen_early > 0 and kept > 0 and undated > 0  # early ones exist, undated are kept
    mixed = build_retriever(["local", "wikipedia"], str(dated_corpus), [], settings, since="2010")
    assert list(mixed.since_unsupported) == ["wikipedia"]


def test_backend_window_parameters():
    pm, ct = PubMedSearch("http://127.0.0.1:9"), ClinicalTrialsSearch("http://127.0.0.1:9")
    assert pm._window() == {} and ct._window() == {}
    pm.since, ct.since = "2015", "2015-06"
    assert pm._window() == {"datetype": "pdat", "mindate": "2015", "maxdate": "3000"}
    assert ct._window() == {"filter.advanced": "AREA[StartDate]RANGE[2015-06-01,MAX]"}


def test_make_config_checks_since_and_language(data_dir):
    cfg = make_config("Trastuzumab", corpus=str(CORPUS), since="2015", language="DE")
    assert (cfg.since, cfg.language) == ("2015", "de")
    with pytest.raises(InputError, match="YYYY"):
        make_config("Trastuzumab", corpus=str(CORPUS), since="June")
    with pytest.raises(InputError, match="not supported"):
        make_config("Trastuzumab", corpus=str(CORPUS), language="xx")


def test_report_says_as_of_the_run_date_and_the_window(data_dir, r):
    store = RunStore(r)
    rid = build_scale_run(store, data_dir, sources=6, turns=2, artifacts=2)
    state = store.get_run(rid)
    store.emit(
        rid,
        "since.unsupported",
        {"since": "2015", "backends": ["wikipedia"], "reasons": {"wikipedia": "no date"}},
    )
    cfg = state.config.model_copy(update={"since": "2015", "language": "de"})
    store.set_fields(rid, config=cfg.model_dump_json())
    md = render_export(store, rid, "md").decode()
    head = md.split("\n")[:4]
    assert head[0].startswith("# ") and head[2].startswith("> As of ")
    assert "since 2015" in md and "not applied by: wikipedia" in md
    assert "offline extractive mode cannot translate" in md  # the scale run is extractive
    assert "As of" in render_export(store, rid, "html").decode()
    assert with_header("no title", "x").startswith("> x")


def test_every_prompt_carries_the_date_and_the_language(llm_env, loopback_llm):
    spec = step("plan")
    for language, needle in (("en", None), ("de", "in German")):
        config = RunConfig(topic="t", engine="litellm", language=language, models={"*": MODEL})
        session = LLMSession(config)
        session.call(spec, messages=render(spec, {"topic": "Trastuzumab"}))
        system = loopback_llm.bodies[-1]["messages"][0]["content"]
        assert system.startswith(spec.marker)  # the step marker stays first
        assert f"Today's date is {today()}" in system
        assert (needle in system) if needle else ("German" not in system)
