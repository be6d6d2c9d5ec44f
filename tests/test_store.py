"""Embedded Redis launcher, key builder and RunStore against a real redis-server."""

from __future__ import annotations

import pytest
import redis

from research.errors import InputError, RunNotFoundError
from research.models import ArtifactRecord, DialogueTurn, Plan, RunConfig, Step, SummaryCard
from research.store import keys
from research.store.runs import RunStore, new_run_id
from research.store.server import EmbeddedRedis, socket_path


def test_embedded_server_starts_with_aof_reuses_and_stops(tmp_path):
    server = EmbeddedRedis(tmp_path / "redis")
    url = server.start()
    client = redis.Redis.from_url(url, decode_responses=True)
    assert client.ping()
    assert client.config_get("appendonly")["appendonly"] == "yes"
    assert client.config_get("appendfsync")["appendfsync"] == "everysec"
    client.set("k", "v")
    # a second launcher on the same dir reuses the running server instead of starting one
    again = EmbeddedRedis(tmp_path / "redis")
    assert again.start() == url and again.process is None
    server.stop()
    assert not server.ping()
    # restart: AOF brings the data back
    server2 = EmbeddedRedis(tmp_path / "redis")
    server2.start()
    assert redis.Redis.from_url(server2.url, decode_responses=True).get("k") == "v"
    server2.stop()


def test_long_data_dir_gets_short_socket(tmp_path):
    deep = tmp_path / ("x" * 120)
    assert len(str(socket_path(deep))) <= 100


def test_keys_reject_bad_run_ids():
    for bad in ["", "../etc", "ABCDEF0123456789", "abc", "0123456789abcdef\n", "0123456789abcdeg"]:
        with pytest.raises(InputError):
            keys.run(bad)
    assert keys.sources("0123456789abcdef") == "source_collection:0123456789abcdef:sources"
    assert keys.question("0123456789abcdef", "clinical.efficacy").endswith(
        ":question:clinical.efficacy"
    )
    with pytest.raises(InputError):
        keys.question("0123456789abcdef", "bad key*")


def test_run_ids_are_random_hex():
    ids = {new_run_id() for _ in range(1000)}
    assert len(ids) == 1000 and all(keys.RUN_ID_RE.match(i) for i in ids)


def test_run_lifecycle_docs_turns_cards_events(r):
    store = RunStore(r)
    state = store.create_run(RunConfig(topic="Trastuzumab"), engine_label="offline extractive mode")
    rid = state.run_id
    assert store.get_run(rid).status == "pending"
    store.set_status(rid, "planning")
    store.put_doc(
        rid, "plan", Plan(plan_title="P", steps=[Step(step_id=1, title="a", description="b")])
    )
    assert store.get_doc(rid, "plan", Plan).steps[0].title == "a"
    store.append_turn(
        rid,
        DialogueTurn(perspective="Basic Fact Writer", turn_number=1, question="q?", answer="a [1]"),
    )
    assert store.get_turns(rid)[0].question == "q?"
    card = SummaryCard(summary_title="t", summary="s", extraction=[], is_useful=False)
    store.append_card(
        rid,
        ArtifactRecord(
            artifact_file="p/f.json",
            tool_name="search_local",
            step_id=1,
            step_title="a",
            raw_chars=10,
            card=card,
        ),
    )
    assert store.get_cards(rid)[0].card.is_useful is False
    store.add_usage(rid, prompt_tokens=10, completion_tokens=5, cost_usd=0.001)
    assert store.get_usage(rid).prompt_tokens == 10
    store.set_status(rid, "complete", report_path="/x.md")
    final = store.get_run(rid)
    assert final.status == "complete" and final.finished_at and final.report_path == "/x.md"
    types = [e.type for e in store.events(rid)]
    assert types[0] == "run.created" and types.count("status") == 2 and "turn.finished" in types
    assert [e.type for e in store.tail_events(rid, 2)] == types[-2:]
    assert store.list_runs()[0].run_id == rid
    store.request_cancel(rid)
    assert store.cancel_requested(rid)
    store.delete_run(rid)
    with pytest.raises(RunNotFoundError):
        store.get_run(rid)
    assert not [k for k in r.keys("*") if rid in k]


def test_config_never_holds_secrets(r, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-canary-should-never-be-stored-0000")
    store = RunStore(r)
    rid = store.create_run(RunConfig(topic="x")).run_id
    dump = str(r.hgetall(keys.run(rid))) + str(store.events(rid))
    assert "sk-canary" not in dump
