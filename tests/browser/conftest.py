"""Fixtures shared by the browser tests: one headless Chromium per test module."""

from __future__ import annotations

import pytest

from browser.chromium import ARGS, CHROMIUM


@pytest.fixture(scope="module")
def browser():
    """Headless Debian Chromium driven by Playwright, closed after the module."""
    from playwright.sync_api import sync_playwright  # noqa: PLC0415 - the browser driver, only for browser tests

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()
