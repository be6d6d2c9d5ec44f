"""The Coverage page in a real browser (headless Debian Chromium via Playwright): each syllabus
question lists the evidence passages that count for it, and a passage's links open its source
and its raw artifact. With ``SCREENSHOTS_DIR`` set, ``coverage_evidence.png`` is written there."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from browser.chromium import CHROMIUM, VIEWPORT
from browser.test_dashboard_browser import _store, serve_app
from research.models import Report

pytestmark = [
    pytest.mark.browser,
    pytest.mark.timeout(1200),
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian chromium not installed"),
]


@pytest.fixture(scope="module")
def served(finished_run):
    with serve_app(finished_run, health_timeout_s=90) as base:
        yield base, finished_run


def test_coverage_lists_evidence_passages_with_links(served, browser):
    base, run = served
    store = _store(run)
    report = store.get_doc(run.run_id, "report", Report)
    answered = next(q for q in report.questions if q.evidence)
    passage = answered.evidence[0]
    source = store.collector(run.run_id).get_source(passage.source_id)
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    page.goto(f"{base}/coverage?run={run.run_id}")
    page.get_by_text("Evidence per question").first.wait_for(timeout=300_000)
    assert page.locator("[data-testid='stException']").count() == 0
    expander = page.locator("[data-testid='stExpander']").filter(has_text=answered.label)
    expander.first.locator("summary").click()
    snippet = passage.passage[:40]
    expander.first.get_by_text(snippet, exact=False).first.wait_for(timeout=60_000)
    link = expander.first.locator(f"a[href='{source.url}']").first
    assert link.count() == 1  # the passage links to its source
    art = expander.first.locator("a[href^='artifacts?']").first
    assert art.count() == 1  # and to the raw search output it came from
    href = art.get_attribute("href")
    shots = os.environ.get("SCREENSHOTS_DIR")
    if shots:
        Path(shots).mkdir(parents=True, exist_ok=True)
        page.wait_for_timeout(800)
        page.screenshot(path=str(Path(shots) / "coverage_evidence.png"), full_page=True)
    page.goto(f"{base}/{href}")  # Streamlit opens Markdown links in a new tab: follow it here
    page.get_by_text("Showing the artifact", exact=False).first.wait_for(timeout=120_000)
    assert page.locator("[data-testid='stException']").count() == 0
    context.close()
