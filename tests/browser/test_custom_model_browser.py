"""The sidebar in a real browser: a pasted config.json changes the numbers and travels in the link;
the "GPUs per replica" control changes a page's numbers and the URL."""

from __future__ import annotations

import json
import re

from playwright.sync_api import Page, expect

from sim import configs
from tests.browser.helpers import TIMEOUT_MS, expect_no_exception, metric_value, open_page, wait_idle
from ui.custom_model import CUSTOM_MODEL


def _choose(page: Page, key: str, option: str) -> None:
    page.locator(f".st-key-{key}").get_by_role("combobox").click()
    page.get_by_role("option", name=option, exact=True).click()
    wait_idle(page)


def test_a_pasted_config_changes_a_number_and_the_link_reopens_it(page: Page, streamlit_server):
    open_page(page, streamlit_server.url, "two-phases")
    before = metric_value(page, "Decode step").inner_text()
    _choose(page, "model", CUSTOM_MODEL)
    area = page.locator(".st-key-custom_cfg_text textarea")
    area.fill(json.dumps(configs.preset_config("Qwen3-8B")))
    area.press("Control+Enter")  # a text area commits on Ctrl+Enter (or on blur)
    wait_idle(page)
    expect(page.get_by_text("Read as Custom model (qwen3)", exact=False)).to_be_visible(timeout=TIMEOUT_MS)
    expect(metric_value(page, "Decode step")).not_to_have_text(before, timeout=TIMEOUT_MS)
    expect(page).to_have_url(re.compile(r"cfg=t\.qwen3~"), timeout=TIMEOUT_MS)
    custom = metric_value(page, "Decode step").inner_text()
    link = page.url
    expect_no_exception(page)

    page.goto(link)  # the shared link, opened afresh: the same model, from the link
    wait_idle(page)
    expect(page.get_by_text("From the link: Custom model (qwen3)", exact=False)).to_be_visible(
        timeout=TIMEOUT_MS)
    expect(metric_value(page, "Decode step")).to_have_text(custom, timeout=TIMEOUT_MS)
    expect(page.locator(".st-key-url_notice")).to_have_count(0)
    expect_no_exception(page)


def test_gpus_per_replica_changes_the_numbers_and_the_url(page: Page, streamlit_server):
    open_page(page, streamlit_server.url, "two-phases", "model=Llama-3.1-70B")
    expect(page.get_by_text("does not fit", exact=False).first).to_be_visible(timeout=TIMEOUT_MS)
    page.locator(".st-key-gpus").get_by_text("4", exact=True).click()
    wait_idle(page)
    expect(page).to_have_url(re.compile(r"gpus=4"), timeout=TIMEOUT_MS)
    expect(page.get_by_text("GiB weights per GPU", exact=False)).to_be_visible(timeout=TIMEOUT_MS)
    four = metric_value(page, "Decode step")
    expect(four).to_be_visible(timeout=TIMEOUT_MS)  # 70B in BF16 fits on 4 x H100: numbers shown
    at_four = four.inner_text()
    page.locator(".st-key-gpus").get_by_text("8", exact=True).click()
    wait_idle(page)
    expect(page).to_have_url(re.compile(r"gpus=8"), timeout=TIMEOUT_MS)
    expect(metric_value(page, "Decode step")).not_to_have_text(at_four, timeout=TIMEOUT_MS)
    expect_no_exception(page)
