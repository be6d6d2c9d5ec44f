"""Plan review: read, edit, approve or cancel a run in ``awaiting_review``.

A run launched with ``review=True`` stops after planning (``research.pipeline.runner``). The
analyst reads ``plan_bundle`` (``{plan, syllabus, perspectives}``, the shape of
``research plan RUN_ID --json``), edits any part (validated by ``research.planning.edit``) and calls
``approve``: the edited documents are stored, the source collector is re-initialised with the
edited syllabus (no source exists yet, so its question set simply follows the edit), the event
``plan.edited`` records the diff, and the run executes again — in this thread (CLI), on a
background thread (dashboard) or on the RQ queue (``RESEARCH_JOB_BACKEND=rq``). ``cancel`` ends
it as ``cancelled``. Bad input (unknown run, a run not awaiting review, an invalid edit) raises
before anything is written.
"""

from __future__ import annotations

from research.config import job_backend
from research.errors import InputError
from research.jobs.launch import submit
from research.models import REVIEW_STATUS, Perspective, Plan, RunState, Syllabus
from research.pipeline import runner
from research.planning.edit import PlanBundle, apply_edit, diff
from research.store import keys, open_store
from research.store.runs import RunStore


def _store(store: RunStore | None) -> RunStore:
    return store or open_store()


def awaiting(run_id: str, store: RunStore | None = None) -> RunState:
    """The run's state when it is awaiting review.

    Raises:
        InputError (code ``not_awaiting_review``): the run is in any other status.
        RunNotFoundError: no such run (after ``keys.check_run_id``: InputError for a malformed id).
    """
    store = _store(store)
    state = store.get_run(keys.check_run_id(run_id.strip() if isinstance(run_id, str) else run_id))
    if state.status != REVIEW_STATUS:
        raise InputError(
            f"Run {state.run_id} is {state.status}, not awaiting review: only a run started with "
            "plan review (--review) can be approved or edited, once its plan is ready.",
            code="not_awaiting_review",
        )
    return state


def plan_bundle(run_id: str, store: RunStore | None = None) -> PlanBundle:
    """``{plan, syllabus, perspectives}`` as stored for the run (any status once planned).

    Raises:
        InputError (code ``plan_not_ready``): the run has no plan or syllabus yet.
    """
    store = _store(store)
    plan = store.get_doc(run_id, "plan", Plan)
    syllabus = store.get_doc(run_id, "syllabus", Syllabus)
    if plan is None or syllabus is None:
        raise InputError(
            f"Run {run_id} has no plan yet; wait until planning is done.", code="plan_not_ready"
        )
    return PlanBundle(
        plan=plan,
        syllabus=syllabus,
        perspectives=store.get_doc_list(run_id, "perspectives", Perspective),
    )


def validate(
    run_id: str, edit: dict | None, store: RunStore | None = None
) -> tuple[PlanBundle, dict]:
    """``(edited bundle, diff)`` for ``edit`` applied to the run's stored plan; writes nothing.

    Raises:
        InputError: the run is not awaiting review, or the edit is invalid (code ``invalid_plan``,
            one line per problem).
    """
    store = _store(store)
    state = awaiting(run_id, store)
    current = plan_bundle(state.run_id, store)
    new = apply_edit(current, edit or {})
    return new, diff(current, new)


def approve(
    run_id: str,
    edit: dict | None = None,
    *,
    by: str = "cli",
    run: str = "background",
    store: RunStore | None = None,
) -> str:
    """Store the (edited) plan and continue the run.

    Args:
        edit: any subset of ``{plan, syllabus, perspectives}`` (``research.planning.edit``); None
            approves the plan as it is.
        by: who approved (``cli`` / ``dashboard``), recorded in the events.
        run: ``"foreground"`` executes in this thread and returns the final status;
            ``"background"`` submits it (thread or RQ per ``RESEARCH_JOB_BACKEND``) and returns
            ``"pending"``.

    Raises:
        InputError: see ``validate``; nothing is written then.
    """

    store = _store(store)
    backend = (
        job_backend() if run != "foreground" else "thread"
    )  # a bad backend fails before writing
    new, changes = validate(run_id, edit, store)
    run_id = keys.check_run_id(run_id.strip())
    store.collector(run_id).init(new.syllabus)  # no sources yet: the question set follows the edit
    store.put_doc(run_id, "plan", new.plan)
    store.put_doc(run_id, "syllabus", new.syllabus)
    store.put_doc(run_id, "perspectives", new.perspectives)
    if changes["changed"]:
        store.emit(run_id, "plan.edited", {**changes, "by": by})
    store.set_fields(run_id, review_state="approved")
    store.emit(
        run_id,
        "plan.approved",
        {
            "by": by,
            "questions": new.syllabus.keys(),
            "perspectives": [p.name for p in new.perspectives],
        },
    )
    store.set_status(run_id, "pending")
    if run == "foreground":
        return runner.execute(run_id)
    submit(run_id, backend)
    return "pending"


def cancel(run_id: str, *, by: str = "cli", store: RunStore | None = None) -> None:
    """Cancel a run that awaits review (no job runs it, so it is ended here).

    Raises:
        InputError (code ``not_awaiting_review``): the run is in any other status.
    """
    store = _store(store)
    state = awaiting(run_id, store)
    store.emit(state.run_id, "cancel.requested", {"by": by, "during": REVIEW_STATUS})
    store.set_status(
        state.run_id,
        "cancelled",
        error="The analyst cancelled the run at plan review.",
        error_code="cancelled",
    )
