"""AppTest smoke tests of every dashboard page on one real finished run.

The run is produced by the real pipeline (extractive engine) over a 40-document slice of the
shared corpus, once per module, against the session's private redis-server.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from research.devtools.scale_run import build_scale_run
from research.models import ACTIVE_STATUSES, Perspective, Plan, Report, RunConfig
from research.store.connection import get_redis
from research.store.lease import Lease
from research.store.runs import RunStore
from research.ui.history import delete_run_everywhere
from research.ui.launch_form import form_values, launch_config
from research.ui.nav import RUN_PAGES as SPECS

ROOT = Path(__file__).resolve().parents[1]
TOPIC = "Trastuzumab in HER2-positive breast cancer"
RUN_PAGES = ["plan", "conversations", "coverage", "artifacts", "report"]


def _page(name: str, run_id: str | None = None) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app_pages" / f"{name}.py"), default_timeout=60)
    if run_id is not None:
        at.query_params["run"] = run_id
    return at.run()


def _texts(at: AppTest, kind: str) -> list[str]:
    return [str(e.value) for e in getattr(at, kind)]


def _no_exception(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


@pytest.fixture(scope="module")
def page_env(finished_run):
    """Point the app (module-scoped) at the session's finished run (its own Redis + data dir)."""
    mp = pytest.MonkeyPatch()
    for k, v in finished_run.env().items():
        mp.setenv(k, v)
    mp.delenv("RESEARCH_LLM_MODEL", raising=False)
    yield finished_run.data_dir
    mp.undo()


@pytest.fixture(scope="module")
def tiny_corpus(finished_run):
    return finished_run.corpus


@pytest.fixture(scope="module")
def run(page_env, finished_run):
    """(RunState, store) of the session's finished extractive run."""

    store = RunStore(get_redis())
    return store.get_run(finished_run.run_id), store


# ---------------------------------------------------------------- whole app
def test_app_navigation_and_sidebar(run):
    state, _ = run
    at = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=60).run()
    _no_exception(at)
    sidebar = " ".join(e.value for e in at.sidebar.caption)
    assert (
        "offline extractive mode" in sidebar and "embedded" not in sidebar
    )  # REDIS_URL → external
    assert "external" in sidebar and os.environ["RESEARCH_DATA_DIR"] in sidebar.replace("\\", "")
    assert "Launch a research run" in _texts(at, "title")  # the default page
    # in the full app, run links are real st.page_link's carrying ?run=
    at.switch_page("app_pages/report.py")
    at.query_params["run"] = state.run_id
    at.run()
    _no_exception(at)

    expected = [p.title for p in SPECS if p.key != "report"]
    assert [p.value for p in at.get("page_link")][: len(expected)] == expected


# ---------------------------------------------------------------- launch
def test_launch_lists_history(run):
    state, _ = run
    at = _page("launch")
    _no_exception(at)
    history = at.dataframe[0].value
    row = history[history["run_id"] == state.run_id].iloc[0]
    assert row["topic"] == TOPIC and row["status"].endswith("complete") and row["sources"] > 0
    assert row["report"] == f"report?run={state.run_id}"
    assert (
        any(o.startswith("drug") for o in at.selectbox[0].options)
        and at.selectbox[0].value == "auto"
    )


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
    assert any(
        f"report?run={run_id}" in m for m in _texts(at, "markdown")
    )  # links to the run's pages
    deadline = time.monotonic() + 300
    while store.get_run(run_id).status in ACTIVE_STATUSES and time.monotonic() < deadline:
        time.sleep(1)  # the run executes in a server thread; let it finish inside this module's env
    state = store.get_run(run_id)
    assert state.status == "complete", state.error
    assert (state.config.max_perspectives, state.config.max_turns) == (1, 1)


# ---------------------------------------------------------------- run pages
def test_plan_page(run):
    state, store = run

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
    raw_views = len(at.get("json")) + len(at.code) - 2  # 2 st.code in the "Copy link" popover
    assert raw_views == shown
    useful = sum(c.card.is_useful for c in cards)
    at.segmented_control[0].set_value("useful").run()
    _no_exception(at)
    assert f"{useful} cards match" in " ".join(_texts(at, "caption"))


def test_report_page_links_citations_to_anchors(run):
    state, store = run

    report = store.get_doc(state.run_id, "report", Report)
    at = _page("report", state.run_id)
    _no_exception(at)
    assert any("offline extractive mode" in i for i in _texts(at, "info"))
    body = " ".join(_texts(at, "markdown"))
    assert "[[1]](#ref-1" in body  # with or without a hover title
    html = [m for m in at.markdown if m.proto.allow_html]
    assert [m.value for m in html] == [f'<a id="ref-{r.number}"></a>' for r in report.references]
    assert [b.proto.label for b in at.download_button] == [
        "Markdown",
        "HTML",
        "PDF",
        "Word",
        "Run (.zip)",
        "RIS",
        "BibTeX",
        "CSL-JSON",
    ]
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


def test_no_run_opens_the_newest_run(run):
    _, store = run
    at = _page("coverage")
    _no_exception(at)
    assert not any("No run selected" in i for i in _texts(at, "info"))  # no dead end after a launch
    assert not at.error
    newest = store.list_runs()[0].run_id
    q = at.query_params["run"]
    assert (q[0] if isinstance(q, list) else q) == newest  # written back: the URL is a share link


def test_active_run_shows_progress_without_report(run):
    _, store = run

    pending = store.create_run(
        RunConfig(topic="An active run"), engine_label="offline extractive mode"
    )
    lease = Lease(store.r, pending.run_id)
    assert lease.acquire()  # a live job holds the lease; without one the run reads as "interrupted"
    store.set_status(pending.run_id, "conversations")
    with lease:
        at = _page("report", pending.run_id)
        _no_exception(at)
        assert at.get("progress") and "report is written" in " ".join(_texts(at, "info"))
        assert "✅ planning → 🔵 **conversations** → ⚪ analyzing" in " ".join(
            _texts(at, "markdown")
        )
        (cancel,) = [b for b in at.button if b.label == "Cancel run"]
        cancel.click().run()
        assert store.cancel_requested(pending.run_id)
    store.delete_run(pending.run_id)


# ---------------------------------------------------------------- live, share, compare, report, scale
def test_report_citations_have_hover_titles_and_artifact_links(run):
    state, _ = run
    at = _page("report", state.run_id)
    _no_exception(at)
    body = " ".join(_texts(at, "markdown"))
    assert '[[1]](#ref-1 "[1] ' in body  # a link title: source title — type · id — “snippet”
    assert f"artifacts?run={state.run_id}&artifact=" in body  # references link to their artifact
    codes = [c.value for c in at.code]
    assert f"report?run={state.run_id}" in codes and f"report?run={state.run_id}&view=read" in codes


def test_report_read_only_view(run):
    state, _ = run
    at = AppTest.from_file(str(ROOT / "app_pages" / "report.py"), default_timeout=60)
    at.query_params["run"] = state.run_id
    at.query_params["view"] = "read"
    at.run()
    _no_exception(at)
    assert not at.download_button and not at.sidebar.selectbox and not at.get("popover")
    assert any(s.startswith("References") for s in _texts(at, "subheader"))


def test_artifact_link_shows_one_card(run):
    state, store = run
    first = store.get_cards(state.run_id)[0].artifact_file
    at = AppTest.from_file(str(ROOT / "app_pages" / "artifacts.py"), default_timeout=60)
    at.query_params["run"] = state.run_id
    at.query_params["artifact"] = first
    at.run()
    _no_exception(at)
    assert len(at.download_button) == 1


def test_launch_form_offers_every_config_field(run):
    at = _page("launch")
    _no_exception(at)
    labels = {w.label for kind in ("multiselect", "segmented_control") for w in getattr(at, kind)}
    assert {"Mode", "Engine", "Search backends", "Named corpora"} <= labels
    at.segmented_control(key="launch_mode").set_value("costorm").run()
    nums = {w.label for w in at.number_input}
    assert {"N · experts", "Query budget", "Turn cap"} <= nums and at.slider
    hist = at.dataframe[-1].value
    assert {"mode", "citations", "cost_usd", "duration_s"} <= set(hist.columns)


def test_launch_form_values_go_to_the_gate_whole(data_dir, finished_corpus):
    values = form_values(
        corpus=str(finished_corpus),
        template="general",
        max_perspectives=2,
        max_turns=1,
        engine="extractive",
        mode="storm",
        search=["local"],
        corpora=[],
        min_databases=2,
        review=True,
        gap_turns=0,
        depth="brief",
    )
    config = launch_config("HER2 testing in gastric cancer", {**values, "since": "2020"})
    assert (config.template, config.max_perspectives, config.max_turns, config.gap_turns) == (
        "general",
        2,
        1,
        0,
    )
    assert (config.min_databases, config.review, config.depth, config.since) == (
        2,
        True,
        "brief",
        "2020",
    )
    litellm = form_values(
        corpus="c",
        template="general",
        max_perspectives=2,
        max_turns=1,
        engine="litellm",
        mode="costorm",
        search=["local", "pubmed"],
        corpora=[],
        models={"writer": "m", "expert": " "},
        budget_usd=1.5,
        budget_tokens=0,
        costorm={"experts": 3},
    )
    assert litellm["budget_tokens"] is None and litellm["models"] == {"writer": "m"}
    assert litellm["costorm"] == {"experts": 3} and litellm["budget_usd"] == 1.5


def test_history_search_and_delete(run, page_env):
    _, store = run

    rid = build_scale_run(store, page_env, sources=5, turns=2, artifacts=3)
    at = _page("launch")
    at.text_input(key="hist_query").input(rid[:10]).run()
    _no_exception(at)
    assert list(at.dataframe[-1].value["run_id"]) == [rid]
    removed = delete_run_everywhere(store, rid)
    assert not store.exists(rid) and any(rid in p for p in removed)
    assert not (page_env / "research_artifacts" / rid).exists()


def test_compare_page(run, page_env):
    state, store = run

    other = build_scale_run(store, page_env, sources=30, turns=6, artifacts=6)
    at = AppTest.from_file(str(ROOT / "app_pages" / "compare.py"), default_timeout=60)
    at.query_params["runs"] = f"{state.run_id},{other}"
    at.run()
    _no_exception(at)
    assert at.get("plotly_chart")
    subs = _texts(at, "subheader")
    assert {
        "Configuration",
        "Coverage per question",
        "Sources in common and unique",
        "Outlines",
        "Report diff",
    } <= set(subs)
    diff = at.code[-1].value
    assert diff.startswith("---") and "+++" in diff
    store.delete_run(other)


@pytest.mark.parametrize("page", ["plan", "conversations", "coverage", "artifacts", "report"])
def test_hostile_text_is_never_raw_html(run, page_env, page):
    _, store = run

    rid = build_scale_run(store, page_env, sources=8, turns=3, artifacts=4, hostile=True)
    at = _page(page, rid)
    _no_exception(at)
    for m in at.markdown:
        if m.proto.allow_html:
            assert "<script" not in m.value and "onerror" not in m.value
    for kind in ("markdown", "caption", "info", "subheader", "header"):
        for text in _texts(at, kind):
            # every "<" of the payload is an entity or backslash-escaped (shown as text)
            assert not re.search(r"(?<!\\)<(script|img)", text), (kind, text[:200])
    store.delete_run(rid)


def test_every_page_renders_a_big_run(run, page_env):
    """1,000 sources, 100 turns, 500 artifacts (timing is checked by `make bench`)."""
    _, store = run

    rid = build_scale_run(store, page_env, sources=1000, turns=100, artifacts=500)
    for page in RUN_PAGES + ["launch"]:
        at = _page(page, rid)
        _no_exception(at)
    at = AppTest.from_file(str(ROOT / "app_pages" / "compare.py"), default_timeout=60)
    at.query_params["runs"] = f"{rid},{run[0].run_id}"
    at.run()
    _no_exception(at)

    delete_run_everywhere(store, rid)
