"""Fixtures shared by the browser tests: one headless Chromium per test module."""

from __future__ import annotations

import pytest

from browser.chromium import ARGS, CHROMIUM, VIEWPORT
from browser.test_dashboard_browser import serve_app


@pytest.fixture(scope="module")
def browser():
    """Headless Debian Chromium driven by Playwright, closed after the module."""
    from playwright.sync_api import sync_playwright  # noqa: PLC0415 - the browser driver, only for browser tests

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


@pytest.fixture(scope="module")
def served(finished_run):
    """``(base_url, finished_run)`` with the app served on a free port (modules may override)."""
    with serve_app(finished_run) as base:
        yield base, finished_run


@pytest.fixture()
def page(browser):
    """A fresh browser context and page (downloads accepted), closed after the test."""
    ctx = browser.new_context(viewport=VIEWPORT, accept_downloads=True)
    pg = ctx.new_page()
    yield pg
    ctx.close()
