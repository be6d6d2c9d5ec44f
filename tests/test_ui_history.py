"""research.ui.history and research.ui.events: run-history rows, durations, event lines."""

from __future__ import annotations

from research.models import Event, RunConfig, RunState
from research.store.runs import RunStore
from research.ui import events, history


def _state(
    status: str, created: float = 1000.0, finished: float | None = None, run_id: str = "ab" * 8
) -> RunState:
    return RunState(
        run_id=run_id,
        status=status,
        topic="Trastuzumab in HER2-positive breast cancer",
        mode="storm",
        config=RunConfig(topic="x"),
        created_at=created,
        updated_at=created + 5,
        finished_at=finished,
    )


def test_duration_and_format():
    assert round(history.duration_s(_state("complete", finished=1062.4)), 1) == 62.4
    assert history.duration_s(_state("planning"), now=1030.0) == 30.0
    assert history.duration_s(_state("failed")) == 5.0  # no finished_at: updated_at
    assert history.format_duration(42) == "42 s"
    assert history.format_duration(185) == "3 min 05 s"
    assert history.format_duration(3720) == "1 h 02 min"


def test_history_rows_and_links():
    runs = [
        _state("complete", finished=1100.0, run_id="a" * 16),
        _state("conversations", run_id="b" * 16),
    ]
    rows = history.history_rows(runs, {"a" * 16: 31}, now=1010.0)
    assert [r["run_id"] for r in rows] == ["a" * 16, "b" * 16]
    assert rows[0]["sources"] == 31 and rows[1]["sources"] == 0
    assert rows[0]["status"].endswith("complete") and rows[0]["duration"] == "1 min 40 s"
    assert rows[1]["duration"] == "10 s"
    assert (
        rows[0]["report"] == f"report?run={'a' * 16}" and rows[0]["plan"] == f"plan?run={'a' * 16}"
    )


def test_run_label_shortens_topic():
    label = history.run_label(_state("complete").model_copy(update={"topic": "x" * 100}))
    assert "…" in label and label.endswith("abababab")


def test_source_counts_reads_collector_lists(r):
    store = RunStore(r)
    rid, other = "c" * 16, "d" * 16
    r.rpush(f"source_collection:{rid}:sources", "{}", "{}", "{}")
    assert history.source_counts(store, [rid, other]) == {rid: 3, other: 0}


def test_describe_event():
    ev = Event(
        type="turn.finished",
        data={"perspective": "Oncologist", "turn": 2, "question": "What\nabout OS?", "sources": 4},
    )
    assert events.describe_event(ev) == "Oncologist · turn 2: What about OS? (4 sources)"
    assert (
        events.describe_event(Event(type="status", data={"status": "analyzing"}))
        == "status → analyzing"
    )
    assert events.describe_event(Event(type="custom.thing", data={"k": "v" * 500})).endswith("…")
    rows = events.events_rows([ev])
    assert rows[0]["event"] == "turn.finished" and len(rows[0]["time"]) == 8
