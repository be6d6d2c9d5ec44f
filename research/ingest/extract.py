"""Text extraction per file type, keeping page numbers where the format has pages.

* PDF: pypdf, one ``Page`` per PDF page (1-based numbers), so chunks cite ``file p. N``.
* DOCX: python-docx paragraphs and table rows in body order; DOCX has no fixed pages, so
  ``page`` is None (citations cite the file).
* HTML: trafilatura main text (Barbaresi 2021); Markdown and text: the file as UTF-8.

``extract(path)`` raises ``ExtractError`` (a clear per-file message) for corrupt, encrypted or
empty files; callers record it and go on with the other files.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from research.errors import CorpusError

SUFFIXES = (".pdf", ".docx", ".html", ".htm", ".md", ".markdown", ".txt")


class ExtractError(CorpusError):
    """One file could not be read; ``message`` names the file and the cause."""

    code = "ingest_file_error"


@dataclass(frozen=True)
class Page:
    """Extracted text of one page (``number`` 1-based; None for formats without pages)."""

    number: int | None
    text: str


def _pdf(path: Path) -> tuple[str, list[Page]]:
    from pypdf import PdfReader  # noqa: PLC0415 - each reader loads with its first file of its kind

    reader = PdfReader(str(path))
    if reader.is_encrypted:
        try:
            reader.decrypt("")
        except Exception:
            raise ExtractError(
                f"{path.name}: the PDF is password-protected; remove the password and re-ingest"
            ) from None
    pages = [Page(i, (p.extract_text() or "").strip()) for i, p in enumerate(reader.pages, start=1)]
    title = ""
    try:
        title = (reader.metadata.title or "").strip() if reader.metadata else ""
    except Exception:
        title = ""
    return title, pages


def _docx(path: Path) -> tuple[str, list[Page]]:
    import docx  # noqa: PLC0415 - each reader loads with its first file of its kind

    document = docx.Document(str(path))
    lines: list[str] = []
    body = document.element.body
    for child in body.iterchildren():
        tag = child.tag.rsplit("}", 1)[-1]
        if tag == "p":
            text = "".join(t.text or "" for t in child.iter() if t.tag.endswith("}t")).strip()
            if text:
                lines.append(text)
        elif tag == "tbl":
            for row in child.iter():
                if row.tag.endswith("}tr"):
                    cells = [
                        "".join(t.text or "" for t in c.iter() if t.tag.endswith("}t")).strip()
                        for c in row
                        if c.tag.endswith("}tc")
                    ]
                    if any(cells):
                        lines.append(" | ".join(cells))
    title = (document.core_properties.title or "").strip()
    return title, [Page(None, "\n\n".join(lines))]


def _html(path: Path) -> tuple[str, list[Page]]:
    import trafilatura  # noqa: PLC0415 - each reader loads with its first file of its kind

    html = path.read_text(encoding="utf-8", errors="replace")
    text = (
        trafilatura.extract(html, include_comments=False, include_tables=True, favor_recall=True)
        or ""
    )
    meta = trafilatura.extract_metadata(html)
    return (meta.title if meta and meta.title else ""), [Page(None, text.strip())]


def _text(path: Path) -> tuple[str, list[Page]]:
    text = path.read_text(encoding="utf-8", errors="replace").strip()
    title = ""
    if path.suffix.lower() in (".md", ".markdown"):
        title = next((ln.lstrip("#").strip() for ln in text.splitlines() if ln.startswith("#")), "")
    return title, [Page(None, text)]


def extract(path: str | Path) -> tuple[str, list[Page]]:
    """``(title or "", pages)`` of one file; pages without text are dropped.

    Raises:
        ExtractError: unsupported type, unreadable/corrupt file, or no text at all (e.g. a
            scanned PDF without a text layer).
    """
    p = Path(path)
    suffix = p.suffix.lower()
    readers = {".pdf": _pdf, ".docx": _docx, ".html": _html, ".htm": _html}
    if suffix not in SUFFIXES:
        raise ExtractError(
            f"{p.name}: unsupported file type {suffix or '(none)'}; use {', '.join(SUFFIXES)}"
        )
    try:
        title, pages = readers.get(suffix, _text)(p)
    except ExtractError:
        raise
    except Exception as exc:
        raise ExtractError(
            f"{p.name}: cannot read this {suffix[1:].upper()} file ({type(exc).__name__}: "
            f"{str(exc)[:160]}); check that it is not corrupt"
        ) from None
    pages = [pg for pg in pages if pg.text.strip()]
    if not pages:
        raise ExtractError(f"{p.name}: no text found (a scanned PDF needs OCR first)")
    return title, pages
