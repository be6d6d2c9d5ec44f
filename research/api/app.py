"""The FastAPI application of ``research serve`` and the uvicorn server that runs it.

``create_app()`` wires the routers (``research.api.runs``, ``research.api.actions``,
``research.api.stream``, ``research.api.corpora``) behind the bearer-token dependency and its
scopes (``research.api.auth``) and maps the one exception tree (``research.errors``) to HTTP
statuses:

- 422: bad input (``InputError``, ``CorpusError``, and FastAPI's own checks of the body);
- 403: ``AccessError`` (a corpus not registered on the server) and a token's scope;
- 409: the run is not in a state for the request (``not_awaiting_review``, ``report_not_ready``…);
- 404: no such run or report version (``RunNotFoundError``, a malformed run id);
- 503: Redis unreachable (``StoreError``); 500: the server's own settings are wrong
  (``invalid_config``, ``data_dir_unwritable``) or any other ``ResearchError``.

Every error body is ``research.api.schemas.ErrorBody``: ``{"detail": "<what to fix>", "code":
"<stable code>", "errors": [...]}`` (``errors``: the field problems of a 422, else empty), and
every operation documents the statuses it answers with it. With the ``thread``
job backend this process executes the runs it starts (as the dashboard does), so at start it
resumes interrupted runs once, in the background, unless told not to.
"""

from __future__ import annotations

import logging
import signal
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import uvicorn
from fastapi import Depends, FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.utils import get_openapi
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match

from research import jobs
from research.api import actions, corpora, runs, stream
from research.api.auth import require_token
from research.config import job_backend, load_settings
from research.errors import (
    AccessError,
    CorpusError,
    InputError,
    ResearchError,
    RunNotFoundError,
    StoreError,
)
from research.store import open_store
from research.store.lease import stop_all

log = logging.getLogger(__name__)

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8600
# Input that is well formed but asks for something the run's state does not allow now.
CONFLICT_CODES = frozenset(
    {
        "not_awaiting_review",
        "plan_not_ready",
        "report_not_ready",
        "not_resumable",
        "not_askable",
        "no_evidence",
        "not_active",
        "run_active",
    }
)
NOT_FOUND_CODES = frozenset({"no_such_version"})
# The server's own configuration is wrong (RESEARCH_JOB_BACKEND, RESEARCH_DATA_DIR): not the client's.
SERVER_CODES = frozenset({"invalid_config", "data_dir_unwritable"})
DESCRIPTION = (
    "Start research runs, follow their events, fetch their reports, ask follow-up questions "
    "and approve plans. Every endpoint except `/health` needs `Authorization: Bearer <token>` "
    "(`research token create NAME`)."
)


def status_for(exc: ResearchError) -> int:
    """The HTTP status of a Research Desk error (see the module table)."""
    if isinstance(exc, RunNotFoundError) or exc.code in NOT_FOUND_CODES:
        return 404
    if isinstance(exc, AccessError):
        return 403
    if isinstance(exc, StoreError):
        return 503
    if exc.code in SERVER_CODES:
        return 500
    if isinstance(exc, (InputError, CorpusError)):
        return 409 if exc.code in CONFLICT_CODES else 422
    return 500


async def _research_error(request: Request, exc: Exception) -> JSONResponse:
    err = exc if isinstance(exc, ResearchError) else ResearchError(str(exc))
    return JSONResponse(
        {"detail": err.message, "code": err.code, "errors": []}, status_code=status_for(err)
    )


async def _validation_error(request: Request, exc: Exception) -> JSONResponse:
    """FastAPI's body/query checks as one sentence per problem: ``field: what is wrong``."""
    errors = exc.errors() if isinstance(exc, RequestValidationError) else []
    parts = []
    for e in errors:
        where = ".".join(str(p) for p in e.get("loc", ()) if p not in ("body", "query", "path"))
        got = f" (got {e['input']!r:.60})" if "input" in e and e.get("type") != "missing" else ""
        parts.append(f"{where or 'body'}: {e.get('msg', 'invalid')}{got}")
    detail = "; ".join(parts) or "The request is not valid."
    return JSONResponse(
        {"detail": detail, "code": "invalid_input", "errors": jsonable_encoder(errors)},
        status_code=422,
    )


def _allowed_methods(request: Request) -> str:
    """Every method some route serves at the request's path (the ``Allow`` of a 405): a path
    such as ``/runs`` is served by one route per method, and Starlette names only one."""
    methods: set[str] = set()
    for route in request.app.router.routes:
        match, _ = route.matches({**request.scope, "method": "GET"})
        if match != Match.NONE and getattr(route, "methods", None):
            methods |= set(route.methods)
    return ", ".join(sorted(methods - {"HEAD"}))


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    status = exc.status_code if isinstance(exc, StarletteHTTPException) else 500
    detail = exc.detail if isinstance(exc, StarletteHTTPException) else "internal error"
    headers = getattr(exc, "headers", None)
    if status == 400:  # a body that is not JSON: bad input, answered as every other (422)
        return JSONResponse(
            {
                "detail": f"The request body is not valid JSON ({detail}).",
                "code": "invalid_json",
                "errors": [],
            },
            status_code=422,
        )
    if status == 405:
        headers = {**(headers or {}), "Allow": _allowed_methods(request)}
    code = getattr(exc, "code", None) or {
        401: "unauthorized",
        404: "not_found",
        405: "method_not_allowed",
    }.get(status, "http_error")
    return JSONResponse(
        {"detail": detail, "code": code, "errors": []}, status_code=status, headers=headers
    )


def _openapi(app: FastAPI) -> dict[str, Any]:
    """FastAPI's schema, with optional query and header parameters described as the values they
    can carry: a query string or a header is text or absent, never JSON ``null``."""
    if app.openapi_schema is None:
        spec = get_openapi(
            title=app.title, version=app.version, description=app.description, routes=app.routes
        )
        for path in spec.get("paths", {}).values():
            for operation in path.values():
                for param in operation.get("parameters", []):
                    schema = param.get("schema", {})
                    options = [o for o in schema.get("anyOf", []) if o.get("type") != "null"]
                    if not param.get("required") and len(options) == 1 and "anyOf" in schema:
                        rest = {k: v for k, v in schema.items() if k != "anyOf"}
                        param["schema"] = {**options[0], **rest}
        app.openapi_schema = spec
    return app.openapi_schema


def resume_on_start() -> list[str]:
    """Resume interrupted runs once (thread backend and ``RESEARCH_AUTO_RESUME`` on: this process
    executes runs, as the dashboard does). Never raises: a failure is logged. Returns the ids."""
    try:
        open_store().reconcile_dead_runs()
        if not load_settings().auto_resume or job_backend() != "thread":
            return []
        return jobs.resume_interrupted(by="api")
    except Exception as exc:
        log.warning(
            "resume of interrupted runs at API start failed: %s: %s", type(exc).__name__, exc
        )
        return []


def create_app(*, resume: bool = False) -> FastAPI:
    """The API application. ``resume``: resume interrupted runs in a background thread when the
    server starts (``research serve`` does unless ``--no-resume``)."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if resume:
            threading.Thread(target=resume_on_start, name="api-resume", daemon=True).start()
        yield

    app = FastAPI(
        title="Research Desk API",
        version="1",
        description=DESCRIPTION,
        lifespan=lifespan,
    )
    app.add_exception_handler(ResearchError, _research_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)

    @app.get("/health", tags=["service"], summary="Liveness (no token needed)")
    def health() -> dict[str, str]:
        """``{"status": "ok"}`` while the server answers (it does not touch Redis)."""
        return {"status": "ok"}

    app.openapi = lambda: _openapi(app)  # type: ignore[method-assign]
    guarded = [Depends(require_token)]
    for router in (runs.router, stream.router, actions.router, corpora.router):
        app.include_router(router, dependencies=guarded)
    return app


def serve(host: str = DEFAULT_HOST, port: int = DEFAULT_PORT, *, resume: bool = True) -> None:
    """Run the API with uvicorn on ``host``:``port`` until interrupted (Ctrl-C / SIGTERM).

    Raises:
        SystemExit: uvicorn could not bind the address (it logs why).
    """
    # uvicorn re-raises SIGTERM once it has shut down; under the default handler the process
    # would die without its exit hooks, leaving its lease and the embedded Redis behind (as
    # `make run` stopping it beside the dashboard did): exit cleanly instead
    signal.signal(signal.SIGTERM, _exit_cleanly)
    try:
        uvicorn.run(create_app(resume=resume), host=host, port=port, log_level="info")
    finally:
        # the runs this process executes stop at their next step (left interrupted, to resume)
        # instead of keeping it, and the embedded Redis it holds, alive until they end
        stop_all()


def _exit_cleanly(signum: int, frame: object) -> None:
    raise SystemExit(0)
