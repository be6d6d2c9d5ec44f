"""Which run a page shows (``?run=<id>``), store access, the shared run header and live polling.

Every run page does::

    store = context.get_store()
    state = context.select_run(store)
    if state:
        context.live(store, state, render)   # render(state) draws the page body

``select_run`` reads ``?run=`` from ``st.query_params`` and writes it back when the analyst
picks a run, so the URL is always a share link. ``live`` re-reads Redis every
``POLL_S`` seconds inside ``st.fragment(run_every=…)`` while the run is active, and reruns the
whole page once when it finishes; finished runs are rendered once and never poll.
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from research.errors import InputError, RunNotFoundError, StoreError
from research.models import RunState
from research.store import open_store
from research.store.keys import check_run_id
from research.store.runs import RunStore
from research.ui import nav
from research.ui.citations import plain
from research.ui.events import events_rows
from research.ui.history import STATUS_ICONS, duration_s, format_duration, is_active, run_label
from research.ui.notifications import notifications_panel
from research.ui.progress import progress_panel, share_url
from research.ui.resume import resume_control

POLL_S = 2
EVENTS_SHOWN = 8
EXTRACTIVE_NOTE = (
    "every answer, summary and report sentence is extracted from a cited source; "
    "no language model was used"
)


def get_store() -> RunStore:
    """The run store on the configured Redis; on StoreError shows the message and stops the page."""
    try:
        return open_store()
    except StoreError as exc:
        st.error(f"Redis is not available: {exc.message}", icon=":material/error:")
        st.stop()
        raise  # pragma: no cover - st.stop raises


def resolve_run(store: RunStore, raw: str | None) -> tuple[RunState | None, str | None]:
    """``(state, error message)`` for a ``?run=`` value; ``(None, None)`` when none was given.

    Ill-formed ids (not 16–32 lowercase hex) and unknown ids give a message, never an exception.
    """
    if not raw:
        return None, None
    try:
        return store.get_run(check_run_id(raw.strip())), None
    except (InputError, RunNotFoundError) as exc:
        return None, exc.message


def select_run(store: RunStore) -> RunState | None:
    """The selected run, or None after rendering an error or a pointer to Launch.

    Renders a run picker in the sidebar; picking a run writes ``?run=<id>`` and reruns. With no
    ``?run=`` the newest run is shown (and written to the URL, so it is a share link).
    """
    raw = st.query_params.get("run")
    state, error = resolve_run(store, raw)
    runs = store.list_runs()
    if not raw and runs:
        state = runs[0]  # newest first: right after a launch, the run just started
        st.query_params["run"] = state.run_id
    labels = {r.run_id: run_label(r) for r in runs}
    if state is not None and state.run_id not in labels:
        labels = {state.run_id: run_label(state), **labels}
    options = list(labels)
    with st.sidebar:
        choice = st.selectbox(
            "Run",
            options,
            index=options.index(state.run_id) if state else None,
            format_func=lambda rid: labels.get(rid, rid),
            placeholder="Choose a run",
        )
    if choice and (state is None or choice != state.run_id):
        st.query_params["run"] = choice
        st.rerun()
    if error:
        st.error(f"Cannot open run: {plain(error)}", icon=":material/error:")
        nav.page_link("launch", label="Go to Launch to start or pick a run")
        return None
    if state is None:
        if options:
            st.info(
                "No run selected: choose one in the sidebar, or start a new run on Launch.",
                icon=":material/info:",
            )
        else:
            st.info("No runs yet: start one on the Launch page.", icon=":material/info:")
        nav.page_link("launch", label="Go to Launch")
        return None
    return state


def engine_banner(state: RunState) -> None:
    """A prominent line naming the engine that produced what the page shows."""
    label = state.engine_label or state.config.engine
    if state.config.engine == "extractive":
        st.info(f"**Engine: {plain(label)}** — {EXTRACTIVE_NOTE}.", icon=":material/offline_bolt:")
    else:
        st.info(f"**Engine: {plain(label)}**", icon=":material/smart_toy:")


def share_link(page_key: str, run_id: str) -> None:
    """A "Share" popover holding the page's absolute URL in ``st.code`` (which has a copy button
    and stays selectable in headless browsers) plus the read-only report link."""

    with st.popover("Copy link", icon=":material/link:"):
        st.caption("Anyone with access to this dashboard opens the same view with:")
        st.code(share_url(nav.page(page_key).url_path, run_id), language=None, wrap_lines=True)
        st.caption("Clean read-only report:")
        st.code(
            share_url(nav.page("report").url_path, run_id, view="read"),
            language=None,
            wrap_lines=True,
        )


def run_header(store: RunStore, state: RunState, page_key: str | None = None) -> None:
    """Topic, status line, share link, live progress (stepper, bars, cost, Cancel), error, the
    notification deliveries, the last few events, then links to the run's other pages."""

    title, share = st.columns([6, 1], vertical_alignment="bottom")
    title.header(plain(state.topic), anchor=False)
    with share:
        share_link(page_key or "report", state.run_id)
    icon = STATUS_ICONS.get(state.status, "")
    timing = "running for" if is_active(state.status) else "took"
    st.caption(
        f"{icon} **{state.status}** · {timing} {format_duration(duration_s(state))} · "
        f"mode {plain(state.mode)} · template {plain(state.config.template)} · run `{state.run_id}`"
    )
    progress_panel(store, state)
    if state.status == "failed":
        st.error(
            f"Run failed ({plain(state.error_code) or 'error'}): {plain(state.error)}",
            icon=":material/error:",
        )
    elif state.status == "cancelled":
        st.warning(
            f"Run cancelled. {plain(state.error) or 'Everything so far is kept.'}",
            icon=":material/stop_circle:",
        )
    elif state.status == "interrupted":
        st.warning(
            f"Run interrupted (the server stopped while it ran). {plain(state.error)}",
            icon=":material/warning:",
        )
    elif state.status == "awaiting_review" and page_key != "plan":
        st.info(
            "The plan is ready and waits for your review: edit and approve it on the Plan page.",
            icon=":material/rate_review:",
        )
        nav.page_link("plan", state.run_id, "Review the plan")
    resume_control(state)  # Resume button for interrupted/failed runs
    notifications_panel(store, state)  # where the run's end was announced, and any failure
    if (
        state.stop_reason and state.mode != "costorm"
    ):  # Co-STORM: the progress panel says why it stopped
        st.caption(f"Stopped early: {plain(state.stop_reason)}")
    with st.expander("Recent events", expanded=is_active(state.status)):
        rows = events_rows(store.tail_events(state.run_id, EVENTS_SHOWN))
        if rows:
            st.dataframe(rows, hide_index=True, width="stretch")
        else:
            st.caption("No events yet.")
    nav.run_page_links(state.run_id, exclude=page_key)


def live(store: RunStore, state: RunState, body: Callable[[RunState], None]) -> None:
    """Call ``body(state)``; while the run is active, re-read it and redraw every ``POLL_S`` s.

    Inside the fragment only the fragment reruns; when the run leaves the active statuses the
    whole page reruns once (``st.rerun()``) and is then drawn without polling.
    """
    if not is_active(state.status):
        body(state)
        return

    @st.fragment(run_every=POLL_S)
    def _poll() -> None:
        try:
            fresh = store.get_run(state.run_id)
        except RunNotFoundError as exc:
            st.error(exc.message)
            return
        body(fresh)
        if not is_active(fresh.status):
            st.rerun()

    _poll()
