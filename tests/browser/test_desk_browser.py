"""The analyst's desk in a real browser (headless Debian Chromium via Playwright) on the session's
finished trastuzumab run: edit a section and save → version 2 and its diff; an edit citing [99]
is refused and nothing is stored; restore version 1 → version 3; the Word export of version 2
holds the edit; the read-only share view has no editor and shows the current version; a comment
is added, resolved, and still shown (read-only) after the dashboard restarts. With
``SCREENSHOTS_DIR`` set, ``desk_editor.png``, ``desk_diff.png`` and ``desk_comments.png`` are
written there (docs/report-editing.md)."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
from docx import Document

from browser.chromium import ARGS, CHROMIUM, VIEWPORT
from browser.test_dashboard_browser import SCRIPT_DONE, SCRIPT_RUNNING, _store, serve_app
from research.desk.edit import part_text
from research.store.comments import CommentStore
from research.store.versions import VersionStore

pytestmark = [
    pytest.mark.browser,
    pytest.mark.timeout(1800),
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian chromium not installed"),
]
MARKER = "Analyst check: cardiac monitoring was required in every trial cited here"
COMMENT = "Please add the 2019 cardiac-safety update to this section."
T = 120_000


@pytest.fixture(scope="module")
def run(finished_run):
    """The shared finished run; its versions and comments are removed afterwards."""
    store = _store(finished_run)
    VersionStore(store).clear(finished_run.run_id)
    CommentStore(store).clear(finished_run.run_id)
    yield finished_run
    VersionStore(store).clear(finished_run.run_id)
    CommentStore(store).clear(finished_run.run_id)


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright  # noqa: PLC0415 - heavy, browser tests only

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


def _settled(page, *, after_action: bool = False) -> None:
    """Wait until the script run is over. After a click the rerun may not have started yet
    (the page still says "notRunning" for a moment on a loaded machine), so first wait a
    little for it to start; a fast rerun that is already over is fine."""
    if after_action:
        try:
            page.wait_for_function(SCRIPT_RUNNING, timeout=1500)
        except Exception:  # noqa: BLE001 - the rerun may already be over
            pass
    page.wait_for_function(SCRIPT_DONE, timeout=T)
    errors = page.locator("[data-testid='stException']")
    assert errors.count() == 0, errors.first.inner_text()[:500]


def _shot(page, name: str) -> None:
    shots = os.environ.get("SCREENSHOTS_DIR")
    if shots:
        page.wait_for_timeout(800)
        Path(shots).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(shots) / f"{name}.png"))


def _mode(page, name: str) -> None:
    page.get_by_role("radio", name=name, exact=True).click()  # st.segmented_control
    _settled(page, after_action=True)


def _pick(page, label: str, option: str) -> None:
    """Choose ``option`` in the Streamlit selectbox labelled ``label``."""
    page.locator("[data-testid='stSelectbox']").filter(has_text=label).locator("input").click()
    page.get_by_role("option", name=option, exact=True).click()
    _settled(page, after_action=True)


def _saved_or_refused(page, expected: str) -> None:
    """Wait for ``expected`` or for an error alert; fail at once with the alert's text."""
    wanted = page.get_by_text(expected).first
    refused = page.locator("[data-testid='stAlert']").filter(has_text="nothing was saved").first
    wanted.or_(refused).wait_for(timeout=T)
    assert wanted.is_visible(), refused.inner_text()[:500]


def test_edit_refuse_restore_export_share_and_comment(run, browser):
    store = _store(run)
    rid = run.run_id
    versions = VersionStore(store)
    v1 = versions.report(rid, 1)
    part = next(i for i, sec in enumerate(v1.sections, start=1) if sec.text.strip())
    heading = v1.sections[part - 1].heading
    with serve_app(run, health_timeout_s=90) as base:
        ctx = browser.new_context(viewport=VIEWPORT, accept_downloads=True)
        page = ctx.new_page()
        page.goto(f"{base}/report?run={rid}")
        page.get_by_text("References").first.wait_for(timeout=300_000)
        _settled(page)

        # edit a section, save → version 2 and its diff
        _mode(page, "Edit")
        _pick(page, "Part to edit", heading)
        # the text area of that part's form (its widget key is a class), holding that part's
        # text: the rerun that drew it is over, so what is typed is not drawn over
        box = page.locator(f".st-key-edit_text_{rid}_1_{part} textarea")
        box.wait_for(timeout=T)
        page.wait_for_function(
            "([el, want]) => el.value === want", arg=[box.element_handle(), part_text(v1, part)]
        )
        box.fill(part_text(v1, part) + f" {MARKER} [1].")
        box.evaluate("el => { el.scrollTop = el.scrollHeight; }")  # the edit, at the end
        _shot(page, "desk_editor")
        page.get_by_role("button", name="Save as a new version").click()
        _saved_or_refused(page, "Saved as version 2")
        page.get_by_text("Version 1 → version 2").wait_for(timeout=T)
        _settled(page)
        diff = page.locator("table.diff")
        diff.wait_for(timeout=T)
        shown = diff.inner_text().replace("\xa0", " ")  # difflib writes &nbsp; and wraps lines
        assert diff.count() == 1 and all(w in shown for w in MARKER.split())
        assert diff.locator(".diff_add, .diff_chg").count() >= 1
        page.get_by_text("Version 1 → version 2").evaluate(
            "el => el.scrollIntoView({block: 'start'})"
        )
        _shot(page, "desk_diff")
        assert versions.count(rid) == 2 and MARKER in versions.report(rid).sections[part - 1].text

        # an edit citing [99] is refused with a message; nothing is stored
        events_before = len(store.events(rid))
        box = page.locator(f".st-key-edit_text_{rid}_2_{part} textarea")
        box.wait_for(timeout=T)
        box.fill("A claim with a citation that does not exist [99].")
        page.get_by_role("button", name="Save as a new version").click()
        page.get_by_text("does not resolve").first.wait_for(timeout=T)
        _settled(page)
        assert (
            "[99]"
            in page.locator("[data-testid='stAlert']")
            .filter(has_text="does not resolve")
            .first.inner_text()
        )
        assert versions.count(rid) == 2 and len(store.events(rid)) == events_before

        # restore version 1 → version 3
        _mode(page, "Versions")
        # "Restore version" offers the older versions, oldest first: version 1 is preselected
        page.get_by_role("button", name="Restore as a new version").click()
        page.get_by_text("Current version: 3 (restore of version 1").wait_for(timeout=T)
        _settled(page)
        assert versions.count(rid) == 3 and versions.report(rid) == v1
        assert versions.get(rid).restored_from == 1

        # the Word export of version 2 carries the edit (downloaded from the page)
        page.goto(f"{base}/report?run={rid}&version=2")
        page.get_by_text("Version 2 of 3").first.wait_for(timeout=T)
        _settled(page)
        with page.expect_download(timeout=T) as dl:
            page.get_by_role("button", name="Word").click()
        doc = Document(io.BytesIO(Path(dl.value.path()).read_bytes()))
        assert any(MARKER in p.text for p in doc.paragraphs)
        assert dl.value.suggested_filename.endswith("_v2.docx")

        # comments: add on a sentence, resolve
        page.goto(f"{base}/report?run={rid}")
        page.get_by_text("References").first.wait_for(timeout=T)
        _settled(page)
        _mode(page, "Comments")
        _pick(page, "Section to comment on", heading)
        # the form's text area of that section (Streamlit puts the widget key in a class), so
        # the comment is not typed into the previous section's form while the page reruns
        box = page.locator(f".st-key-comment_text_{part} textarea")
        box.wait_for(timeout=T)
        box.fill(COMMENT)
        page.get_by_role("button", name="Add comment").click()
        page.get_by_text(COMMENT).first.wait_for(timeout=T)
        _settled(page)
        [c] = CommentStore(store).list(rid)
        assert c.section == heading and c.version == 3 and c.status == "open"
        page.get_by_role("button", name="Resolve").first.click()
        page.get_by_text("resolved by").first.wait_for(timeout=T)
        _settled(page)
        assert CommentStore(store).get(rid, c.id).status == "resolved"
        _shot(page, "desk_comments")
        ctx.close()

    # a restarted dashboard: the share view shows the current version and the comment, no editor
    with serve_app(run, health_timeout_s=90) as base:
        ctx = browser.new_context(viewport=VIEWPORT)
        page = ctx.new_page()
        page.goto(f"{base}/report?run={rid}&view=read")
        page.get_by_text(COMMENT).first.wait_for(timeout=T)
        _settled(page)
        text = page.locator("[data-testid='stMain']").inner_text()
        assert "Version 3 of 3" in text and MARKER not in text
        assert page.locator("textarea").count() == 0
        for name in ("Edit", "Versions", "Comments"):
            assert page.get_by_role("radio", name=name, exact=True).count() == 0
        for name in ("Save as a new version", "Resolve", "Add comment"):
            assert page.get_by_role("button", name=name, exact=True).count() == 0
        page.goto(f"{base}/report?run={rid}&view=read&version=2")
        page.get_by_text("Version 2 of 3").first.wait_for(timeout=T)
        _settled(page)
        assert MARKER in page.locator("[data-testid='stMain']").inner_text()
        assert page.locator("textarea").count() == 0
        ctx.close()
