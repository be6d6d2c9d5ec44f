"""Jobs: a run's stored state read back whole, as the CLI's ``--json`` output, the HTTP API's
``GET /runs/{id}`` and the MCP tools give it (:func:`run_summary`, :func:`run_snapshot`).

Pure reads: nothing here computes what a run did not store (the citation audit is computed by
``research audit`` or the Report page, never by a read).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from research import artifacts
from research import models as m
from research.errors import InputError
from research.llm.usage import usage_report
from research.models import Report, Syllabus
from research.store import open_store
from research.store.comments import CommentStore
from research.store.followups import FollowupStore
from research.store.runs import RunStore
from research.store.versions import VersionStore

if TYPE_CHECKING:
    from pydantic import BaseModel


def run_summary(run_id: str) -> dict:
    """The CLI's ``--json`` object: run_id, status, report_path, artifacts_dir, sources,
    questions (key → source count), citations, llm_calls, prompt_tokens, completion_tokens,
    cost_usd (USD), wall_s (s), error.

    Raises:
        RunNotFoundError: no such run.
    """
    store = open_store()
    state = store.get_run(run_id)
    collector = store.collector(run_id)
    report = store.get_doc(run_id, "report", Report)
    usage = store.get_usage(run_id)
    try:
        counts = collector.question_counts() if store.get_doc(run_id, "syllabus", Syllabus) else {}
        sources = len(collector.all_sources())
    except InputError:  # the run stopped between storing its syllabus and starting its collector
        counts, sources = {}, 0
    return {
        "run_id": run_id,
        "status": state.status,
        "report_path": state.report_path or None,
        "artifacts_dir": str(artifacts.artifacts_dir(run_id)),
        "sources": sources,
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
        RunNotFoundError: no such run.
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
        "llm": usage_report(store, run_id),
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
