"""``/runs``: start, list, read, export and cancel or delete runs.

Each endpoint calls the job code the dashboard and the CLI call: ``jobs.make_config`` (the one
input gate) and ``jobs.start_run`` (a thread of this process or the RQ queue, per
``RESEARCH_JOB_BACKEND``), ``jobs.run_snapshot`` (``research show --json``),
``research.export.render_export`` (``research export``), ``RunStore.request_cancel`` (the run
page's Cancel button), ``research.jobs.review.cancel`` (the Plan page's cancel) and
``RunStore.delete_run_everywhere`` (the run history's Delete).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request, Response

from research import jobs
from research.api.auth import check_own, needs
from research.api.schemas import RunCreated, RunRequest, RunRow, error_responses
from research.config import load_settings
from research.errors import InputError, RunNotFoundError
from research.export import EXTENSIONS, FORMATS, MIME_TYPES, render_export, safe_filename
from research.jobs import review
from research.jobs.corpus_access import served_corpus
from research.models import ACTIVE_STATUSES, REVIEW_STATUS
from research.store import keys, open_store

router = APIRouter(tags=["runs"])


def checked_run_id(run_id: str) -> str:
    """``run_id`` when it is a well-formed run id; a malformed one names no run.

    Raises:
        RunNotFoundError: malformed (a 404, with the expected form in the message).
    """
    try:
        return keys.check_run_id(run_id.strip())
    except InputError as exc:
        raise RunNotFoundError(exc.message) from None


RunId = Annotated[str, Path(description="the run's id (16–32 lowercase hex)")]


def links(run_id: str) -> dict[str, str]:
    """Where to read, follow and export a run (paths relative to the API root)."""
    base = f"/runs/{run_id}"
    return {"self": base, "events": f"{base}/events", "report": f"{base}/report?format=md"}


READ = needs("read", "reading runs")


@router.post(
    "/runs",
    status_code=201,
    response_model=RunCreated,
    summary="Start a run",
    dependencies=[needs("run", "starting a run")],
    responses={
        201: {
            "description": "the run was created",
            "headers": {"Location": {"description": "/runs/{id}", "schema": {"type": "string"}}},
        },
        **error_responses(401, 403, 422, 429, 500, 503),
    },
)
def create_run(body: RunRequest, request: Request, response: Response) -> dict[str, Any]:
    """Validate the options as ``research run`` does (a 422 says what to fix; nothing is
    written then) and start the run in the background; returns at once with its id. Follow it
    at ``/runs/{id}/events``. A ``corpus`` that is not registered on the server is a 403
    (``corpus_not_registered``), refused before any file is read."""
    kwargs = body.config_kwargs()
    kwargs["corpus"] = served_corpus(body.corpus)
    config = jobs.make_config(body.topic, **kwargs)
    run_id = jobs.start_run(config)
    open_store().tokens.set_owner(run_id, request.state.token_name)
    response.headers["Location"] = f"/runs/{run_id}"
    return {"run_id": run_id, "status": "pending", "links": links(run_id)}


@router.get(
    "/runs",
    response_model=list[RunRow],
    summary="List runs, newest first",
    dependencies=[READ],
    responses=error_responses(401, 403, 422, 429, 503),
)
def list_runs(
    limit: Annotated[int, Query(ge=1, le=10_000, description="at most this many runs")] = 200,
) -> list[dict[str, Any]]:
    """Runs newest first, as ``research list --json`` (a run whose job died shows
    ``interrupted``)."""
    store = open_store()
    states = store.list_runs(limit=limit)
    counts = store.source_counts([s.run_id for s in states])
    return [
        {
            "run_id": s.run_id,
            "status": s.status,
            "topic": s.topic,
            "mode": s.mode,
            "created": datetime.fromtimestamp(s.created_at, tz=UTC).isoformat(timespec="seconds"),
            "created_at": s.created_at,
            "finished_at": s.finished_at or None,
            "sources": counts[s.run_id],
        }
        for s in states
    ]


@router.get(
    "/runs/{run_id}",
    summary="The whole stored run",
    dependencies=[READ],
    responses=error_responses(401, 403, 404, 422, 429, 503),
)
def get_run(
    run_id: RunId,
    version: Annotated[
        int | None, Query(ge=1, description="report version (default current)")
    ] = None,
) -> dict[str, Any]:
    """The document ``research show RUN --json`` prints (``research.jobs.run_snapshot``): run
    state, plan, syllabus, turns, sources, report, events, follow-ups, versions, comments."""
    run_id = checked_run_id(run_id)
    open_store().get_run(run_id)  # 404 before the snapshot reads anything else
    return jobs.run_snapshot(run_id, version=version)


@router.get(
    "/runs/{run_id}/report",
    summary="The report as a file",
    dependencies=[READ],
    responses={
        200: {
            "content": {MIME_TYPES[f]: {} for f in FORMATS},
            "headers": {
                "Content-Disposition": {"description": "attachment", "schema": {"type": "string"}}
            },
        },
        **error_responses(401, 403, 404, 409, 422, 429, 503),
    },
)
def get_report(
    run_id: RunId,
    format: Annotated[
        str,
        Query(
            description=f"the export format: {', '.join(FORMATS)}",
            json_schema_extra={"enum": list(FORMATS)},
        ),
    ] = "md",
    version: Annotated[
        int | None, Query(ge=1, description="report version (default current)")
    ] = None,
    comments: Annotated[bool, Query(description="add the comments appendix")] = False,
) -> Response:
    """The export ``research export RUN --format FORMAT`` writes (``research.export``): md,
    html, pdf, docx, the references as ris, bibtex or csljson, or zip (the whole run). A run
    without a report yet is a 409."""
    run_id = checked_run_id(run_id)
    store = open_store()
    state = store.get_run(run_id)
    # render_export checks the format as `research export` and the dashboard's downloads do
    data = render_export(store, run_id, format, version=version, comments=comments)
    name = safe_filename(state.topic, EXTENSIONS.get(format, format))
    return Response(
        content=data,
        media_type=MIME_TYPES[format],  # a known format: render_export raised otherwise
        headers={"Content-Disposition": f'attachment; filename="{name}"'},
    )


@router.post(
    "/runs/{run_id}/cancel",
    summary="Cancel a run that is active or awaiting review",
    dependencies=[needs("run", "cancelling a run")],
    responses={
        200: {"description": "a run awaiting review was cancelled"},
        202: {"description": "an active run was asked to cancel at its next step"},
        **error_responses(401, 403, 404, 409, 422, 429, 503),
    },
)
def cancel_run(run_id: RunId, request: Request, response: Response) -> dict[str, Any]:
    """An active run is asked to cancel at its next step (202, ``cancel_requested``; it keeps
    what it has), as the run page's Cancel button does. A run awaiting plan review is cancelled
    at once (200, ``cancelled``). A run that has ended is a 409 (``not_active``). Takes a
    ``run`` token that started the run, or an ``admin`` token."""
    run_id = checked_run_id(run_id)
    store = open_store()
    state = store.get_run(run_id)
    check_own(request, run_id, "cancelling")
    if state.status in ACTIVE_STATUSES:
        store.request_cancel(run_id, by="api")
        response.status_code = 202
        return {"run_id": run_id, "status": state.status, "action": "cancel_requested"}
    if state.status == REVIEW_STATUS:
        review.cancel(run_id, by="api", store=store)
        return {"run_id": run_id, "status": "cancelled", "action": "cancelled"}
    raise InputError(
        f"Run {run_id} has ended ({state.status}); there is nothing to cancel "
        "(DELETE /runs/{id} deletes it).",
        code="not_active",
    )


@router.delete(
    "/runs/{run_id}",
    summary="Delete an ended run (admin)",
    dependencies=[needs("admin", "deleting a run")],
    responses=error_responses(401, 403, 404, 409, 422, 429, 503),
)
def delete_run(run_id: RunId) -> dict[str, Any]:
    """Delete an ended run (complete, failed, cancelled, interrupted) with its Redis state,
    artifacts and report files, as the run history's Delete does; afterwards the run is a 404.
    A run that is active or awaiting review is a 409 (``run_active``): cancel it first
    (``POST /runs/{id}/cancel``)."""
    run_id = checked_run_id(run_id)
    store = open_store()
    state = store.get_run(run_id)
    if state.status in ACTIVE_STATUSES or state.status == REVIEW_STATUS:
        raise InputError(
            f"Run {run_id} is {state.status}: cancel it first (POST /runs/{run_id}/cancel), "
            "then delete it once it has stopped.",
            code="run_active",
        )
    removed = store.delete_run_everywhere(run_id, load_settings())
    store.tokens.forget_run(run_id)
    return {"run_id": run_id, "status": state.status, "action": "deleted", "removed": removed}
