"""Follow-ups in a real browser (headless Debian Chromium via Playwright): ask the session's finished
trastuzumab run a follow-up on the Report page, see the answer with clickable citations, reload,
open the read-only share link, and download exports carrying the follow-ups appendix. With
``SCREENSHOTS_DIR`` set, ``report_followups.png`` is written there (README screenshot)."""

from __future__ import annotations

import io
import os
import zipfile
from pathlib import Path

import pytest
from docx import Document

from browser.chromium import CHROMIUM, VIEWPORT
from browser.test_dashboard_browser import _store, serve_app
from research.export import render_export
from research.followup.ask import audit_run
from research.store.followups import FollowupStore

pytestmark = [
    pytest.mark.browser,
    pytest.mark.timeout(1800),
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian chromium not installed"),
]
QUESTION = "Which trials monitored left ventricular ejection fraction?"
ANSWER_TIMEOUT_MS = 300_000


@pytest.fixture(scope="module")
def served(finished_run):
    """``(base_url, finished_run)`` with the app served on a free port; the follow-ups this module
    asks are removed afterwards (the run is shared by the session)."""

    with serve_app(finished_run, health_timeout_s=90) as base:
        yield base, finished_run
    FollowupStore(_store(finished_run)).clear(finished_run.run_id)


def _no_exception(page) -> None:
    errors = page.locator("[data-testid='stException']")
    assert errors.count() == 0, errors.first.inner_text()[:500]


def _answer(page):
    """The assistant chat message of the asked question, once it holds a citation link."""
    msg = (
        page.locator("[data-testid='stChatMessage']")
        .filter(has=page.locator("a[href^='#ref-']"))
        .last
    )
    msg.wait_for(timeout=ANSWER_TIMEOUT_MS)
    return msg


def test_ask_on_report_page_reload_share_and_export(served, browser, monkeypatch):

    base, run = served
    for k, v in run.env().items():  # in-process reads (audit, exports) see the run's data dir
        monkeypatch.setenv(k, v)
    audit_run(
        run.run_id, store=_store(run)
    )  # stored now, so the page shows it at once (2 shared cores)
    ctx = browser.new_context(viewport=VIEWPORT, accept_downloads=True)
    page = ctx.new_page()
    page.goto(f"{base}/report?run={run.run_id}")
    page.get_by_text("Follow-up questions").first.wait_for(timeout=300_000)
    page.get_by_text("citations supported", exact=False).first.wait_for(
        timeout=300_000
    )  # audit summary
    box = page.locator("[data-testid='stChatInputTextArea']")
    box.fill(QUESTION)
    box.press("Enter")
    msg = _answer(page)
    _no_exception(page)
    followups = FollowupStore(_store(run)).list(run.run_id)
    assert [f.question for f in followups] == [QUESTION]
    f = followups[0]
    links = msg.locator("a[href^='#ref-']")
    assert links.count() >= len(f.citations) >= 1
    first = links.first
    href = first.get_attribute("href")
    assert href and int(href.split("-")[-1]) in f.citations
    assert "offline extractive mode" in msg.inner_text()
    first.click()  # a citation jumps to its reference anchor
    page.wait_for_function("h => location.hash === h", arg=href, timeout=10_000)
    assert page.url.endswith(href)
    msg.scroll_into_view_if_needed()
    shots = os.environ.get("SCREENSHOTS_DIR")
    if shots:
        page.wait_for_timeout(800)
        Path(shots).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(shots) / "report_followups.png"))

    page.reload()  # the follow-up is stored with the run, not in the browser session
    page.get_by_text(QUESTION).first.wait_for(timeout=120_000)
    assert _answer(page).locator("a[href^='#ref-']").count() >= 1
    ctx.close()

    fresh = browser.new_context(viewport=VIEWPORT)  # the read-only share link
    pg = fresh.new_page()
    pg.goto(f"{base}/report?run={run.run_id}&view=read")
    pg.get_by_text(QUESTION).first.wait_for(timeout=120_000)
    _answer(pg)  # the question renders before its answer: wait for the answer's citation link
    assert pg.locator("[data-testid='stChatInputTextArea']").count() == 0
    assert pg.locator("[data-testid='stChatMessage'] a[href^='#ref-']").count() >= 1
    _no_exception(pg)
    fresh.close()

    store = _store(run)
    md = render_export(store, run.run_id, "md").decode()
    assert "Appendix: follow-up questions" in md and QUESTION in md and f.answer in md
    html = render_export(store, run.run_id, "html").decode()
    assert (
        "Appendix: follow-up questions" in html
        and f'href="#ref-{f.citations[0]}"' in html.split("Appendix")[1]
    )
    doc = Document(io.BytesIO(render_export(store, run.run_id, "docx")))
    assert any(QUESTION in p.text for p in doc.paragraphs)
    z = zipfile.ZipFile(io.BytesIO(render_export(store, run.run_id, "zip")))
    assert (
        QUESTION in z.read("followups.json").decode() and "Appendix" in z.read("report.md").decode()
    )
