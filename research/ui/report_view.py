"""Report page pieces: reference lines (URL + artifact links), download buttons for every export
format, and the read-only view's chrome hiding."""

from __future__ import annotations

from urllib.parse import urlencode

import streamlit as st

from research.errors import ResearchError
from research.export import FORMATS, MIME_TYPES, render_export, safe_filename
from research.export.bundle import ReportBundle
from research.models import Reference, RunState
from research.store.runs import RunStore
from research.ui.citations import plain, reference_markdown

FORMAT_LABELS = {"md": "Markdown", "html": "HTML", "pdf": "PDF", "docx": "Word", "zip": "Run (.zip)"}
# Static CSS only (no text from sources or models): hides the sidebar, top bar and nav.
_READ_CSS = ("<style>[data-testid='stSidebar'],[data-testid='stSidebarCollapsedControl'],"
             "[data-testid='stHeader'],[data-testid='stToolbar'],[data-testid='stSidebarNav']"
             "{display:none !important}.block-container{max-width:52rem;padding-top:2rem}</style>")


def artifact_url(run_id: str, artifact_file: str) -> str:
    """Relative URL of the Artifacts page showing one artifact: ``artifacts?run=…&artifact=…``."""
    return "artifacts?" + urlencode({"run": run_id, "artifact": artifact_file})


def reference_line(bundle: ReportBundle, ref: Reference, *, links: bool = True) -> str:
    """Safe Markdown for one reference: ``**[n]** [title](url) — type · id`` plus, when the
    source came from a recorded tool call and ``links``, `` · [artifact](artifacts?run=…)``,
    then the cited excerpt in italics."""
    line = reference_markdown(ref)
    art = bundle.artifacts.get(ref.source_id)
    if art and links:
        line += f" · [artifact]({artifact_url(bundle.state.run_id, art)})"
    snippet = bundle.snippets.get(ref.source_id)
    if snippet:
        line += f"  \n_“{plain(snippet)}”_"
    return line


def download_buttons(store: RunStore, state: RunState, *, with_report: bool) -> None:
    """One download button per export format (report formats only when the run has a report).
    Files are built when clicked (``data`` is a callable) and named from the topic."""
    fmts = [f for f in FORMATS if with_report or f == "zip"]
    for col, fmt in zip(st.columns(len(fmts)), fmts):
        def build(f: str = fmt) -> bytes:
            try:
                return render_export(store, state.run_id, f)
            except ResearchError as exc:  # shown as a text file rather than a broken download
                return f"Export failed: {exc.message}\n".encode()
        col.download_button(FORMAT_LABELS[fmt], data=build, file_name=safe_filename(state.topic, fmt),
                            mime=MIME_TYPES[fmt], icon=":material/download:", on_click="ignore",
                            key=f"dl_{fmt}_{state.run_id}", width="stretch" if len(fmts) > 1 else "content")


def hide_chrome() -> None:
    """Hide the sidebar, header and navigation (the read-only report view)."""
    st.html(_READ_CSS)
