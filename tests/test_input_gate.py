"""One input gate: the same bad run options typed into ``research run``, sent to ``POST /runs``
of a served API, to the MCP tool ``start_research`` and to the Launch form's validator get the
same error code and the same message, word for word, and that message says what to fix.

Real parts: the ``research`` command as a subprocess, ``research serve`` over HTTP and
``research mcp`` over stdio on a private redis-server (the ``rq`` job backend with no worker, so
nothing would execute), and the form's own functions in this process on the same store."""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from resilience_helpers import research_cmd

from research.errors import ResearchError
from research.store import open_store
from research.ui.launch_form import form_values, launch_config

pytestmark = pytest.mark.timeout(600)
REPO = Path(__file__).resolve().parents[1]
TOPIC = "Trastuzumab in HER2-positive breast cancer"
GOOD = {"template": "drug", "max_turns": 1, "engine": "extractive"}

# name → (the options that differ from a good request, a fragment of what the message must say)
CASES: dict[str, tuple[dict, str]] = {
    "empty topic": ({"topic": "  "}, "The topic is empty; type a research question"),
    "zero max turns": ({"max_turns": 0}, "max turns must be a whole number from 1 to 10; got 0."),
    "negative max turns": (
        {"max_turns": -3},
        "max turns must be a whole number from 1 to 10; got -3.",
    ),
    "unknown template": ({"template": "nope"}, "Unknown question template 'nope': choose one of"),
    "unknown engine": (
        {"engine": "gpt"},
        "Unknown engine 'gpt': use 'extractive' (offline) or 'litellm'.",
    ),
    "missing corpus": ({"corpus": "MISSING"}, "does not exist; pass a .jsonl file"),
}


@pytest.fixture(scope="module")
def gate(serve_api, tmp_path_factory, finished_corpus):
    """The served API on a registered corpus folder; returns ``(api, good corpus, missing)``."""
    root = tmp_path_factory.mktemp("gate_corpora")
    corpus = root / "docs.jsonl"
    corpus.write_text(finished_corpus.read_text(encoding="utf-8"), encoding="utf-8")
    api = serve_api("gate", RESEARCH_JOB_BACKEND="rq", RESEARCH_CORPUS_ROOTS=str(root))
    return api, corpus, root / "missing.jsonl"


def _request(case: str, corpus: Path, missing: Path) -> dict:
    """The whole request of ``case``: topic and options (ints as ints)."""
    changed = dict(CASES[case][0])
    if changed.get("corpus") == "MISSING":
        changed["corpus"] = str(missing)
    return {"topic": TOPIC, "corpus": str(corpus), **GOOD, **changed}


def _cli(api, request: dict) -> tuple[str, str]:
    flags = []
    for name in ("corpus", "template", "max_turns", "engine"):
        flags += [f"--{name.replace('_', '-')}", str(request[name])]
    out = subprocess.run(
        research_cmd("run", request["topic"], *flags),
        env=api.env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 2 and out.stdout == "", (out.returncode, out.stderr)
    found = re.search(r"^error \[([a-z_]+)\]: (.*)$", out.stderr, re.M)
    assert found, out.stderr
    return found.group(1), found.group(2)


def _http(api, headers: dict[str, str], request: dict) -> tuple[str, str]:
    resp = api.client.post("/runs", json=request, headers=headers)
    assert resp.status_code == 422, resp.text
    body = resp.json()
    return body["code"], body["detail"]


def _form(request: dict) -> tuple[str, str]:
    values = form_values(
        corpus=request["corpus"],
        template=request["template"],
        max_perspectives=4,
        max_turns=request["max_turns"],
        engine=request["engine"],
        mode="storm",
        search=["local"],
        corpora=[],
    )
    with pytest.raises(ResearchError) as refused:
        launch_config(request["topic"], values)
    return refused.value.code, refused.value.message


def _mcp(api, requests: list[dict]) -> list[tuple[str, str]]:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "research.cli", "mcp"], env=api.env, cwd=str(REPO)
    )

    async def scenario() -> list[tuple[str, str]]:
        out = []
        async with Client(params) as client:
            for request in requests:
                result = await client.call_tool("start_research", request)
                text = result.content[0].text
                assert result.is_error, text
                # the MCP server frames a tool's error; the product's message and code follow
                found = re.fullmatch(r"Error executing tool \w+: (.*) \[([a-z_]+)\]", text, re.S)
                assert found, text
                out.append((found.group(2), found.group(1)))
        return out

    return asyncio.run(scenario())


def test_same_bad_input_same_message_from_every_front_end(gate):
    api, corpus, missing = gate
    headers = api.auth("gate", "run")
    requests = {case: _request(case, corpus, missing) for case in CASES}
    over_mcp = dict(zip(CASES, _mcp(api, list(requests.values())), strict=True))
    for case, request in requests.items():
        answers = {
            "research run": _cli(api, request),
            "POST /runs": _http(api, headers, request),
            "MCP start_research": over_mcp[case],
            "Launch form": _form(request),
        }
        code, message = answers["research run"]
        assert {a: v for a, v in answers.items() if v != (code, message)} == {}, (
            case,
            code,
            message,
        )
        assert CASES[case][1] in message, (case, message)
        if case == "missing corpus":
            assert str(missing) in message  # names the path that is missing
    assert open_store().list_runs(limit=100) == []  # no front end created a run
