"""Page 00 in a real browser (that every page renders: the first-screen, injection and navigation
tests, and test_injection_browser.py's tour under GPU_LIES_FULL_BROWSER=1): a
slider change updates the URL and the numbers, and a copied URL restores the same view on a freshly
started server."""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect

from tests.browser.helpers import TIMEOUT_MS, expect_no_exception, metric_value, open_page, wait_idle


def test_slider_change_updates_metric_and_url(page: Page, streamlit_server):
    open_page(page, streamlit_server.url, "two-phases")
    before = metric_value(page, "Decode throughput").inner_text()
    slider = page.locator(".st-key-phases_batch").get_by_role("slider")
    slider.focus()
    for _ in range(3):  # 1 -> 8 sequences
        slider.press("ArrowRight")
    wait_idle(page)
    expect(page).to_have_url(re.compile(r"phases_batch=8"), timeout=TIMEOUT_MS)
    expect(metric_value(page, "Decode throughput")).not_to_have_text(before, timeout=TIMEOUT_MS)
    expect_no_exception(page)


def test_copied_url_restores_view_on_fresh_server(page: Page, fresh_server):
    query = "gpu=A100+80GB+SXM&model=Qwen2.5-7B&phases_batch=64&phases_prompt=8192"
    open_page(page, fresh_server.url, "two-phases", query)
    expect(page.locator(".st-key-gpu").get_by_role("combobox")).to_have_value("A100 80GB SXM")
    expect(page.locator(".st-key-model").get_by_role("combobox")).to_have_value("Qwen2.5-7B")
    expect(page.locator(".st-key-phases_batch")).to_contain_text("64")
    expect(page.get_by_text("For Qwen2.5-7B", exact=False)).to_be_visible()
    expect(page).to_have_url(re.compile("phases_batch=64"))
    expect_no_exception(page)


def test_bad_link_settings_are_named_and_defaults_shown(page: Page, streamlit_server):
    open_page(page, streamlit_server.url, "two-phases", "phases_batch=99999&gpu=TPU&phases_prompt=8192")
    notice = page.locator(".st-key-url_notice")
    expect(notice).to_contain_text("phases_batch=99999", timeout=TIMEOUT_MS)
    expect(notice).to_contain_text("gpu=TPU")
    expect(notice).not_to_contain_text("phases_prompt")  # valid: used, not reported
    expect(page.locator(".st-key-phases_batch")).to_contain_text("1")
    expect(page.locator(".st-key-phases_prompt")).to_contain_text("8192")
    expect_no_exception(page)


def test_routing_skew_moves_the_decode_step_and_travels_in_the_url(page: Page, streamlit_server):
    """A mixture's routing-skew slider (sidebar): the URL takes it, the setup label names it, the
    decode step at batch 16 shrinks, and a reload keeps it."""
    open_page(page, streamlit_server.url, "two-phases", "model=Mixtral-8x7B&gpus=2&phases_batch=16")
    before = metric_value(page, "Decode step").inner_text()
    slider = page.locator(".st-key-skew").get_by_role("slider")
    slider.focus()
    slider.press("End")  # the steepest skew, 2
    wait_idle(page)
    expect(page).to_have_url(re.compile(r"skew=2"), timeout=TIMEOUT_MS)
    expect(page.get_by_text("routing skew 2", exact=False).first).to_be_visible(timeout=TIMEOUT_MS)
    expect(metric_value(page, "Decode step")).not_to_have_text(before, timeout=TIMEOUT_MS)
    after = metric_value(page, "Decode step").inner_text()
    page.reload()
    wait_idle(page)
    expect(metric_value(page, "Decode step")).to_have_text(after, timeout=TIMEOUT_MS)
    expect_no_exception(page)
