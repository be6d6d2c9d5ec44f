"""The notification of a run's end: the webhook JSON body and the text Slack, Teams or e-mail
show.

Webhook body (``docs/notifications.md``)::

    {
      "event": "run.complete",            # run.failed, run.awaiting_review
      "id": "6f1c…",                      # one id per notification (all targets share it)
      "sent_at": "2026-05-04T10:12:09Z",
      "run_id": "a1b2c3d4e5f60718",
      "topic": "…",
      "mode": "storm",
      "status": "complete",               # the run's status: complete, failed, awaiting_review
      "url": "https://desk.example.org/report?run=…",   # null without RESEARCH_DASHBOARD_URL
      "finished_at": "2026-05-04T10:12:08Z",            # null while awaiting review
      "summary": {"sources": 41, "cited": 23, "words": 1034, "cost_usd": 0.0},
      "error": null                       # failed: {"code": "corpus_error", "message": "…"}
    }

A run awaiting plan review links to its Plan page, the others to the Report page.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from urllib.parse import urlencode

from research.config import Settings
from research.models import Report
from research.notify.base import Level, Notification
from research.notify.targets import RUN_EVENTS
from research.store.runs import RunStore

LEVELS: dict[str, Level] = {"complete": "success", "failed": "failure", "awaiting_review": "info"}
TITLES = {
    "complete": "Research run complete: {topic}",
    "failed": "Research run failed: {topic}",
    "awaiting_review": "Research plan ready for review: {topic}",
}


def iso(ts: float | None) -> str | None:
    """Unix seconds as ``YYYY-MM-DDTHH:MM:SSZ`` (UTC), or None."""
    if not ts:
        return None
    return datetime.fromtimestamp(ts, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def run_url(settings: Settings, run_id: str, page: str = "report") -> str | None:
    """``{RESEARCH_DASHBOARD_URL}/{page}?run={run_id}``, or None when no base URL is set."""
    base = (settings.dashboard_url or "").strip().rstrip("/")
    return f"{base}/{page}?{urlencode({'run': run_id})}" if base else None


def run_summary(store: RunStore, run_id: str) -> dict[str, float | int]:
    """``{sources, cited, words, cost_usd}``: sources saved, references the report cites, words
    of the report's markdown (0 without a report) and LLM cost (USD)."""
    report = store.get_doc(run_id, "report", Report)
    return {
        "sources": store.source_counts([run_id])[run_id],
        "cited": len(report.references) if report else 0,
        "words": len(report.markdown.split()) if report else 0,
        "cost_usd": round(store.get_usage(run_id).cost_usd, 6),
    }


def run_notification(store: RunStore, run_id: str, status: str, settings: Settings) -> Notification:
    """The notification of run ``run_id`` ending in ``status`` (``complete``, ``failed`` or
    ``awaiting_review``), from its stored state.

    Raises:
        KeyError: another status.
        RunNotFoundError: no such run.
    """
    event = RUN_EVENTS[status]
    state = store.get_run(run_id)
    summary = run_summary(store, run_id)
    url = run_url(settings, run_id, "plan" if status == "awaiting_review" else "report")
    error = {"code": state.error_code, "message": state.error} if status == "failed" else None
    body = {
        "event": event,
        "id": uuid.uuid4().hex,
        "sent_at": iso(datetime.now(tz=UTC).timestamp()),
        "run_id": run_id,
        "topic": state.topic,
        "mode": state.mode,
        "status": status,
        "url": url,
        "finished_at": iso(state.finished_at) if status != "awaiting_review" else None,
        "summary": summary,
        "error": error,
    }
    return Notification(
        event=event,
        body=body,
        title=TITLES[status].format(topic=_clip(state.topic, 120)),
        text=_text(status, run_id, summary, error, url),
        level=LEVELS[status],
        subject=run_id,
    )


def _text(
    status: str,
    run_id: str,
    summary: dict[str, float | int],
    error: dict[str, str] | None,
    url: str | None,
) -> str:
    """A few plain lines for Slack, Teams or e-mail."""
    if status == "failed" and error:
        lines = [
            f"Run {run_id} failed ({error['code'] or 'error'}): {_clip(error['message'], 300)}"
        ]
        lines.append(f"Resume it with: research resume {run_id}")
    elif status == "awaiting_review":
        lines = [f"Run {run_id} waits for its plan to be reviewed."]
        lines.append(f"Approve it on the Plan page or with: research approve {run_id}")
    else:
        lines = [
            f"Run {run_id}: {summary['sources']} sources, {summary['cited']} cited, "
            f"{summary['words']} words, ${float(summary['cost_usd']):.4f}."
        ]
    if url:
        lines.append(url)
    return "\n".join(lines)


def _clip(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"
