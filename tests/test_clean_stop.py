"""A clean stop: a ``research run`` ended by ``timeout`` (SIGTERM forwarded by it mid-run, or its
own time running out) leaves no embedded redis-server of its data dir and its run resumable;
``make run`` stopped by SIGTERM to its process group (the dashboard and the API at the same
moment) leaves none; and ``research run --json`` prints nothing but JSON on stdout while every
model call fails or times out (litellm's banners off).

Real processes: the ``research`` command and ``make run`` as subprocesses on their own data
dirs (embedded Redis, not the test server), litellm against the loopback model server. The
browser case (SIGINT with a dashboard page open) is ``tests/browser/test_clean_stop_browser.py``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from served_api import free_port
from test_server_lifecycle import _env, _servers

from research.devtools.loopback_llm import Faults, LoopbackLLM
from research.jobs import RESUMABLE

pytestmark = pytest.mark.timeout(600)
REPO = Path(__file__).resolve().parents[1]
TOPIC = "Trastuzumab in HER2-positive breast cancer"
RUN = [sys.executable, "-m", "research.cli", "run"]


def _listed(data: Path) -> list[dict]:
    """``research list --json`` on the data dir ``data``: one row per run."""
    listed = subprocess.run(
        [sys.executable, "-m", "research.cli", "list", "--json"],
        env=_env(data),
        capture_output=True,
        text=True,
        timeout=120,
    )
    return json.loads(listed.stdout)


def _no_server_within(data: Path, seconds: float) -> list:
    deadline = time.monotonic() + seconds
    while _servers([data]) and time.monotonic() < deadline:
        time.sleep(0.1)
    return _servers([data])


def test_timeout_ending_a_run_leaves_no_server_and_the_run_resumable(tmp_path, finished_corpus):
    data = tmp_path / "data"
    big = ["--max-perspectives", "4", "--max-turns", "6", "--gap-turns", "5", "--depth", "deep"]
    # `timeout` forwards the SIGTERM it is sent to the run: sent 2 s after the run has started
    # (its "run <id>" line), so the stop lands mid-run on a fast machine as on a slow one
    proc = subprocess.Popen(
        [
            "timeout",
            "-s",
            "TERM",
            "600",
            sys.executable,
            "-m",
            "research.cli",
            "run",
            TOPIC,
            "--corpus",
            str(finished_corpus),
            *big,
        ],  # fmt: skip
        env={**_env(data), "PYTHONUNBUFFERED": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    started = ""
    while not started:
        line = proc.stdout.readline()
        if not line:
            break
        started = line if line.startswith("run ") or " run " in line else ""
    assert started, proc.stderr.read()[-1500:] if proc.stderr else ""
    time.sleep(2)  # the CLI is following its run (the loop that marks it interrupted on SIGTERM)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode in (124, 143), (proc.returncode, out[-1500:], err[-1500:])
    assert _no_server_within(data, 15) == [], err[-3000:]
    [row] = _listed(data)
    assert row["status"] == "interrupted", row  # `research resume` continues it
    assert _no_server_within(data, 15) == []


def test_timeout_running_out_on_a_run_leaves_no_server(tmp_path, finished_corpus):
    """``timeout 20 research run …`` as a script writes it: timeout's own clock ends the run
    (exit 124: the time ran out; it sends SIGTERM to the run and to its process group). Whether
    the run had started or was still starting up when the time ran out, no redis-server of the
    data dir is left, and a run that was created is left resumable (or complete, when it
    finished before the time ran out)."""
    data = tmp_path / "data"
    big = ["--max-perspectives", "4", "--max-turns", "6", "--gap-turns", "5", "--depth", "deep"]
    out = subprocess.run(
        ["timeout", "20", *RUN, TOPIC, "--corpus", str(finished_corpus), *big],
        env=_env(data),
        capture_output=True,
        text=True,
        timeout=300,
    )
    # 124: the time ran out; 0: a fast machine finished the run first (then nothing was cut)
    assert out.returncode in (0, 124), (out.returncode, out.stdout[-1500:], out.stderr[-1500:])
    assert _no_server_within(data, 15) == []
    rows = _listed(data)
    # an idle machine can finish the run before the time runs out (it was then ending the
    # process): complete is a clean end too; what must not be left is a run still marked running
    ended = {*RESUMABLE, "complete"}
    assert all(row["status"] in ended for row in rows), rows
    assert _no_server_within(data, 15) == []


def test_sigterm_to_make_runs_group_leaves_no_server(tmp_path):
    data = tmp_path / "data"
    api, ui = free_port(), free_port()
    env = {**_env(data), "STREAMLIT_SERVER_PORT": str(ui), "STREAMLIT_SERVER_HEADLESS": "true"}
    proc = subprocess.Popen(
        ["make", "-s", "run", f"API_PORT={api}"],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # its own process group, as a terminal gives it
    )
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                ok = httpx.get(f"http://127.0.0.1:{api}/health", timeout=2).status_code == 200
                if ok and httpx.get(f"http://127.0.0.1:{ui}/", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert proc.poll() is None and time.monotonic() < deadline, "make run did not start"
            time.sleep(0.3)
        assert len(_servers([data])) == 1
        os.killpg(proc.pid, signal.SIGTERM)  # the dashboard, the API and make at once
        proc.wait(timeout=90)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert _no_server_within(data, 15) == []


def test_run_json_prints_only_json_while_every_model_call_fails(tmp_path, finished_corpus):
    data = tmp_path / "data"
    # a time-out (the reply stalls past RESEARCH_LLM_TIMEOUT_S) as well as errors and bad JSON
    faults = Faults(rate=1.0, kinds=("500", "bad_json", "timeout"), hang_s=3.0)
    with LoopbackLLM(faults=faults) as llm:
        env = {
            **_env(data),
            "OPENAI_API_KEY": "sk-test-not-a-key",
            "OPENAI_API_BASE": llm.url,
            "RESEARCH_LLM_BACKOFF_S": "0.01",
            "RESEARCH_LLM_MAX_ATTEMPTS": "2",
            "RESEARCH_LLM_TIMEOUT_S": "1",
        }
        out = subprocess.run(
            [
                sys.executable,
                "-m",
                "research.cli",
                "run",
                TOPIC,
                "--corpus",
                str(finished_corpus),
                "--template",
                "drug",
                "--engine",
                "litellm",
                "--model",
                "openai/gpt-4o-mini",
                "--max-perspectives",
                "1",
                "--max-turns",
                "1",
                "--json",
            ],  # fmt: skip
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert llm.stats()["requests"] >= 2  # the calls really went out and failed
    lines = [ln for ln in out.stdout.splitlines() if ln.strip()]
    assert lines, out.stderr[-2000:]
    for line in lines:
        json.loads(line)  # any banner or progress line on stdout would fail here
    assert "Give Feedback" not in out.stdout + out.stderr
    assert "Provider List" not in out.stdout
    assert _no_server_within(data, 15) == []


def test_sigterm_to_the_api_with_a_run_in_progress_interrupts_it(serve_api, finished_corpus):
    """``research serve`` (thread backend) stopped while its run works: it exits promptly, the
    run is left resumable instead of holding the process to its end, and the embedded Redis
    goes with it."""
    api = serve_api(
        "sigterm",
        own_redis=True,
        RESEARCH_CORPUS=str(finished_corpus),
        RESEARCH_JOB_BACKEND="thread",
        RESEARCH_PREINDEX="0",
    )
    data, env, auth = api.data, api.env, api.auth("t")
    body = {"topic": TOPIC, "max_perspectives": 4, "max_turns": 6, "gap_turns": 5}
    run_id = api.client.post("/runs", json=body, headers=auth).json()["run_id"]
    deadline = time.monotonic() + 120
    while api.client.get(f"/runs/{run_id}", headers=auth).json()["run"]["status"] in (
        "pending",
        "planning",
    ):
        assert time.monotonic() < deadline, "the run did not get going"
        time.sleep(0.3)
    assert api.stop(signal.SIGTERM) == 0
    assert _no_server_within(data, 15) == []
    listed = subprocess.run(
        [sys.executable, "-m", "research.cli", "list", "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    [row] = json.loads(listed.stdout)
    # stopped at its next step: interrupted, or failed when a step was cut short; both resume
    assert row["run_id"] == run_id and row["status"] in RESUMABLE, row
