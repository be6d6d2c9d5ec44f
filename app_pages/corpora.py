"""Corpora: upload documents (PDF, DOCX, HTML, Markdown, text) or point at a folder to build a
named corpus, and list the corpora with their file and chunk counts. Logic lives in
``research.ingest``; this page only renders."""

import streamlit as st

from research.config import load_settings
from research.errors import ResearchError
from research.ingest import ingest, list_corpora, validate_corpus_name
from research.ingest.extract import SUFFIXES
from research.ingest.store import corpus_dir
from research.search.index_progress import ACTIVE, index_state
from research.ui.corpora import corpus_rows, file_rows, index_status_line

st.title("Corpora")
st.caption(
    "Your own documents, searchable in runs: choose them under *Corpora* on the Launch form "
    "or with `research run … --corpora NAME`. Each passage cites its file and page."
)

settings = load_settings()


def default_index() -> None:
    """The default corpus's search index: ready, or a progress bar while it is being built."""
    frac, text = index_status_line(index_state(settings.default_corpus, settings.index_dir))
    if frac is None:
        st.caption(text)
    else:
        st.progress(frac, text=text)


building = index_state(settings.default_corpus, settings.index_dir)["state"] in ACTIVE
st.fragment(default_index, run_every=2 if building else None)()  # live only while it builds
listing = st.container()  # filled last, so a corpus ingested below shows at once
st.subheader("Add documents", anchor=False)
with st.form("ingest"):
    name = st.text_input("Corpus name", placeholder="e.g. trial-reports")
    uploads = st.file_uploader(
        "Upload files", type=[s.lstrip(".") for s in SUFFIXES], accept_multiple_files=True
    )
    folder = st.text_input("…or a folder on this server", placeholder="/path/to/documents")
    submitted = st.form_submit_button("Ingest", type="primary")

if submitted:
    try:
        corpus = validate_corpus_name(name)
        paths = []
        if uploads:
            target = corpus_dir(corpus, settings) / "files"
            target.mkdir(parents=True, exist_ok=True)
            for up in uploads:
                dest = target / up.name.replace("/", "_").lstrip(".")
                dest.write_bytes(up.getvalue())
                paths.append(dest)
        if folder.strip():
            paths.append(folder.strip())
        if not paths:
            st.error("Upload some files or give a folder to ingest.")
        else:
            with st.spinner("Extracting, chunking and indexing…"):
                report = ingest(corpus, paths)
            st.success(
                f"{report.corpus}: {len(report.added)} added, {len(report.updated)} updated, "
                f"{len(report.unchanged)} unchanged — {report.files} files, {report.chunks} chunks "
                f"in {report.seconds:.1f} s"
            )
            for message in report.errors.values():
                st.warning(message)
    except ResearchError as exc:
        st.error(exc.message)

with listing:
    st.subheader("Your corpora", anchor=False)
    rows = list_corpora()
    if not rows:
        st.info("No corpus yet: ingest some documents below.", icon=":material/info:")
    else:
        st.dataframe(corpus_rows(rows), hide_index=True, width="stretch")
        for r in rows:
            failed = f", {len(r['errors'])} could not be read" if r["errors"] else ""
            files = f"{r['files']} file{'s' if r['files'] != 1 else ''}"
            with st.expander(
                f"{r['name']}: {files}, {r['chunks']} chunks{failed}",
                icon=":material/warning:" if r["errors"] else ":material/folder_open:",
            ):
                st.dataframe(file_rows(r), hide_index=True, width="stretch")
