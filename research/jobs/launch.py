"""Jobs: creating and launching runs, in a thread of this process or on RQ workers.

From the dashboard a run executes in a background thread of the server process — one runner per
process, writing only Redis and artifacts — so closing the tab does not stop it. The CLI runs the
same job in the foreground. A run's config comes from ``research.jobs.run_config.make_config``,
the one gate for user input.

Job backends (``RESEARCH_JOB_BACKEND``): ``thread`` (default) runs jobs in this
process; ``rq`` enqueues them on the shared Redis for ``research worker`` processes
(``research.jobs.workers``). Either way a job holds the run's lease, so an interrupted run is
detected and resumed (``research.jobs.resume``) from any process.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor

from research.config import job_backend, load_settings
from research.engines.factory import engine_label
from research.jobs import workers
from research.models import ACTIVE_STATUSES, RunConfig, RunState
from research.notify import targets as notify_targets
from research.pipeline.index_events import announce_index_build
from research.store import open_store

MAX_CONCURRENT_RUNS = 8


def is_active(status: str) -> bool:
    """True while a run is pending or in one of its working phases."""
    return status in ACTIVE_STATUSES


class _Runner:
    """The process's one runner: a small thread pool executing runs."""

    def __init__(self) -> None:
        self._pool = ThreadPoolExecutor(max_workers=MAX_CONCURRENT_RUNS, thread_name_prefix="run")
        self.futures: dict[str, Future] = {}
        self._lock = threading.Lock()

    def submit(self, run_id: str) -> None:
        with self._lock:
            self.futures[run_id] = self._pool.submit(execute, run_id)

    def running(self, run_id: str) -> bool:
        """True while a thread of this process is executing (or about to execute) the run."""
        with self._lock:
            future = self.futures.get(run_id)
        return future is not None and not future.done()


_runner: _Runner | None = None
_runner_lock = threading.Lock()


def _get_runner() -> _Runner:
    global _runner
    with _runner_lock:
        if _runner is None:
            _runner = _Runner()
        return _runner


def execute(run_id: str) -> str:
    """Execute (or resume) the run in this thread, whatever the job backend; returns its final
    status (``research.pipeline.runner.execute``, which never raises for a run that fails).

    The pipeline is imported on first use: it pulls scikit-learn and the engines (~1.5 s),
    which creating a run or reading one never needs."""

    from research.pipeline import runner  # noqa: PLC0415 - the pipeline (scikit-learn, torch) loads when a run executes

    return runner.execute(run_id)


def create_run(config: RunConfig) -> str:
    """Store a new ``pending`` run for ``config`` (nothing executes it yet); returns its id.
    Notification targets attached by ``make_config`` are stored encrypted beside it
    (``research.notify.targets.keep``). When the run will wait for its local corpus index to
    be built, the run's event stream says so at once (``index.progress``, ``loading_model``),
    before the pipeline is even imported."""
    store = open_store()
    settings = load_settings()
    sealed = notify_targets.sealed(config, settings)  # a bad key fails before the run exists
    label = engine_label(config)
    run_id = store.create_run(config, engine_label=label).run_id
    notify_targets.keep(store, run_id, sealed)
    announce_index_build(store, run_id, config, settings.index_dir)
    return run_id


def submit(run_id: str, backend: str | None = None, *, at_front: bool = False) -> None:
    """Execute an existing run in the background: a thread here, or a job on the RQ queue
    (``backend``: "thread" or "rq"; default ``job_backend()``; ``at_front``: ahead of the runs
    already queued, for a resumed run that had already waited its turn)."""
    if (backend or job_backend()) == "rq":
        workers.enqueue(run_id, at_front=at_front)
    else:
        _get_runner().submit(run_id)


def start_run(config: RunConfig) -> str:
    """Create the run and execute it in the background; returns its id at once."""
    backend = job_backend()  # a bad backend fails before anything is written
    run_id = create_run(config)
    submit(run_id, backend)
    return run_id


def run_foreground(config: RunConfig) -> RunState:
    """Create the run and execute it in this thread; returns the final state. With the ``rq``
    backend the run is queued for a worker instead and this waits until it stops."""
    backend = job_backend()
    return execute_created(create_run(config), backend)


def execute_created(run_id: str, backend: str | None = None) -> RunState:
    """Execute a run made by ``create_run`` in this thread (``thread`` backend) or queue it and
    wait for a worker (``rq``); returns its final state. The caller keeps the id it created, so
    it never has to find "its" run among identical ones."""
    if (backend or job_backend()) == "rq":
        submit(run_id, "rq")
        return wait_for(run_id)
    execute(run_id)
    return open_store().get_run(run_id)


def wait_for(run_id: str, poll_s: float = 0.5, timeout_s: float | None = None) -> RunState:
    """Poll until the run is no longer pending or active (complete, failed, cancelled or
    interrupted) or ``timeout_s`` (s) passed; returns its state.

    A run a thread of this process is still executing is waited for even when it reads
    ``interrupted``: on a loaded machine its lease can lapse for a moment before the heartbeat
    renews it, and the job that holds the run is known to be alive here."""

    store = open_store()
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    while True:
        state = store.get_run(run_id)
        ended = not is_active(state.status) and not _running_here(run_id)
        if ended or (deadline is not None and time.monotonic() > deadline):
            return state
        time.sleep(poll_s)


def _running_here(run_id: str) -> bool:
    with _runner_lock:
        runner = _runner
    return runner is not None and runner.running(run_id)
