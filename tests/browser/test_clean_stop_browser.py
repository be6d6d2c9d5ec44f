"""Ctrl-C on ``make run`` with a browser on the dashboard: SIGINT to the process group (what a
terminal sends) stops the dashboard, the API and make, and leaves no redis-server of the data
dir (the dashboard and the API leave it at the same moment; the last one out stops it)."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import httpx
import pytest
from served_api import free_port
from test_clean_stop import _no_server_within
from test_server_lifecycle import _env, _servers

pytestmark = pytest.mark.timeout(600)
REPO = Path(__file__).resolve().parents[2]


def test_sigint_to_make_run_with_a_browser_open_leaves_no_server(tmp_path, page):
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
        page.goto(f"http://127.0.0.1:{ui}/")
        page.get_by_text("Research Desk").first.wait_for(timeout=60_000)
        page.wait_for_timeout(2000)  # the page's session is connected to the store
        assert len(_servers([data])) == 1
        os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C in the terminal
        proc.wait(timeout=90)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert _no_server_within(data, 15) == []
