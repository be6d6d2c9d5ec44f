"""Jobs: launching runs.

From the dashboard a run executes in a background thread of the server process — one runner per
process, writing only Redis and artifacts — so closing the tab does not stop it. The CLI runs the
same job in the foreground. ``make_config`` is the one gate for user input.

Job backends (``RESEARCH_JOB_BACKEND``): ``thread`` (default) runs jobs in this
process; ``rq`` enqueues them on the shared Redis for ``research worker`` processes
(``research.jobs.workers``). Either way a job holds the run's lease, so an interrupted run is
detected and resumed (``resume_run``, ``resume_interrupted``) from any process.
"""

from __future__ import annotations

import logging
import tempfile
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from research import artifacts
from research import models as m
from research.config import job_backend, load_settings
from research.engines.factory import check_engine, engine_label
from research.errors import InputError, ResearchError
from research.jobs import workers
from research.jobs.validation import validate_corpus, validate_int, validate_topic
from research.llm.language import check_language as language_code
from research.llm.usage import usage_report
from research.llm.validate import validate_llm_options
from research.models import ACTIVE_STATUSES, Report, RunConfig, RunState, Syllabus
from research.notify import targets as notify_targets
from research.pipeline.index_events import announce_index_build
from research.planning.syllabus import check_template
from research.search.multi import validate_search
from research.search.since import parse_since as since_window
from research.store import keys, open_store
from research.store.comments import CommentStore
from research.store.followups import FollowupStore
from research.store.runs import RunStore
from research.store.versions import VersionStore

if TYPE_CHECKING:
    from pydantic import BaseModel

log = logging.getLogger(__name__)
MAX_CONCURRENT_RUNS = 8
RESUMABLE = ("interrupted", "failed", "pending")


def make_config(
    topic: str,
    *,
    corpus: str | Path | None = None,
    template: str = "auto",
    review: bool = False,
    max_perspectives: int = 4,
    max_turns: int = 3,
    engine: str = "extractive",
    mode: str = "storm",
    costorm: dict | None = None,
    search: str | list[str] | None = None,
    corpora: str | list[str] | None = None,
    models: dict[str, str] | None = None,
    budget_usd: float | None = None,
    budget_tokens: int | None = None,
    min_databases: int = 1,
    cassette_mode: str | None = None,
    cassette_path: str | Path | None = None,
    gap_turns: int = 2,
    depth: str = "standard",
    since: str | None = None,
    language: str = "en",
    notify: str | list[str] | None = None,
) -> RunConfig:
    """Validate user input into a RunConfig. Nothing is written.

    ``mode``: "storm" or "costorm"; ``costorm``: Co-STORM settings (``CoStormSettings`` field
    names: experts, max_node_items, moderator_after, alpha, query_budget, max_turns).
    ``search``: backends (``"local,pubmed"`` or a list; default ``["local"]``); ``corpora``:
    ingested corpus names searched too (``research.search.multi.validate_search``).
    ``corpus`` (default ``settings.default_corpus``) is only required when the ``local`` backend
    is searched; otherwise it is checked when given and left empty when not. ``min_databases``:
    1–8 distinct source types ``check_completion`` requires (docs/design.md § Source collector; default 1 = off).
    ``template``: ``auto`` (default; a syllabus fitted to the topic), ``drug`` or ``general``.
    ``review``: stop in ``awaiting_review`` after planning (STORM mode only).
    ``cassette_mode`` ("record" / "replay") and ``cassette_path``: the run's LLM cassette.
    ``gap_turns``: rounds of gap searches for unmet questions after the planned turns (0–5,
    default 2; 0 = stop at the turn cap). ``depth``: report length, ``brief``, ``standard``
    (default) or ``deep`` (about 300 / 1,000 / 2,500 words).
    ``since``: ``YYYY[-MM[-DD]]`` date window (``research.search.since``); ``language``: ISO 639-1
    code the litellm engine writes in (``research.llm.language``; the extractive engine cannot
    translate and says so).
    ``notify``: the run's notification targets (``--notify``; http(s) webhook or Apprise URLs, a
    list or one string separated by spaces, commas or newlines): the config keeps their
    redacted forms in ``notify`` and the URLs only in memory until ``create_run`` stores them
    encrypted (``research.notify.targets``). The notification settings are checked here too.

    Raises:
        InputError / CorpusError: with a message that says what to fix.
    """
    # the costorm package imports the round-table pipeline: only its settings check is needed here
    from research.costorm.settings import validate_costorm, validate_mode  # noqa: PLC0415 - see above

    settings = load_settings()
    check_data_dir(settings.data_dir)
    if engine not in m.ENGINES:
        raise InputError(
            f"Unknown engine {str(engine)[:40]!r}: use 'extractive' (offline) or 'litellm'.",
            code="unknown_engine",
        )
    template = check_template(template)  # raises with the valid names
    ints = {
        "max_perspectives": validate_int(
            "max perspectives", max_perspectives, *m.PERSPECTIVES_RANGE
        ),
        "max_turns": validate_int("max turns", max_turns, *m.TURNS_RANGE),
        "min_databases": validate_int("min databases", min_databases, *m.MIN_DATABASES_RANGE),
        "gap_turns": validate_int("gap turns", gap_turns, *m.GAP_TURNS_RANGE),
    }
    if depth not in m.DEPTHS:
        raise InputError(
            f"Unknown report depth {str(depth)[:40]!r}: choose one of {', '.join(m.DEPTHS)}.",
            code="invalid_input",
        )
    choice = _search_choice(search, corpora, settings)
    # a corpora-only run (no 'local' backend) needs no default corpus; an explicit one is still checked
    corpus_path = (
        validate_corpus(corpus or settings.default_corpus)
        if corpus or "local" in choice["search"]
        else ""
    )

    if review and mode == "costorm":
        raise InputError(
            "Plan review is for STORM runs (the Co-STORM round-table has no plan to review); "
            "turn review off or use mode storm.",
            code="invalid_input",
        )
    config = RunConfig(
        topic=validate_topic(topic),
        corpus=str(corpus_path),
        template=template,
        review=bool(review),
        engine=engine,
        mode=validate_mode(mode),
        costorm=validate_costorm(costorm),
        **ints,
        **choice,
        **_llm_choice(engine, models, budget_usd, budget_tokens),
        cassette_mode=cassette_mode or None,
        cassette_path=str(cassette_path or ""),
        depth=depth,
        since=parse_since(since),
        language=check_language(language),
    )

    check_engine(config)
    notify_targets.check_settings(settings)  # a bad RESEARCH_NOTIFY_ON / target URL, before any run
    return notify_targets.attach(config, notify_targets.check_targets(notify))


def parse_since(text: str | None) -> str | None:
    """``--since`` checked (``research.search.since.parse_since``)."""
    return since_window(text)


def check_language(code: str | None) -> str:
    """``--language`` checked (``research.llm.language.check_language``)."""
    return language_code(code)


def engine_options(
    engine: str | None, model: str | None = None, models: dict[str, str] | None = None
) -> dict[str, Any]:
    """``make_config`` keyword arguments for a run's engine and models, as ``research run``
    reads ``--engine``/``--model``/``--models``: ``model`` serves every role (``"*"``) under the
    per-role ``models``, and either implies the litellm engine unless ``engine`` names one.

    Returns:
        ``{"models": {...}, "engine": ...}``, ``{"engine": ...}`` without a model, or ``{}``.
    """
    merged = {**({"*": model.strip()} if model and model.strip() else {}), **(models or {})}
    if merged:
        return {"models": merged, "engine": engine or "litellm"}
    return {"engine": engine} if engine else {}


def _llm_choice(engine, models, budget_usd, budget_tokens) -> dict:
    """Validated models per role and budgets (USD, tokens)."""

    return validate_llm_options(engine, models, budget_usd, budget_tokens)


def _search_choice(search, corpora, settings) -> dict:

    backends, names = validate_search(search, corpora, settings)
    return {"search": backends, "corpora": names}


def check_data_dir(data_dir: Path) -> Path:
    """Make sure ``RESEARCH_DATA_DIR`` is a folder this process can write (created if missing;
    a probe file is written and removed).

    Raises:
        InputError (code ``data_dir_unwritable``): read-only, a file, or not creatable.
    """

    try:
        data_dir.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=data_dir, prefix=".write-probe-"):
            pass
    except OSError as exc:
        raise InputError(
            f"The data dir '{data_dir}' is not a writable folder ({exc.strerror or exc}); set "
            "RESEARCH_DATA_DIR to a folder this process can write.",
            code="data_dir_unwritable",
        ) from None
    return data_dir


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
            self.futures[run_id] = self._pool.submit(_execute, run_id)


_runner: _Runner | None = None
_runner_lock = threading.Lock()


def _get_runner() -> _Runner:
    global _runner
    with _runner_lock:
        if _runner is None:
            _runner = _Runner()
        return _runner


def _execute(run_id: str):
    """``research.pipeline.runner.execute(run_id)``, imported on first use: the pipeline pulls
    scikit-learn and the engines (~1.5 s), which creating a run or reading one never needs."""

    from research.pipeline import runner  # noqa: PLC0415 - the pipeline (scikit-learn, torch) loads when a run executes

    return runner.execute(run_id)


def create_run(config: RunConfig) -> str:
    """Store a new ``pending`` run for ``config`` (nothing executes it yet); returns its id.
    Notification targets attached by ``make_config`` are stored encrypted beside it
    (``research.notify.targets.keep``). When the run will wait for its local corpus index to
    be built, the run's event stream says so at once (``index.progress``, ``loading_model``),
    before the pipeline is even imported."""
    store = open_store()
    settings = load_settings()
    sealed = notify_targets.sealed(config, settings)  # a bad key fails before the run exists
    label = engine_label(config)
    run_id = store.create_run(config, engine_label=label).run_id
    notify_targets.keep(store, run_id, sealed)
    announce_index_build(store, run_id, config, settings.index_dir)
    return run_id


def submit(run_id: str, backend: str | None = None, *, at_front: bool = False) -> None:
    """Execute an existing run in the background: a thread here, or a job on the RQ queue
    (``backend``: "thread" or "rq"; default ``job_backend()``; ``at_front``: ahead of the runs
    already queued, for a resumed run that had already waited its turn)."""
    if (backend or job_backend()) == "rq":
        workers.enqueue(run_id, at_front=at_front)
    else:
        _get_runner().submit(run_id)


def start_run(config: RunConfig) -> str:
    """Create the run and execute it in the background; returns its id at once."""
    backend = job_backend()  # a bad backend fails before anything is written
    run_id = create_run(config)
    if backend == "rq":
        submit(run_id)
    else:
        _get_runner().submit(run_id)
    return run_id


def resume_run(
    run_id: str, *, foreground: bool = False, by: str = "cli", backend: str | None = None
) -> str:
    """Continue an interrupted (or failed, or stuck pending) run from its stored state, and its
    follow-ups whose job died (``research.jobs.followups.resume_followups``).

    Background by default (``submit``); ``foreground`` executes it in this thread. Emits
    ``resume.requested``; the job emits ``run.resumed`` when it starts. A run that cannot be
    resumed itself (complete, running...) but has interrupted follow-ups only resumes those.

    Returns:
        The run's status after the call (``pending`` when queued, the final status in the
        foreground).

    Raises:
        InputError: malformed id, the run is still running (a job holds its lease), or it
            already ended complete/cancelled (code ``not_resumable``), and it has no
            interrupted follow-up. RunNotFoundError: no such run.
    """
    store = open_store()
    run_id = keys.check_run_id(run_id.strip() if isinstance(run_id, str) else run_id)
    store.reconcile_dead_runs(
        [run_id]
    )  # a dead job's run is stored interrupted (+ run.interrupted) first
    state = store.get_run(run_id)
    if _has_dead_followups(store, run_id) and (
        store.is_held(run_id) or state.status not in RESUMABLE
    ):
        _resume_followups(store, [run_id], by, backend, foreground)
        return state.status
    if store.is_held(run_id):
        raise InputError(
            f"Run {run_id} is still running ({state.status}); wait for it or cancel it.",
            code="not_resumable",
        )
    if state.status == m.REVIEW_STATUS:
        raise InputError(
            f"Run {run_id} is waiting for plan review: approve it (research approve {run_id}, or the "
            "Plan page) or cancel it.",
            code="not_resumable",
        )
    if state.status not in RESUMABLE:
        raise InputError(
            f"Run {run_id} is {state.status}; only interrupted or failed runs can be resumed. "
            "Start a new run instead.",
            code="not_resumable",
        )
    store.set_status(run_id, "pending")
    store.emit(run_id, "resume.requested", {"from": state.status, "by": by})
    if foreground:
        status = _execute(run_id)
        _resume_followups(store, [run_id], by, backend, foreground)
        return status
    submit(run_id, backend, at_front=True)  # it waited its turn once already
    _resume_followups(store, [run_id], by, backend, foreground)
    return "pending"


def _has_dead_followups(store: RunStore, run_id: str) -> bool:

    return bool(FollowupStore(store).dead_pending(run_id))


def _resume_followups(
    store: RunStore,
    run_ids: list[str] | None,
    by: str,
    backend: str | None,
    foreground: bool = False,
) -> list[str]:
    """Resume the follow-ups whose job died (``research.jobs.followups.resume_followups``)."""

    from research.jobs.followups import resume_followups  # noqa: PLC0415 - follow-up execution imports the pipeline

    return resume_followups(store, run_ids, by=by, backend=backend, foreground=foreground)


def resume_interrupted(by: str = "worker", backend: str | None = None) -> list[str]:
    """Resume (in the background: ``backend``, default ``job_backend()``) every run that is
    ``interrupted``, then every follow-up whose job died; returns the runs' ids.

    Called when a worker or the dashboard starts. Runs another process resumes first are
    skipped (the lease decides who executes); a run that cannot be resumed is logged and
    skipped, so one bad run never stops a worker."""
    store = open_store()
    store.reconcile_dead_runs()
    resumed = []
    for state in store.list_runs(limit=10_000):
        if state.status == "interrupted":
            try:
                resume_run(state.run_id, by=by, backend=backend)
                resumed.append(state.run_id)
            except InputError:
                continue
            except ResearchError as exc:
                log.warning("could not resume run %s: %s", state.run_id, exc)
    try:
        followups = _resume_followups(store, None, by, backend)
        if followups:
            log.info(
                "resumed %d interrupted follow-up(s): %s", len(followups), ", ".join(followups)
            )
    except ResearchError as exc:
        log.warning("could not resume interrupted follow-ups: %s", exc)
    return resumed


def run_foreground(config: RunConfig) -> RunState:
    """Create the run and execute it in this thread; returns the final state. With the ``rq``
    backend the run is queued for a worker instead and this waits until it stops."""
    backend = job_backend()
    return execute_created(create_run(config), backend)


def execute_created(run_id: str, backend: str | None = None) -> RunState:
    """Execute a run made by ``create_run`` in this thread (``thread`` backend) or queue it and
    wait for a worker (``rq``); returns its final state. The caller keeps the id it created, so
    it never has to find "its" run among identical ones."""
    if (backend or job_backend()) == "rq":
        submit(run_id, "rq")
        return wait_for(run_id)
    _execute(run_id)
    return open_store().get_run(run_id)


def wait_for(run_id: str, poll_s: float = 0.5, timeout_s: float | None = None) -> RunState:
    """Poll until the run is no longer pending or active (complete, failed, cancelled or
    interrupted) or ``timeout_s`` (s) passed; returns its state."""

    store = open_store()
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    while True:
        state = store.get_run(run_id)
        if not is_active(state.status) or (deadline is not None and time.monotonic() > deadline):
            return state
        time.sleep(poll_s)


def run_summary(run_id: str) -> dict:
    """The CLI's ``--json`` object: run_id, status, report_path, artifacts_dir, sources,
    questions (key → source count), citations, llm_calls, prompt_tokens, completion_tokens,
    cost_usd (USD), wall_s (s)."""
    store = open_store()
    state = store.get_run(run_id)
    collector = store.collector(run_id)
    report = store.get_doc(run_id, "report", Report)
    usage = store.get_usage(run_id)
    counts = collector.question_counts() if store.get_doc(run_id, "syllabus", Syllabus) else {}
    return {
        "run_id": run_id,
        "status": state.status,
        "report_path": state.report_path or None,
        "artifacts_dir": str(artifacts.artifacts_dir(run_id)),
        "sources": len(collector.all_sources()),
        "questions": counts,
        "citations": len(report.references) if report else 0,
        "llm_calls": usage.llm_calls,
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "cost_usd": round(usage.cost_usd, 6),
        "wall_s": state.wall_s,
        "error": state.error or None,
    }


def run_snapshot(run_id: str, *, version: int | None = None) -> dict:
    """The whole stored state of a run as a JSON-able dict (``research show --json``).

    ``report`` is report version ``version`` (None = the current one; ``report_version`` says
    which), ``versions`` lists ``{number, author, created_at, sections, note}`` of every version,
    ``comments`` counts ``{total, open, resolved}`` and ``comment_list`` has them all.
    ``notifications``: one ``NotificationRecord`` dict per delivery of the run's end (event,
    redacted target, ok, status_code, error, attempts, times), oldest first.

    Raises:
        InputError (code ``no_such_version``): the report has no version ``version``.
    """

    store = open_store()
    state = store.get_run(run_id)
    versions = VersionStore(store)
    shown = versions.get(run_id, version)
    docs = {
        # mypy joins the model classes to their metaclass; each one is a BaseModel subclass
        name: store.get_doc(run_id, name, cast("type[BaseModel]", model))
        for name, model in [
            ("plan", m.Plan),
            ("syllabus", m.Syllabus),
            ("draft_outline", m.Outline),
            ("outline", m.Outline),
            ("analysis", m.Analysis),
            ("report", m.Report),
            ("draft_report", m.Report),
            ("gaps", m.GapReport),
        ]
    }
    has_syllabus = docs["syllabus"] is not None
    return {
        "run": state.model_dump(mode="json"),
        **{k: (v.model_dump(mode="json") if v else None) for k, v in docs.items()},
        "survey": [
            x.model_dump(mode="json") for x in store.get_doc_list(run_id, "survey", m.TopicOutline)
        ],
        "perspectives": [
            x.model_dump(mode="json")
            for x in store.get_doc_list(run_id, "perspectives", m.Perspective)
        ],
        "turns": [t.model_dump(mode="json") for t in store.get_turns(run_id)],
        "artifacts": [c.model_dump(mode="json") for c in store.get_cards(run_id)],
        "sources": store.collector(run_id).finalize_sources() if has_syllabus else None,
        "usage": store.get_usage(run_id).model_dump(),
        "llm": _llm_usage(store, run_id),
        "events": [e.model_dump(mode="json") for e in store.events(run_id)],
        "costorm": _costorm_snapshot(store, state) if state.mode == "costorm" else None,
        **_followup_snapshot(store, state, docs["report"] is not None),
        "report": shown.report.model_dump(mode="json") if shown else None,
        "report_version": shown.number if shown else None,
        "versions": [v.info() for v in versions.list(run_id)],
        "comments": CommentStore(store).counts(run_id),
        "comment_list": [c.model_dump(mode="json") for c in CommentStore(store).list(run_id)],
        "notifications": [n.model_dump(mode="json") for n in store.notifications.list(run_id)],
    }


def _followup_snapshot(store: RunStore, state: m.RunState, has_report: bool) -> dict:
    """``followups`` (Followup dicts, oldest first) and ``audit`` (the report's stored
    citation audit; None when the run has no report or nobody has audited it yet). A pure read:
    the audit embeds every cited source (~20 s with the model load), so it is computed by
    ``research audit RUN`` or the Report page, never by a read such as ``research show``."""

    fs = FollowupStore(store)
    audit = fs.get_audit(state.run_id) if has_report else None
    return {
        "followups": [f.model_dump(mode="json") for f in fs.list(state.run_id)],
        "audit": audit.model_dump(mode="json") if audit else None,
    }


def _costorm_snapshot(store: RunStore, state: m.RunState) -> dict:
    """The round-table summary (``research.costorm.summary.summary``: turns by intent,
    speaker kind and speaker, moderator turns, queries vs budget, mind-map depth/nodes/items,
    stop reason) plus the full ``transcript`` (CoStormTurn dicts) and ``mind_map`` (MindMap dict)."""

    from research.costorm import get_mindmap, get_turns  # noqa: PLC0415 - Co-STORM state imports the pipeline
    from research.costorm import summary as costorm_summary  # noqa: PLC0415 - likewise

    out = costorm_summary.run_summary(store, state)
    mm = get_mindmap(store, state.run_id)
    out["transcript"] = [t.model_dump(mode="json") for t in get_turns(store, state.run_id)]
    out["mind_map"] = mm.model_dump(mode="json") if mm else None
    return out


def _llm_usage(store: RunStore, run_id: str) -> dict:
    """LLM calls, tokens, USD per phase/role/model, retries, context reduction."""

    return usage_report(store, run_id)
