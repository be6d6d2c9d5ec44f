"""Drive one run through its phases (docs/design.md § One run):
``pending → planning → conversations → analyzing → synthesizing → complete`` (or ``failed`` /
``cancelled``). Writes only Redis and files under the data dir.

Plan review: a run whose config asks for ``review`` stops after planning (plan,
syllabus, survey, perspectives stored) in status ``awaiting_review`` with no job and no lease;
``research.jobs.review.approve`` stores the edited plan, marks it ``approved`` and executes it again,
which skips straight to the conversations.

Resumable: ``execute`` holds the run's lease (``research.store.lease``) and every phase
first looks for its stored result (plan + syllabus, survey, perspectives, finished turns,
analysis, outline, report) and skips the work when it is there, so a run interrupted at any
point continues where it stopped and ends with the same report as an uninterrupted run.
"""

from __future__ import annotations

import logging
import time
import traceback
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

import redis

from research.config import Settings, load_settings
from research.costorm.pipeline import run_costorm
from research.engines.base import QueryList
from research.engines.factory import make_engine
from research.errors import InvariantError, ResearchError, RunCancelled
from research.models import REVIEW_STATUS, Outline, Perspective, Report, TopicOutline
from research.notify import run_ended
from research.pipeline import analysis, conversation, gaps, planning, reporter, sections
from research.pipeline.context import RunContext
from research.pipeline.index_events import index_progress_events
from research.pipeline.recorders import DeferredRecorder, KeyedRecorder
from research.search.multi import build_retriever
from research.store import open_store
from research.store.lease import Lease, holder_name
from research.store.runs import RunStore
from research.warmup import warm

log = logging.getLogger(__name__)
T = TypeVar("T")


def _ahead(fn: Callable[..., T], *args: Any) -> Future[T]:
    """Start ``fn(*args)`` on a thread of its own and return its future: a step whose input is
    already known goes out while the run does the steps before it (its result, or its error, is
    read where the run used to make the call)."""
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ahead")
    try:
        return pool.submit(fn, *args)
    finally:
        pool.shutdown(wait=False)  # the thread ends with its one task


def report_path(settings: Settings, run_id: str):
    """Where the final report's markdown is written: ``{data_dir}/reports/{run_id}/report.md``."""
    return settings.reports_dir / run_id / "report.md"


def build_context(
    run_id: str,
    settings: Settings | None = None,
    *,
    stop_check: Callable[[], None] | None = None,
) -> RunContext:
    """Everything the steps need, from the stored run config (``stop_check``: see
    ``RunContext``). Planning adds the plan, syllabus and artifact store to a new context."""
    settings = settings or load_settings()
    store = open_store(settings)
    state = store.get_run(run_id)
    config = state.config
    retriever = build_retriever(
        config.search, config.corpus, config.corpora, settings, since=config.since
    )
    if retriever.since_unsupported and not any(
        e.type == "since.unsupported" for e in store.events(run_id)
    ):  # once per run, not again on resume
        store.emit(
            run_id,
            "since.unsupported",
            {
                "since": config.since,
                "backends": sorted(retriever.since_unsupported),
                "reasons": retriever.since_unsupported,
            },
        )
    return RunContext(
        run_id=run_id,
        config=config,
        settings=settings,
        store=store,
        collector=store.collector(run_id),
        engine=make_engine(config, run_id, store, settings),
        retriever=retriever,
        stop_check=stop_check,
    )


class LeaseLost(Exception):
    """Another job took over the run's lease; this one must stop without touching the run."""


class AwaitingReview(Exception):
    """The plan is ready and the analyst asked to review it before research."""


def _stored(ctx: RunContext, name: str) -> bool:
    return ctx.store.has_doc(ctx.run_id, name)


def _survey(
    ctx: RunContext, topic: str, queries: Future[QueryList] | None = None
) -> tuple[list[TopicOutline], RunContext]:
    """The survey with keyed tool calls (``survey.n``): a redone survey reuses its artifacts.
    An engine that compresses in the background makes the survey's cards while it goes on;
    they are committed, in call order, before the survey is stored. Returns the outlines and
    the context the run goes on with (``planning.survey``)."""
    store = ctx.need_artifacts()
    deferred = DeferredRecorder(store, "survey")
    recorder = deferred if deferred.background else KeyedRecorder(store, "survey")
    related, surveyed = planning.survey(
        ctx.recording(recorder), topic, queries.result() if queries else None
    )
    return related, surveyed.recording(None)


def run_storm(ctx: RunContext) -> Report:
    """STORM mode (docs/design.md § STORM pipeline): plan → survey → perspectives → parallel
    conversations → analysis → outline → sections → lead → references. Sets the phase statuses;
    returns the stored report. Each phase whose result is already stored (a resumed run) is skipped."""
    store, run_id = ctx.store, ctx.run_id
    topic = planning.coordinate(ctx)
    surveyed = _stored(ctx, "survey")
    # the survey's queries depend on the topic alone: asked while the planner works
    queries = None if surveyed else _ahead(planning.survey_queries, ctx, topic)
    ctx = planning.plan_or_restore(ctx, topic)
    if surveyed:
        related = store.get_doc_list(run_id, "survey", TopicOutline)
    else:
        related, ctx = _survey(ctx, topic, queries)
    if _stored(ctx, "perspectives"):
        perspectives = store.get_doc_list(run_id, "perspectives", Perspective)
    else:
        perspectives = planning.discover_perspectives(ctx, topic, related)
    ctx.check_cancel()
    if ctx.config.review and store.get_run(run_id).review_state != "approved":
        raise AwaitingReview(run_id)

    store.set_status(run_id, "conversations")
    warm("the section matcher", sections.load_matcher)  # needed once the report is written
    outline = store.get_doc(run_id, "outline", Outline)
    # STORM's draft outline comes from the topic alone: drafted while the conversations run
    draft = None if outline else _ahead(reporter.draft_outline, ctx)
    convs = conversation.run_conversations(ctx, perspectives)
    gap_conv, _ = gaps.fill_gaps(ctx)
    if gap_conv is not None:
        convs = [*convs, gap_conv]
    completion = ctx.collector.check_completion(min_databases=ctx.config.min_databases)
    ctx.emit("coverage.checked", completion)
    ctx.check_cancel()

    report = store.get_doc(run_id, "report", Report)
    # the report's material does not depend on the analysis or the outline: build it meanwhile
    units = None if report else _ahead(reporter.report_units, ctx, convs)
    store.set_status(run_id, "analyzing")
    # the outline does not read the analysis: refined while the analysis is asked
    refined = None if outline else _ahead(reporter.make_outline, ctx, convs, draft)
    if not _stored(ctx, "analysis"):
        analysis.analyze(ctx, convs)
    ctx.check_cancel()

    store.set_status(run_id, "synthesizing")
    outline = outline or (refined.result() if refined else None)
    if outline is None:
        raise InvariantError("Refined above whenever no outline is stored")
    if report:
        return report
    if units is None:
        raise InvariantError("Submitted above whenever there is no stored report")
    return reporter.write_report(ctx, outline, convs, units=units.result())


def _lease_check(run_id: str, lease: Lease) -> Callable[[], None]:
    """The run context's ``stop_check``: every cancel check also stops the job when its lease
    was lost (raises ``LeaseLost``)."""

    def check() -> None:
        if lease.lost.is_set():
            raise LeaseLost(f"run {run_id} was taken over by another job")

    return check


def execute(run_id: str, settings: Settings | None = None) -> str:
    """Run (or resume) every phase under the run's lease; returns the final status.

    Never raises for run-level failures: they are recorded on the run (status ``failed`` with
    ``error`` and ``error_code``). A run this call ends ``complete``, ``failed`` or
    ``awaiting_review`` is announced to its notification targets in the background
    (``research.notify.run_ended``) once its status is stored and its lease released.
    Returns without doing anything when another job holds the lease (that job's view of the
    status is returned) or the run already ended (complete or cancelled). When Redis stays
    unreachable beyond the client's retries the job stops and returns ``interrupted`` (its
    lease expires; the run resumes later).
    """
    settings = settings or load_settings()
    store = open_store(settings)
    lease = store.lease(run_id)
    if not lease.acquire():
        return store.get_run(run_id).status
    ended = ""  # the status this call brought the run to (nothing when it did not run it)
    try:
        store.clear_queued(run_id)
        state = store.get_run(run_id)
        if state.status in ("complete", "cancelled", REVIEW_STATUS):
            return state.status  # ended, or waiting for the analyst's approval
        store.set_fields(run_id, worker=holder_name())
        if state.status != "pending" or store.has_doc(run_id, "plan"):
            store.emit(
                run_id,
                "run.resumed",
                {
                    "from": state.status,
                    "worker": holder_name(),
                    "turns_done": store.count_turns(run_id),
                },
            )
        ended = _execute(store, run_id, settings, lease)
        return ended
    except redis.RedisError:
        log.exception("run %s: Redis unreachable; stopping (the run resumes later)", run_id)
        return "interrupted"
    finally:
        lease.release()
        # the one notification hook: the end is stored; delivery runs in the background and
        # never changes the run (complete / failed / awaiting_review only)
        run_ended(run_id, ended, settings)


def _execute(store: RunStore, run_id: str, settings: Settings, lease: Lease) -> str:
    t0 = time.monotonic()
    try:
        store.set_status(run_id, "planning")
        with index_progress_events(store, run_id, store.get_run(run_id).config, settings.index_dir):
            # builds the local index on a fresh index dir
            ctx = build_context(run_id, settings, stop_check=_lease_check(run_id, lease))
        if ctx.config.mode == "costorm":
            report = run_costorm(ctx)
        else:
            report = run_storm(ctx)
        path = report_path(settings, run_id)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(report.markdown, encoding="utf-8")
        store.set_status(
            run_id, "complete", report_path=str(path), wall_s=round(time.monotonic() - t0, 3)
        )
        return "complete"
    except AwaitingReview:
        store.set_status(
            run_id, REVIEW_STATUS, review_state="awaiting", wall_s=round(time.monotonic() - t0, 3)
        )
        store.emit(run_id, "review.awaiting", {"by": "plan review"})
        return REVIEW_STATUS
    except LeaseLost:
        log.warning("run %s: lease lost; leaving the run to the job that holds it", run_id)
        return "interrupted"
    except redis.RedisError:
        raise  # execute() stops the job; the lease expires and the run resumes later
    except RunCancelled as exc:
        store.set_status(
            run_id,
            "cancelled",
            error=exc.message,
            error_code=exc.code,
            wall_s=round(time.monotonic() - t0, 3),
        )
        return "cancelled"
    except ResearchError as exc:
        if _stopped(store, run_id):
            return "interrupted"
        store.set_status(
            run_id,
            "failed",
            error=exc.message,
            error_code=exc.code,
            wall_s=round(time.monotonic() - t0, 3),
        )
        return "failed"
    except Exception as exc:
        if _stopped(store, run_id):
            return "interrupted"
        log.exception("run %s failed", run_id)
        store.set_status(
            run_id,
            "failed",
            error=f"{type(exc).__name__}: {exc}"[:1000],
            error_code="internal_error",
            wall_s=round(time.monotonic() - t0, 3),
        )
        store.emit(run_id, "error.traceback", {"traceback": traceback.format_exc()[-4000:]})
        return "failed"


def _stopped(store: RunStore, run_id: str) -> bool:
    """True when the process running the run marked it ``interrupted`` while it was stopping
    (SIGTERM: ``research.cli.handlers``): the error that ends the run's thread then comes from
    the process going away (its Redis and files closing), and the run stays resumable instead
    of turning ``failed``."""
    try:
        return store.get_run(run_id).status == "interrupted"
    except (redis.RedisError, ResearchError):
        return True  # the store is gone with the process: nothing to mark, resume will read it
