"""The run's notifications on its pages (a line under the status, the deliveries in an
expander) and the launch form's hint about the settings' targets.

Only redacted target forms are shown (``https://hooks.example.org/… #1a2b3c``): the records and
``RunConfig.notify`` never hold a URL in clear.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import streamlit as st

from research.config import Settings
from research.models import RunState
from research.notify.targets import settings_targets
from research.store.notifications import NotificationRecord
from research.store.runs import RunStore
from research.ui.citations import code, plain


def settings_target_count(settings: Settings) -> int:
    """How many targets ``RESEARCH_WEBHOOK_URLS`` / ``RESEARCH_APPRISE_URLS`` name (valid ones)."""
    return len(settings_targets(settings))


def summary_line(records: list[NotificationRecord], configured: list[str]) -> str | None:
    """Markdown: ``🔔 Notifications: 2 sent, 1 failed`` plus the last failure's event, target (a
    code span, so it is never a link) and error; ``… will notify 2 target(s)`` before any
    delivery; None when the run has neither records nor targets of its own."""
    if not records:
        if not configured:
            return None
        return plain(
            f"🔔 Notifications: will notify {len(configured)} target(s) of this run when it ends"
        )
    sent = sum(r.ok for r in records)
    failed = [r for r in records if not r.ok]
    line = plain(f"🔔 Notifications: {sent} sent, {len(failed)} failed")
    if failed:
        last = failed[-1]
        line += " " + plain(f"— last failure: {last.event} to") + " " + code(last.target)
        line += plain(f": {last.error}")
    return line


def delivery_rows(records: list[NotificationRecord]) -> list[dict[str, Any]]:
    """One table row per delivery: time (UTC), event, target, result, HTTP status, attempts,
    error, signed, origin."""
    return [
        {
            "time": datetime.fromtimestamp(r.finished_at or r.started_at, tz=UTC).strftime(
                "%Y-%m-%d %H:%M:%S"
            ),
            "event": r.event,
            "target": r.target,
            "result": "sent" if r.ok else "failed",
            "status": r.status_code,
            "attempts": r.attempts,
            "error": r.error,
            "signed": r.signed if r.kind == "webhook" else None,
            "origin": r.origin,
        }
        for r in records
    ]


def notifications_panel(store: RunStore, state: RunState) -> None:
    """The summary line (``summary_line``) and, when something was delivered or failed, the
    deliveries in a collapsed expander (open when one failed). Draws nothing for a run without
    notifications."""
    records = store.notifications.list(state.run_id)
    line = summary_line(records, state.config.notify)
    if line is None:
        return
    st.caption(line)
    if records:
        failed = any(not r.ok for r in records)
        with st.expander(f"Notification deliveries ({len(records)})", expanded=failed):
            st.dataframe(delivery_rows(records), hide_index=True, width="stretch")
