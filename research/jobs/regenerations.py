"""Regenerating a report section for the dashboard: the candidate text is computed in a worker
thread of this process (``research.desk.regenerate.propose``: a litellm run calls a model, and
pages never call an engine), the page polls for it, shows the diff, and stores it only when the
analyst accepts (``research.desk.regenerate.accept``).

Nothing of the report is stored before Accept, so a candidate lost with its process (or a
discarded one) costs nothing but its LLM call, which the run's accounting has counted. The
research-more turn of "research more first" is a follow-up (``research ask --research``), stored
and resumed by the follow-up machinery whatever happens to the candidate.
"""

from __future__ import annotations

import secrets
from concurrent.futures import Future, ThreadPoolExecutor

from research.desk.regenerate import Candidate, check, propose
from research.errors import InputError
from research.store.runs import RunStore

_POOL = ThreadPoolExecutor(max_workers=1, thread_name_prefix="regenerate")
JOBS: dict[str, Future] = {}
MAX_JOBS = 64  # finished candidates kept for pages to collect (oldest dropped first)


def submit_regenerate(
    store: RunStore, run_id: str, heading: str, instruction: str, *, research: bool = False
) -> str:
    """Check the input now (bad input raises, nothing starts), then compute the candidate in
    a worker thread. Returns the job id to ``poll`` with.

    Raises:
        InputError / RunNotFoundError: as ``research.desk.regenerate.check``.
    """
    check(store, run_id, heading, instruction)
    job = secrets.token_hex(6)
    while len(JOBS) >= MAX_JOBS:
        JOBS.pop(next(iter(JOBS)))
    JOBS[job] = _POOL.submit(propose, store, run_id, heading, instruction, research=research)
    return job


def poll(job: str) -> Candidate | None:
    """The candidate once computed, None while it is being computed.

    Raises:
        InputError (code ``regenerate_lost``): no such job in this process (the dashboard
            restarted): regenerate again. Any error of ``propose`` (e.g. ``nothing_to_cite``).
    """
    future = JOBS.get(job)
    if future is None:
        raise InputError(
            "This regeneration is no longer known (the dashboard restarted); regenerate again.",
            code="regenerate_lost",
        )
    if not future.done():
        return None
    return future.result()


def forget(job: str) -> None:
    """Drop a job (its candidate was accepted or discarded)."""
    JOBS.pop(job, None)
