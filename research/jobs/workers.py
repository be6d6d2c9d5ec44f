"""Scale-out on RQ: ``research worker`` processes execute queued runs.

With ``RESEARCH_JOB_BACKEND=rq`` the dashboard and the CLI enqueue runs on the RQ queue
``research`` of the shared Redis (``REDIS_URL``) instead of starting threads. Every worker shares
that Redis and one data dir (``RESEARCH_DATA_DIR`` on a shared volume: artifacts and reports are
files). A job is ``research.jobs.workers.run_job(run_id)`` = ``runner.execute`` under the run's lease,
so progress (Redis events), cancel (the Redis cancel flag) and resume work exactly as with
threads; a worker that dies leaves an ``interrupted`` run that the next worker to start resumes.

Workers are RQ ``SimpleWorker``s (no fork per job): the search index and the embedding model stay
loaded between jobs.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import redis

from research.store import open_store
from research.store.connection import make_client, redis_url

if TYPE_CHECKING:
    from rq import Queue

log = logging.getLogger(__name__)

QUEUE = "research"
QUEUED_MARKER_TTL_S = 7 * 24 * 3600  # a queued marker outlives any sane queue wait
_conns: dict[str, redis.Redis] = {}


def rq_connection() -> redis.Redis:
    """The RQ connection (``decode_responses=False``, as RQ requires) to the configured Redis,
    with the same reconnect policy as ``get_redis``; one per URL. Raises StoreError when
    unreachable."""
    url = redis_url()
    if url not in _conns:
        _conns[url] = make_client(url, decode_responses=False)
    return _conns[url]


def queue() -> Queue:
    """The ``research`` queue on the shared Redis."""
    from rq import Queue  # noqa: PLC0415 - rq only with the RQ job backend (its one lazy import)

    return Queue(QUEUE, connection=rq_connection())


def enqueue(run_id: str, *, at_front: bool = False) -> str:
    """Queue ``run_job(run_id)`` (``at_front``: ahead of every queued job); marks the run as
    queued (so a lease-less pending run is not taken for a dead one). Returns the RQ job id."""
    open_store().mark_queued(run_id, QUEUED_MARKER_TTL_S)
    job = queue().enqueue(
        "research.jobs.workers.run_job",
        run_id,
        job_timeout=-1,
        result_ttl=24 * 3600,
        failure_ttl=7 * 24 * 3600,
        description=f"research run {run_id}",
        at_front=at_front,
    )
    return job.id


def run_job(run_id: str) -> str:
    """The RQ job body: execute (or resume) the run; returns its final status."""

    from research.pipeline import runner  # noqa: PLC0415 - the pipeline (scikit-learn, torch) loads only where runs execute

    return runner.execute(run_id)


def start_worker(*, burst: bool = False, name: str | None = None) -> None:
    """Run an RQ worker on the ``research`` queue until stopped (or, with ``burst``, until the
    queue is empty). Interrupted runs are resumed by the caller first
    (``research.jobs.resume_interrupted(by="worker", backend="rq")``, done by ``research worker``)."""
    open_store().reconcile_dead_runs()  # runs of a worker that died are stored interrupted
    from rq import SimpleWorker  # noqa: PLC0415 - rq only with the RQ job backend

    worker = SimpleWorker([queue()], connection=rq_connection(), name=name)
    worker.work(burst=burst, with_scheduler=False, logging_level="WARNING")
