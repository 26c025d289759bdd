"""Page 01 in a real browser: clicking the toggle changes the useful-work gauge and metric and puts
the mode in the URL; a copied URL restores the view."""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect

from tests.browser.helpers import TIMEOUT_MS, expect_no_exception, metric_value, open_page, wait_idle

USEFUL = "Useful work"


def test_toggle_changes_useful_work_and_url(page: Page, streamlit_server):
    open_page(page, streamlit_server.url, "continuous-batching")
    expect_no_exception(page)
    expect(page.locator(".st-key-batching_gauges text.number")).to_have_count(2, timeout=TIMEOUT_MS)
    expect(metric_value(page, USEFUL)).to_have_text(re.compile(r"%$"), timeout=TIMEOUT_MS)
    before = metric_value(page, USEFUL).inner_text()
    gauge_before = page.locator(".st-key-batching_gauges text.number").nth(1).text_content()
    page.locator(".st-key-batching_continuous label").click()
    wait_idle(page)
    expect(page).to_have_url(re.compile(r"batching_continuous=true"), timeout=TIMEOUT_MS)
    expect(metric_value(page, USEFUL)).not_to_have_text(before, timeout=TIMEOUT_MS)
    expect(page.locator(".st-key-batching_gauges text.number").nth(1)).not_to_have_text(
        gauge_before or "", timeout=TIMEOUT_MS)
    after = float(metric_value(page, USEFUL).inner_text().rstrip("%"))
    assert after - float(before.rstrip("%")) > 40
    expect_no_exception(page)


def test_copied_url_restores_the_view(page: Page, streamlit_server):
    open_page(page, streamlit_server.url, "continuous-batching",
              "batching_continuous=true&batching_slots=16&batching_workload=Chat-like")
    expect(page.locator(".st-key-batching_continuous input[role='switch']")).to_be_checked()
    expect(page.locator(".st-key-batching_slots")).to_contain_text("16")
    expect(page.locator(".st-key-batching_workload").get_by_role("combobox")).to_have_value("Chat-like")
    expect_no_exception(page)
