"""Exporting a run: the report as Markdown, HTML, PDF or DOCX, or the whole run as a zip; safe
file names for downloads.

The Markdown export is the stored report's ``markdown`` of the current (or a chosen) version
(``research.store.versions``) with the dating line after its title (``research.export.dating``:
"As of <run date>", the ``--since`` window) (plus the follow-ups appendix,
``research.export.appendix``, when the run was asked follow-up questions) (``RunStore.get_doc(run_id,
"report", Report).markdown``), so the export, the dashboard and ``{data_dir}/reports/{run_id}/
report.md`` never disagree. The other formats are built by ``research/export/{html,docx,
zipper}.py`` from ``research.export.bundle.load_bundle``; :func:`render_export` and
:func:`export_run` dispatch on the format (the dashboard's downloads and ``research export``).
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from pathlib import Path

from research.artifacts import slug
from research.errors import InputError
from research.export.appendix import with_appendix
from research.export.bundle import load_bundle, require_report
from research.export.dating import with_header
from research.export.desk_appendix import comments_markdown
from research.export.references import reference_export
from research.export.zipper import run_zip
from research.store import open_store
from research.store.keys import check_run_id
from research.store.runs import RunStore

MAX_FILENAME_CHARS = 80
# Names Windows refuses whatever the extension (case-insensitive).
_WINDOWS_RESERVED = {
    "con",
    "prn",
    "aux",
    "nul",
    *(f"com{i}" for i in range(10)),
    *(f"lpt{i}" for i in range(10)),
}


def safe_filename(topic: str, ext: str) -> str:
    """A portable file name for a topic: lowercase snake_case ASCII plus ``.{ext}``.

    Accents are transliterated where Unicode NFKD allows (``é`` → ``e``); every other run of
    characters outside ``[a-z0-9]`` (spaces, dots, slashes, backslashes, colons, control
    characters, non-Latin script) becomes one ``_``. Topics that leave nothing (e.g. Arabic or
    CJK) get ``report_{8 hex of sha1(topic)}`` so distinct topics keep distinct names. Windows
    device names (``con``, ``nul``, ``com1``...) get a ``_report`` suffix.

    Args:
        topic: any text.
        ext: extension with or without the dot (``"md"`` or ``".md"``); reduced to
            ``[a-z0-9]``, at most 10 chars; empty means no extension.

    Returns:
        A non-empty name of at most 80 characters with no path separator, no leading dot and
        no characters reserved on Windows, macOS or Linux.
    """
    ext_clean = re.sub(r"[^a-z0-9]", "", (ext or "").lower())[:10]
    suffix = f".{ext_clean}" if ext_clean else ""
    topic = topic if isinstance(topic, str) else str(topic)
    stem = slug(topic, max_len=len(topic) + 1, fallback="")
    if not stem:
        digest = hashlib.sha1(topic.encode("utf-8", "surrogatepass")).hexdigest()[:8]
        stem = f"report_{digest}"
    if stem in _WINDOWS_RESERVED:
        stem = f"{stem}_report"
    stem = stem[: MAX_FILENAME_CHARS - len(suffix)].rstrip("_") or "report"
    return stem + suffix


def export_markdown(
    run_id: str, out: Path, *, store: RunStore | None = None, version: int | None = None
) -> Path:
    """Write a run's report (version ``version``; None = the current one) as Markdown to ``out``.

    Parent folders are created; an existing *file* at ``out`` is replaced atomically (written
    to a temporary file in the same folder, then renamed).

    Args:
        run_id: 16–32 lowercase hex.
        out: destination file path (``~`` expanded).
        store: a ``RunStore``; default: the configured Redis (``open_store()``).
        version: report version number (``research.store.versions``); None = current.

    Returns:
        The absolute path written.

    Raises:
        InputError: ill-formed run id; ``out`` is a directory or cannot be created/written;
            the run has no report yet (code ``report_not_ready``); no such version
            (``no_such_version``).
        RunNotFoundError: no such run.
        StoreError: Redis unreachable.
    """

    check_run_id(run_id)
    out_text = os.fspath(out)
    if not out_text.strip() or "\x00" in out_text:
        raise InputError(
            "The output path is empty or contains a NUL character; give a file path such as report.md."
        )
    path = Path(out_text).expanduser()
    if path.is_dir():
        raise InputError(
            f"'{path}' is a directory; give a file path such as "
            f"{path / 'report.md'} (an existing directory is never overwritten)."
        )
    if store is None:
        store = open_store()
    return _write_atomic(path, render_export(store, run_id, "md", version=version))


def _write_atomic(path: Path, data: str | bytes) -> Path:
    """Write ``data`` (text as UTF-8 with LF newlines, or bytes) to ``path`` through a temp file
    and ``os.replace``, so a failed write never leaves a half file. Returns the resolved path.

    Raises:
        InputError: the file cannot be written (says which path and why).
    """
    raw = data.encode("utf-8") if isinstance(data, str) else data
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name[:40]}.", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(raw)
            os.chmod(tmp, path.stat().st_mode & 0o777 if path.is_file() else 0o644)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise InputError(
            f"Cannot write '{path}': {exc.strerror or exc}; choose a writable file path."
        ) from exc
    return path.resolve()


write_atomic = _write_atomic  # the public name, for writers of other exports (batch zips)

REFERENCE_FORMATS = ("ris", "bibtex", "csljson")  # reference managers (Zotero, EndNote…)
FORMATS = ("md", "html", "pdf", "docx", "zip", *REFERENCE_FORMATS)
EXTENSIONS = {"ris": "ris", "bibtex": "bib", "csljson": "json"}  # file extension when not fmt
MIME_TYPES = {
    "ris": "application/x-research-info-systems",
    "bibtex": "application/x-bibtex",
    "csljson": "application/vnd.citationstyles.csl+json",
    "md": "text/markdown",
    "html": "text/html",
    "pdf": "application/pdf",
    "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "zip": "application/zip",
}


def render_export(
    store, run_id: str, fmt: str, *, version: int | None = None, comments: bool = False
) -> bytes:
    """The export of a run in ``fmt`` (one of :data:`FORMATS`) as bytes.

    ``md``/``html``/``pdf``/``docx`` and the reference-manager formats (``ris``, ``bibtex``,
    ``csljson``) need a report; ``zip`` works for any run. ``version``: the report version
    (None = the current one); ``comments``: add the comments appendix (md/html/pdf/docx).

    Raises:
        InputError: unknown format; no report yet (code ``report_not_ready``); ill-formed id;
            no such version (``no_such_version``).
        RunNotFoundError: no such run.
    """

    if fmt not in FORMATS:
        raise InputError(f"Unknown export format {fmt!r}; use one of {', '.join(FORMATS)}.")
    if fmt == "zip":
        return run_zip(store, run_id, version=version)
    bundle = load_bundle(store, run_id, version=version, comments=comments)
    report = require_report(bundle)
    if fmt in REFERENCE_FORMATS:
        return reference_export(bundle, fmt)
    if fmt == "md":
        md = with_appendix(with_header(report.markdown, bundle.header), bundle.followups)
        extra = comments_markdown(bundle.comments)
        return (md.rstrip("\n") + "\n\n" + extra + "\n" if extra else md).encode("utf-8")
    # the renderers load python-docx, markdown-it and WeasyPrint: only for their format
    from research.export.html import report_html, report_pdf  # noqa: PLC0415 - see above

    if fmt == "html":
        return report_html(bundle).encode("utf-8")
    if fmt == "pdf":
        return report_pdf(bundle)
    from research.export.docx import report_docx  # noqa: PLC0415 - see above

    return report_docx(bundle)


def export_run(
    run_id: str,
    fmt: str,
    out: Path,
    *,
    store: RunStore | None = None,
    version: int | None = None,
    comments: bool = False,
) -> Path:
    """Write :func:`render_export` of the run to ``out`` atomically; returns the absolute path.

    Raises:
        InputError: as :func:`render_export`, or ``out`` is a directory / not writable.
        RunNotFoundError: no such run.
    """

    check_run_id(run_id)
    path = Path(os.fspath(out)).expanduser()
    if path.is_dir():
        raise InputError(
            f"'{path}' is a directory; give a file path such as {path / ('report.' + fmt)}."
        )
    if store is None:
        store = open_store()
    data = render_export(store, run_id, fmt, version=version, comments=comments)
    return _write_atomic(path, data)
