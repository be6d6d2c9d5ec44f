"""Report page pieces: the question table, reference lines (URL + artifact links),
download buttons for every export format, and the read-only view's chrome hiding."""

from __future__ import annotations

import re
import unicodedata
from functools import partial
from urllib.parse import urlencode

import streamlit as st

from research.export import (
    EXTENSIONS,
    FORMATS,
    MIME_TYPES,
    REFERENCE_FORMATS,
    render_export,
    safe_filename,
)
from research.export.bundle import ReportBundle
from research.export.html import pdf_problem
from research.models import Reference, Report, RunState
from research.store.runs import RunStore
from research.ui.citations import anchor_id, plain, reference_markdown

STATUS_LABELS = {"answered": "✅ answered", "insufficient": "⚠️ insufficient evidence"}
_DECAMEL = (
    re.compile(r"([A-Z]{2,})(\d+)"),
    re.compile(r"([a-z\d]+)([A-Z]{2,})"),
    re.compile(r"([a-z\d])([A-Z])"),
    re.compile(r"([A-Z]+)([A-Z][a-rt-z\d]+)"),
)

FORMAT_LABELS = {
    "md": "Markdown",
    "html": "HTML",
    "pdf": "PDF",
    "docx": "Word",
    "zip": "Run (.zip)",
    "ris": "RIS",
    "bibtex": "BibTeX",
    "csljson": "CSL-JSON",
}
# Static CSS only (no text from sources or models): hides the sidebar, top bar and nav.
_READ_CSS = (
    "<style>[data-testid='stSidebar'],[data-testid='stSidebarCollapsedControl'],"
    "[data-testid='stHeader'],[data-testid='stToolbar'],[data-testid='stSidebarNav']"
    "{display:none !important}.block-container{max-width:52rem;padding-top:2rem}</style>"
)


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


def export_problem(fmt: str) -> str | None:
    """Why ``fmt`` cannot be exported on this machine (PDF without pango), else None."""
    if fmt == "pdf":
        return pdf_problem()
    return None


def export_download(
    store: RunStore,
    run_id: str,
    fmt: str,
    version: int | None = None,
    comments: bool = False,
) -> bytes:
    """The bytes of one download (``render_export`` of report version ``version``, None = the
    current one). Raises its typed error (``ResearchError``) rather than returning text:
    Streamlit then reports the download as failed with the message, instead of saving error
    text under a ``.pdf``/``.docx``/``.zip`` name."""
    return render_export(store, run_id, fmt, version=version, comments=comments)


def download_buttons(
    store: RunStore,
    state: RunState,
    *,
    with_report: bool,
    version: int | None = None,
    comments: bool = False,
) -> None:
    """One download button per export format (report formats only when the run has a report),
    of report version ``version`` (None = current), with the comments appendix when
    ``comments``; then the references as RIS / BibTeX / CSL-JSON. Files are built when clicked
    (``data`` is a callable) and named from the topic. A format this machine cannot build
    (``export_problem``) gets a disabled button and its error shown."""
    fmts = [f for f in FORMATS if (with_report or f == "zip") and f not in REFERENCE_FORMATS]
    _buttons(store, state, fmts, version, comments)
    if with_report:
        st.caption("References for Zotero, EndNote, Mendeley…")
        _buttons(store, state, list(REFERENCE_FORMATS), version, comments)


def _buttons(
    store: RunStore, state: RunState, fmts: list[str], version: int | None, comments: bool
) -> None:
    problems = {f: export_problem(f) for f in fmts}
    suffix = f"_v{version}" if version else ""
    for col, fmt in zip(st.columns(len(fmts)), fmts, strict=True):
        problem = problems[fmt]
        col.download_button(
            FORMAT_LABELS[fmt],
            data=partial(export_download, store, state.run_id, fmt, version, comments),
            file_name=safe_filename(state.topic + suffix, EXTENSIONS.get(fmt, fmt)),
            mime=MIME_TYPES[fmt],
            icon=":material/download:",
            on_click="ignore",
            disabled=problem is not None,
            help=problem,
            key=f"dl_{fmt}_{state.run_id}_{version or 0}_{int(comments)}",
            width="stretch" if len(fmts) > 1 else "content",
        )
    for fmt, problem in problems.items():
        if problem:
            st.error(
                f"{FORMAT_LABELS[fmt]} export is unavailable: {plain(problem)}",
                icon=":material/error:",
            )


def hide_chrome() -> None:
    """Hide the sidebar, header and navigation (the read-only report view)."""
    st.html(_READ_CSS)


def heading_anchor(heading: str) -> str:
    """The id Streamlit gives a Markdown heading (its frontend slugifies the heading text with
    ``@sindresorhus/slugify`` defaults): ASCII-folded, camel case split, ``&`` → "and", a
    possessive 's kept with its word, lower case, runs of other characters → ``-``."""
    text = (
        unicodedata.normalize("NFKD", heading.replace("&", " and "))
        .encode("ascii", "ignore")
        .decode()
    )
    for rx in _DECAMEL:
        text = rx.sub(r"\1 \2", text)
    text = re.sub(r"([a-z\d])['’]([ts])(?![a-z\d])", r"\1\2", text.lower())
    return re.sub(r"[^a-z\d]+", "-", text).strip("-")


def questions_markdown(report: Report) -> str:
    """The syllabus questions as a small Markdown table: question, status, the section that
    answers it (a link to its heading's anchor) and the references that section cites (links to
    ``#ref-n``); an open question's cell says how many sources it had of those needed before the
    references its section still cites. Empty string for a report without ``questions``
    (stored before reports carried questions)."""
    if not report.questions:
        return ""
    rows = ["| Question | Status | Answered in | Sources |", "|---|---|---|---|"]
    for q in report.questions:
        refs = " ".join(f"[[{n}]](#{anchor_id(n)})" for n in sorted(q.sources)[:12]) + (
            " …" if len(q.sources) > 12 else ""
        )
        found = (
            ""
            if q.status == "answered"
            else (
                f"{q.sources_found} of {q.min_sources} sources needed"
                if q.sources_found < q.min_sources
                else f"{q.sources_found} sources, quoted in other sections"
            )
        )
        # an open question's section may still cite sources (too few, or trials of each arm on
        # its own): the count says it is open, the links what the section quotes
        cell = refs
        if found:
            cell = plain(found) + (f"; cites {refs}" if refs else "")
        rows.append(
            f"| {plain(q.label)} | {STATUS_LABELS.get(q.status, plain(q.status))} | "
            f"[{plain(q.heading)}](#{heading_anchor(q.heading)}) | {cell} |"
        )
    return "\n".join(rows)
