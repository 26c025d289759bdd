""""Your numbers" in a real browser: paste a `vllm bench serve` summary, apply the fit, see the
calibrated numbers on two pages, copy the link, and reopen it calibrated in a new browser context.
And a file upload goes through the same parser."""

from __future__ import annotations

import re
from pathlib import Path

from playwright.sync_api import Browser, Page, expect

from tests.browser.helpers import (
    TIMEOUT_MS,
    expect_no_exception,
    metric_value,
    open_page,
    wait_idle,
    watch_outside,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "bench"


def _decode_step(page: Page, base: str, query: str = "") -> str:
    open_page(page, base, "two-phases", query)
    return metric_value(page, "Decode step").inner_text()


def test_paste_apply_and_the_link_carries_the_calibration(page: Page, browser: Browser, streamlit_server,
                                                          browser_context_args):
    base = streamlit_server.url
    default_step = _decode_step(page, base)
    open_page(page, base, "your-numbers")
    box = page.locator(".st-key-yours_text textarea")
    box.fill((FIXTURES / "vllm_serve_summary.txt").read_text(encoding="utf-8"))
    box.press("Control+Enter")  # a text area commits on Ctrl+Enter (or on leaving it)
    wait_idle(page)
    expect(metric_value(page, "Rows read")).to_have_text("1", timeout=TIMEOUT_MS)
    expect(page.get_by_text("vllm-summary", exact=False).first).to_be_visible()
    page.locator(".st-key-yours_apply").get_by_role("button", name="Apply the fitted assumptions").click()
    wait_idle(page)
    expect(page.get_by_text("Every page now uses these assumptions")).to_be_visible(timeout=TIMEOUT_MS)
    expect(page).to_have_url(re.compile(r"(memory_eff|overhead_us|compute_eff)="), timeout=TIMEOUT_MS)
    # Page 00 and page 04 through the navigation: the sidebar's sliders went with the reader.
    page.get_by_role("link", name="00 Phases", exact=True).first.click()
    wait_idle(page)
    calibrated = metric_value(page, "Decode step")
    expect(calibrated).not_to_have_text(default_step, timeout=TIMEOUT_MS)
    step = calibrated.inner_text()
    link = page.url
    assert re.search(r"(memory_eff|overhead_us|compute_eff)=", link), link
    page.get_by_role("link", name="04 Watch", exact=True).first.click()
    wait_idle(page)
    expect(page).to_have_url(re.compile(r"(memory_eff|overhead_us|compute_eff)="), timeout=TIMEOUT_MS)
    expect_no_exception(page)
    # The copied link, in a browser that has never seen this session: the same calibrated step.
    other = browser.new_context(**browser_context_args)
    outside = watch_outside(other)
    try:
        fresh = other.new_page()
        fresh.goto(link)
        wait_idle(fresh)
        expect(metric_value(fresh, "Decode step")).to_have_text(step, timeout=TIMEOUT_MS)
    finally:
        other.close()
    assert not outside, outside


def test_an_uploaded_result_file_is_read(page: Page, streamlit_server):
    open_page(page, streamlit_server.url, "your-numbers")
    page.get_by_role("button", name="Upload a file").click()  # the uploader sits in a popover
    upload = page.locator(".st-key-yours_file input[type=file]")
    upload.set_input_files(str(FIXTURES / "vllm_serve_result.json"))
    wait_idle(page)
    expect(page.get_by_text("vllm_serve_result.json", exact=False).first).to_be_visible(timeout=TIMEOUT_MS)
    expect(metric_value(page, "Rows read")).to_have_text(re.compile(r"^[1-9]"), timeout=TIMEOUT_MS)
    expect_no_exception(page)


def test_a_paste_over_the_cap_is_named_not_dropped(browser: Browser, streamlit_server, browser_context_args):
    """Streamlit's text area drops a paste longer than its max_chars whole, without a word: the box
    has none, and a real paste (the clipboard, Ctrl+V) over the page's cap gets a message naming the
    cap, its text not kept in the box."""
    from ui.yours import MAX_PASTE_CHARS

    ctx = browser.new_context(**browser_context_args, permissions=["clipboard-read", "clipboard-write"])
    outside = watch_outside(ctx)
    page = ctx.new_page()
    open_page(page, streamlit_server.url, "your-numbers")
    block = (FIXTURES / "vllm_serve_summary.txt").read_text(encoding="utf-8")
    text = block * (MAX_PASTE_CHARS // len(block) + 1)
    page.evaluate("(text) => navigator.clipboard.writeText(text)", text)
    box = page.locator(".st-key-yours_text textarea")
    box.focus()
    page.keyboard.press("Control+V")
    assert len(box.input_value()) > MAX_PASTE_CHARS  # the whole paste reached the box
    box.press("Control+Enter")
    expect(page.get_by_text(f"at most {MAX_PASTE_CHARS:,} are read")).to_be_visible(timeout=TIMEOUT_MS)
    expect(box).to_have_value("", timeout=TIMEOUT_MS)
    expect_no_exception(page)
    ctx.close()
    assert not outside, outside[:5]
