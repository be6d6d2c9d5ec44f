"""Jobs: creating, launching, resuming and waiting for runs and follow-ups, in threads of this
process or on RQ workers."""

from research.jobs.launch import (
    MAX_CONCURRENT_RUNS,
    RESUMABLE,
    check_data_dir,
    create_run,
    engine_options,
    execute_created,
    is_active,
    job_backend,
    make_config,
    resume_interrupted,
    resume_run,
    run_foreground,
    run_snapshot,
    run_summary,
    start_run,
    submit,
    wait_for,
)

__all__ = [
    "MAX_CONCURRENT_RUNS",
    "RESUMABLE",
    "check_data_dir",
    "create_run",
    "engine_options",
    "execute_created",
    "is_active",
    "job_backend",
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
