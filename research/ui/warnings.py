"""Search-backend warnings of a run (failures made visible), for the Plan and Report
pages: ``search_warnings`` (pure, tested) summarises the run's ``search.failed`` /
``search.empty`` / ``scrape.failed`` events; ``render_search_warnings`` draws the panel."""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from research.models import Event

WARNING_EVENTS = ("search.failed", "search.empty", "scrape.failed")


def search_warnings(events: Sequence[Event]) -> list[dict]:
    """One row per (backend, kind): ``{"backend", "kind": "failed"|"empty"|"scrape",
    "count", "reasons": [..], "last_query", "last_message"}``; failures first, then by count."""
    rows: dict[tuple[str, str], dict] = {}
    for ev in events:
        if ev.type not in WARNING_EVENTS:
            continue
        kind = {"search.failed": "failed", "search.empty": "empty"}.get(ev.type, "scrape")
        backend = str(ev.data.get("backend") or ("scrape_url" if kind == "scrape" else "?"))
        row = rows.setdefault(
            (backend, kind),
            {
                "backend": backend,
                "kind": kind,
                "count": 0,
                "reasons": [],
                "last_query": "",
                "last_message": "",
            },
        )
        row["count"] += 1
        reason = str(ev.data.get("reason") or "")
        if reason and reason not in row["reasons"]:
            row["reasons"].append(reason)
        row["last_query"] = str(ev.data.get("query") or ev.data.get("url") or "")[:200]
        row["last_message"] = str(ev.data.get("message") or "")[:300]
    order = {"failed": 0, "scrape": 1, "empty": 2}
    return sorted(rows.values(), key=lambda r: (order[r["kind"]], -r["count"], r["backend"]))


def warning_lines(rows: list[dict]) -> list[str]:
    """Markdown lines of the panel, e.g. ``**pubmed** failed 4× (http_error) — last: "…"``."""
    verbs = {"failed": "failed", "empty": "returned nothing", "scrape": "could not fetch pages"}
    out = []
    for r in rows:
        reasons = f" ({', '.join(r['reasons'])})" if r["reasons"] and r["kind"] != "empty" else ""
        detail = (
            f" — last: {r['last_message']}" if r["last_message"] and r["kind"] != "empty" else ""
        )
        out.append(
            f"- **{r['backend']}** {verbs[r['kind']]} {r['count']}×{reasons}{detail}".replace(
                "$", "\\$"
            )
        )
    return out


def render_search_warnings(store, run_id: str) -> None:
    """Draw a warning panel when the run has failed or empty searches (nothing otherwise)."""

    rows = search_warnings(store.events(run_id))
    if not rows:
        return
    failed = [r for r in rows if r["kind"] != "empty"]
    title = (
        f"{len({r['backend'] for r in failed})} search backend(s) failed during this run; sources from "
        "them may be missing."
        if failed
        else "Some searches returned no results."
    )
    body = "\n".join(warning_lines(rows))
    if failed:
        st.warning(f"{title}\n\n{body}", icon=":material/warning:")
    else:
        with st.expander(title, icon=":material/info:"):
            st.markdown(body)
