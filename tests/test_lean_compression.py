"""A lean run's compression with the litellm engine, through the real litellm client to the
loopback server: each document reaches the compressor once per run (a result carded before goes
as a reference to its card; a search whose results were all carded before gets its card and
artifact with no model call), the compressor gets the passages around the query's terms rather
than a fixed prefix, and a conversation's next question is asked before the previous turn's
compress calls have answered."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

from research.artifacts import ArtifactStore
from research.cli import commands as cli
from research.config import load_settings
from research.devtools.loopback_llm import LoopbackLLM
from research.devtools.loopback_responder import default_responder, material_of, step_of
from research.engines.litellm import LiteLLMEngine
from research.engines.litellm.material import clip
from research.models import RunConfig, SearchResult, Step
from research.pipeline.recorders import KeyedRecorder
from research.store.runs import RunStore
from tests.llm_fixtures import MODEL

TOPIC = "Trastuzumab in HER2-positive breast cancer"


def _docs(corpus: Path, n: int) -> list[SearchResult]:
    """The first ``n`` documents of the shared corpus that mention trastuzumab, as results."""
    out = []
    with corpus.open(encoding="utf-8") as fh:
        for line in fh:
            d = json.loads(line)
            if "trastuzumab" in d["text"].lower() and len(d["text"]) > 1500:
                out.append(
                    SearchResult(
                        url=d["url"],
                        title=d["title"],
                        snippets=[d["text"][:200]],
                        text=d["text"],
                        doc_id=d["id"],
                    )
                )
            if len(out) == n:
                return out
    raise AssertionError("the shared corpus has too few trastuzumab documents")


def _raw(query: str, results: list[SearchResult]) -> dict:
    return {"query": query, "results": [r.model_dump(mode="json") for r in results]}


def _compress_bodies(srv: LoopbackLLM) -> list[dict]:
    return [b for b in srv.bodies if step_of(b) == "compress"]


def test_a_document_reaches_the_compressor_once_and_all_carded_calls_make_no_call(
    llm_env, data_dir, r, corpus_path
):
    a, b, c = _docs(corpus_path, 3)
    store = RunStore(r)
    config = RunConfig(topic=TOPIC, engine="litellm", models={"*": MODEL})
    rid = store.create_run(config).run_id
    settings = load_settings()
    engine = LiteLLMEngine(config, rid, store, settings)
    arts = KeyedRecorder(ArtifactStore(rid, "Research plan: Trastuzumab", engine, store), "t")
    step = Step(step_id=1, title="Efficacy", description="Survival benefit of trastuzumab")

    first, _ = arts.record(
        step, "search_local", _raw("trastuzumab survival", [a, b]), tool_input="q1"
    )
    second, _ = arts.record(step, "search_local", _raw("trastuzumab cardiotoxicity", [b, c]))
    assert len(_compress_bodies(llm_env)) == 2
    third, msg = arts.record(step, "search_local", _raw("her2 trastuzumab", [c, a, b]))
    bodies = _compress_bodies(llm_env)
    assert len(bodies) == 2, "a search whose results were all carded before made a model call"

    # document b went to the compressor once: its passages in the first call, a reference after
    sent = [material_of(x) for x in bodies]
    assert [x["title"] for x in sent[0]["results"]] == [clip(a.title, 80), clip(b.title, 80)]
    with_text = [x for m in sent for x in m["results"] if x["title"] == clip(b.title, 80)]
    assert len(with_text) == 1 and "passages" in with_text[0]
    assert [x["title"] for x in sent[1]["results"]] == [clip(c.title, 80)]
    (ref, ns), *rest = sent[1]["carded"].items()
    assert ns == [1] and not rest and "trastuzumab survival" in ref
    # the compressor gets passages around the query's terms, not a 12,000-character prefix
    for m in sent:
        assert "raw_output" not in m
        for x in m["results"]:
            assert len(x["passages"]) <= 400
    fresh = sent[1]["results"][0]["passages"].lower()
    assert "cardio" in fresh or "trastuzumab" in fresh

    # the all-carded call still has its raw output whole on disk and its own card
    root = settings.artifacts_root / rid
    raw_file = root / third.artifact_file
    assert json.loads(raw_file.read_text())["results"][0]["text"] == c.text
    assert third.card.summary and third.card.is_useful == (
        first.card.is_useful or second.card.is_useful
    )
    assert third.card_tokens > 0 and msg is not None
    assert [rec.artifact_file for rec in store.get_cards(rid)] == [
        first.artifact_file,
        second.artifact_file,
        third.artifact_file,
    ]


def test_the_next_question_is_asked_before_the_previous_turns_cards_are_made(
    llm_env, data_dir, r, corpus_path, monkeypatch
):
    """A loopback server that holds every ``compress`` reply for 1.5 s; one conversation of two
    turns: its second ``ask_question`` arrives while turn 1's compress calls are unanswered."""
    log: list[tuple[str, str, float, float]] = []  # (step, perspective, received, answered)
    lock = threading.Lock()

    def slow_compress(body: dict):
        t0 = time.monotonic()
        step = step_of(body)
        if step == "compress":
            time.sleep(1.5)
        reply = default_responder(body)
        m = material_of(body)
        p = m.get("perspective", "")
        with lock:
            log.append((step, p if isinstance(p, str) else "", t0, time.monotonic()))
        return reply

    srv = LoopbackLLM(responder=slow_compress).start()
    try:
        monkeypatch.setenv("OPENAI_API_BASE", srv.url)
        monkeypatch.setenv("RESEARCH_LLM_CONCURRENCY", "8")
        monkeypatch.setenv("RESEARCH_LLM_TIMEOUT_S", "10")
        code = cli.main(
            [
                "run",
                TOPIC,
                "--corpus",
                str(corpus_path),
                "--template",
                "drug",
                "--engine",
                "litellm",
                "--model",
                MODEL,
                "--max-perspectives",
                "1",
                "--max-turns",
                "2",
                # the two planned turns only: gap rounds would add asks of their own
                "--gap-turns",
                "0",
                "--json",
            ]
        )
    finally:
        srv.stop()
    assert code == 0
    asks = sorted(t0 for step, _, t0, _ in log if step == "ask_question")
    compresses = [(t0, t1) for step, _, t0, t1 in log if step == "compress"]
    assert len(asks) == 2 and compresses, log
    in_flight = [(t0, t1) for t0, t1 in compresses if t0 < asks[1] < t1]
    assert in_flight, f"turn 2's question waited for every compress call: {log}"
