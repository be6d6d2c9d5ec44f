"""Who may do what on a shared ``research serve``: corpora registered on the server only, and
token scopes. ``research serve`` runs as a subprocess on a private redis-server with the ``rq``
job backend and no worker (runs are created and queued, never executed: the checks are about
who may start, ask, approve, cancel and delete, not about the research), over real HTTP.

A canary file sits in a folder outside every registered corpus; every way of naming it (its
path, a ``..`` path into it, a symlink to it, a folder in a root that holds a symlink to it,
absolute or relative) is refused with 403
``corpus_not_registered`` over HTTP and over MCP, and its text appears in no answer, no Redis
value, no file of the data dir and no log."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
import redis
from mcp import Client, StdioServerParameters
from resilience_helpers import research_cmd
from served_api import ServedApi

from research.store import keys as store_keys
from research.store import open_store

pytestmark = pytest.mark.timeout(600)
REPO = Path(__file__).resolve().parents[1]
CANARY = "CANARY-b41f0c9e-database-password-hunter2"
TOPIC = "Trastuzumab in HER2-positive breast cancer"


class Served:
    """The served API (``api``: ``tests/served_api.ServedApi``) and the folders around it:
    ``root`` (RESEARCH_CORPUS_ROOTS) holds ``team/docs.jsonl``; ``outside`` holds the canary;
    ``data`` is the data dir."""

    def __init__(self, api: ServedApi, root: Path, outside: Path) -> None:
        self.api, self.root, self.outside = api, root, outside
        self.base, self.env, self.data, self.client = api.base, api.env, api.data, api.client

    def token(self, name: str, scope: str) -> dict[str, str]:
        """Headers with a new token of ``scope``, made by ``research token create``."""
        return self.api.auth(name, scope)


@pytest.fixture(scope="module")
def served(serve_api, tmp_path_factory, finished_corpus) -> Served:
    base_dir = tmp_path_factory.mktemp("access_files")
    root, outside = base_dir / "registered", base_dir / "outside"
    (root / "team").mkdir(parents=True)
    (root / "team" / "docs.jsonl").write_text(finished_corpus.read_text(encoding="utf-8"))
    (outside / "secret").mkdir(parents=True)
    (outside / "secret" / "passwords.md").write_text(f"# Passwords\n\nThe password is {CANARY}.\n")
    (outside / "secret.jsonl").write_text(
        json.dumps({"id": "1", "title": "secret", "url": "", "text": CANARY, "source": "x"}) + "\n"
    )
    (root / "link").symlink_to(outside / "secret", target_is_directory=True)
    (root / "files").mkdir()
    (root / "files" / "escape.jsonl").symlink_to(outside / "secret.jsonl")
    (root / "mixed").mkdir()  # a folder in the root whose one document links outside
    (root / "mixed" / "notes.md").symlink_to(outside / "secret" / "passwords.md")
    api = serve_api(
        "access",
        RESEARCH_JOB_BACKEND="rq",
        RESEARCH_API_RATE_PER_MIN="0",
        RESEARCH_CORPUS_ROOTS=str(root),
        RESEARCH_CORPUS=str(finished_corpus),
    )
    return Served(api, root, outside)


def _redis_text(url: str) -> str:
    """Every key and value of the Redis at ``url``, as one string."""
    r = redis.Redis.from_url(url, decode_responses=False)
    parts: list[str] = []
    for key in r.scan_iter("*"):
        kind = r.type(key).decode()
        value = {
            "string": lambda k: r.get(k),
            "hash": lambda k: r.hgetall(k),
            "list": lambda k: r.lrange(k, 0, -1),
            "set": lambda k: r.smembers(k),
            "zset": lambda k: r.zrange(k, 0, -1),
            "stream": lambda k: r.xrange(k),
        }.get(kind, lambda k: b"")(key)
        parts.append(repr(key) + repr(value))
    return "\n".join(parts)


def _files_text(folder: Path) -> str:
    out = []
    for path in folder.rglob("*"):
        if path.is_file() and not path.is_symlink():
            out.append(path.read_bytes().decode("utf-8", errors="replace"))
    return "\n".join(out)


def _assert_canary_nowhere(served: Served, answers: list[str]) -> None:
    assert not any(CANARY in a for a in answers)
    assert CANARY not in _redis_text(served.env["REDIS_URL"])
    assert CANARY not in _files_text(served.data)  # data dir: runs, artifacts, indexes, logs


def _ways_to_the_canary(served: Served) -> list[str]:
    root, outside = served.root, served.outside
    return [
        str(outside / "secret"),  # the folder itself
        str(outside / "secret.jsonl"),  # a corpus file outside
        f"{root}/../outside/secret",  # .. out of a root
        "../outside/secret",  # relative, taken inside the root
        "team/../../outside/secret.jsonl",
        str(root / "link"),  # a symlink in the root to the folder outside
        "link",
        str(root / "files" / "escape.jsonl"),  # a symlinked file
        "mixed",  # a folder in the root holding a symlink to a file outside
        str(root / "mixed" / "notes.md"),
        "~/../../" + str(outside / "secret"),
        str(outside / "secret") + "\x00",
    ]


def test_unregistered_corpus_refused_over_http_and_canary_nowhere(served):
    admin = served.token("canary-admin", "admin")
    before = len(served.client.get("/runs", headers=admin).json())
    answers = []
    for corpus in _ways_to_the_canary(served):
        resp = served.client.post(
            "/runs", json={"topic": "database password", "corpus": corpus}, headers=admin
        )
        answers.append(resp.text)
        assert resp.status_code == 403, (corpus, resp.text)
        body = resp.json()
        assert body["code"] == "corpus_not_registered" and body["errors"] == []
        assert "RESEARCH_CORPUS_ROOTS" in body["detail"] and "/corpora" in body["detail"]
        if corpus == "mixed":  # the error names the entry that links out
            assert "'notes.md' is a symlink" in body["detail"], body["detail"]
    assert len(served.client.get("/runs", headers=admin).json()) == before  # nothing created
    # a corpus inside the root, by absolute and by relative path, is accepted
    for corpus in (str(served.root / "team" / "docs.jsonl"), "team/docs.jsonl", "team"):
        ok = served.client.post("/runs", json={"topic": TOPIC, "corpus": corpus}, headers=admin)
        assert ok.status_code == 201, (corpus, ok.text)
        run = served.client.get(f"/runs/{ok.json()['run_id']}", headers=admin).json()
        answers.append(json.dumps(run))
        assert run["run"]["config"]["corpus"].startswith(str(served.root.resolve()))
    answers += [
        served.client.get("/runs", headers=admin).text,
        (served.data / "serve.log").read_text(),
    ]
    _assert_canary_nowhere(served, answers)


def test_unregistered_corpus_refused_over_mcp(served):
    env = {**served.env, "PYTHONDONTWRITEBYTECODE": "1"}
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "research.cli", "mcp"], env=env, cwd=str(REPO)
    )
    ways = _ways_to_the_canary(served)

    async def scenario() -> list[str]:
        texts = []
        async with Client(params) as client:
            for corpus in ways:
                for tool, args in (
                    ("start_research", {"topic": "database password", "corpus": corpus}),
                    ("search_corpus", {"query": "password", "corpus": corpus}),
                ):
                    result = await client.call_tool(tool, args)
                    text = result.content[0].text
                    texts.append(text)
                    assert result.is_error, (tool, corpus, text)
                    assert "not registered on this server" in text, (tool, corpus, text)
        return texts

    before = len(open_store().list_runs(limit=10_000))
    texts = asyncio.run(scenario())
    assert len(open_store().list_runs(limit=10_000)) == before
    _assert_canary_nowhere(served, texts)


def _start(served: Served, headers: dict[str, str]) -> str:
    resp = served.client.post("/runs", json={"topic": TOPIC, "corpus": "team"}, headers=headers)
    assert resp.status_code == 201, resp.text
    return resp.json()["run_id"]


def _ended(run_id: str) -> str:
    """Mark a queued run ended (no worker executes it here), as a failed run ends."""
    open_store().set_status(run_id, "failed", error="stopped by the test")
    return run_id


def _codes(resp: httpx.Response) -> tuple[int, str]:
    return resp.status_code, resp.json().get("code", "") if resp.content else ""


def test_read_scope_lists_shows_downloads_and_nothing_more(served):
    admin, read = served.token("r-admin", "admin"), served.token("r-read", "read")
    run_id = _start(served, admin)
    assert served.client.get("/runs", headers=read).status_code == 200
    assert served.client.get(f"/runs/{run_id}", headers=read).status_code == 200
    assert served.client.get("/corpora", headers=read).status_code == 200
    report = served.client.get(f"/runs/{run_id}/report", headers=read)
    assert report.status_code == 409  # allowed, but the queued run has no report yet
    denied = {
        "start": served.client.post("/runs", json={"topic": TOPIC}, headers=read),
        "ask": served.client.post(f"/runs/{run_id}/ask", json={"question": "Why?"}, headers=read),
        "approve": served.client.post(f"/runs/{run_id}/approve", headers=read),
        "cancel": served.client.post(f"/runs/{run_id}/cancel", headers=read),
        "delete": served.client.delete(f"/runs/{run_id}", headers=read),
        "upload": served.client.put("/corpora/team-x/documents/a.md", content=b"x", headers=read),
    }
    for what, resp in denied.items():
        assert _codes(resp) == (403, "insufficient_scope"), (what, resp.text)
        assert "scope read" in resp.json()["detail"]
    assert open_store().get_run(run_id).status == "pending"  # the cancel did nothing


def test_run_scope_acts_on_its_own_runs_only(served):
    admin, run = served.token("s-admin", "admin"), served.token("s-run", "run")
    theirs, mine = _start(served, admin), _start(served, run)
    for resp in (
        served.client.post(f"/runs/{theirs}/ask", json={"question": "Why?"}, headers=run),
        served.client.post(f"/runs/{theirs}/approve", headers=run),
        served.client.post(f"/runs/{theirs}/cancel", headers=run),
    ):
        assert _codes(resp) == (403, "not_your_run"), resp.text
    assert open_store().get_run(theirs).status == "pending"
    # its own run: the requests pass the scope check (and meet the run's state)
    assert (
        _codes(served.client.post(f"/runs/{mine}/ask", json={"question": "Why?"}, headers=run))[0]
        == 409
    )
    assert served.client.post(f"/runs/{mine}/approve", headers=run).status_code == 409
    assert served.client.post(f"/runs/{mine}/cancel", headers=run).status_code == 202
    # deleting an ended run and uploading into a corpus are admin's
    deleted = served.client.delete(f"/runs/{_ended(mine)}", headers=run)
    assert _codes(deleted) == (403, "insufficient_scope") and "scope admin" in deleted.text
    upload = served.client.put("/corpora/team-x/documents/a.md", content=b"x", headers=run)
    assert _codes(upload) == (403, "insufficient_scope")


def test_admin_scope_deletes_manages_corpora_and_acts_on_any_run(served):
    admin, run = served.token("a-admin", "admin"), served.token("a-run", "run")
    theirs = _start(served, run)
    assert served.client.post(f"/runs/{theirs}/cancel", headers=admin).status_code == 202
    active = served.client.delete(f"/runs/{theirs}", headers=admin)
    assert _codes(active) == (409, "run_active")  # cancel first, delete once it stopped
    gone = served.client.delete(f"/runs/{_ended(theirs)}", headers=admin)
    assert gone.status_code == 200 and gone.json()["action"] == "deleted"
    text = (
        "# HER2 testing\n\nTrastuzumab is given to patients whose tumours overexpress HER2; "
        "testing uses immunohistochemistry and in situ hybridisation.\n"
    )
    up = served.client.put(
        "/corpora/team-notes/documents/her2.md", content=text.encode(), headers=admin
    )
    assert up.status_code == 201 and up.json()["chunks"] >= 1, up.text
    listed = served.client.get("/corpora", headers=admin).json()
    assert "team-notes" in [c["name"] for c in listed]
    started = served.client.post(
        "/runs", json={"topic": TOPIC, "corpora": ["team-notes"]}, headers=admin
    )
    assert started.status_code == 201, started.text
    bad = served.client.put(
        "/corpora/team-notes/documents/..%2Fescape.md", content=b"x", headers=admin
    )
    assert bad.status_code in (404, 422)
    assert not (served.data / "corpora" / "escape.md").exists()
    # the one refusal an admin meets: a corpus that is not registered
    refused = served.client.post(
        "/runs", json={"topic": TOPIC, "corpus": str(served.outside / "secret")}, headers=admin
    )
    assert _codes(refused) == (403, "corpus_not_registered")


def test_a_token_stored_without_scope_acts_as_run(served):
    headers = served.token("legacy", "admin")
    r = redis.Redis.from_url(served.env["REDIS_URL"], decode_responses=True)
    record = json.loads(r.hget(store_keys.API_TOKENS, "legacy"))
    record.pop("scope")
    r.hset(store_keys.API_TOKENS, "legacy", json.dumps(record))  # as stored before scopes
    run_id = _start(served, headers)
    assert served.client.post(f"/runs/{run_id}/cancel", headers=headers).status_code == 202
    denied = served.client.delete(f"/runs/{_ended(run_id)}", headers=headers)
    assert _codes(denied) == (403, "insufficient_scope")
    listed = subprocess.run(
        research_cmd("token", "list", "--json"), env=served.env, capture_output=True, text=True
    )
    assert {"name": "legacy", "scope": "run"}.items() <= next(
        t for t in json.loads(listed.stdout) if t["name"] == "legacy"
    ).items()
    assert os.environ.get("RESEARCH_CORPUS_ROOTS")  # the fixture's settings are in force here
