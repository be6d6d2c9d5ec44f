"""The run summary of ``research run --json``, ``get_run`` (MCP) and the API, for a run in any
state (``research.jobs.snapshots.run_summary``)."""

from __future__ import annotations

from research.jobs.snapshots import run_summary
from research.models import RunConfig
from research.planning.syllabus import get_template
from research.store.runs import RunStore


def test_a_run_that_stopped_before_its_collection_began_is_summarised(data_dir, r):
    """A run that failed after storing its syllabus and before its source collection began
    (the survey failed) reads as what it is, with no sources, instead of raising
    ``collector_not_initialised``."""
    store = RunStore(r)
    run_id = store.create_run(RunConfig(topic="Examplumab in examplitis")).run_id
    store.put_doc(run_id, "syllabus", get_template("drug"))
    summary = run_summary(run_id)
    assert summary["run_id"] == run_id
    assert summary["sources"] == 0 and summary["questions"] == {}
