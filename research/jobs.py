"""Jobs: launching runs (issue 2 §9).

From the dashboard a run executes in a background thread of the server process — one runner per
process, writing only Redis and artifacts — so closing the tab does not stop it. The CLI runs the
same job in the foreground. ``make_config`` is the one gate for user input.
"""

from __future__ import annotations

import threading
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from research import artifacts
from research.config import load_settings
from research import models as m
from research.models import ACTIVE_STATUSES, Report, RunConfig, RunState, Syllabus
from research.pipeline import runner
from research.store.collector import SourceCollector
from research.store.connection import get_redis
from research.store.runs import RunStore
from research.syllabus import get_template
from research.validation import validate_corpus, validate_int, validate_topic

MAX_CONCURRENT_RUNS = 4


def make_config(topic: str, *, corpus: str | Path | None = None, template: str = "general",
                max_perspectives: int = 4, max_turns: int = 3, engine: str = "extractive") -> RunConfig:
    """Validate user input into a RunConfig. Nothing is written.

    Raises:
        InputError / CorpusError: with a message that says what to fix.
    """
    settings = load_settings()
    get_template(template)  # raises with the valid names
    corpus_path = validate_corpus(corpus or settings.default_corpus)
    return RunConfig(
        topic=validate_topic(topic), corpus=str(corpus_path), template=template,
        max_perspectives=validate_int("max perspectives", max_perspectives, 1, 12),
        max_turns=validate_int("max turns", max_turns, 1, 10), engine=engine)


def is_active(status: str) -> bool:
    """True while a run is pending or in one of its working phases."""
    return status in ACTIVE_STATUSES


class _Runner:
    """The process's one runner: a small thread pool executing runs."""

    def __init__(self) -> None:
        self._pool = ThreadPoolExecutor(max_workers=MAX_CONCURRENT_RUNS, thread_name_prefix="run")
        self.futures: dict[str, Future] = {}
        self._lock = threading.Lock()

    def submit(self, run_id: str) -> None:
        with self._lock:
            self.futures[run_id] = self._pool.submit(runner.execute, run_id)


_runner: _Runner | None = None
_runner_lock = threading.Lock()


def _get_runner() -> _Runner:
    global _runner
    with _runner_lock:
        if _runner is None:
            _runner = _Runner()
        return _runner


def _create(config: RunConfig) -> str:
    store = RunStore(get_redis())
    label = "offline extractive mode" if config.engine == "extractive" else config.engine
    return store.create_run(config, engine_label=label).run_id


def start_run(config: RunConfig) -> str:
    """Create the run and execute it in the background; returns its id at once."""
    run_id = _create(config)
    _get_runner().submit(run_id)
    return run_id


def run_foreground(config: RunConfig) -> RunState:
    """Create the run and execute it in this thread; returns the final state."""
    run_id = _create(config)
    runner.execute(run_id)
    return RunStore(get_redis()).get_run(run_id)


def run_summary(run_id: str) -> dict:
    """The CLI's ``--json`` object: run_id, status, report_path, artifacts_dir, sources,
    questions (key → source count), citations, llm_calls, prompt_tokens, completion_tokens,
    cost_usd (USD), wall_s (s)."""
    store = RunStore(get_redis())
    state = store.get_run(run_id)
    collector = SourceCollector(store.r, run_id)
    report = store.get_doc(run_id, "report", Report)
    usage = store.get_usage(run_id)
    counts = collector.question_counts() if store.get_doc(run_id, "syllabus", Syllabus) else {}
    return {
        "run_id": run_id, "status": state.status, "report_path": state.report_path or None,
        "artifacts_dir": str(artifacts.artifacts_dir(run_id)), "sources": len(collector.all_sources()),
        "questions": counts, "citations": len(report.references) if report else 0,
        "llm_calls": usage.llm_calls, "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens, "cost_usd": round(usage.cost_usd, 6),
        "wall_s": state.wall_s, "error": state.error or None,
    }


def run_snapshot(run_id: str) -> dict:
    """The whole stored state of a run as a JSON-able dict (``research show --json``)."""
    store = RunStore(get_redis())
    state = store.get_run(run_id)
    docs = {name: store.get_doc(run_id, name, model) for name, model in
            [("plan", m.Plan), ("syllabus", m.Syllabus), ("draft_outline", m.Outline), ("outline", m.Outline),
             ("analysis", m.Analysis), ("report", m.Report), ("draft_report", m.Report)]}
    has_syllabus = docs["syllabus"] is not None
    return {
        "run": state.model_dump(mode="json"),
        **{k: (v.model_dump(mode="json") if v else None) for k, v in docs.items()},
        "survey": [x.model_dump(mode="json") for x in store.get_doc_list(run_id, "survey", m.TopicOutline)],
        "perspectives": [x.model_dump(mode="json") for x in store.get_doc_list(run_id, "perspectives", m.Perspective)],
        "turns": [t.model_dump(mode="json") for t in store.get_turns(run_id)],
        "artifacts": [c.model_dump(mode="json") for c in store.get_cards(run_id)],
        "sources": SourceCollector(store.r, run_id).finalize_sources() if has_syllabus else None,
        "usage": store.get_usage(run_id).model_dump(),
        "events": [e.model_dump(mode="json") for e in store.events(run_id)],
    }

