"""The MCP tools on runs: typed functions over the job code (``research.jobs``) and the exports.
Each returns JSON-able data; bad input or a run in the wrong state raises
``ToolError`` with the product's own message (what to fix, or what to call next).

Nothing here blocks for long: ``start_research`` queues the run and returns its id
(``research.jobs.start_run``, the dashboard's path); ``ask_run`` waits at most ``wait_s``
seconds for the answer, then returns the follow-up id for ``get_answer``. The corpus search is
``research.mcp_server.search``.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Annotated, Any, TypeVar

from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from research import jobs
from research.errors import InputError, ResearchError
from research.export import render_export
from research.jobs.corpus_access import served_corpus
from research.jobs.followups import followup_status, submit_ask
from research.jobs.progress import coverage_summary, run_progress
from research.models import (
    DEPTHS,
    ENGINES,
    GAP_TURNS_RANGE,
    MIN_DATABASES_RANGE,
    MODES,
    PERSPECTIVES_RANGE,
    TEMPLATE_CHOICES,
    TURNS_RANGE,
)
from research.store import open_store
from research.store.keys import check_run_id

MAX_WAIT_S = 120  # s ask_run / get_answer may wait for an answer (below common client timeouts)
_F = TypeVar("_F", bound=Callable[..., Any])


def tool_errors(fn: _F) -> _F:
    """Turn the product's errors (``ResearchError``: bad input, unknown run, report not ready,
    Redis down) into ``ToolError`` so the client sees their message, not a generic failure."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except ResearchError as exc:
            raise ToolError(f"{exc.message} [{exc.code}]") from exc

    return wrapper  # type: ignore[return-value]


RunId = Annotated[str, Field(description="a run id (16–32 hex characters) from start_research")]


def _bounds(bounds: tuple[int, int]) -> dict[str, Any]:
    """The published bounds of an integer option. The schema states them and the input gate
    (``jobs.make_config``) enforces them, so an out-of-range value gets the message
    ``research run``, the HTTP API and the dashboard give."""
    return {"minimum": bounds[0], "maximum": bounds[1]}


def _iso(ts: float | None) -> str | None:
    return datetime.fromtimestamp(ts, tz=UTC).isoformat(timespec="seconds") if ts else None


@tool_errors
def start_research(
    topic: Annotated[str, Field(description="the research question, up to 500 characters")],
    max_perspectives: Annotated[
        int, Field(json_schema_extra=_bounds(PERSPECTIVES_RANGE), description="personas")
    ] = 4,
    max_turns: Annotated[
        int,
        Field(json_schema_extra=_bounds(TURNS_RANGE), description="dialogue turns per persona"),
    ] = 3,
    gap_turns: Annotated[
        int | None,
        Field(
            json_schema_extra=_bounds(GAP_TURNS_RANGE),
            description="rounds of gap searches for unanswered questions (0 = none; default 2, "
            "or RESEARCH_LOCAL_GAP_TURNS (0) when every model is local)",
        ),
    ] = None,
    depth: Annotated[
        str,
        Field(
            description="report length: brief ~300, standard ~1,000, deep ~2,500 words",
            json_schema_extra={"enum": list(DEPTHS)},
        ),
    ] = "standard",
    template: Annotated[
        str,
        Field(
            description="question syllabus; auto fits it to the topic",
            json_schema_extra={"enum": list(TEMPLATE_CHOICES)},
        ),
    ] = "auto",
    engine: Annotated[
        str | None,
        Field(
            description="extractive (offline, no model) or litellm (needs a configured model); "
            "default extractive",
            json_schema_extra={"enum": [*ENGINES, None]},
        ),
    ] = None,
    mode: Annotated[
        str,
        Field(
            description="storm (perspective conversations) or costorm (moderated round-table)",
            json_schema_extra={"enum": list(MODES)},
        ),
    ] = "storm",
    model: Annotated[
        str | None, Field(description="litellm model for every role; implies engine litellm")
    ] = None,
    search: Annotated[
        list[str] | None,
        Field(description="search backends, e.g. ['local', 'pubmed']; default ['local']"),
    ] = None,
    corpora: Annotated[
        list[str] | None, Field(description="ingested corpora to search too (by name)")
    ] = None,
    corpus: Annotated[
        str | None,
        Field(
            description="a local corpus (.jsonl or folder) registered on the server: a path "
            "under RESEARCH_CORPUS_ROOTS; default: the configured corpus (named corpora go in "
            "corpora)"
        ),
    ] = None,
    min_databases: Annotated[
        int,
        Field(
            json_schema_extra=_bounds(MIN_DATABASES_RANGE),
            description="distinct source types a question needs to count as covered",
        ),
    ] = 1,
    since: Annotated[
        str | None, Field(description="only sources published since YYYY[-MM[-DD]]")
    ] = None,
    language: Annotated[
        str | None, Field(description="ISO 639-1 report language, e.g. de (litellm engine)")
    ] = None,
) -> dict[str, Any]:
    """Validate (``jobs.make_config``, the one input gate: the same message as ``research
    run`` for the same bad value) and start the run in the background (``jobs.start_run``);
    returns ``{run_id, status, topic, engine, next}`` at once. A ``corpus`` that is not
    registered on the server (``research.jobs.corpus_access``) is refused before any file is
    read."""
    extra: dict[str, Any] = jobs.engine_options(engine, model)
    for key, value in (("since", since), ("language", language)):
        if value:
            extra[key] = value
    config = jobs.make_config(
        topic,
        corpus=served_corpus(corpus),
        template=template,
        max_perspectives=max_perspectives,
        max_turns=max_turns,
        gap_turns=gap_turns,
        depth=depth,
        mode=mode,
        search=search,
        corpora=corpora,
        min_databases=min_databases,
        **extra,
    )
    run_id = jobs.start_run(config)
    state = open_store().get_run(run_id)
    return {
        "run_id": run_id,
        "status": state.status,
        "topic": state.topic,
        "engine": state.engine_label or state.config.engine,
        "next": "poll get_run with this run_id until status is complete, then get_report",
    }


@tool_errors
def get_run(run_id: RunId) -> dict[str, Any]:
    """``{run_id, topic, status, mode, engine, created, finished, progress, coverage, sources,
    citations, llm_calls, cost_usd, wall_s, error, stop_reason}`` (``jobs.run_summary`` plus
    ``research.jobs.progress``)."""
    store = open_store()
    state = store.get_run(check_run_id(run_id.strip()))
    summary = jobs.run_summary(state.run_id)
    return {
        "run_id": state.run_id,
        "topic": state.topic,
        "status": state.status,
        "mode": state.mode,
        "engine": state.engine_label or state.config.engine,
        "created": _iso(state.created_at),
        "finished": _iso(state.finished_at),
        "progress": run_progress(store, state),
        "coverage": coverage_summary(store, state.run_id),
        **{
            k: summary[k]
            for k in ("sources", "citations", "llm_calls", "cost_usd", "wall_s", "error")
        },
        "stop_reason": state.stop_reason or None,
    }


@tool_errors
def get_report(
    run_id: RunId,
    version: Annotated[
        int | None, Field(ge=1, description="report version (default: the current one)")
    ] = None,
) -> str:
    """The report as Markdown, as ``research export --format md`` writes it."""
    store = open_store()
    run_id = check_run_id(run_id.strip())
    try:
        return render_export(store, run_id, "md", version=version).decode()
    except InputError as exc:
        if exc.code != "report_not_ready":
            raise
        state = store.get_run(run_id)
        prog = run_progress(store, state)
        raise ToolError(
            f"Run {run_id} has no report yet: it is {state.status} ({prog['fraction']:.0%} done)"
            + (f", {state.error}" if state.error else "")
            + ". Poll get_run until its status is complete, then call get_report again."
        ) from exc


def _answer_payload(store, run_id: str, followup_id: str) -> dict[str, Any]:
    out = followup_status(store, run_id, followup_id)
    if out["status"] == "pending":
        out["next"] = "call get_answer with this run_id and followup_id in a little while"
    return out


@tool_errors
def ask_run(
    run_id: RunId,
    question: Annotated[str, Field(description="the follow-up question, up to 1,000 characters")],
    research: Annotated[bool, Field(description="search for more sources first (slower)")] = False,
    wait_s: Annotated[
        int, Field(ge=0, le=MAX_WAIT_S, description="seconds to wait for the answer")
    ] = 30,
) -> dict[str, Any]:
    """Queue the follow-up (``jobs.followups.submit_ask``) and wait up to ``wait_s`` s:
    ``{status: answered, followup_id, answer, citations, new_references, ...}`` or ``{status:
    pending, followup_id, stage, next}`` (or ``failed`` with ``message``)."""
    store = open_store()
    run_id = check_run_id(run_id.strip())
    followup_id = submit_ask(store, run_id, question, research=research)
    return _wait_answer(store, run_id, followup_id, wait_s)


@tool_errors
def get_answer(
    run_id: RunId,
    followup_id: Annotated[str, Field(description="the followup_id ask_run returned")],
    wait_s: Annotated[
        int, Field(ge=0, le=MAX_WAIT_S, description="seconds to wait for the answer")
    ] = 0,
) -> dict[str, Any]:
    """The follow-up's state, as :func:`ask_run` returns it."""
    store = open_store()
    return _wait_answer(store, check_run_id(run_id.strip()), followup_id.strip(), wait_s)


def _wait_answer(store, run_id: str, followup_id: str, wait_s: float) -> dict[str, Any]:
    deadline = time.monotonic() + wait_s
    while True:
        out = _answer_payload(store, run_id, followup_id)
        if out["status"] != "pending" or time.monotonic() >= deadline:
            return out
        time.sleep(0.5)


@tool_errors
def list_runs(
    limit: Annotated[int, Field(ge=1, le=200, description="at most this many runs")] = 20,
    status: Annotated[
        str | None, Field(description="only runs with this status, e.g. complete")
    ] = None,
) -> dict[str, Any]:
    """``{runs: [{run_id, topic, status, mode, created, sources}]}``, newest first."""
    store = open_store()
    states = [
        s
        for s in store.list_runs(limit=10_000 if status else limit)
        if not status or s.status == status
    ]
    states = states[:limit]
    counts = store.source_counts([s.run_id for s in states])
    return {
        "runs": [
            {
                "run_id": s.run_id,
                "topic": s.topic,
                "status": s.status,
                "mode": s.mode,
                "created": _iso(s.created_at),
                "sources": int(counts.get(s.run_id, 0)),
            }
            for s in states
        ]
    }
