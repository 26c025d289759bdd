"""Page 05 in a real browser: picking chunked prefill changes the p99 time between tokens, leaves the
utilization reading about the same, and puts the policy in the URL."""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect

from tests.browser.helpers import expect_no_exception, metric_value, open_page, wait_idle

TBT, UTIL = "p99 TBT", "GPU utilization"
SLOW_MS = 60_000  # the first view runs every search of the page once (seconds on 2 busy cores)


def test_policy_changes_tbt_not_utilization_and_url(page: Page, streamlit_server):
    open_page(page, streamlit_server.url, "under-load")
    expect(metric_value(page, TBT)).to_have_text(re.compile(r"\d+(\.\d+)? (ms|s)$"), timeout=SLOW_MS)
    expect_no_exception(page)
    before = metric_value(page, TBT).inner_text()
    util_before = float(metric_value(page, UTIL).inner_text().rstrip("%"))
    page.locator(".st-key-load_policy").get_by_text("Chunked prefill", exact=True).click()
    wait_idle(page)
    expect(page).to_have_url(re.compile(r"load_policy=Chunked"), timeout=SLOW_MS)
    expect(metric_value(page, TBT)).not_to_have_text(before, timeout=SLOW_MS)
    after = metric_value(page, TBT).inner_text()
    assert after.endswith(" ms") and before.endswith(" ms")
    assert float(after.split()[0]) < float(before.split()[0]) / 3
    assert abs(float(metric_value(page, UTIL).inner_text().rstrip("%")) - util_before) < 3
    expect_no_exception(page)
