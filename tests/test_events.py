"""Typed run events: the declarations of research/events.py, the check on
``RunStore.emit`` against a real redis-server, and the human lines of a real run's events."""

from __future__ import annotations

import json
import string

import pytest
import redis

from research.errors import InvariantError
from research.events import EVENT_TYPES, EVENTS, check_event, event_line
from research.models import Event, RunConfig
from research.store import keys
from research.store.runs import RunStore
from research.ui.events import describe_event


def _template_fields(template: str) -> set[str]:
    return {f.split(".")[0].split("[")[0] for _, f, _, _ in string.Formatter().parse(template) if f}


def test_every_declared_event_has_a_line_over_its_own_fields():
    assert set(EVENTS) == set(EVENT_TYPES) and len(EVENT_TYPES) == len(set(EVENT_TYPES)) >= 46
    for name, spec in EVENTS.items():
        assert spec.line, name
        if isinstance(spec.line, str):
            assert _template_fields(spec.line) <= set(spec.model.model_fields), name


def test_check_event_names_the_problem():
    check_event("run.created", {"topic": "T", "mode": "storm"})
    check_event("cancel.requested", {})  # every field optional
    with pytest.raises(InvariantError, match="Unknown event type 'plan.redy'.*research/events.py"):
        check_event("plan.redy", {})
    with pytest.raises(
        InvariantError, match="field 'steps' missing.*field 'stepz' is not declared"
    ):
        check_event("plan.ready", {"plan_title": "P", "stepz": 3, "questions": []})
    with pytest.raises(InvariantError, match="field 'turn'"):
        check_event(
            "turn.finished", {"perspective": "p", "turn": "two", "question": "q", "sources": 1}
        )


def test_store_emit_validates_and_keeps_the_stored_format(r):
    store = RunStore(r)
    run_id = store.create_run(RunConfig(topic="Typed events")).run_id
    before = len(store.events(run_id))
    with pytest.raises(InvariantError, match="Unknown event type"):
        store.emit(run_id, "made.up", {"x": 1})
    with pytest.raises(InvariantError, match="'extra' is not declared"):
        store.emit(run_id, "section.written", {"heading": "H", "extra": 1})
    assert len(store.events(run_id)) == before  # nothing written for a bad event
    payload = {"heading": "Efficacy", "depth": 2}
    sid = store.emit(run_id, "section.written", payload)
    raw = r.xrange(keys.run_events(run_id), min=sid, max=sid)[0][1]
    assert set(raw) == {"ts", "type", "data"} and raw["type"] == "section.written"
    assert json.loads(raw["data"]) == payload  # the emitter's dict, unchanged


def test_events_of_an_older_version_still_render(r):
    """An event written before the declarations (raw stream entry) reads and renders."""
    store = RunStore(r)
    run_id = store.create_run(RunConfig(topic="Old run")).run_id
    r.xadd(
        keys.run_events(run_id), {"ts": 1.0, "type": "legacy.thing", "data": json.dumps({"k": "v"})}
    )
    old = store.events(run_id)[-1]
    assert describe_event(old) == 'legacy.thing {"k": "v"}'


def test_lines_of_a_real_run_have_every_field(finished_run):
    """Every event of a finished STORM run is declared, validates and renders without a '?'."""
    store = RunStore(redis.Redis.from_url(finished_run.redis_url, decode_responses=True))
    evs = store.events(finished_run.run_id)
    types = {e.type for e in evs}
    assert {
        "run.created",
        "plan.ready",
        "turn.finished",
        "coverage.checked",
        "report.ready",
    } <= types
    for ev in evs:
        check_event(ev.type, ev.data)
        line = event_line(ev.type, ev.data)
        assert line and "?" not in line.replace(ev.data.get("question", ""), ""), (ev.type, line)


def test_describe_event_uses_the_declared_lines():
    ev = Event(type="analysis.done", data={"facts": 12, "cross_validated": 3, "contradictions": 1})
    assert describe_event(ev) == "analysis done: 12 facts, 3 cross-validated, 1 contradictions"
    ev = Event(type="status", data={"status": "failed", "error": "no sources"})
    assert describe_event(ev) == "status → failed — no sources"
    assert describe_event(Event(type="plan.ready", data={})) == "plan ready: ? (? steps)"
