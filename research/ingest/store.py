"""Named corpora of the analyst's documents under ``{data_dir}/corpora/<name>/``.

Layout::

    manifest.json   {"files": {abs path: {name, sha1, size, chunks, pages, error}}, "updated": s}
    chunks.jsonl    one chunk per line: {id, title, url, text, source: "local", file, page}
    embcache.npz    {keys: sha1 of embedded text, vecs: float32 (n, 384)} — embedding cache
    index/          the LocalSearch index (BM25 + embeddings) of chunks.jsonl
    files/          uploaded files (the Corpora page writes uploads here)

Chunks: each page's text split on paragraph, then sentence boundaries into pieces of at most
``CHUNK_CHARS`` (1,200) characters. A chunk of page 3 of ``report.pdf`` has id
``report.pdf#p3`` (``#p3.c2`` for a page's second chunk), title ``report.pdf p. 3`` and url
``file:///…/report.pdf#page=3``, so its citation names the file and page.

Incremental: a file whose sha1 is unchanged keeps its chunks; only new/changed files are
extracted, and only texts missing from ``embcache.npz`` are embedded (one batch). BM25 is
rebuilt over all chunks (milliseconds for thousands). Search is ``LocalSearch`` (hybrid
BM25 + MiniLM, ``research.search.local``).
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

import numpy as np

from research.config import Settings, load_settings
from research.errors import CorpusError, InputError
from research.ingest.extract import SUFFIXES, ExtractError, Page, extract
from research.search.embeddings import Embedder, get_embedder
from research.search.index_progress import corpus_fingerprint

CHUNK_CHARS = 1200
NAME_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
_SENT = re.compile(r"(?<=[.!?])\s+")
_LOCK = threading.Lock()


def validate_corpus_name(name: str) -> str:
    """Lowercased ``name`` if it is 1–64 of ``a-z 0-9 _ -`` (starting alphanumeric).

    Raises:
        InputError: otherwise (the message shows the rule).
    """
    value = (name or "").strip().lower()
    if not NAME_RE.fullmatch(value):
        raise InputError(
            f"corpus name {name!r:.70} is not valid: use 1-64 letters, digits, '-' or '_' "
            "(e.g. 'trial-reports')",
            code="bad_corpus_name",
        )
    return value


def corpus_dir(name: str, settings: Settings | None = None) -> Path:
    """``{data_dir}/corpora/<name>`` (not created)."""
    settings = settings or load_settings()
    return settings.data_dir / "corpora" / validate_corpus_name(name)


@dataclass
class IngestReport:
    """What ``ingest`` did: file paths ``added`` / ``updated`` / ``unchanged``, ``errors``
    (path → message), totals ``files`` and ``chunks`` in the corpus, ``seconds`` taken (s)."""

    corpus: str
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    errors: dict[str, str] = field(default_factory=dict)
    files: int = 0
    chunks: int = 0
    seconds: float = 0.0


def chunk_pages(pages: list[Page], limit: int = CHUNK_CHARS) -> list[tuple[int | None, str]]:
    """``[(page number, chunk text)]``: each page split at paragraphs, long paragraphs at
    sentences, pieces packed up to ``limit`` characters (a single longer sentence is cut)."""
    out: list[tuple[int | None, str]] = []
    for page in pages:
        pieces: list[str] = []
        for para in re.split(r"\n\s*\n", page.text):
            para = " ".join(para.split())
            if not para:
                continue
            if len(para) <= limit:
                pieces.append(para)
            else:
                for sent in _SENT.split(para):
                    pieces += [sent[i : i + limit] for i in range(0, len(sent), limit)]
        buf = ""
        for piece in pieces:
            if buf and len(buf) + 1 + len(piece) > limit:
                out.append((page.number, buf))
                buf = piece
            else:
                buf = f"{buf}\n{piece}" if buf else piece
        if buf:
            out.append((page.number, buf))
    return out


def _chunk_docs(path: Path, label: str, title: str, pages: list[Page]) -> list[dict]:
    docs: list = []
    per_page: dict = {}
    for number, text in chunk_pages(pages):
        per_page[number] = per_page.get(number, 0) + 1
        n = per_page[number]
        base = f"{label}#p{number}" if number else f"{label}#c{n}"
        doc_id = f"{base}.c{n}" if number and n > 1 else base
        shown = f"{label} p. {number}" if number else label
        if title and title.lower() != label.lower():
            shown = f"{shown} — {title[:120]}"
        url = path.resolve().as_uri() + (f"#page={number}" if number else "")
        docs.append(
            {
                "id": doc_id,
                "title": shown,
                "url": url,
                "text": text,
                "source": "local",
                "file": str(path.resolve()),
                "page": number,
            }
        )
    return docs


def _files(paths: list[str | Path]) -> list[Path]:
    out: list[Path] = []
    for raw in paths:
        p = Path(raw).expanduser()
        if not p.exists():
            raise CorpusError(
                f"{p} does not exist: pass files or folders of {', '.join(SUFFIXES)} documents"
            )
        if p.is_dir():
            out += sorted(
                f
                for f in p.rglob("*")
                if f.is_file()
                and f.suffix.lower() in SUFFIXES
                and not any(part.startswith(".") for part in f.relative_to(p).parts)
            )
        else:
            out.append(p)
    return list(dict.fromkeys(f.resolve() for f in out))


class CachingEmbedder:
    """Wraps an ``Embedder``: ``encode`` looks each text up by sha1 in ``embcache.npz`` and
    embeds only the misses (one batch), then saves the cache. ``dim``/``encode_one`` delegate."""

    def __init__(self, inner, cache_file: Path) -> None:
        self.inner, self.cache_file, self.dim = inner, cache_file, inner.dim
        self.cache: dict[str, np.ndarray] = {}
        if cache_file.is_file():
            try:
                with np.load(cache_file) as data:
                    self.cache = dict(zip(data["keys"].tolist(), data["vecs"], strict=True))
            except (OSError, ValueError, KeyError):
                self.cache = {}
        self.embedded = 0

    def encode(
        self, texts: list[str], batch_size: int = 64, max_tokens: int | None = None
    ) -> np.ndarray:
        """``inner.encode`` with a persistent cache keyed by sha1 of the text (and of the
        ``max_tokens`` cut, which changes the vector; the index embeds documents' first
        ``search.local.DOC_TOKENS`` word pieces). Returns float32 ``(len(texts), dim)``."""
        prefix = "" if max_tokens is None else f"{int(max_tokens)}:"
        keys = [hashlib.sha1((prefix + t).encode("utf-8", "replace")).hexdigest() for t in texts]
        missing = list(dict.fromkeys(k for k in keys if k not in self.cache))
        if missing:
            by_key = dict(zip(keys, texts, strict=True))
            vecs = self.inner.encode(
                [by_key[k] for k in missing], batch_size=batch_size, max_tokens=max_tokens
            )
            self.cache.update(zip(missing, vecs, strict=True))
            self.embedded += len(missing)
            tmp = self.cache_file.with_suffix(".tmp.npz")
            np.savez(tmp, keys=np.array(list(self.cache)), vecs=np.stack(list(self.cache.values())))
            tmp.replace(self.cache_file)
        if not keys:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self.cache[k] for k in keys]).astype(np.float32)

    def encode_one(self, text: str) -> np.ndarray:
        return self.inner.encode_one(text)


def ingest(name: str, paths: list[str | Path], settings: Settings | None = None) -> IngestReport:
    """Add files/folders to corpus ``name`` (created when new) and rebuild its index (skipped,
    without loading the embedding model, when no file is new or changed and the index is current).

    Unchanged files (same sha1) are skipped; a file that fails to extract is reported in
    ``errors`` and the others are still ingested (a changed file that now fails keeps its old
    chunks out of the corpus).

    Raises:
        InputError: bad corpus name. CorpusError: a path does not exist, or the corpus would
            have no readable document at all.
    """

    t0 = time.monotonic()
    settings = settings or load_settings()
    root = corpus_dir(name, settings)
    report = IngestReport(corpus=root.name)
    files = _files(paths)
    with _LOCK:
        root.mkdir(parents=True, exist_ok=True)
        manifest_path, chunks_path = root / "manifest.json", root / "chunks.jsonl"
        manifest = (
            json.loads(manifest_path.read_text()) if manifest_path.is_file() else {"files": {}}
        )
        old: dict[str, list[dict]] = {}
        if chunks_path.is_file():
            for line in chunks_path.read_text(encoding="utf-8").splitlines():
                doc = json.loads(line)
                old.setdefault(doc["file"], []).append(doc)
        labels = {v.get("name"): k for k, v in manifest["files"].items()}
        for f in files:
            key = str(f)
            digest = hashlib.sha1(f.read_bytes()).hexdigest()
            entry = manifest["files"].get(key)
            if entry and entry.get("sha1") == digest and not entry.get("error"):
                report.unchanged.append(key)
                continue
            label = f.name if labels.get(f.name, key) == key else f"{f.parent.name}/{f.name}"
            labels[label] = key
            try:
                title, pages = extract(f)
            except ExtractError as exc:
                report.errors[key] = exc.message
                manifest["files"][key] = {
                    "name": label,
                    "sha1": digest,
                    "size": f.stat().st_size,
                    "chunks": 0,
                    "pages": 0,
                    "error": exc.message,
                }
                old.pop(key, None)
                continue
            (report.updated if entry else report.added).append(key)
            old[key] = _chunk_docs(f, label, title, pages)
            manifest["files"][key] = {
                "name": label,
                "sha1": digest,
                "size": f.stat().st_size,
                "chunks": len(old[key]),
                "pages": len(pages),
                "error": "",
            }
        docs = [d for key in manifest["files"] for d in old.get(key, [])]
        report.files = sum(1 for v in manifest["files"].values() if not v.get("error"))
        report.chunks = len(docs)
        manifest["updated"] = time.time()
        if not docs:
            manifest_path.write_text(json.dumps(manifest, indent=1))
            first = next(iter(report.errors.values()), "no supported files")
            raise CorpusError(f"corpus {root.name} has no readable document ({first})")
        if report.added or report.updated or not chunks_path.is_file() or report.errors:
            tmp = chunks_path.with_suffix(".tmp")
            tmp.write_text(
                "".join(json.dumps(d, ensure_ascii=False) + "\n" for d in docs), encoding="utf-8"
            )
            tmp.replace(chunks_path)
        manifest_path.write_text(json.dumps(manifest, indent=1))

        if (
            not (report.added or report.updated)
            and (root / "index" / corpus_fingerprint(chunks_path) / "meta.json").is_file()
        ):
            report.seconds = round(time.monotonic() - t0, 3)  # nothing new: skip loading the model
            return report
        from research.search.local import LocalSearch  # noqa: PLC0415 - bm25s and scipy load when a corpus is indexed

        index = LocalSearch(
            chunks_path,
            root / "index",
            embedder=cast(Embedder, CachingEmbedder(get_embedder(), root / "embcache.npz")),
        )
        for stale in (root / "index").iterdir():  # indexes of earlier versions of chunks.jsonl
            if (
                stale.is_dir()
                and stale.name != index.index_path.name
                and not stale.name.startswith(".")
            ):
                shutil.rmtree(stale, ignore_errors=True)
    report.seconds = round(time.monotonic() - t0, 3)
    return report


def list_corpora(settings: Settings | None = None) -> list[dict]:
    """Every named corpus: ``[{"name", "files", "chunks", "errors", "updated" (Unix s),
    "file_list": [{"name", "size" (bytes), "pages", "chunks", "error"}]}]``, sorted by name."""
    settings = settings or load_settings()
    base = settings.data_dir / "corpora"
    out = []
    for d in sorted(base.iterdir()) if base.is_dir() else []:
        mf = d / "manifest.json"
        if not mf.is_file():
            continue
        try:
            manifest = json.loads(mf.read_text())
        except (OSError, ValueError):
            continue
        files = manifest.get("files", {}).values()
        out.append(
            {
                "name": d.name,
                "files": sum(1 for f in files if not f.get("error")),
                "chunks": sum(int(f.get("chunks", 0)) for f in files),
                "errors": {f.get("name", ""): f["error"] for f in files if f.get("error")},
                "updated": manifest.get("updated"),
                "file_list": [
                    {k: f.get(k) for k in ("name", "size", "pages", "chunks", "error")}
                    for f in files
                ],
            }
        )
    return out


class NamedCorpusSearch:
    """A named corpus as a ``Retriever`` (``name`` = ``corpus:<name>``; results carry that
    ``backend``). Wraps the corpus' ``LocalSearch``."""

    def __init__(self, name: str, local) -> None:
        self.name, self.local = f"corpus:{name}", local

    def search(self, query: str, k: int = 5):
        """Up to ``k`` chunks, best first (see ``LocalSearch.search``)."""
        results = self.local.search(query, k)
        for r in results:
            r.backend = self.name
        return results


def corpus_retriever(name: str, settings: Settings | None = None) -> NamedCorpusSearch:
    """The retriever of ingested corpus ``name``.

    Raises:
        InputError: bad name. CorpusError: no such corpus (the message lists existing ones).
    """

    settings = settings or load_settings()
    root = corpus_dir(name, settings)
    chunks = root / "chunks.jsonl"
    if not chunks.is_file():
        have = ", ".join(c["name"] for c in list_corpora(settings)) or "none yet"
        raise CorpusError(
            f"no ingested corpus named {root.name!r} (existing: {have}); "
            f"create it with `research ingest {root.name} PATH...` or on the Corpora page"
        )
    from research.search.local import get_local_search  # noqa: PLC0415 - bm25s and scipy load when a corpus is searched

    return NamedCorpusSearch(root.name, get_local_search(chunks, root / "index"))
