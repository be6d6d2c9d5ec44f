"""``/corpora``: the named corpora registered on the server, and uploads into them.

Runs started over the API search only corpora registered on the server
(``research.jobs.corpus_access``): the named corpora under ``{data_dir}/corpora`` (the Corpora
page, ``research ingest``) and folders under ``RESEARCH_CORPUS_ROOTS``. New documents reach the
server through ``PUT /corpora/{name}/documents/{filename}`` (an ``admin`` token): the body is the
file's bytes; it is saved in the corpus's ``files/`` folder and the corpus is re-indexed as the
Corpora page's upload does (``research.ingest.ingest``), before the answer.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import anyio
from fastapi import APIRouter, Request, Response
from fastapi import Path as PathParam

from research.api.auth import ApiError, needs
from research.api.schemas import error_responses
from research.config import load_settings
from research.errors import CorpusError
from research.ingest import ingest, list_corpora, validate_corpus_name
from research.ingest.extract import SUFFIXES

router = APIRouter(tags=["corpora"])
MAX_UPLOAD_BYTES = 50_000_000
_SUFFIX_RE = "|".join(s.lstrip(".") for s in SUFFIXES)
FILENAME_PATTERN = rf"^[A-Za-z0-9][A-Za-z0-9._ -]{{0,120}}\.({_SUFFIX_RE})$"
NAME_PATTERN = r"^[a-z0-9][a-z0-9_-]{0,63}$"

CorpusName = Annotated[
    str, PathParam(description="the corpus name (1–64 of a-z 0-9 _ -)", pattern=NAME_PATTERN)
]
FileName = Annotated[
    str,
    PathParam(
        description=f"the document's file name, ending in one of {', '.join(SUFFIXES)}",
        pattern=FILENAME_PATTERN,
    ),
]


@router.get(
    "/corpora",
    summary="The named corpora registered on the server",
    dependencies=[needs("read", "listing corpora")],
    responses=error_responses(401, 403, 429, 503),
)
def corpora() -> list[dict[str, Any]]:
    """Every named corpus, as the Corpora page lists them: ``[{name, files, chunks, updated
    (Unix s), errors: {file: message}}]``. Search one in a run with ``"corpora": [name]``."""
    return [
        {k: c[k] for k in ("name", "files", "chunks", "updated", "errors")}
        for c in list_corpora(load_settings())
    ]


def _safe_name(filename: str) -> str:
    """``filename`` when it is a plain file name with a supported suffix (no folder part).

    Raises:
        ApiError: 422 (code ``invalid_input``) otherwise.
    """
    name = filename.strip()
    if (
        not name
        or Path(name).name != name
        or name.startswith(".")
        or Path(name).suffix.lower() not in SUFFIXES
    ):
        raise ApiError(
            422,
            f"'{filename[:80]}' is not a document file name: use a plain name (no folders) "
            f"ending in one of {', '.join(SUFFIXES)}.",
            "invalid_input",
        )
    return name


@router.put(
    "/corpora/{name}/documents/{filename}",
    summary="Upload a document into a named corpus (admin)",
    dependencies=[needs("admin", "uploading into a corpus")],
    status_code=201,
    responses={
        200: {"description": "the file replaced one of the same name"},
        201: {"description": "a new file was added"},
        **error_responses(401, 403, 422, 429, 503),
    },
    openapi_extra={
        "requestBody": {
            "required": True,
            "description": "the file's bytes (at most 50 MB)",
            "content": {
                "application/octet-stream": {"schema": {"type": "string", "format": "binary"}}
            },
        }
    },
)
async def upload(
    name: CorpusName, filename: FileName, request: Request, response: Response
) -> dict[str, Any]:
    """Save the body as ``filename`` in corpus ``name`` (created when new; a file of that name
    is replaced) and index it before answering: ``{corpus, file, added, updated, unchanged,
    errors, files, chunks, seconds}``. A file that cannot be read (e.g. a damaged PDF) is listed
    in ``errors``; a corpus left without any readable document is a 422."""
    corpus = validate_corpus_name(name)
    safe = _safe_name(filename)
    body = await request.body()
    if not body:
        raise ApiError(422, "The request body is empty: send the file's bytes.", "invalid_input")
    if len(body) > MAX_UPLOAD_BYTES:
        raise ApiError(
            422,
            f"The file is {len(body):,} bytes; the limit is {MAX_UPLOAD_BYTES:,}.",
            "invalid_input",
        )
    settings = load_settings()
    folder = settings.data_dir / "corpora" / corpus / "files"
    target = folder / safe

    def save_and_ingest() -> dict[str, Any]:
        folder.mkdir(parents=True, exist_ok=True)
        existed = target.is_file()
        target.write_bytes(body)
        try:
            report = ingest(corpus, [target], settings)
        except CorpusError:
            if not existed:
                target.unlink(missing_ok=True)  # a file that added nothing is not kept
            raise
        response.status_code = 200 if existed else 201
        return {
            "corpus": report.corpus,
            "file": safe,
            "added": len(report.added),
            "updated": len(report.updated),
            "unchanged": len(report.unchanged),
            "errors": list(report.errors.values()),
            "files": report.files,
            "chunks": report.chunks,
            "seconds": report.seconds,
        }

    return await anyio.to_thread.run_sync(save_and_ingest)
