"""Acting on a run: follow-up questions and plan approval.

``POST /runs/{id}/ask`` submits a follow-up as the Report page does
(``research.jobs.followups.submit_ask``: stored pending, answered by a job on the configured
backend) and ``GET /runs/{id}/followups/{fid}`` reads its outcome from the store.
``POST /runs/{id}/approve`` is the Plan page's Approve (``research.jobs.review.approve``: the
edited plan is validated and stored, the run continues in the background).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Path, Request, Response

from research.api.auth import ApiError, check_own, needs
from research.api.runs import READ, RunId, checked_run_id, links
from research.api.schemas import ApproveRequest, AskRequest, error_responses
from research.jobs import review
from research.jobs.followups import failures, pending, submit_ask
from research.store import keys, open_store
from research.store.followups import FollowupStore

router = APIRouter(tags=["follow-ups and plan review"])
_ALL_FAILURES = 10_000  # every followup.failed event of a run, when looking one up by id


@router.post(
    "/runs/{run_id}/ask",
    status_code=202,
    summary="Ask a follow-up question",
    dependencies=[needs("run", "asking a follow-up question")],
    responses={
        202: {
            "description": "the question was stored; its job answers it",
            "headers": {
                "Location": {"description": "the follow-up's URL", "schema": {"type": "string"}}
            },
        },
        **error_responses(401, 403, 404, 409, 422, 429, 503),
    },
)
def ask(run_id: RunId, body: AskRequest, request: Request, response: Response) -> dict[str, Any]:
    """Store the question and start its job (research more first when ``research``); returns at
    once with the follow-up's id. Read the answer at ``/runs/{id}/followups/{followup_id}``; the
    run's events also say ``followup.answered`` or ``followup.failed``. A run without a report
    yet is a 409; a bad question a 422."""
    run_id = checked_run_id(run_id)
    store = open_store()
    store.get_run(run_id)  # 404 before the ownership check
    check_own(request, run_id, "asking")
    fid = submit_ask(store, run_id, body.question, research=body.research)
    where = f"/runs/{run_id}/followups/{fid}"
    response.headers["Location"] = where
    return {"run_id": run_id, "followup_id": fid, "status": "pending", "links": {"self": where}}


@router.get(
    "/runs/{run_id}/followups/{followup_id}",
    summary="A follow-up's answer or state",
    dependencies=[READ],
    responses=error_responses(401, 403, 404, 422, 429, 503),
)
def followup(
    run_id: RunId,
    followup_id: Annotated[str, Path(description="the id POST /runs/{id}/ask returned")],
) -> dict[str, Any]:
    """``{"status": "answered", "answer", "citations", "new_references", "audit", …}`` (as
    ``research ask --json``), ``{"status": "pending", "stage", "alive"}`` while its job works
    (``alive`` false: the job died; it resumes when a worker, the dashboard or the API starts),
    or ``{"status": "failed", "code", "message"}``."""
    run_id = checked_run_id(run_id)
    store = open_store()
    store.get_run(run_id)
    fid = followup_id.strip()
    if not keys.FOLLOWUP_ID_RE.fullmatch(fid):
        raise ApiError(404, f"'{fid[:40]}' is not a follow-up id (12 hex characters).", "not_found")
    answered = FollowupStore(store).answered(run_id, fid)
    if answered is not None:
        return {"status": "answered", **answered.cli_dict()}
    for p in pending(store, run_id):
        if p["id"] == fid:
            return {"status": "pending", "id": fid, "stage": p["stage"], "alive": p["alive"]}
    for f in failures(store, run_id, limit=_ALL_FAILURES):
        if f.get("id") == fid:
            return {"status": "failed", "id": fid, "code": f["code"], "message": f["message"]}
    raise ApiError(404, f"Run {run_id} has no follow-up '{fid}'.", "not_found")


@router.post(
    "/runs/{run_id}/approve",
    summary="Approve (optionally edit) the plan",
    dependencies=[needs("run", "approving a plan")],
    responses=error_responses(401, 403, 404, 409, 422, 429, 503),
)
def approve(
    run_id: RunId,
    request: Request,
    body: Annotated[ApproveRequest | None, Body()] = None,
) -> dict[str, Any]:
    """For a run in ``awaiting_review`` (started with ``review: true``): store the plan with
    the edits given (any of ``plan``, ``syllabus``, ``perspectives``, as ``research plan --json``
    prints them; an empty body approves it as it is) and continue the run in the background.
    A run not awaiting review is a 409; an invalid edit a 422 listing each problem."""
    run_id = checked_run_id(run_id)
    store = open_store()
    store.get_run(run_id)  # 404 before the ownership check
    check_own(request, run_id, "approving")
    edit = body.edit() if body is not None else None
    status = review.approve(run_id, edit, by="api", run="background", store=store)
    return {"run_id": run_id, "status": status, "links": links(run_id)}
