"""The run context is built whole and never changed: assigning any attribute of a built context
raises, and a phase that adds the plan or its own tool recorder gets a new context, leaving the
one other threads hold as it was. Real store on the session's redis-server."""

from __future__ import annotations

import dataclasses

import pytest

from research.artifacts import ArtifactStore
from research.config import load_settings
from research.errors import RunCancelled
from research.models import Plan, Question, RunConfig, Step, Syllabus
from research.pipeline.context import RunContext
from research.pipeline.recorders import KeyedRecorder
from research.store.collector import SourceCollector
from research.store.runs import RunStore


@pytest.fixture()
def ctx(data_dir, r) -> RunContext:
    store = RunStore(r)
    config = RunConfig(topic="Trastuzumab in HER2-positive breast cancer")
    run_id = store.create_run(config).run_id
    return RunContext(
        run_id=run_id,
        config=config,
        settings=load_settings(),
        store=store,
        collector=SourceCollector(r, run_id),
        engine=None,  # type: ignore[arg-type]  # no step here asks the engine or the retriever
        retriever=None,  # type: ignore[arg-type]
    )


def test_assigning_an_attribute_of_a_built_context_raises(ctx):
    plan = Plan(plan_title="t", steps=[Step(step_id=1, title="a", description="b")])
    for name, value in (
        ("plan", plan),
        ("syllabus", None),
        ("artifacts", None),
        ("recorder", None),
        ("check_cancel", lambda: None),
        ("something_new", 1),
    ):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(ctx, name, value)
    assert ctx.plan is None


def test_a_phase_gets_a_new_context_and_the_old_one_is_unchanged(ctx):
    plan = Plan(plan_title="t", steps=[Step(step_id=1, title="a", description="b")])
    syllabus = Syllabus(
        name="t",
        questions=[Question(key="clinical.efficacy", label="E", description="d", min_sources=1)],
    )
    artifacts = ArtifactStore(ctx.run_id, plan.plan_title, None, ctx.store, ctx.settings)
    planned = ctx.planned(plan, syllabus, artifacts)
    assert (planned.plan, planned.syllabus, planned.artifacts) == (plan, syllabus, artifacts)
    assert (ctx.plan, ctx.syllabus, ctx.artifacts) == (None, None, None)
    recorder = KeyedRecorder(artifacts, "survey")
    recording = planned.recording(recorder)
    assert recording.recorder is recorder and planned.recorder is None
    assert recording.recording(None).recorder is None
    # one run, one list of search issues, whichever context a thread holds
    assert recording.search_issues is planned.search_issues is ctx.search_issues


def test_the_stop_check_runs_before_the_cancel_check(ctx):
    class Stop(Exception):
        pass

    def stop() -> None:
        raise Stop

    ctx.check_cancel()  # no stop check, no cancel asked: nothing happens
    ctx.store.request_cancel(ctx.run_id)
    with pytest.raises(RunCancelled):
        ctx.check_cancel()
    with pytest.raises(
        Stop
    ):  # the lease's check comes first: the job stops, the run is not cancelled
        dataclasses.replace(ctx, stop_check=stop).check_cancel()
