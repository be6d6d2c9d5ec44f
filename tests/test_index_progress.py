"""Index build progress: the build reports its states, a run waiting for its
index gets ``index.progress`` events, the CLI draws a bar on stderr only, and the dashboard's
helpers turn the states into the labels an analyst reads."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import threading

from research import jobs
from research.cli.progress import IndexBar
from research.jobs import make_config
from research.pipeline.index_events import EVENT, index_progress_events, uses_local_corpus
from research.search import LocalSearch, index_progress
from research.search import local as local_mod
from research.store import open_store
from research.store.runs import RunStore
from research.ui.corpora import index_status_line
from research.ui.history import eta_text
from research.ui.progress import index_label


def small_corpus(tmp_path, corpus_path, n: int) -> object:
    out = tmp_path / "small.jsonl"
    with corpus_path.open(encoding="utf-8") as fh:
        out.write_text("".join(next(fh) for _ in range(n)), encoding="utf-8")
    return out


def test_build_reports_states_and_counts(tmp_path, corpus_path, monkeypatch):
    monkeypatch.setattr(local_mod, "EMBED_CHUNK", 8)
    # the vectors of these documents are in the session's shared vector cache: with it the
    # build would skip embedding too fast for a watcher to see the embedding states
    monkeypatch.setenv("RESEARCH_VECTOR_CACHE", "0")
    src = small_corpus(tmp_path, corpus_path, 20)
    idx = tmp_path / "idx"
    assert index_progress.index_state(src, idx)["state"] == "missing"
    seen: list[dict] = []
    ipath = index_progress.index_path_for(src, idx)
    stop = threading.Event()
    watcher = index_progress.watch(ipath, seen.append, stop, interval_s=0.01)
    ls = LocalSearch(src, idx)
    stop.set()
    watcher.join(5)
    assert ls.built and len(ls.docs) == 20
    states = [s["state"] for s in seen]
    assert states[0] in ("loading_model", "embedding") and states[-1] == "ready"
    counts = [s["done"] for s in seen if s["state"] == "embedding"]
    assert counts == sorted(counts) and all(
        s["total"] == 20 for s in seen if s["state"] == "embedding"
    )
    # after a chunk the build estimates the time left from its own rate; none before, none at the end
    partial = [s for s in seen if s["state"] == "embedding" and 0 < s["done"] < 20]
    assert partial and all(s["eta_s"] is not None and s["eta_s"] >= 0 for s in partial)
    assert all(
        s["eta_s"] is None for s in seen if s["state"] == "embedding" and s["done"] in (0, 20)
    )
    final = index_progress.index_state(src, idx)
    assert final["state"] == "ready" and final["done"] == final["total"] == 20
    # a fresh process would see the index on disk: ready with its document count
    index_progress._LIVE.pop(str(ipath))
    assert index_progress.index_state(src, idx)["total"] == 20


def test_run_gets_index_progress_events_only_while_it_waits(tmp_path, corpus_path, r, redis_server):
    store = RunStore(r)
    src = small_corpus(tmp_path, corpus_path, 12)
    idx = tmp_path / "idx"
    config = make_config("Trastuzumab", corpus=str(src))
    assert uses_local_corpus(config)
    run_id = store.create_run(config).run_id
    with index_progress_events(store, run_id, config, idx):
        LocalSearch(src, idx)
    events = [e for e in store.events(run_id) if e.type == EVENT]
    assert events, "a cold index gives index.progress events"
    assert events[0].data["state"] == "loading_model" and events[-1].data["state"] == "ready"
    assert events[-1].data["done"] == events[-1].data["total"] == 12
    assert all("eta_s" in e.data for e in events)  # the run page's "about N s left"
    # warm index: nothing to wait for, no events
    run2 = store.create_run(config).run_id
    with index_progress_events(store, run2, config, idx):
        LocalSearch(src, idx)
    assert not [e for e in store.events(run2) if e.type == EVENT]


def test_cli_bar_writes_to_its_stream_only():
    err = io.StringIO()
    bar = IndexBar(err)
    bar.update({"state": "loading_model", "done": 0, "total": 0})
    bar.update({"state": "embedding", "done": 1200, "total": 2972})
    bar.update({"state": "ready", "done": 2972, "total": 2972})
    bar.update({"state": "embedding", "done": 5, "total": 2972})  # after close: ignored
    text = err.getvalue()
    assert "Indexing corpus" in text and "1200/2972" in text and "Index ready" in text
    assert bar.closed


def test_time_left_estimate():
    assert index_progress.eta_s(0, 2972, 3.0) is None  # no rate yet
    assert index_progress.eta_s(1280, 2972, 18.5) == 24.5  # 1,692 docs at 69.2 docs/s
    assert index_progress.eta_s(2972, 2972, 43.0) is None
    assert [eta_text(x) for x in (None, 4.4, 24.5, 61, 150)] == [
        "",
        " · about 4 s left",
        " · about 25 s left",
        " · about 60 s left",
        " · about 2 min left",
    ]


def test_labels_for_the_run_page_and_corpora_page():
    assert index_label({"state": "embedding", "done": 1200, "total": 2972}) == (
        1200 / 2972,
        "Indexing corpus: 1,200 / 2,972 documents",
    )
    assert (
        index_label({"state": "embedding", "done": 1280, "total": 2972, "eta_s": 24.5})[1]
        == "Indexing corpus: 1,280 / 2,972 documents · about 25 s left"
    )
    assert (
        index_status_line(
            {"state": "embedding", "done": 10, "total": 40, "corpus": "/x/docs.jsonl", "eta_s": 130}
        )[1]
        == "Indexing docs.jsonl: 10 / 40 documents · about 2 min left"
    )
    assert index_label({"state": "loading_model", "done": 0, "total": 0})[0] == 0.0
    frac, text = index_status_line(
        {"state": "embedding", "done": 10, "total": 40, "corpus": "/x/docs.jsonl"}
    )
    assert frac == 0.25 and text == "Indexing docs.jsonl: 10 / 40 documents"
    frac, text = index_status_line(
        {"state": "ready", "done": 40, "total": 40, "corpus": "/x/docs.jsonl", "updated": 0}
    )
    assert frac is None and "ready, 40 documents" in text
    assert "not built yet" in index_status_line({"state": "missing", "corpus": "/x/d.jsonl"})[1]
    json.dumps(
        index_progress.index_state("/nonexistent/corpus.jsonl", "/tmp")
    )  # JSON-safe, no raise


def test_creating_a_run_on_a_cold_index_announces_the_build(
    tmp_path, corpus_path, data_dir, monkeypatch
):
    """The first ``index.progress`` event is written when the run is created (the CLI and the
    dashboard create the run before importing the pipeline), not when the pipeline starts."""

    src = small_corpus(tmp_path, corpus_path, 12)
    idx = tmp_path / "idx"
    monkeypatch.setenv("RESEARCH_INDEX_DIR", str(idx))
    run_id = jobs.create_run(make_config("Trastuzumab", corpus=str(src)))
    events = [e for e in open_store().events(run_id) if e.type == EVENT]
    assert [e.data["state"] for e in events] == ["loading_model"] and events[0].data["total"] == 0
    LocalSearch(src, idx)  # the index now exists: a new run has nothing to wait for
    run2 = jobs.create_run(make_config("Trastuzumab", corpus=str(src)))
    assert not [e for e in open_store().events(run2) if e.type == EVENT]


def test_creating_a_run_does_not_import_the_pipeline():
    """``import research.jobs`` (what the CLI needs to create a run) stays light: the pipeline
    and scikit-learn (~1.5 s of imports) load only when a run executes."""

    code = (
        "import sys, research.jobs; "
        "print(sorted(m for m in ('research.pipeline.runner', 'sklearn') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
