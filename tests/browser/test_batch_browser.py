"""The Launch page's Batch tab in a real browser (headless Debian Chromium via Playwright): paste
two topics with tiny shared options, queue them, watch the progress table fill in live until both
runs are complete (each row linking to its run's Report page), and download the one zip of both
reports. The app is served on its own redis-server and data dir (the batch's runs never reach
other modules' run lists).
With ``SCREENSHOTS_DIR`` set, ``batch.png`` is written there (``docs/screenshots/batch.png``).
"""

from __future__ import annotations

import io
import re
import time
import zipfile
from pathlib import Path

import pytest
import redis
from private_runs import private_env

from browser.test_dashboard_browser import CHROMIUM, RUN_TIMEOUT_MS, _settle, _shot, serve_app
from research.models import Report
from research.store.batches import BatchStore
from research.store.runs import RunStore

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian chromium not installed"),
]
TOPICS = ["Trastuzumab cardiotoxicity", "Pertuzumab with trastuzumab"]


class _Env:
    def __init__(self, url: str, data: Path, corpus: Path) -> None:
        self.redis_url, self.data_dir, self.corpus = url, data, corpus

    def env(self) -> dict[str, str]:
        return {"RESEARCH_DATA_DIR": str(self.data_dir), "REDIS_URL": self.redis_url}


@pytest.fixture(scope="module")
def served(tmp_path_factory, finished_corpus):
    """``(base_url, env)``: the app on a private, empty redis-server and data dir."""
    server, url, data, mp = private_env(tmp_path_factory, "batch_ui")
    env = _Env(url, data, finished_corpus)
    try:
        with serve_app(env) as base:
            yield base, env
    finally:
        mp.undo()
        server.stop()


def _cells(page) -> list[str]:
    """The progress table's cell texts, row by row (the data grid's accessible cells)."""
    grid = page.locator("[data-testid='stDataFrame']").first
    cells = grid.locator("[role='gridcell']")
    return [cells.nth(i).inner_text() for i in range(cells.count())]


@pytest.mark.timeout(1200)
def test_batch_tab_queues_and_follows_a_batch(served, page):
    base, env = served
    page.goto(f"{base}/?launch_tab=Batch")
    _settle(page, "Queue a batch")
    page.get_by_label("Topics, one per line", exact=True).fill("\n".join(TOPICS))
    page.get_by_label("Batch name", exact=True).fill("HER2 pair")
    page.get_by_label("Corpus of every run", exact=True).fill(str(env.corpus))
    page.get_by_label("Perspectives per run", exact=True).fill("1")
    page.get_by_label("Turns per perspective", exact=True).fill("1")
    page.get_by_label("Gap search rounds", exact=True).fill("0")
    page.get_by_role("button", name="Queue batch").click()
    page.get_by_text("Batch progress").first.wait_for(timeout=60_000)
    page.wait_for_url(re.compile(r"batch=b[a-f0-9]{12}"), timeout=30_000)  # a share link

    store = RunStore(redis.Redis.from_url(env.redis_url, decode_responses=True))
    (batch,) = BatchStore(store).list()
    assert batch.name == "HER2 pair" and len(batch.run_ids) == 2
    seen: set[str] = set()
    deadline = time.monotonic() + RUN_TIMEOUT_MS / 1000
    while time.monotonic() < deadline:
        cells = _cells(page)
        rows = [cells[i : i + 6] for i in range(0, len(cells), 6)]
        seen |= {row[2].split()[-1] for row in rows if len(row) == 6}
        if len(rows) == 2 and all(row[2].endswith("complete") for row in rows):
            break
        page.wait_for_timeout(1000)  # the table's fragment redraws from Redis every 2 s
    assert [row[0] for row in rows] == TOPICS
    assert [row[1] for row in rows] == [f"report?run={rid}" for rid in batch.run_ids]
    assert [row[3] for row in rows] == ["1", "1"]  # progress 100 %
    assert seen & {"pending", "planning", "conversations", "synthesizing"}  # it was live
    assert [store.get_run(rid).status for rid in batch.run_ids] == ["complete", "complete"]
    page.wait_for_function(  # the download turns on with the finished reports
        "() => [...document.querySelectorAll('button')].some(b => "
        "b.innerText.includes('Download all reports (2 of 2') && !b.disabled)",
        timeout=60_000,
    )
    _settle(page, "Batch progress")
    _shot(page, "batch", settle_ms=1500)

    with page.expect_download(timeout=60_000) as info:
        page.get_by_role("button", name=re.compile("Download all reports")).click()
    dl = info.value
    assert dl.suggested_filename == "her2_pair.zip"
    with zipfile.ZipFile(io.BytesIO(Path(dl.path()).read_bytes())) as z:
        reports = sorted(n for n in z.namelist() if n.endswith(".md"))
        assert reports == ["01_trastuzumab_cardiotoxicity.md", "02_pertuzumab_with_trastuzumab.md"]
        for name, run_id in zip(reports, batch.run_ids, strict=True):
            title = store.get_doc(run_id, "report", Report).title
            assert z.read(name).decode().startswith(f"# {title}")
