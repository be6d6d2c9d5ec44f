"""The dashboard in a real browser (headless Debian Chromium via Playwright).

Serves ``streamlit run streamlit_app.py`` on a random free port against a data dir holding one
finished run, opens every page by its share URL (``?run=<id>``) and checks what an analyst sees.
With ``SCREENSHOTS_DIR`` set, full-page screenshots are written there (the README's
``docs/screenshots/`` come from this test).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian chromium not installed")]
ROOT = Path(__file__).resolve().parents[2]
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
TOPIC = "Trastuzumab in HER2-positive breast cancer"
PAGES = [("launch", "", "Launch"), ("plan", "plan", "Plan"), ("conversations", "conversations", "Conversations"),
         ("coverage", "coverage", "Coverage"), ("artifacts", "artifacts", "Artifacts"), ("report", "report", "Report")]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def served(redis_server, corpus_path, tmp_path_factory):
    from research import jobs

    mp = pytest.MonkeyPatch()
    data = tmp_path_factory.mktemp("browser_data")
    mp.setenv("RESEARCH_DATA_DIR", str(data))
    mp.setenv("REDIS_URL", redis_server)
    state = jobs.run_foreground(jobs.make_config(TOPIC, corpus=str(corpus_path), template="drug",
                                                 max_perspectives=4, max_turns=3))
    assert state.status == "complete", state.error
    port = _free_port()
    env = {**os.environ, "RESEARCH_DATA_DIR": str(data), "REDIS_URL": redis_server}
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", str(ROOT / "streamlit_app.py"),
                             "--server.port", str(port), "--server.headless", "true",
                             "--server.address", "127.0.0.1"], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{base}/_stcore/health", timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            time.sleep(0.3)
    yield base, state.run_id
    proc.terminate()
    proc.wait(timeout=10)
    mp.undo()


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


def test_every_page_renders_for_the_run(served, browser):
    base, run_id = served
    shots = os.environ.get("SCREENSHOTS_DIR")
    page = browser.new_page(viewport={"width": 1440, "height": 1000})
    for name, path, heading in PAGES:
        url = f"{base}/{path}?run={run_id}" if path else f"{base}/"
        page.goto(url)
        page.wait_for_selector("[data-testid='stAppViewContainer']", timeout=30_000)
        page.get_by_text(heading, exact=False).first.wait_for(timeout=30_000)
        page.wait_for_timeout(2500)  # let charts and fragments settle
        errors = page.locator("[data-testid='stException']")
        assert errors.count() == 0, f"{name}: {errors.first.inner_text()[:500]}"
        if name == "report":
            assert page.get_by_text("References").count() > 0
            assert page.get_by_text("offline extractive mode", exact=False).count() > 0
        if shots:
            Path(shots).mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(Path(shots) / f"{name}.png"), full_page=False)
    page.close()
