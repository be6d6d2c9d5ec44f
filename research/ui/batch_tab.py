"""The Launch page's Batch tab: paste topics (one per line) with the shared options, queue them
as one batch (``research.jobs.batch``: checked whole first, then a run each on the job backend),
follow the batch in a progress table that refreshes while runs are active, and download every
finished report as one zip.

:func:`table_rows` and :func:`shared_options` are plain data (tested without Streamlit);
:func:`render_batch_tab` draws the tab.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from research.config import Settings
from research.errors import ResearchError
from research.export import safe_filename
from research.jobs.batch import batch_status, batch_zip, cancel_batch, list_batches, submit_batch
from research.jobs.batch_input import MAX_BATCH_RUNS, build_configs, parse_topics
from research.models import GAP_TURNS_RANGE, PERSPECTIVES_RANGE, TURNS_RANGE
from research.ui.history import STATUS_ICONS, format_time
from research.ui.launch_form import DEPTH_LABELS, SEARCH_BACKENDS, TEMPLATE_LABELS

POLL_S = 2
BATCH_PARAM = "batch"  # ?batch=<id>: the batch shown (a share link)
COLUMNS = {
    "topic": st.column_config.TextColumn("Topic", width="large"),
    "report": st.column_config.LinkColumn("Run", display_text=r"run=(.*)$"),
    "status": st.column_config.TextColumn("Status"),
    "progress": st.column_config.ProgressColumn(
        "Progress", min_value=0.0, max_value=1.0, format="percent"
    ),
    "sources": st.column_config.NumberColumn("Sources"),
    "citations": st.column_config.NumberColumn("Citations"),
}


def table_rows(status: dict[str, Any]) -> list[dict[str, Any]]:
    """The progress table of a ``batch_status``: per run, in batch order, ``topic``,
    ``report`` (``report?run=<id>``, shown as the run id), ``status`` (with its icon),
    ``progress`` (0–1), ``sources``, ``citations``."""
    return [
        {
            "topic": r["topic"] or "(deleted run)",
            "report": f"report?run={r['run_id']}",
            "status": f"{STATUS_ICONS.get(r['status'], '')} {r['status']}".strip(),
            "progress": float(r["progress"]),
            "sources": int(r["sources"]),
            "citations": int(r["citations"]),
        }
        for r in status["runs"]
    ]


def shared_options(
    *,
    corpus: str,
    template: str,
    max_perspectives: int,
    max_turns: int,
    gap_turns: int,
    depth: str,
    search: list[str],
    engine: str,
    mode: str,
) -> dict[str, Any]:
    """The form's values as batch options (``research.jobs.batch_input`` field names); an empty
    ``search`` is left out (the input gate searches ``local``)."""
    out: dict[str, Any] = {
        "corpus": corpus.strip() or None,
        "template": template,
        "max_perspectives": int(max_perspectives),
        "max_turns": int(max_turns),
        "gap_turns": int(gap_turns),
        "depth": depth,
        "engine": engine,
        "mode": mode,
    }
    if search:
        out["search"] = list(search)
    return out


def _form(settings: Settings, engine: str, mode: str) -> None:
    with st.form("batch_form"):
        left, right = st.columns([3, 2])
        topics = left.text_area(
            "Topics, one per line",
            height=230,
            placeholder="Imatinib in chronic myeloid leukaemia\nStatins versus fibrates in older adults",
            help=f"Up to {MAX_BATCH_RUNS} topics; blank lines and lines starting with # are "
            "skipped. Every topic gets its own run with the options beside.",
        )
        name = right.text_input("Batch name", placeholder="e.g. Kinase inhibitor landscape, May")
        corpus = right.text_input("Corpus of every run", value=str(settings.default_corpus))
        r1, r2 = right.columns(2)
        templates: list[str] = list(TEMPLATE_LABELS)
        template = r1.selectbox(
            "Syllabus template",
            templates,
            format_func=lambda t: TEMPLATE_LABELS.get(t, t),
        )
        depths: list[str] = list(DEPTH_LABELS)
        depth = r2.selectbox(
            "Length of each report", depths, index=1, format_func=lambda d: DEPTH_LABELS[d]
        )
        c1, c2, c3 = st.columns(3)
        max_p = c1.number_input("Perspectives per run", *PERSPECTIVES_RANGE, value=4)
        max_t = c2.number_input("Turns per perspective", *TURNS_RANGE, value=3)
        gaps = c3.number_input("Gap search rounds", *GAP_TURNS_RANGE, value=2)
        s1, s2 = st.columns([3, 1], vertical_alignment="bottom")
        search = s1.multiselect("Backends to search", SEARCH_BACKENDS, default=["local"])
        go = s2.form_submit_button(
            "Queue batch", type="primary", icon=":material/playlist_play:", width="stretch"
        )
    if not go:
        return
    shared = shared_options(
        corpus=corpus,
        template=template or "auto",
        max_perspectives=max_p,
        max_turns=max_t,
        gap_turns=gaps,
        depth=depth or "standard",
        search=search,
        engine=engine,
        mode=mode,
    )
    try:
        configs = build_configs(parse_topics(topics), shared)
        batch = submit_batch(configs, name or f"{len(configs)} topics")
    except ResearchError as exc:
        st.error(exc.message, icon=":material/error:")
        return
    st.session_state["batch_shown"] = batch.batch_id
    st.query_params[BATCH_PARAM] = batch.batch_id
    st.toast(f"Batch of {len(batch.run_ids)} runs queued.")


def _chosen_batch() -> str | None:
    """The batch to show: the one picked (or just queued), else ``?batch=``, else the newest."""
    batches = list_batches(limit=30)
    if not batches:
        return None
    st.subheader("Batch progress", anchor=False)
    ids = [b["batch_id"] for b in batches]
    wanted = st.session_state.get("batch_shown") or st.query_params.get(BATCH_PARAM)
    labels = {
        b["batch_id"]: f"{b['name']} · {b['total']} runs · {format_time(b['created_at'])}"
        for b in batches
    }
    pick = st.selectbox(
        "Batch",
        ids,
        index=ids.index(wanted) if wanted in ids else 0,
        format_func=lambda b: labels[b],
        key="batch_pick",
    )
    if pick and pick != wanted:
        st.session_state["batch_shown"] = pick
        st.query_params[BATCH_PARAM] = pick
    return pick


def _progress(batch_id: str) -> None:
    """The batch's live table, its zip download and its cancel button, all drawn from one
    status read inside the polling fragment: the download turns on with the first finished
    report, whether or not the page redraws. Polling stops once no run is active."""
    first = batch_status(batch_id)

    @st.fragment(run_every=POLL_S if not first["done"] else None)
    def live() -> None:
        status = batch_status(batch_id)
        if not first["done"] and status["done"]:
            st.rerun()  # the last run stopped: redraw once without the timer
        counts = " · ".join(f"{n} {s}" for s, n in status["counts"].items())
        st.caption(f"{status['total']} runs · {counts} · {status['progress']:.0%} done")
        st.progress(status["progress"])
        st.dataframe(
            table_rows(status),
            hide_index=True,
            width="stretch",
            column_order=list(COLUMNS),
            column_config=COLUMNS,
        )
        complete = status["counts"].get("complete", 0)
        d1, d2 = st.columns([3, 1])
        d1.download_button(
            f"Download all reports ({complete} of {status['total']}, zip)",
            data=lambda: batch_zip(batch_id)[0],
            file_name=safe_filename(status["name"], "zip"),
            mime="application/zip",
            disabled=not complete,
            on_click="ignore",
            icon=":material/folder_zip:",
            help="One zip: each finished report as Markdown, plus batch.csv (the table above).",
        )
        if not status["done"] and d2.button("Cancel active runs", icon=":material/stop_circle:"):
            st.toast(f"Cancelling {len(cancel_batch(batch_id))} runs at their next step.")

    live()


def render_batch_tab(settings: Settings, engine: str, mode: str) -> None:
    """The Batch tab: the chosen batch's progress table and zip download (when there is a
    batch), then the form of a new batch (engine and mode from the page's selectors)."""
    progress_box = st.container()  # above the form, filled after it so a new batch shows at once
    st.subheader("Queue a batch", anchor=False)
    _form(settings, engine, mode)
    with progress_box:
        batch_id = _chosen_batch()
        if batch_id:
            _progress(batch_id)
