"""The HTTP API over real HTTP: ``research serve`` as a subprocess on a free port, tokens made
and revoked with the real ``research token`` command, an httpx client, a private redis-server,
the 60-document real corpus and the offline extractive engine.

Two runs in all: one started with plan review, followed over server-sent events to
``awaiting_review``, approved, followed to ``complete`` and exported in every format; one
cancelled and deleted."""

from __future__ import annotations

import hashlib
import html.parser
import io
import json
import time

import bibtexparser
import httpx
import pytest
import redis
import rispy
from docx import Document
from pypdf import PdfReader
from served_api import ServedApi

from research.cli import main
from research.errors import InputError
from research.store import open_store
from research.ui.history import history_rows, run_stats

pytestmark = pytest.mark.timeout(900)
TOPIC = "Trastuzumab in HER2-positive breast cancer"
RATE_PER_MIN = 200  # per token; the burst test goes past it, the other tests stay well under
TINY = {"template": "drug", "max_perspectives": 1, "max_turns": 1, "gap_turns": 0}


def quick_token(name: str, scope: str = "run") -> str:
    """A new token made in this process (the store ``research token create`` uses)."""
    return open_store().tokens.create(name, scope)[1]


@pytest.fixture(scope="module")
def api(serve_api, finished_corpus) -> ServedApi:
    return serve_api(
        "api",
        RESEARCH_JOB_BACKEND="thread",
        RESEARCH_API_RATE_PER_MIN=str(RATE_PER_MIN),
        RESEARCH_CORPUS_ROOTS=str(finished_corpus.parent),  # the corpus is registered
    )


@pytest.fixture(scope="module")
def auth(api) -> dict[str, str]:
    return {"Authorization": f"Bearer {quick_token('tests', 'admin')}"}


def follow(api: ServedApi, run_id: str, headers: dict[str, str], **extra: str) -> list[dict]:
    """The SSE messages of ``/runs/{id}/events`` up to and including ``end``, parsed
    (``{"id", "event", "data"}``; data decoded from JSON)."""
    out: list[dict] = []
    msg: dict = {}
    with api.client.stream(
        "GET", f"/runs/{run_id}/events", headers={**headers, **extra}, timeout=300
    ) as resp:
        assert resp.status_code == 200
        assert resp.headers["content-type"].startswith("text/event-stream")
        for line in resp.iter_lines():
            if not line:
                if "data" in msg:
                    msg["data"] = json.loads(msg["data"])
                    out.append(msg)
                    if msg.get("event") == "end":
                        return out
                msg = {}
            elif not line.startswith(":"):  # a ping comment
                name, _, value = line.partition(":")
                msg[name] = value[1:] if value.startswith(" ") else value
    raise AssertionError(f"the stream closed without an end event after {len(out)} messages")


@pytest.fixture(scope="module")
def completed(api, auth, finished_corpus) -> dict:
    """A run started over HTTP with plan review, approved over HTTP and followed to the end.
    Returns ``{run_id, first, second}`` (the two SSE transcripts)."""
    body = {"topic": TOPIC, "corpus": str(finished_corpus), "review": True, **TINY}
    resp = api.client.post("/runs", json=body, headers=auth)
    assert resp.status_code == 201, resp.text
    run_id = resp.json()["run_id"]
    assert resp.headers["location"] == f"/runs/{run_id}"
    first = follow(api, run_id, auth)
    assert first[-1]["data"]["status"] == "awaiting_review", first[-1]
    approved = api.client.post(f"/runs/{run_id}/approve", headers=auth)
    assert approved.status_code == 200 and approved.json()["status"] == "pending"
    second = follow(api, run_id, auth, **{"Last-Event-ID": first[-2]["id"]})
    assert second[-1]["data"] == {"status": "complete", "error": None}, second[-3:]
    return {"run_id": run_id, "first": first, "second": second}


def test_events_stream_to_review_then_complete_without_repeats(completed):
    first, second = completed["first"], completed["second"]
    types = [m["event"] for m in first]
    assert types[0] == "run.created" and "review.awaiting" in types
    statuses = [m["data"]["data"]["status"] for m in first + second if m["event"] == "status"]
    assert statuses[0] == "planning" and "awaiting_review" in statuses
    assert statuses[-1] == "complete"
    ids = [m["id"] for m in first[:-1] + second[:-1]]  # `end` carries no id
    assert len(ids) == len(set(ids)), "the reconnect (Last-Event-ID) repeated events"
    assert {"plan.approved", "turn.finished", "report.ready"} <= {m["event"] for m in second}
    line = next(m for m in first if m["event"] == "status")["data"]["line"]
    assert "planning" in line  # the dashboard's human line rides along


def test_snapshot_list_and_dashboard_history(api, auth, completed):
    run_id = completed["run_id"]
    snap = api.client.get(f"/runs/{run_id}", headers=auth).json()
    assert snap["run"]["run_id"] == run_id and snap["run"]["status"] == "complete"
    assert snap["report"]["references"] and snap["turns"] and snap["sources"]
    rows = api.client.get("/runs", headers=auth).json()
    assert rows[0]["run_id"] == run_id and rows[0]["sources"] == snap["sources"]["total"]
    store = open_store()  # the test process is pointed at the same Redis (private_env)
    current = store.list_runs(limit=200)  # as the Launch page's run history
    stats = run_stats(store, [r.run_id for r in current])
    hist = history_rows(current, {k: v["sources"] for k, v in stats.items()}, stats=stats)
    row = next(r for r in hist if r["run_id"] == run_id)
    assert row["status"].endswith("complete") and row["citations"] == len(
        snap["report"]["references"]
    )


class _Html(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []

    def handle_starttag(self, tag, attrs) -> None:
        self.tags.append(tag)


def test_report_in_every_format(api, auth, completed):
    run_id = completed["run_id"]
    refs = api.client.get(f"/runs/{run_id}", headers=auth).json()["report"]["references"]

    def get(fmt: str) -> httpx.Response:
        resp = api.client.get(f"/runs/{run_id}/report", params={"format": fmt}, headers=auth)
        assert resp.status_code == 200, (fmt, resp.text[:300])
        assert resp.content and "attachment; filename=" in resp.headers["content-disposition"]
        return resp

    md = get("md")
    assert md.headers["content-type"] == "text/markdown; charset=utf-8"
    assert md.text.startswith("# ") and "[1]" in md.text
    page = get("html")
    assert page.headers["content-type"].startswith("text/html")
    parser = _Html()
    parser.feed(page.text)
    assert {"html", "body", "h1", "a"} <= set(parser.tags)
    pdf = get("pdf")
    assert pdf.headers["content-type"] == "application/pdf"
    text = " ".join(p.extract_text() for p in PdfReader(io.BytesIO(pdf.content)).pages)
    assert "Trastuzumab" in text
    docx = get("docx")
    assert docx.headers["content-type"].startswith("application/vnd.openxmlformats")
    assert any("Trastuzumab" in p.text for p in Document(io.BytesIO(docx.content)).paragraphs)
    ris = get("ris")
    assert ris.headers["content-type"] == "application/x-research-info-systems"
    assert len(rispy.loads(ris.text)) == len(refs)
    bib = get("bibtex")
    assert bib.headers["content-type"] == "application/x-bibtex"
    assert len(bibtexparser.parse_string(bib.text).entries) == len(refs)
    bad = api.client.get(f"/runs/{run_id}/report", params={"format": "odt"}, headers=auth)
    assert bad.status_code == 422 and "md, html, pdf, docx" in bad.json()["detail"]


def test_ask_a_followup_and_approve_conflict(api, auth, completed):
    run_id = completed["run_id"]
    question = "What cardiac side effects of trastuzumab were reported?"
    resp = api.client.post(f"/runs/{run_id}/ask", json={"question": question}, headers=auth)
    assert resp.status_code == 202, resp.text
    where = resp.headers["location"]
    deadline = time.monotonic() + 240
    while (got := api.client.get(where, headers=auth).json())["status"] == "pending":
        assert got["alive"] and time.monotonic() < deadline, got
        time.sleep(0.5)
    assert got["status"] == "answered" and got["question"] == question and got["answer"]
    empty = api.client.post(f"/runs/{run_id}/ask", json={"question": " "}, headers=auth)
    assert empty.status_code == 422 and empty.json()["code"] == "invalid_question"
    again = api.client.post(f"/runs/{run_id}/approve", headers=auth)
    assert again.status_code == 409 and again.json()["code"] == "not_awaiting_review"


def test_bad_options_are_422_saying_what_to_fix(api, auth, finished_corpus):
    before = len(api.client.get("/runs", headers=auth).json())
    base = {"topic": TOPIC, "corpus": str(finished_corpus)}
    turns = api.client.post("/runs", json={**base, "max_turns": 99}, headers=auth)
    assert turns.status_code == 422
    assert "max turns must be a whole number from 1 to" in turns.json()["detail"]
    typo = api.client.post("/runs", json={**base, "max_turn": 2}, headers=auth)
    assert typo.status_code == 422 and "max_turn: Extra inputs" in typo.json()["detail"]
    engine = api.client.post("/runs", json={**base, "engine": "gpt"}, headers=auth)
    assert engine.status_code == 422 and engine.json()["code"] == "unknown_engine"
    missing = str(finished_corpus.parent / "nope.jsonl")
    corpus = api.client.post("/runs", json={**base, "corpus": missing}, headers=auth)
    assert corpus.status_code == 422 and "does not exist" in corpus.json()["detail"]
    outside = api.client.post("/runs", json={**base, "corpus": "/nope.jsonl"}, headers=auth)
    assert outside.status_code == 403 and outside.json()["code"] == "corpus_not_registered"
    notify = api.client.post("/runs", json={**base, "notify": ["nosuch://x"]}, headers=auth)
    assert notify.status_code == 422 and "nosuch" in notify.json()["detail"]
    assert len(api.client.get("/runs", headers=auth).json()) == before  # nothing was created
    for path in ("/runs/0123456789abcdef", "/runs/not-an-id", "/runs/0123456789abcdef/report"):
        missing = api.client.get(path, headers=auth)
        assert missing.status_code == 404 and missing.json()["code"] == "run_not_found", path


def test_cancel_then_delete(api, auth, finished_corpus):
    body = {"topic": "HER2 testing in gastric cancer", "corpus": str(finished_corpus), **TINY}
    run_id = api.client.post("/runs", json=body, headers=auth).json()["run_id"]
    cancel = api.client.post(f"/runs/{run_id}/cancel", headers=auth)
    assert cancel.status_code == 202 and cancel.json()["action"] == "cancel_requested"
    events = follow(api, run_id, auth)
    assert events[-1]["data"]["status"] == "cancelled"
    assert {"by": "api"} in [m["data"]["data"] for m in events if m["event"] == "cancel.requested"]
    gone = api.client.delete(f"/runs/{run_id}", headers=auth)
    assert gone.status_code == 200 and gone.json()["action"] == "deleted"
    assert api.client.get(f"/runs/{run_id}", headers=auth).status_code == 404
    assert run_id not in [r.run_id for r in open_store().list_runs(limit=200)]


def test_tokens_401_revocation_and_only_digests_stored(api):
    assert api.client.get("/runs").status_code == 401
    bad = api.client.get("/runs", headers={"Authorization": "Bearer rdk_not-a-token"})
    assert bad.status_code == 401 and bad.headers["www-authenticate"] == "Bearer"
    token = api.token("revoke-me")
    headers = {"Authorization": f"Bearer {token}"}
    assert api.client.get("/runs", headers=headers).status_code == 200
    listed = json.loads(api.cli("token", "list", "--json").stdout)
    mine = next(t for t in listed if t["name"] == "revoke-me")
    assert mine["created_at"] <= mine["last_used_at"] <= time.time()
    r = redis.Redis.from_url(api.redis_url, decode_responses=True)
    stored = json.dumps({k: r.hgetall(k) for k in r.scan_iter("api:*")})
    assert hashlib.sha256(token.encode()).hexdigest() in stored
    assert token not in stored  # only its SHA-256 digest is kept
    with pytest.raises(InputError, match="exists already"):
        open_store().tokens.create("revoke-me")
    out = api.cli("token", "revoke", "revoke-me")
    assert out.returncode == 0, out.stderr
    refused = api.client.get("/runs", headers=headers)
    assert refused.status_code == 401 and "revoked" in refused.json()["detail"]
    with pytest.raises(InputError, match="No API token named"):
        open_store().tokens.revoke("revoke-me")
    assert main(["serve", "--port", "99999"]) == 2  # checked before anything starts


def test_rate_limit_per_token_is_429_with_retry_after(api, auth):
    headers = {"Authorization": f"Bearer {quick_token('burst')}"}
    codes = [
        api.client.get("/runs", params={"limit": 1}, headers=headers).status_code
        for _ in range(RATE_PER_MIN + 1)
    ]
    assert codes[:RATE_PER_MIN].count(200) == RATE_PER_MIN and codes[-1] == 429
    limited = api.client.get("/runs", params={"limit": 1}, headers=headers)
    assert limited.status_code == 429 and limited.json()["code"] == "rate_limited"
    assert 1 <= int(limited.headers["retry-after"]) <= 60
    assert api.client.get("/runs", params={"limit": 1}, headers=auth).status_code == 200


def test_openapi_docs(api):
    assert api.client.get("/docs").status_code == 200
    spec = api.client.get("/openapi.json").json()
    assert {"/runs", "/runs/{run_id}/events", "/runs/{run_id}/report"} <= set(spec["paths"])
    assert spec["components"]["securitySchemes"]["token"]["scheme"] == "bearer"
