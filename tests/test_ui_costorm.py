"""Co-STORM in the dashboard and the API: the run header counts round-table turns
against the turn cap and queries against the budget and says why the run stopped; the Report page
nests sections by mind-map depth; ``research show --json`` carries a ``costorm`` summary; a treemap
click selects a concept. One small real Co-STORM run (offline engine, 60-document corpus)."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from research import jobs
from research.costorm import get_mindmap, get_turns
from research.costorm.summary import stop_line
from research.models import Report, ReportSection
from research.store.connection import get_redis
from research.store.runs import RunStore
from research.ui.citations import report_body_markdown
from research.ui.costorm_views import clicked_node, node_options
from research.ui.progress import progress_info, totals_caption

ROOT = Path(__file__).resolve().parents[1]
TOPIC = "Trastuzumab in HER2-positive breast cancer"


@pytest.fixture(scope="module")
def costorm_run(redis_server, tmp_path_factory, finished_corpus):
    """``(state, store)`` of a finished Co-STORM run: 2 experts, query budget 6, turn cap 12, at
    most 3 items a concept (a small run still grows a map two levels deep)."""
    mp = pytest.MonkeyPatch()
    mp.setenv("RESEARCH_DATA_DIR", str(tmp_path_factory.mktemp("costorm_ui_data")))
    mp.setenv("REDIS_URL", redis_server)
    mp.delenv("RESEARCH_LLM_MODEL", raising=False)
    state = jobs.run_foreground(
        jobs.make_config(
            TOPIC,
            corpus=str(finished_corpus),
            template="drug",
            mode="costorm",
            costorm={"experts": 2, "query_budget": 6, "max_turns": 12, "max_node_items": 3},
        )
    )
    assert state.status == "complete", f"{state.error_code}: {state.error}"
    yield state, RunStore(get_redis())
    mp.undo()


def _page(name: str, run_id: str) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app_pages" / f"{name}.py"), default_timeout=60)
    at.query_params["run"] = run_id
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_progress_counts_roundtable_turns_queries_and_stop(costorm_run):
    state, store = costorm_run
    turns = get_turns(store.r, state.run_id)
    roundtable = sum(not t.warm_start for t in turns)
    info = progress_info(store, state)
    assert info.turns_done == roundtable > 0 and info.turns_planned == 12
    assert info.costorm["warm_start"] == len(turns) - roundtable == 2
    assert info.costorm["query_budget"] == 6 and 0 < info.costorm["queries_used"] <= 6
    assert state.stop_reason in ("query_budget", "turn_cap", "coverage_complete")
    assert info.costorm["stop"].startswith("stopped: ")
    line = totals_caption(info)
    assert (
        f"{roundtable} / 12 round-table turns (+2 warm start)" in line
        and info.costorm["stop"] in line
    )
    at = _page("conversations", state.run_id)
    captions = " ".join(c.value for c in at.caption)
    assert info.costorm["stop"] in captions and "0 turns" not in captions
    mm_page = _page("mindmap", state.run_id)
    assert mm_page.selectbox(key=f"mm_node_{state.run_id}").value in node_options(
        get_mindmap(store.r, state.run_id)
    )


def test_stop_line_wording():
    assert (
        stop_line("query_budget", queries_used=30, query_budget=30, turns=12, max_turns=20)
        == "stopped: query budget reached (30/30)"
    )
    assert (
        stop_line("turn_cap", queries_used=9, query_budget=30, turns=20, max_turns=20)
        == "stopped: turn cap reached (20/20 turns)"
    )
    assert stop_line("", queries_used=1, query_budget=30, turns=1, max_turns=20) == ""


def test_report_sections_nest_like_the_markdown(costorm_run):
    state, store = costorm_run
    report = store.get_doc(state.run_id, "report", Report)
    levels = report.section_levels()
    mm = get_mindmap(store.r, state.run_id)
    assert len(levels) == len(report.sections) and max(levels) == min(mm.depth(), 3) >= 2
    md_levels = [
        len(line.split(" ", 1)[0]) - 1
        for line in report.markdown.splitlines()
        if line.startswith("##") and line != "## References"
    ]
    assert levels == md_levels
    body = report_body_markdown(report)
    body_levels = [
        len(line.split(" ", 1)[0]) - 1 for line in body.splitlines() if line.startswith("##")
    ]
    assert body_levels == levels
    at = _page("report", state.run_id)
    shown = "\n".join(m.value for m in at.markdown)
    shown_levels = [
        len(line.split(" ", 1)[0]) - 1 for line in shown.splitlines() if line.startswith("##")
    ]
    assert shown_levels == levels  # the page draws ## / ### / #### as the mind map nests
    assert "Round-table" in [s.value for s in at.subheader]


def test_section_levels_fall_back_to_markdown_headings():
    old = Report(
        title="T",
        lead="L",
        references=[],
        sections=[ReportSection(heading="A", text="a"), ReportSection(heading="B", text="b")],
        markdown="# T\n\nL\n\n## A\n\na\n\n### B\n\nb\n\n## References\n",
    )
    assert old.section_levels() == [1, 2]
    assert "### B" in report_body_markdown(old)
    storm = old.model_copy(update={"markdown": "# T\n\n## Other\n"})
    assert storm.section_levels() == [1, 1]


def test_show_json_has_costorm_summary(costorm_run):
    state, store = costorm_run
    snap = jobs.run_snapshot(state.run_id)["costorm"]
    turns = get_turns(store.r, state.run_id)
    assert (
        snap["turns"]
        == len(turns)
        == sum(snap["by_intent"].values())
        == sum(snap["by_kind"].values())
    )
    assert (
        snap["moderator_turns"]
        == sum(t.kind == "moderator" for t in turns)
        == snap["by_kind"]["moderator"]
    )
    assert sum(snap["by_role"].values()) == len(turns)
    mm = get_mindmap(store.r, state.run_id)
    assert snap["mindmap"] == {
        "depth": mm.depth(),
        "nodes": len(node_options(mm)),
        "items": len(mm.items),
    }
    assert snap["stop_reason"] == state.stop_reason and snap["stop_line"].startswith("stopped: ")
    assert len(snap["transcript"]) == len(turns) and snap["mind_map"]["topic"] == mm.topic


def test_treemap_click_selects_a_concept():
    options = ["T > A", "T > A > B"]
    event = {
        "selection": {
            "points": [{"id": "T > A > B", "label": "B", "parent": "T > A"}],
            "point_indices": [1],
        }
    }
    assert clicked_node(event, options) == "T > A > B"
    assert clicked_node({"selection": {"points": [{"id": "T"}]}}, options) is None  # the root
    assert (
        clicked_node(None, options) is None
        and clicked_node({"selection": {"points": []}}, options) is None
    )
