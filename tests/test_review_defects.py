"""The six defects a review found, each pinned by a test that failed before its fix.

Real parts only: the session's redis-server, the real pipeline on a 60-document slice of the
shared corpus (``finished_corpus``), Streamlit's AppTest for the dashboard entry point.
"""

from __future__ import annotations

import ast
import contextlib
import io
import logging
import time
from pathlib import Path

import pytest
import streamlit as st
from pydantic import ValidationError
from streamlit.testing.v1 import AppTest

import research.cli.handlers as cli
from research import jobs
from research.config import load_settings
from research.errors import ResearchError
from research.models import Plan, RunConfig
from research.pipeline import reporter, runner
from research.pipeline.context import RunContext
from research.store import keys
from research.store.collector import SourceCollector
from research.store.runs import RunStore
from research.ui.report_view import export_download, export_problem

ROOT = Path(__file__).resolve().parents[1]


def _wait(pred, timeout_s: float = 120.0) -> None:
    t0 = time.monotonic()
    while not pred():
        if time.monotonic() - t0 > timeout_s:
            raise AssertionError("timed out")
        time.sleep(0.1)


# ---------------------------------------------------------------- 1. the CLI follows its own run id
@pytest.mark.slow
def test_cli_follows_the_run_it_created_not_an_identical_one(data_dir, r, finished_corpus):
    """Two identical runs started together on one Redis: the CLI must report (and, on Ctrl-C,
    cancel) the run it created, never the other one found by an equal config."""

    config = jobs.make_config(
        "HER2 testing methods", corpus=str(finished_corpus), max_perspectives=1, max_turns=1
    )
    store = RunStore(r)
    twin = store.create_run(
        config
    ).run_id  # another process's run with the same config, just created
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        state = cli._run_with_progress(jobs, config, quiet=False)
    assert state.run_id != twin and state.status == "complete"
    first = out.getvalue().splitlines()[0]
    assert first.startswith(f"run {state.run_id}:"), first
    assert store.get_run(twin).status == "pending"  # untouched
    assert not store.cancel_requested(twin)


# ---------------------------------------------------------------- 2. dashboard start retries resume
def test_dashboard_resume_retries_after_redis_was_down(
    data_dir, r, redis_server, monkeypatch, caplog, tmp_path
):
    """Redis down at the first page load: the failure is logged and a later page load resumes
    the interrupted runs (before: swallowed inside st.cache_resource for the server's life)."""

    st.cache_resource.clear()
    monkeypatch.setenv("RESEARCH_JOB_BACKEND", "thread")
    monkeypatch.delenv("RESEARCH_AUTO_RESUME", raising=False)
    monkeypatch.setenv("REDIS_URL", f"unix://{tmp_path / 'nobody-listens.sock'}")
    with caplog.at_level(logging.WARNING):
        AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=60).run()
    assert any("resume" in rec.getMessage().lower() for rec in caplog.records), caplog.text

    store = RunStore(r)  # Redis is back; a run whose job died (active status, no lease)
    rid = store.create_run(RunConfig(topic="t", corpus=str(tmp_path / "gone.jsonl"))).run_id
    store.set_status(rid, "conversations")
    monkeypatch.setenv("REDIS_URL", redis_server)
    AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=60).run()
    _wait(lambda: any(e.type == "resume.requested" for e in store.events(rid)), 30)
    requested = next(e for e in store.events(rid) if e.type == "resume.requested")
    assert requested.data["by"] == "dashboard"
    _wait(
        lambda: store.get_run(rid).status not in ("pending", "planning"), 60
    )  # its job ends (no corpus)
    st.cache_resource.clear()


# ---------------------------------------------------------------- 3. a failed export is not a download
def test_failed_export_raises_instead_of_serving_error_text(data_dir, r):
    """The download callable raises the typed error (Streamlit then reports a failed download);
    before, it returned the error text as the bytes of a .pdf/.docx/.zip file."""

    store = RunStore(r)
    rid = store.create_run(RunConfig(topic="t")).run_id
    store.delete_run(rid)  # deleted in another tab after the page rendered its buttons
    for fmt in ("pdf", "docx", "zip"):
        with pytest.raises(ResearchError):
            export_download(store, rid, fmt)
    assert export_problem("md") is None and export_problem("zip") is None


# ---------------------------------------------------------------- 4. a resumed Co-STORM run keeps its plan
@pytest.mark.slow
def test_resumed_costorm_run_does_not_plan_again(data_dir, r, finished_corpus):

    config = jobs.make_config(
        "Trastuzumab cardiotoxicity",
        corpus=str(finished_corpus),
        mode="costorm",
        costorm={"experts": 1, "query_budget": 2, "max_turns": 1},
    )
    store = RunStore(r)
    rid = store.create_run(config).run_id
    assert runner.execute(rid) == "complete"
    plan = store.get_doc(rid, "plan", Plan)
    store.set_status(rid, "interrupted")  # resume it: every phase finds its stored result
    r.delete(keys.run_doc(rid, "report"))
    assert runner.execute(rid) == "complete"
    assert sum(e.type == "plan.ready" for e in store.events(rid)) == 1
    assert store.get_doc(rid, "plan", Plan) == plan


# ---------------------------------------------------------------- 5. outline refinement: typed errors only
@pytest.mark.slow
def test_outline_refinement_does_not_hide_programming_errors(data_dir, r, finished_corpus):
    """Only the engine's typed errors fall back to the draft (with an event); anything else is a
    bug and propagates (before: every exception was swallowed)."""

    config = jobs.make_config("HER2 testing methods", corpus=str(finished_corpus))
    store = RunStore(r)
    rid = store.create_run(config).run_id
    ctx = runner.build_context(rid)
    with pytest.raises(ValidationError):
        reporter.make_outline(ctx, [object()])  # a caller bug: not a ConversationResult
    assert not any(e.type == "outline.refine_failed" for e in store.events(rid))


# ---------------------------------------------------------------- 6. invariants are typed errors, not asserts
def test_no_assert_statements_in_production_code():
    """``python -O`` strips ``assert``: production invariants raise typed errors instead."""
    found = []
    for path in sorted((ROOT / "research").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found += [
            f"{path.relative_to(ROOT)}:{n.lineno}"
            for n in ast.walk(tree)
            if isinstance(n, ast.Assert)
        ]
    assert found == []


def test_step_for_without_a_plan_raises_a_typed_error(data_dir, r):

    store = RunStore(r)
    config = RunConfig(topic="t")
    rid = store.create_run(config).run_id
    ctx = RunContext(
        run_id=rid,
        config=config,
        settings=load_settings(),
        store=store,
        collector=SourceCollector(r, rid),
        engine=None,
        retriever=None,
    )  # type: ignore[arg-type]  # no engine or retriever: the check fails before using them
    with pytest.raises(ResearchError) as exc:
        ctx.step_for("anything")
    assert exc.value.code == "invariant_violated"
