"""Load a local corpus: a JSONL file of ``{id,title,url,text,source}`` or a folder of documents.

Folders may hold ``.txt``, ``.md``, ``.html`` and ``.pdf`` files (searched recursively, hidden
files skipped). HTML main text comes from trafilatura (Barbaresi 2021, ACL demo), PDF text from
pypdf. Folder documents get ``id`` = path relative to the folder, ``url`` = ``file://`` URI,
``title`` = first heading / first line / file name, ``source`` = ``"local"``.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field
from pathlib import Path

from research.errors import CorpusError

log = logging.getLogger(__name__)

JSONL_SUFFIXES = (".jsonl", ".ndjson")
DOC_SUFFIXES = (".txt", ".md", ".markdown", ".html", ".htm", ".pdf")
_TITLE_MAX = 200
_MD_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$")


@dataclass(frozen=True, slots=True)
class Document:
    """One corpus document. ``source`` is the corpus' own label (``pubmed``, ``local``, ...)."""

    id: str
    title: str
    url: str
    text: str
    source: str = "local"
    published: str | None = None  # YYYY[-MM[-DD]] from the line's published / date / year


@dataclass
class CorpusLoad:
    """Result of ``read_corpus``: the documents plus what was skipped.

    ``skipped`` counts bad JSONL lines (invalid JSON, not an object, no id or text, repeated id)
    or unreadable/empty files; ``problems`` keeps the first 20 reasons, e.g. ``"line 7: ..."``.
    """

    documents: list[Document]
    skipped: int = 0
    problems: list[str] = field(default_factory=list)

    def _skip(self, reason: str) -> None:
        self.skipped += 1
        if len(self.problems) < 20:
            self.problems.append(reason)


def read_corpus(path: str | Path) -> CorpusLoad:
    """Load ``path`` (JSONL file, single document file, or folder) with skip statistics.

    Raises:
        CorpusError: the path is empty or missing, has an unsupported type, or yields no
            usable document (empty file, every line bad, no supported files).
    """
    if path is None or not str(path).strip():
        raise CorpusError("no corpus path given: pass a JSONL file or a folder of documents")
    p = Path(path).expanduser()
    if not p.exists():
        raise CorpusError(
            f"corpus not found: {p} does not exist. Pass a JSONL file of "
            "{id,title,url,text,source} objects or a folder of .txt/.md/.html/.pdf files "
            "(or set RESEARCH_CORPUS)."
        )
    if p.is_dir():
        result = _read_folder(p)
        what = f"folder {p} has no readable {'/'.join(DOC_SUFFIXES)} files"
    elif p.suffix.lower() in JSONL_SUFFIXES:
        result = _read_jsonl(p)
        what = (
            f"JSONL corpus {p} has no valid lines (each line must be a JSON object with "
            "non-empty 'id' and 'text')"
        )
    elif p.suffix.lower() in DOC_SUFFIXES:
        result = CorpusLoad([])
        doc = _read_file(p, p.parent, result)
        result.documents = [doc] if doc else []
        what = f"document {p} has no readable text"
    else:
        raise CorpusError(
            f"unsupported corpus file {p.name}: use a .jsonl file or a folder of documents "
            f"({', '.join(DOC_SUFFIXES)})"
        )
    if not result.documents:
        detail = (
            f" ({result.skipped} skipped; first: {result.problems[0]})" if result.problems else ""
        )
        raise CorpusError(what + detail)
    if result.skipped:
        log.warning(
            "corpus %s: skipped %d bad entries (first: %s)", p, result.skipped, result.problems[0]
        )
    return result


def load_corpus(path: str | Path) -> list[Document]:
    """The documents of ``path`` (see ``read_corpus``; skipped entries are logged).

    Raises:
        CorpusError: as ``read_corpus``.
    """
    return read_corpus(path).documents


# ---------------------------------------------------------------- JSONL
def _clean(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return value.strip() if isinstance(value, str) else ""


def _read_jsonl(path: Path) -> CorpusLoad:
    out = CorpusLoad([])
    seen: set[str] = set()
    try:
        handle = path.open(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise CorpusError(f"cannot read corpus {path}: {exc}") from exc
    with handle:
        for lineno, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                out._skip(f"line {lineno}: invalid JSON ({exc.msg})")
                continue
            if not isinstance(obj, dict):
                out._skip(f"line {lineno}: not a JSON object")
                continue
            doc_id, text = _clean(obj.get("id")), _clean(obj.get("text"))
            if not doc_id or not text:
                out._skip(f"line {lineno}: missing 'id' or 'text'")
                continue
            if doc_id in seen:
                out._skip(f"line {lineno}: repeated id {doc_id!r}")
                continue
            seen.add(doc_id)
            title = _clean(obj.get("title")) or _first_line(text) or doc_id
            out.documents.append(
                Document(
                    id=doc_id,
                    title=title,
                    url=_clean(obj.get("url")),
                    text=text,
                    source=_clean(obj.get("source")) or "local",
                    published=doc_date(obj),
                )
            )
    return out


def doc_date(obj: dict) -> str | None:
    """A JSONL document's date as ``YYYY[-MM[-DD]]``: its ``published``, ``date`` or ``year``
    field (first that starts with a 4-digit year); None when it has none."""
    for key in ("published", "date", "year"):
        m = re.match(r"^(\d{4})(-\d{2})?(-\d{2})?", str(obj.get(key) or "").strip())
        if m:
            return "".join(g for g in m.groups() if g)
    return None


# ---------------------------------------------------------------- folders
def _read_folder(root: Path) -> CorpusLoad:
    out = CorpusLoad([])
    files = sorted(
        f
        for f in root.rglob("*")
        if f.is_file()
        and f.suffix.lower() in DOC_SUFFIXES
        and not any(part.startswith(".") for part in f.relative_to(root).parts)
    )
    for f in files:
        doc = _read_file(f, root, out)
        if doc:
            out.documents.append(doc)
    return out


def _read_file(f: Path, root: Path, out: CorpusLoad) -> Document | None:
    rel = f.relative_to(root).as_posix()
    suffix = f.suffix.lower()
    try:
        if suffix == ".pdf":
            title, text = _pdf(f)
        elif suffix in (".html", ".htm"):
            title, text = _html(f.read_text(encoding="utf-8", errors="replace"))
        else:
            text = f.read_text(encoding="utf-8", errors="replace").strip()
            title = _md_title(text) if suffix in (".md", ".markdown") else ""
            title = title or _first_line(text)
    except Exception as exc:
        out._skip(f"{rel}: unreadable ({type(exc).__name__}: {exc})")
        return None
    if not text.strip():
        out._skip(f"{rel}: no text")
        return None
    return Document(
        id=rel,
        title=(title or f.stem)[:_TITLE_MAX],
        url=f.resolve().as_uri(),
        text=text.strip(),
        source="local",
    )


def _first_line(text: str) -> str:
    for line in text.splitlines():
        line = line.strip().lstrip("#").strip()
        if line:
            return line[:_TITLE_MAX]
    return ""


def _md_title(text: str) -> str:
    for line in text.splitlines():
        m = _MD_HEADING.match(line)
        if m:
            return m.group(1)[:_TITLE_MAX]
    return ""


def _html(html: str) -> tuple[str, str]:
    import trafilatura  # noqa: PLC0415 - only for HTML files; a loaded index needs no reader

    text = (
        trafilatura.extract(html, include_comments=False, include_tables=True, favor_recall=True)
        or ""
    )
    meta = trafilatura.extract_metadata(html)
    title = (meta.title if meta and meta.title else "") or _first_line(text)
    return title, text


def _pdf(path: Path) -> tuple[str, str]:
    from pypdf import PdfReader  # noqa: PLC0415 - only for PDF files; a loaded index needs no reader

    reader = PdfReader(str(path))
    text = "\n".join((page.extract_text() or "").strip() for page in reader.pages).strip()
    meta_title = ""
    try:
        meta_title = (reader.metadata.title or "") if reader.metadata else ""
    except Exception:
        meta_title = ""
    return (meta_title.strip() or _first_line(text)), text
