"""Page 02 in a real browser: the reserved/paged toggle redraws the pool and the numbers, and lands in
the URL; a copied URL restores the paged view."""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect

from tests.browser.helpers import TIMEOUT_MS, expect_no_exception, metric_value, open_page, wait_idle


def test_toggle_switches_policy_pool_and_url(page: Page, streamlit_server):
    open_page(page, streamlit_server.url, "paged-attention")
    expect_no_exception(page)
    expect(page.get_by_text("Reserved: the 64-page pool at step 120")).to_be_visible(timeout=TIMEOUT_MS)
    resident = metric_value(page, "Requests resident")
    expect(resident).to_have_text("2", timeout=TIMEOUT_MS)

    page.locator(".st-key-paging_paged").get_by_text("PagedAttention").click()
    wait_idle(page)
    expect(page).to_have_url(re.compile(r"paging_paged=true"), timeout=TIMEOUT_MS)
    expect(page.get_by_text("Paged: the 64-page pool at step 120")).to_be_visible(timeout=TIMEOUT_MS)
    expect(resident).not_to_have_text("2", timeout=TIMEOUT_MS)
    expect_no_exception(page)


def test_copied_url_restores_paged_view(page: Page, streamlit_server):
    open_page(page, streamlit_server.url, "paged-attention", "paging_paged=true&paging_step=30")
    expect(page.get_by_text("Paged: the 64-page pool at step 30")).to_be_visible(timeout=TIMEOUT_MS)
    expect(page.locator(".st-key-paging_paged").get_by_role("switch")).to_be_checked()
    expect_no_exception(page)
