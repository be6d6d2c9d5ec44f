"""Notifications of a run's end: real runs (offline extractive engine, one perspective, one
turn, no gap rounds) deliver to a real HTTP receiver on loopback — signed webhooks and Apprise's
``json://`` — and a dead receiver never fails the run but is recorded and shown by
``research show --json``. No mocks: every delivery crosses a socket."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from rq import Queue
from streamlit.testing.v1 import AppTest

from research import jobs
from research.cli import main
from research.config import load_settings
from research.errors import InputError
from research.jobs import review, workers
from research.models import Report
from research.notify import deliver_run, send, wait_idle
from research.notify.base import Notification, Target, redact
from research.notify.targets import check_targets, enabled_events
from research.store import open_store

ROOT = Path(__file__).resolve().parents[1]
SECRET = "whsec-test-0123456789"
TOKEN = "s3cr3tPathToken42"  # the secret part of every target URL: must never be stored or shown
DASHBOARD = "https://desk.example.org/app"
TOPIC = "Trastuzumab in HER2-positive breast cancer"
TINY = dict(max_perspectives=1, max_turns=1, gap_turns=0, depth="brief")


class Receiver:
    """A webhook receiver: ``http.server`` on 127.0.0.1 (random port) in a thread. Records
    every POST (path, headers, raw body); ``answers[path]`` lists the statuses to answer first
    (then 200)."""

    def __init__(self) -> None:
        self.posts: list[dict] = []
        self.answers: dict[str, list[int]] = {}
        self.lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with outer.lock:
                    outer.posts.append(
                        {"path": self.path, "headers": dict(self.headers), "body": body}
                    )
                    queue = outer.answers.get(self.path) or []
                    status = queue.pop(0) if queue else 200
                self.send_response(status)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    def url(self, path: str, scheme: str = "http") -> str:
        return f"{scheme}://127.0.0.1:{self.server.server_address[1]}{path}"

    def at(self, path: str) -> list[dict]:
        with self.lock:
            return [p for p in self.posts if p["path"].split("?")[0] == path]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture()
def receiver():
    rec = Receiver()
    yield rec
    rec.close()


@pytest.fixture()
def notify_env(data_dir, monkeypatch):
    """The test Redis and data dir, a webhook secret, a dashboard URL and fast retries."""
    for name, value in {
        "RESEARCH_WEBHOOK_SECRET": SECRET,
        "RESEARCH_DASHBOARD_URL": DASHBOARD,
        "RESEARCH_NOTIFY_BACKOFF_S": "0.01",
        "RESEARCH_NOTIFY_TIMEOUT_S": "3",
        "RESEARCH_NOTIFY_ATTEMPTS": "3",
        # the receivers listen on loopback, which the outbound-URL guard refuses unless allowed
        "RESEARCH_OUTBOUND_ALLOW": "127.0.0.1",
    }.items():
        monkeypatch.setenv(name, value)
    for name in ("RESEARCH_WEBHOOK_URLS", "RESEARCH_APPRISE_URLS", "RESEARCH_NOTIFY_ON"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("RESEARCH_NOTIFY_KEY", raising=False)
    return data_dir


def dead_url(path: str) -> str:
    """An http URL on a loopback port nobody listens on (bound, then closed)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}{path}"


def verify_signature(post: dict, secret: str = SECRET) -> dict:
    """The receiver's side, written from the documented scheme: HMAC-SHA256 over
    ``{timestamp}.{raw body}``, header ``sha256=<hex>``, timestamp within 5 minutes. Returns
    the parsed body."""
    headers = {k.lower(): v for k, v in post["headers"].items()}
    stamp = headers["x-research-timestamp"]
    expected = hmac.new(
        secret.encode(), stamp.encode() + b"." + post["body"], hashlib.sha256
    ).hexdigest()
    assert hmac.compare_digest(headers["x-research-signature"], "sha256=" + expected)
    assert abs(time.time() - int(stamp)) < 300
    body = json.loads(post["body"])
    assert headers["x-research-event"] == body["event"]
    return body


def snapshot(run_id: str, capsys) -> dict:
    """``research show RUN --json`` (the CLI's own code, in this process)."""
    capsys.readouterr()
    assert main(["show", run_id, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def no_secret_anywhere(run_id: str, data_dir: Path, *texts: str) -> None:
    """The target's secret part is in none of the run's Redis keys, its files, nor ``texts``."""
    store = open_store()
    for key in store.r.scan_iter(match=f"*{run_id}*"):
        kind = store.r.type(key)
        dump = {
            "string": lambda k: store.r.get(k),
            "hash": lambda k: json.dumps(store.r.hgetall(k)),
            "list": lambda k: json.dumps(store.r.lrange(k, 0, -1)),
            "stream": lambda k: json.dumps(store.r.xrange(k)),
            "zset": lambda k: json.dumps(store.r.zrange(k, 0, -1)),
            "set": lambda k: json.dumps(sorted(store.r.smembers(k))),
        }[kind](key)
        assert TOKEN not in (dump or ""), key
    for path in data_dir.rglob("*"):
        if path.is_file() and path.name != ".notify-key":
            assert TOKEN.encode() not in path.read_bytes(), path
    for text in texts:
        assert TOKEN not in text


@pytest.mark.slow
def test_review_then_complete_reach_webhook_and_apprise(
    notify_env, receiver, finished_corpus, capsys, caplog
):
    """One run awaits plan review, is approved and completes: each end reaches the signed
    webhook and Apprise's json:// target once; the records are in ``research show --json``."""
    caplog.set_level("DEBUG")
    hook = receiver.url(f"/hooks/{TOKEN}")
    apprise_url = receiver.url(f"/apprise/{TOKEN}", scheme="json")
    config = jobs.make_config(
        TOPIC, corpus=str(finished_corpus), review=True, notify=[hook, apprise_url], **TINY
    )
    assert config.notify == [redact(hook), redact(apprise_url)]
    assert TOKEN not in config.model_dump_json()

    state = jobs.run_foreground(config)
    assert state.status == "awaiting_review"
    assert wait_idle(30)
    [waiting] = receiver.at(f"/hooks/{TOKEN}")
    body = verify_signature(waiting)
    assert body["event"] == "run.awaiting_review" and body["status"] == "awaiting_review"
    assert body["run_id"] == state.run_id and body["topic"] == TOPIC
    assert body["url"] == f"{DASHBOARD}/plan?run={state.run_id}"
    assert body["finished_at"] is None

    assert review.approve(state.run_id, run="foreground") == "complete"
    assert wait_idle(30)
    hooks = receiver.at(f"/hooks/{TOKEN}")
    assert [verify_signature(p)["event"] for p in hooks] == ["run.awaiting_review", "run.complete"]
    done = json.loads(hooks[1]["body"])
    summary = jobs.run_summary(state.run_id)
    report = open_store().get_doc(state.run_id, "report", Report)
    assert done["status"] == "complete" and done["error"] is None
    assert done["url"] == f"{DASHBOARD}/report?run={state.run_id}"
    assert done["summary"] == {
        "sources": summary["sources"],
        "cited": summary["citations"],
        "words": len(report.markdown.split()),
        "cost_usd": 0.0,
    }
    assert done["summary"]["sources"] > 0 and done["summary"]["cited"] > 0
    assert done["finished_at"].endswith("Z")

    apprised = [json.loads(p["body"]) for p in receiver.at(f"/apprise/{TOKEN}")]
    assert [a["type"] for a in apprised] == ["info", "success"]
    assert apprised[1]["title"] == f"Research run complete: {TOPIC}"
    assert f"{done['summary']['sources']} sources" in apprised[1]["message"]
    assert f"{DASHBOARD}/report?run={state.run_id}" in apprised[1]["message"]

    snap = snapshot(state.run_id, capsys)
    records = snap["notifications"]
    assert [(n["event"], n["kind"], n["ok"]) for n in records] == [
        ("run.awaiting_review", "webhook", True),
        ("run.awaiting_review", "apprise", True),
        ("run.complete", "webhook", True),
        ("run.complete", "apprise", True),
    ]
    assert all(n["attempts"] == 1 and n["origin"] == "run" for n in records)
    assert records[0]["status_code"] == 200 and records[0]["signed"] is True
    assert records[0]["target"] == redact(hook) and records[1]["target"] == redact(apprise_url)
    sent = [e for e in snap["events"] if e["type"] == "notification.sent"]
    assert len(sent) == 4
    no_secret_anywhere(state.run_id, notify_env, json.dumps(snap), caplog.text)


@pytest.mark.slow
def test_failed_run_on_an_rq_worker_is_notified(
    notify_env, receiver, finished_corpus, tmp_path, monkeypatch
):
    """RESEARCH_JOB_BACKEND=rq: the run's own webhook is stored encrypted when it is queued; the
    corpus disappears before a real ``research worker --burst`` runs it, so it fails
    (corpus_error); the worker opens the run's target (the data dir's key) and also notifies
    its own settings' webhook: both get a signed ``run.failed`` with the error."""
    corpus = tmp_path / "vanishing.jsonl"
    shutil.copy(finished_corpus, corpus)
    monkeypatch.setenv("RESEARCH_JOB_BACKEND", "rq")
    Queue(workers.QUEUE, connection=workers.rq_connection()).empty()
    config = jobs.make_config(TOPIC, corpus=str(corpus), notify=[receiver.url("/run-hook")])
    run_id = jobs.start_run(config)  # queued: nothing runs in this process
    corpus.unlink()  # the corpus breaks between launch and execution
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "RESEARCH_JOB_BACKEND": "rq",
        "RESEARCH_WEBHOOK_URLS": receiver.url("/worker-hook"),
        "RESEARCH_NOTIFY_ON": "failed",
    }
    worker = subprocess.run(
        [sys.executable, "-m", "research.cli", "worker", "--burst", "--no-resume"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert worker.returncode == 0, worker.stderr[-2000:]
    state = open_store().get_run(run_id)
    assert state.status == "failed" and state.error_code == "corpus_error"
    for path in ("/run-hook", "/worker-hook"):
        [post] = receiver.at(path)
        body = verify_signature(post)
        assert body["event"] == "run.failed" and body["status"] == "failed"
        assert body["error"]["code"] == "corpus_error"
        assert "vanishing.jsonl" in body["error"]["message"]
        assert body["summary"] == {"sources": 0, "cited": 0, "words": 0, "cost_usd": 0.0}
        assert body["url"] == f"{DASHBOARD}/report?run={run_id}"
    records = open_store().notifications.list(run_id)
    assert sorted((r.origin, r.ok, r.event) for r in records) == [
        ("run", True, "run.failed"),
        ("settings", True, "run.failed"),
    ]


@pytest.mark.slow
def test_dead_receiver_does_not_fail_the_run_and_is_shown(
    cli_env, finished_corpus, capsys, monkeypatch
):
    """``research run --notify <closed port>`` (its own process, which ends only after the
    delivery): the run completes (exit 0); the delivery is tried 3 times, recorded as failed,
    and shown by ``research show`` (JSON and text)."""
    target = dead_url(f"/hook/{TOKEN}")
    out = cli_env(
        "run", TOPIC, "--corpus", str(finished_corpus), "--max-perspectives", "1",
        "--max-turns", "1", "--gap-turns", "0", "--depth", "brief", "--notify", target,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]
    assert f"notification run.complete → {redact(target)}: FAILED after 3 attempt(s)" in out.stderr
    run_id = next(ln.split()[-1] for ln in out.stdout.splitlines() if ln.startswith("run id:"))
    monkeypatch.setenv("RESEARCH_DATA_DIR", cli_env.env["RESEARCH_DATA_DIR"])
    monkeypatch.setenv("REDIS_URL", cli_env.env["REDIS_URL"])
    snap = snapshot(run_id, capsys)
    assert snap["run"]["status"] == "complete"
    assert snap["run"]["config"]["notify"] == [redact(target)]
    [record] = snap["notifications"]
    assert record["event"] == "run.complete" and record["ok"] is False
    assert record["attempts"] == 3 and record["status_code"] is None
    assert "ConnectError" in record["error"] and record["target"] == redact(target)
    failed = [e for e in snap["events"] if e["type"] == "notification.failed"]
    assert failed and failed[0]["data"]["attempts"] == 3
    assert main(["show", run_id]) == 0
    text = capsys.readouterr().out
    assert "run.complete" in text and "FAILED after 3 attempt(s)" in text
    assert TOKEN not in out.stdout + out.stderr + json.dumps(snap) + text
    no_secret_anywhere(run_id, cli_env.data)


@pytest.fixture()
def cli_env(tmp_path, redis_server):
    """``python -m research.cli ARGS`` in its own data dir on the test Redis, fast retries."""
    data = tmp_path / "cli-data"
    env = {
        **os.environ,
        "RESEARCH_DATA_DIR": str(data),
        "REDIS_URL": redis_server,
        "PYTHONPATH": str(ROOT),  # this checkout's package
        "RESEARCH_NOTIFY_BACKOFF_S": "0.01",
        "RESEARCH_NOTIFY_TIMEOUT_S": "2",
        "RESEARCH_NOTIFY_ATTEMPTS": "3",
        "RESEARCH_OUTBOUND_ALLOW": "127.0.0.1",  # the loopback receivers
    }
    for name in ("RESEARCH_WEBHOOK_URLS", "RESEARCH_APPRISE_URLS", "RESEARCH_NOTIFY_ON"):
        env.pop(name, None)

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "research.cli", *args],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )

    run.data, run.env = data, env
    return run


def test_retries_5xx_but_not_4xx(notify_env, receiver):
    """A webhook answering 503 twice then 200 is delivered at the third attempt; a 400 is
    final at the first; the records say so."""
    receiver.answers = {"/flaky": [503, 503], "/refuses": [400]}
    note = Notification(event="run.complete", body={"event": "run.complete"}, title="t", text="x")
    targets = [
        Target("webhook", receiver.url("/flaky")),
        Target("webhook", receiver.url("/refuses")),
    ]
    flaky, refused = send(note, targets, load_settings())
    assert flaky.ok and flaky.attempts == 3 and flaky.status_code == 200
    assert len(receiver.at("/flaky")) == 3
    ids = {p["headers"]["X-Research-Delivery"] for p in receiver.at("/flaky")}
    assert ids == {flaky.delivery_id}  # one delivery id across the retries
    assert not refused.ok and refused.attempts == 1 and refused.error == "HTTP 400"


def test_bad_targets_are_refused_before_anything_is_written(notify_env, r, capsys):
    """``--notify`` with something that is not a target: exit 2, a message without the
    secret, no run stored."""
    code = main(["run", TOPIC, "--notify", f"nonsense://{TOKEN}@x", "--max-turns", "1"])
    err = capsys.readouterr().err
    assert code == 2 and "invalid_notify_target" in err and TOKEN not in err
    assert not r.zcard("runs")
    for bad in ("not a url", "http:///nohost", "https://x.org/" + "a" * 2100):
        with pytest.raises(InputError):
            check_targets([bad])
    with pytest.raises(InputError, match="at most 10"):
        check_targets([f"https://h{i}.example.org/x" for i in range(11)])
    kinds = [t.kind for t in check_targets(f"https://a.org/x, slack://{TOKEN}/B/C\njson://h/p")]
    assert kinds == ["webhook", "apprise", "apprise"]


def test_notify_on_names(notify_env, monkeypatch):
    for value, expected in (
        ("complete,failed,awaiting_review", {"run.complete", "run.failed", "run.awaiting_review"}),
        ("run.failed", {"run.failed"}),
        ("batch.complete", {"batch.complete"}),
        ("all", {"run.complete", "run.failed", "run.awaiting_review", "batch.complete"}),
    ):
        monkeypatch.setenv("RESEARCH_NOTIFY_ON", value)
        assert enabled_events(load_settings()) == expected
    monkeypatch.setenv("RESEARCH_NOTIFY_ON", "done")
    with pytest.raises(InputError, match="complete, failed, awaiting_review, batch.complete"):
        jobs.make_config(TOPIC, corpus="", search="wikipedia")


def test_targets_sealed_with_another_key_are_reported(notify_env, receiver, monkeypatch):
    """A worker whose RESEARCH_NOTIFY_KEY differs from the launcher's cannot open the run's
    targets: nothing is sent and the run's record says why."""
    monkeypatch.setenv("RESEARCH_NOTIFY_KEY", "launcher-key")
    config = jobs.make_config(TOPIC, search="wikipedia", notify=[receiver.url("/k")])
    run_id = jobs.create_run(config)
    token = open_store().notifications.sealed_targets(run_id)
    assert token and TOKEN not in token and "127.0.0.1" not in token
    monkeypatch.setenv("RESEARCH_NOTIFY_KEY", "worker-key")
    [record] = deliver_run(run_id, "failed", load_settings())
    assert not record.ok and "cannot be decrypted" in record.error
    assert receiver.at("/k") == []
    monkeypatch.setenv("RESEARCH_NOTIFY_KEY", "launcher-key")
    [sent] = deliver_run(run_id, "failed", load_settings())
    assert sent.ok and len(receiver.at("/k")) == 1


@pytest.mark.slow
def test_launch_form_notifies_and_the_run_page_shows_deliveries(
    notify_env, receiver, finished_corpus
):
    """The launch form's Notifications field reaches the run (redacted in its config); the run
    page's header shows the deliveries: one sent, one failed (a closed port)."""
    hook, dead = receiver.url(f"/form/{TOKEN}"), dead_url(f"/gone/{TOKEN}")
    at = AppTest.from_file(str(ROOT / "app_pages" / "launch.py"), default_timeout=60).run()
    at.text_area[0].input(TOPIC)
    at.text_input[0].input(str(finished_corpus))
    at.number_input[0].set_value(1)
    at.number_input[1].set_value(1)
    next(w for w in at.number_input if w.label == "Gap rounds").set_value(0)
    at.text_area(key="launch_notify").input(f"{hook}\n{dead}")
    at.button[0].click().run()
    assert not at.exception, [e.value for e in at.exception]
    run_id = at.session_state["launched_run"]
    state = jobs.wait_for(run_id, poll_s=0.2, timeout_s=300)
    assert state.status == "complete", state.error
    assert state.config.notify == [redact(hook), redact(dead)]
    assert wait_idle(60)
    assert verify_signature(receiver.at(f"/form/{TOKEN}")[0])["run_id"] == run_id

    page = AppTest.from_file(str(ROOT / "app_pages" / "plan.py"), default_timeout=60)
    page.query_params["run"] = run_id
    page.run()
    assert not page.exception, [e.value for e in page.exception]
    captions = [str(c.value).replace("\\", "").replace("`", "") for c in page.caption]
    line = next(c for c in captions if "Notifications:" in c)
    assert "1 sent, 1 failed" in line and redact(dead).split(" #")[0] in line
    [table] = [d.value for d in page.dataframe if "attempts" in d.value.columns]
    assert list(table["result"]) == ["sent", "failed"] and list(table["attempts"]) == [1, 3]
    assert TOKEN not in " ".join(captions) + table.to_string()


def test_a_batch_announces_its_end_once(notify_env, receiver, finished_corpus, monkeypatch):
    """Two runs queued as one batch on the thread backend: each run's end reaches the settings'
    webhook, and when the second ends ``batch.complete`` arrives once, signed, with both runs."""
    from research.jobs.batch import submit_batch, wait_batch  # noqa: PLC0415 - as the Batch tab calls them

    hook = receiver.url(f"/batch/{TOKEN}")
    monkeypatch.setenv("RESEARCH_WEBHOOK_URLS", hook)
    configs = [
        jobs.make_config(t, corpus=str(finished_corpus), **TINY)
        for t in (TOPIC, "Pertuzumab with trastuzumab")
    ]
    batch = submit_batch(configs, "HER2 pair", backend="thread")
    assert wait_batch(batch.batch_id, poll_s=0.5, timeout_s=300)["done"]
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(receiver.at(f"/batch/{TOKEN}")) < 3:
        time.sleep(0.2)
    assert wait_idle(30)
    bodies = [verify_signature(p) for p in receiver.at(f"/batch/{TOKEN}")]
    assert sorted(b["event"] for b in bodies) == ["batch.complete", "run.complete", "run.complete"]
    (done,) = [b for b in bodies if b["event"] == "batch.complete"]
    assert done["batch_id"] == batch.batch_id and done["name"] == "HER2 pair"
    assert done["total"] == 2 and done["counts"] == {"complete": 2}
    assert [r["run_id"] for r in done["runs"]] == batch.run_ids
    assert [r["url"] for r in done["runs"]] == [
        f"{DASHBOARD}/report?run={rid}" for rid in batch.run_ids
    ]
    recorded = [n.event for rid in batch.run_ids for n in open_store().notifications.list(rid)]
    assert recorded.count("batch.complete") == 1  # on the run that ended last
