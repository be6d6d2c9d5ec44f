"""Jobs: checking a run's inputs (``run_config``), creating and launching runs in threads of this
process or on RQ workers (``launch``), resuming them (``resume``), reading them back whole
(``snapshots``), and the follow-ups, batches and plan reviews built on them."""

from research.jobs.launch import (
    MAX_CONCURRENT_RUNS,
    create_run,
    execute_created,
    is_active,
    run_foreground,
    start_run,
    submit,
    wait_for,
)
from research.jobs.resume import RESUMABLE, resume_interrupted, resume_run
from research.jobs.run_config import check_data_dir, engine_options, make_config
from research.jobs.snapshots import run_snapshot, run_summary

__all__ = [
    "MAX_CONCURRENT_RUNS",
    "RESUMABLE",
    "check_data_dir",
    "create_run",
    "engine_options",
    "execute_created",
    "is_active",
    "make_config",
    "resume_interrupted",
    "resume_run",
    "run_foreground",
    "run_snapshot",
    "run_summary",
    "start_run",
    "submit",
    "wait_for",
]
