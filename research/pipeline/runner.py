"""Drive one run through its phases (DESIGN.md, One run):
``pending → planning → conversations → analyzing → synthesizing → complete`` (or ``failed`` /
``cancelled``). Writes only Redis and files under the data dir.
"""

from __future__ import annotations

import logging
import time
import traceback

from research.config import Settings, load_settings
from research.engines.factory import make_engine
from research.errors import ResearchError, RunCancelled
from research.models import Report
from research.pipeline import analysis, conversation, planning, reporter
from research.pipeline.context import RunContext
from research.search.local import get_local_search
from research.store.collector import SourceCollector
from research.store.connection import get_redis
from research.store.runs import RunStore

log = logging.getLogger(__name__)


def report_path(settings: Settings, run_id: str):
    """Where the final report's markdown is written: ``{data_dir}/reports/{run_id}/report.md``."""
    return settings.reports_dir / run_id / "report.md"


def build_context(run_id: str, settings: Settings | None = None) -> RunContext:
    """Everything the steps need, from the stored run config."""
    settings = settings or load_settings()
    store = RunStore(get_redis(settings))
    state = store.get_run(run_id)
    config = state.config
    return RunContext(
        run_id=run_id, config=config, settings=settings, store=store,
        collector=SourceCollector(store.r, run_id), engine=make_engine(config),
        retriever=get_local_search(config.corpus, settings.index_dir))


def run_storm(ctx: RunContext) -> Report:
    """STORM mode (seed 002): plan → survey → perspectives → parallel conversations → analysis →
    outline → sections → lead → references. Sets the phase statuses; returns the stored report."""
    store, run_id = ctx.store, ctx.run_id
    topic = planning.coordinate(ctx)
    planning.plan(ctx, topic)
    related = planning.survey(ctx, topic)
    perspectives = planning.discover_perspectives(ctx, topic, related)
    ctx.check_cancel()

    store.set_status(run_id, "conversations")
    convs = conversation.run_conversations(ctx, perspectives)
    completion = ctx.collector.check_completion()
    ctx.emit("coverage.checked", completion)
    ctx.check_cancel()

    store.set_status(run_id, "analyzing")
    _, facts = analysis.analyze(ctx, convs)
    ctx.check_cancel()

    store.set_status(run_id, "synthesizing")
    outline = reporter.make_outline(ctx, convs)
    return reporter.write_report(ctx, outline, facts)


def execute(run_id: str, settings: Settings | None = None) -> str:
    """Run every phase; returns the final status. Never raises for run-level failures: they are
    recorded on the run (status ``failed`` with ``error`` and ``error_code``)."""
    settings = settings or load_settings()
    store = RunStore(get_redis(settings))
    t0 = time.monotonic()
    try:
        store.set_status(run_id, "planning")
        ctx = build_context(run_id, settings)
        if ctx.config.mode == "costorm":
            from research.costorm.pipeline import run_costorm  # noqa: PLC0415 - mode-specific

            report = run_costorm(ctx)
        else:
            report = run_storm(ctx)
        path = report_path(settings, run_id)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(report.markdown, encoding="utf-8")
        store.set_status(run_id, "complete", report_path=str(path), wall_s=round(time.monotonic() - t0, 3))
        return "complete"
    except RunCancelled as exc:
        store.set_status(run_id, "cancelled", error=exc.message, error_code=exc.code,
                         wall_s=round(time.monotonic() - t0, 3))
        return "cancelled"
    except ResearchError as exc:
        store.set_status(run_id, "failed", error=exc.message, error_code=exc.code,
                         wall_s=round(time.monotonic() - t0, 3))
        return "failed"
    except Exception as exc:  # noqa: BLE001 - a run must end in a recorded state, never hang
        log.exception("run %s failed", run_id)
        store.set_status(run_id, "failed", error=f"{type(exc).__name__}: {exc}"[:1000], error_code="internal_error",
                         wall_s=round(time.monotonic() - t0, 3))
        store.emit(run_id, "error.traceback", {"traceback": traceback.format_exc()[-4000:]})
        return "failed"
