"""Plan review in a real browser (headless Debian Chromium via Playwright): launch with
"Review the plan before research", watch the run stop in ``awaiting_review``, replace three
syllabus questions in the Plan page's editable table, approve, and see the run complete with the
edited syllabus (collector, coverage counts, ``plan.edited`` event). With ``SCREENSHOTS_DIR`` set,
``plan_review.png`` (the README's) is written there.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from browser.test_dashboard_browser import (
    CHROMIUM,
    RUN_TIMEOUT_MS,
    SCRIPT_DONE,
    _settle,
    _shot,
    _store,
)
from research.models import Syllabus
from research.store.collector import SourceCollector

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian chromium not installed"),
]
TOPIC = "Trastuzumab cardiotoxicity in HER2-positive breast cancer"
ROW_H = 35  # px: Streamlit's data grid row (and header) height
NEW = [
    ("cardiac.lvef", "LVEF decline", "How often and how far LVEF falls on trastuzumab"),
    (
        "cardiac.heart_failure",
        "Heart failure",
        "Symptomatic heart failure during and after treatment",
    ),
    (
        "cardiac.recovery",
        "Recovery after stopping",
        "Whether cardiac function recovers after interruption",
    ),
]


def _wait_status(store, run_id: str, want: str, timeout_s: float) -> str:
    deadline = time.monotonic() + timeout_s
    status = ""
    while time.monotonic() < deadline:
        status = store.get_run(run_id).status
        if status == want or status in ("failed", "cancelled", "complete"):
            return status
        time.sleep(0.5)
    return status


EDITOR = "textarea.gdg-input, #portal textarea, #portal input"


def _edit_cell(page, grid, row: int, col: int, text: str, tries: int = 4) -> None:
    """Replace the value of data row ``row``, column ``col`` (0 = Key) of the grid: click the
    row's Key cell, move right ``col`` cells, open the cell's editor with Enter, select all, type,
    Enter commits. Each commit reruns the page, which can redraw the grid and drop its
    selection, so the editor is awaited and the whole step tried again (re-measuring the grid)
    when it does not open; the page's script run is awaited after the commit."""
    for attempt in range(tries):
        page.keyboard.press("Escape")
        box = grid.bounding_box()
        page.mouse.click(box["x"] + 60, box["y"] + ROW_H * (row + 1) + ROW_H / 2)
        page.wait_for_timeout(200)
        for _ in range(col):
            page.keyboard.press("ArrowRight")
        editor = page.locator(EDITOR).first
        if not editor.is_visible():
            page.keyboard.press("Enter")
        try:
            editor.wait_for(timeout=4_000)
        except Exception:
            if attempt == tries - 1:
                raise
            page.wait_for_function(SCRIPT_DONE, timeout=30_000)
            continue
        page.keyboard.press("Control+A")
        page.keyboard.type(text, delay=10)
        page.wait_for_timeout(150)
        page.keyboard.press("Enter")
        page.wait_for_timeout(300)
        page.wait_for_function(SCRIPT_DONE, timeout=30_000)
        return


@pytest.mark.timeout(1800)  # two pipeline phases on a shared, loaded machine
def test_review_edit_approve_round_trip(served, page):
    base, run = served
    store = _store(run)
    page.goto(f"{base}/")
    _settle(page, "Launch a research run")
    page.get_by_label("Research question").fill(TOPIC)
    page.get_by_label("Corpus (JSONL file or folder of documents)").fill(str(run.corpus))
    page.get_by_label("Max perspectives").fill("2")
    page.get_by_label("Max turns per conversation").fill("1")
    page.get_by_text("Review the plan before research").click()
    page.get_by_role("button", name="Start run").click()
    page.wait_for_url(
        re.compile(r"run=[a-f0-9]{16,32}"), timeout=60_000
    )  # Launch moves to the run's page
    run_id = re.search(r"run=([a-f0-9]{16,32})", page.url).group(1)
    status = _wait_status(store, run_id, "awaiting_review", 2 * RUN_TIMEOUT_MS / 1000)
    assert status == "awaiting_review", (status, [e.type for e in store.events(run_id)][-8:])

    page.goto(f"{base}/plan?run={run_id}")
    _settle(page, "Approve and start research")
    assert page.get_by_text("plan review", exact=False).count() >= 1  # the stepper's review step

    old = store.get_doc(run_id, "syllabus", Syllabus)
    n = len(old.questions)
    grid = page.locator(f".st-key-edit_questions_{run_id}")  # the syllabus editor (keyed element)
    grid.scroll_into_view_if_needed()
    for i, values in enumerate(NEW):
        for col, text in enumerate(values):
            _edit_cell(page, grid, n - 3 + i, col, text)
    page.keyboard.press("Escape")  # leave the grid: no selected cell in the screenshot
    page.get_by_text("Question syllabus").first.click()
    page.wait_for_timeout(800)
    page.set_viewport_size({"width": 1440, "height": 1450})  # the whole editor in one screenshot
    page.evaluate(
        "() => document.querySelectorAll('[data-testid=stMain], [data-testid=stAppViewContainer], "
        "section.main').forEach(el => el.scrollTo(0, 0))"
    )
    page.wait_for_timeout(800)
    _shot(page, "plan_review")
    page.get_by_role("button", name="Approve and start research").click()
    status = _wait_status(store, run_id, "complete", 2 * RUN_TIMEOUT_MS / 1000)
    assert status == "complete", (status, [e.type for e in store.events(run_id)][-8:])

    keys = store.get_doc(run_id, "syllabus", Syllabus).keys()
    assert keys == old.keys()[:-3] + [k for k, _, _ in NEW], keys
    assert SourceCollector(store.r, run_id).syllabus().keys() == keys
    labels = [q.label for q in store.get_doc(run_id, "syllabus", Syllabus).questions][-3:]
    assert labels == [lb for _, lb, _ in NEW]
    edited = next(e for e in store.events(run_id) if e.type == "plan.edited")
    assert edited.data["by"] == "dashboard" and set(edited.data["questions"]["added"]) == {
        k for k, _, _ in NEW
    }
    page.goto(f"{base}/coverage?run={run_id}")
    _settle(page, "LVEF decline")
    assert page.locator("[data-testid='stException']").count() == 0
