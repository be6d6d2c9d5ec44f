"""research.ui.charts: coverage frames and the plotly figure from a finalize_sources() dict."""

from __future__ import annotations

from research.ui import charts


def _src(i: int, stype: str) -> dict:
    return {"source_id": f"src_{i:03d}", "source_type": stype, "title": f"t{i}"}


FINAL = {
    "questions": {
        "mechanism.moa": {
            "label": "Mechanism of Action",
            "min_sources": 2,
            "sources": [_src(1, "pubmed"), _src(2, "pubmed"), _src(3, "web")],
        },
        "clinical.safety": {
            "label": "Safety Profile",
            "min_sources": 5,
            "sources": [_src(1, "pubmed")],
        },
        "market.status": {"label": "Market Status", "min_sources": 3, "sources": []},
    },
    "sources": [_src(1, "pubmed"), _src(2, "pubmed"), _src(3, "web")],
    "total": 3,
}


def test_coverage_table_status_and_missing():
    t = charts.coverage_table(FINAL)
    assert list(t["key"]) == ["mechanism.moa", "clinical.safety", "market.status"]
    assert list(t["sources"]) == [3, 1, 0]
    assert list(t["status"]) == ["✓", "⚠", "⚠"]
    assert list(t["missing"]) == [0, 4, 3]


def test_coverage_long_counts_by_type():
    long = charts.coverage_long(FINAL)
    rows = {(r.key, r.source_type): r.count for r in long.itertuples()}
    assert rows == {
        ("mechanism.moa", "pubmed"): 2,
        ("mechanism.moa", "web"): 1,
        ("clinical.safety", "pubmed"): 1,
    }


def test_coverage_figure_stacks_types_and_marks_minimum():
    fig = charts.coverage_figure(FINAL)
    assert fig.layout.barmode == "stack"
    bars = {tr.name: list(tr.y) for tr in fig.data if tr.type == "bar"}
    assert bars == {"pubmed": [2, 1, 0], "web": [1, 0, 0]}
    marker = [tr for tr in fig.data if tr.name == "min sources"][0]
    assert list(marker.y) == [2, 5, 3]
    assert list(marker.x) == ["Mechanism of Action", "Safety Profile", "Market Status"]


def test_empty_input():
    assert charts.coverage_table({}).empty
    assert len(charts.coverage_figure({"questions": {}}).data) == 1  # only the (empty) marker trace
