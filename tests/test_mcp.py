"""``research mcp``: the MCP server driven by the official SDK's own client, over stdio (the server
spawned as ``python -m research.cli mcp``) and over streamable HTTP (``--http PORT``), against the
test Redis and a fresh data dir. One tiny extractive run goes from ``start_research`` to its
report, a follow-up and a corpus search."""

from __future__ import annotations

import asyncio
import json
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from mcp import Client, StdioServerParameters

from research.models import ACTIVE_STATUSES, Report
from research.store.runs import RunStore

REPO = Path(__file__).resolve().parents[1]
TOPIC = "Trastuzumab in HER2-positive breast cancer"
RUN_TIMEOUT_S = 400


@pytest.fixture()
def mcp_env(tmp_path, redis_server, corpus_path) -> dict[str, str]:
    """The server's environment: this test's Redis, a fresh data dir, no LLM model, and a
    30-document corpus as the default one."""
    corpus = tmp_path / "tiny.jsonl"
    docs = []
    with corpus_path.open(encoding="utf-8") as fh:
        for line in fh:
            if "trastuzumab" in json.loads(line)["text"].lower():
                docs.append(line.strip())
                if len(docs) == 30:
                    break
    corpus.write_text("\n".join(docs) + "\n", encoding="utf-8")
    env = {
        **os.environ,
        "RESEARCH_DATA_DIR": str(tmp_path / "data"),
        "REDIS_URL": redis_server,
        "RESEARCH_CORPUS": str(corpus),
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    env.pop("RESEARCH_LLM_MODEL", None)
    env.pop("RESEARCH_JOB_BACKEND", None)
    return env


def _stdio(env: dict[str, str]) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable, args=["-m", "research.cli", "mcp"], env=env, cwd=str(REPO)
    )


def _data(result) -> dict:
    """A tool result's structured content (asserting it is not an error)."""
    assert not result.is_error, result.content[0].text
    return result.structured_content


def _error(result) -> str:
    assert result.is_error, result
    return result.content[0].text


async def _poll_complete(client: Client, run_id: str) -> dict:
    deadline = time.monotonic() + RUN_TIMEOUT_S
    fractions = []
    while True:
        run = _data(await client.call_tool("get_run", {"run_id": run_id}))
        fractions.append(run["progress"]["fraction"])
        if run["status"] not in ACTIVE_STATUSES or time.monotonic() > deadline:
            assert fractions == sorted(fractions), fractions  # progress never goes back
            return run
        await asyncio.sleep(1)


def test_tools_are_listed_with_schemas_and_one_line_descriptions(mcp_env, r):
    async def go():
        async with Client(_stdio(mcp_env)) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert set(tools) == {
                "start_research",
                "get_run",
                "get_report",
                "ask_run",
                "get_answer",
                "list_runs",
                "search_corpus",
            }
            for t in tools.values():
                assert t.description and "\n" not in t.description and len(t.description) < 120
                assert t.input_schema["type"] == "object"
                for name, prop in t.input_schema["properties"].items():
                    assert prop.get("description"), (t.name, name)
            start = tools["start_research"].input_schema
            assert start["required"] == ["topic"]
            assert start["properties"]["max_turns"]["minimum"] == 1
            assert start["properties"]["max_turns"]["maximum"] == 10
            assert set(start["properties"]["depth"]["enum"]) == {"brief", "standard", "deep"}
            assert tools["get_run"].input_schema["required"] == ["run_id"]
            # bad input: refused by the input gate, with the message `research run` gives
            assert "max turns must be a whole number from 1 to 10; got 99." in _error(
                await client.call_tool("start_research", {"topic": "x", "max_turns": 99})
            )
            assert "topic is empty" in _error(
                await client.call_tool("start_research", {"topic": "   "})
            )
            assert "not a run id" in _error(await client.call_tool("get_run", {"run_id": "nope"}))
            assert _data(await client.call_tool("list_runs", {})) == {"runs": []}

    asyncio.run(go())


@pytest.mark.slow
def test_start_research_to_report_over_stdio(mcp_env, r):
    async def go():
        async with Client(_stdio(mcp_env)) as client:
            t0 = time.monotonic()
            started = _data(
                await client.call_tool(
                    "start_research",
                    {"topic": TOPIC, "max_perspectives": 2, "max_turns": 1, "gap_turns": 0},
                )
            )
            assert time.monotonic() - t0 < 15  # returns at once; the run goes on in the background
            run_id = started["run_id"]
            assert started["status"] in ACTIVE_STATUSES and started["topic"] == TOPIC
            assert "offline extractive" in started["engine"]

            early = await client.call_tool("get_report", {"run_id": run_id})
            if early.is_error:  # normally: the run is still working
                assert "no report yet" in _error(early) and "get_run" in _error(early)

            run = await _poll_complete(client, run_id)
            assert run["status"] == "complete", run
            assert run["progress"] == {
                "phase": "complete",
                "fraction": 1.0,
                "turns_done": 2,
                "turns_planned": 2,
                "active": False,
            }
            assert run["sources"] > 0 and run["citations"] > 0 and run["llm_calls"] == 0
            assert [q["key"] for q in run["coverage"]]  # the syllabus, with counts per question
            assert all(q["sources"] >= 0 and q["target"] >= 1 for q in run["coverage"])
            assert {q["answer"] for q in run["coverage"]} <= {"answered", "insufficient"}

            report = (await client.call_tool("get_report", {"run_id": run_id})).content[0].text
            stored = RunStore(r).get_doc(run_id, "report", Report)
            assert report.startswith(f"# {stored.title}")
            for heading in re.findall(r"^##+ .+$", stored.markdown, flags=re.M):
                assert heading in report
            assert "## References" in report
            cited = {int(n) for n in re.findall(r"\[(\d+)\]", report)}
            assert cited == {ref.number for ref in stored.references}
            assert len(stored.references) == run["citations"]

            listed = _data(await client.call_tool("list_runs", {"status": "complete"}))
            assert [x["run_id"] for x in listed["runs"]] == [run_id]

            asked = _data(
                await client.call_tool(
                    "ask_run",
                    {"run_id": run_id, "question": "What about cardiotoxicity?", "wait_s": 60},
                )
            )
            while asked["status"] == "pending":
                asked = _data(
                    await client.call_tool(
                        "get_answer",
                        {"run_id": run_id, "followup_id": asked["followup_id"], "wait_s": 30},
                    )
                )
            assert asked["status"] == "answered", asked
            assert asked["answer"] and asked["citations"]
            # the report's references, and those the follow-up's own research added after them
            added = {ref["number"] for ref in asked["new_references"]}
            assert set(asked["citations"]) <= {ref.number for ref in stored.references} | added
            assert all(n > len(stored.references) for n in added)

            found = _data(
                await client.call_tool("search_corpus", {"query": "cardiotoxicity", "k": 3})
            )
            assert 1 <= len(found["results"]) <= 3
            assert all(x["title"] and x["url"] and x["snippets"] for x in found["results"])

    asyncio.run(go())


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_streamable_http(mcp_env, r):
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "research.cli", "mcp", "--http", str(port)],
        cwd=REPO,
        env=mcp_env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                httpx.get(f"http://127.0.0.1:{port}/mcp", timeout=1)
                break
            except httpx.HTTPError:
                assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
                time.sleep(0.3)

        async def go():
            async with Client(f"http://127.0.0.1:{port}/mcp") as client:
                names = {t.name for t in (await client.list_tools()).tools}
                assert {"start_research", "get_run", "search_corpus"} <= names
                assert _data(await client.call_tool("list_runs", {"limit": 5})) == {"runs": []}
                missing = _error(
                    await client.call_tool("get_report", {"run_id": "0123456789abcdef"})
                )
                assert "No run '0123456789abcdef'" in missing

        asyncio.run(go())
    finally:
        proc.terminate()
        proc.wait(timeout=30)
