"""``wait_idle`` (tests/browser/helpers.py) returns only once a run in progress has finished, not as soon
as Streamlit's running indicator is absent: that indicator appears only after a delay, so the browser
tests that call ``wait_idle`` after an input would otherwise read the page mid-run."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import Server
from tests.browser.helpers import TIMEOUT_MS, open_page, wait_idle


@pytest.fixture
def slow_server() -> Iterator[Server]:
    server = Server(script="tests/apps/slow_run_app.py")
    yield server
    server.stop()


def test_wait_idle_waits_for_a_run_in_progress(page: Page, slow_server: Server):
    open_page(page, slow_server.url)
    expect(page.get_by_text("value 0", exact=True)).to_be_visible()
    page.locator(".st-key-n").get_by_role("slider").focus()
    page.keyboard.press("ArrowRight")
    # The new run has started: its first element is drawn, and it now sleeps before the last one.
    expect(page.get_by_text("started 1", exact=True)).to_be_visible(timeout=TIMEOUT_MS)
    wait_idle(page)
    # Read once, with no retry: wait_idle must have waited for the end of the run.
    assert page.get_by_text("value 1", exact=True).count() == 1
    assert page.get_by_text("value 0", exact=True).count() == 0
