"""AppTest smoke tests of every dashboard page on one real finished run.

The run is produced by the real pipeline (extractive engine) over a 40-document slice of the
shared corpus, once per module, against the session's private redis-server.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from research.models import ACTIVE_STATUSES

ROOT = Path(__file__).resolve().parents[1]
TOPIC = "Trastuzumab in HER2-positive breast cancer"
RUN_PAGES = ["plan", "conversations", "coverage", "artifacts", "report"]


def _page(name: str, run_id: str | None = None) -> AppTest:
    at = AppTest.from_file(str(ROOT / "pages" / f"{name}.py"), default_timeout=60)
    if run_id is not None:
        at.query_params["run"] = run_id
    return at.run()


def _texts(at: AppTest, kind: str) -> list[str]:
    return [str(e.value) for e in getattr(at, kind)]


def _no_exception(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


@pytest.fixture(scope="module")
def tiny_corpus(tmp_path_factory, corpus_path) -> Path:
    """40 real documents: 30 about trastuzumab/HER2, 5 other breast-cancer RCTs, 3 trials, 2 Wikipedia."""
    picks: dict[str, list[dict]] = {"her2": [], "pubmed": [], "clinicaltrials.gov": [], "wikipedia": []}
    quota = {"her2": 30, "pubmed": 5, "clinicaltrials.gov": 3, "wikipedia": 2}
    with corpus_path.open(encoding="utf-8") as fh:
        for line in fh:
            doc = json.loads(line)
            text = doc["text"].lower()
            bucket = "her2" if ("trastuzumab" in text or "her2" in text) else doc["source"]
            if bucket in picks and len(picks[bucket]) < quota[bucket]:
                picks[bucket].append(doc)
    out = tmp_path_factory.mktemp("pages_corpus") / "tiny.jsonl"
    out.write_text("".join(json.dumps(d) + "\n" for docs in picks.values() for d in docs), encoding="utf-8")
    return out


@pytest.fixture(scope="module")
def page_env(redis_server, tmp_path_factory):
    """Module-scoped RESEARCH_DATA_DIR + REDIS_URL (the conftest ``data_dir`` is per test)."""
    mp = pytest.MonkeyPatch()
    data = tmp_path_factory.mktemp("pages_data")
    mp.setenv("RESEARCH_DATA_DIR", str(data))
    mp.setenv("REDIS_URL", redis_server)
    mp.delenv("RESEARCH_LLM_MODEL", raising=False)
    yield data
    mp.undo()


@pytest.fixture(scope="module")
def run(page_env, tiny_corpus):
    """(RunState, store) of a finished extractive run."""
    from research import jobs
    from research.store.connection import get_redis
    from research.store.runs import RunStore

    config = jobs.make_config(TOPIC, corpus=str(tiny_corpus), template="drug", max_perspectives=3, max_turns=2)
    state = jobs.run_foreground(config)
    assert state.status == "complete", f"{state.error_code}: {state.error}"
    return state, RunStore(get_redis())


# ---------------------------------------------------------------- whole app
def test_app_navigation_and_sidebar(run):
    state, _ = run
    at = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=60).run()
    _no_exception(at)
    sidebar = " ".join(e.value for e in at.sidebar.caption)
    assert "offline extractive mode" in sidebar and "embedded" not in sidebar  # REDIS_URL → external
    assert "external" in sidebar and os.environ["RESEARCH_DATA_DIR"] in sidebar.replace("\\", "")
    assert "Launch a research run" in _texts(at, "title")  # the default page
    # in the full app, run links are real st.page_link's carrying ?run=
    at.switch_page("pages/report.py")
    at.query_params["run"] = state.run_id
    at.run()
    _no_exception(at)
    assert [p.value for p in at.get("page_link")][:4] == ["Plan", "Conversations", "Coverage", "Artifacts"]


# ---------------------------------------------------------------- launch
def test_launch_lists_history(run):
    state, _ = run
    at = _page("launch")
    _no_exception(at)
    history = at.dataframe[0].value
    row = history[history["run_id"] == state.run_id].iloc[0]
    assert row["topic"] == TOPIC and row["status"].endswith("complete") and row["sources"] > 0
    assert row["report"] == f"report?run={state.run_id}"
    assert "drug" in at.selectbox[0].options and at.selectbox[0].value == "general"


def test_launch_empty_topic_shows_validation_message(run):
    at = _page("launch")
    at.text_area[0].input("   ")
    at.button[0].click().run()
    _no_exception(at)
    assert any("The topic is empty" in e for e in _texts(at, "error"))
    assert "launched_run" not in at.session_state


def test_launch_missing_corpus_shows_corpus_error(run, tmp_path):
    at = _page("launch")
    at.text_area[0].input(TOPIC)
    at.text_input[0].input(str(tmp_path / "nope.jsonl"))
    at.button[0].click().run()
    assert any("does not exist" in e for e in _texts(at, "error"))


def test_launch_form_starts_a_background_run(run, tiny_corpus):
    _, store = run
    at = _page("launch")
    at.text_area[0].input("Cardiotoxicity of trastuzumab")
    at.text_input[0].input(str(tiny_corpus))
    at.number_input[0].set_value(1)
    at.number_input[1].set_value(1)
    at.button[0].click().run()
    _no_exception(at)
    run_id = at.session_state["launched_run"]
    assert any(run_id in s for s in _texts(at, "success"))
    assert any(f"report?run={run_id}" in m for m in _texts(at, "markdown"))  # links to the run's pages
    deadline = time.monotonic() + 300
    while store.get_run(run_id).status in ACTIVE_STATUSES and time.monotonic() < deadline:
        time.sleep(1)  # the run executes in a server thread; let it finish inside this module's env
    state = store.get_run(run_id)
    assert state.status == "complete", state.error
    assert (state.config.max_perspectives, state.config.max_turns) == (1, 1)


# ---------------------------------------------------------------- run pages
def test_plan_page(run):
    state, store = run
    from research.models import Perspective, Plan

    at = _page("plan", state.run_id)
    _no_exception(at)
    plan = store.get_doc(state.run_id, "plan", Plan)
    assert plan is not None and plan.steps
    assert any(plan.steps[0].title.split()[0] in m for m in _texts(at, "markdown"))
    (syllabus,) = [d.value for d in at.dataframe if "min_sources" in d.value.columns]
    assert "clinical.efficacy" in set(syllabus["key"])
    names = [p.name for p in store.get_doc_list(state.run_id, "perspectives", Perspective)]
    assert "Basic Fact Writer" in names
    cards = " ".join(_texts(at, "markdown"))
    assert all(n.split()[0] in cards for n in names)
    assert any(s.startswith("Related-topic survey") for s in _texts(at, "subheader"))


def test_conversations_page(run):
    state, store = run
    at = _page("conversations", state.run_id)
    _no_exception(at)
    turns = store.get_turns(state.run_id)
    assert len(at.chat_message) == 2 * len(turns) > 0
    assert {m.name for m in at.chat_message} == {"user", "assistant"}
    assert len(at.tabs) >= 3
    assert any("offline extractive mode" in i for i in _texts(at, "info"))
    assert any(c.startswith("Searched: ") for c in _texts(at, "caption"))
    assert any("**\\[1\\]**" in m for m in _texts(at, "markdown"))  # an expander lists sources [n]


def test_coverage_page(run):
    state, _ = run
    at = _page("coverage", state.run_id)
    _no_exception(at)
    assert at.get("plotly_chart"), "coverage chart missing"
    (table,) = [d.value for d in at.dataframe if "status" in d.value.columns]
    assert {"mechanism.moa", "clinical.efficacy"} <= set(table["key"])
    assert set(table["status"]) <= {"✓", "⚠"}
    labels = [m.label for m in at.metric]
    assert labels[:3] == ["Sources", "Questions covered", "Ready"] and int(at.metric[0].value) > 0
    assert any(s == "Completion check" for s in _texts(at, "subheader"))


def test_artifacts_page_cards_filter_and_download(run):
    state, store = run
    cards = store.get_cards(state.run_id)
    at = _page("artifacts", state.run_id)
    _no_exception(at)
    assert int(at.metric[0].value) == len(cards)
    shown = min(15, len(cards))
    assert len(at.download_button) == shown
    assert any("offline extractive mode" in i for i in _texts(at, "info"))
    raw_views = len(at.get("json")) + len(at.code)
    assert raw_views == shown
    useful = sum(c.card.is_useful for c in cards)
    at.segmented_control[0].set_value("useful").run()
    _no_exception(at)
    assert f"{useful} cards match" in " ".join(_texts(at, "caption"))


def test_report_page_links_citations_to_anchors(run):
    state, store = run
    from research.models import Report

    report = store.get_doc(state.run_id, "report", Report)
    at = _page("report", state.run_id)
    _no_exception(at)
    assert any("offline extractive mode" in i for i in _texts(at, "info"))
    body = " ".join(_texts(at, "markdown"))
    assert "[[1]](#ref-1)" in body
    html = [m for m in at.markdown if m.proto.allow_html]
    assert [m.value for m in html] == [f'<a id="ref-{r.number}"></a>' for r in report.references]
    assert at.download_button[0].proto.label.startswith("Download report")
    assert any(s == "Analysis" for s in _texts(at, "subheader"))


# ---------------------------------------------------------------- bad or missing ?run=
@pytest.mark.parametrize("page", RUN_PAGES)
def test_unknown_run_shows_error(run, page):
    at = _page(page, "0" * 16)
    _no_exception(at)
    assert any("No run '0000000000000000'" in e.replace("\\", "") for e in _texts(at, "error"))


@pytest.mark.parametrize("bad", ["../etc/passwd", "XYZ", "[x](javascript:alert(1))"])
def test_ill_formed_run_id_shows_error(run, bad):
    at = _page("report", bad)
    _no_exception(at)
    (err,) = _texts(at, "error")
    assert "is not a run id" in err and "](javascript" not in err


def test_no_run_points_to_launch(run):
    at = _page("coverage")
    _no_exception(at)
    assert any("No run selected" in i for i in _texts(at, "info"))
    assert not at.error


def test_active_run_shows_progress_without_report(run):
    _, store = run
    from research.models import RunConfig

    pending = store.create_run(RunConfig(topic="An active run"), engine_label="offline extractive mode")
    store.set_status(pending.run_id, "conversations")
    at = _page("report", pending.run_id)
    _no_exception(at)
    assert at.get("progress") and "report is written" in " ".join(_texts(at, "info"))
    assert any(b.label == "Cancel run" for b in at.button)
    store.delete_run(pending.run_id)
