"""Page 03 in a real browser: dragging the acceptance slider moves the numbers and the URL, and a
drafting preset (plus any override) survives a reload of the URL."""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect

from sim import speculative as spec
from tests.browser.helpers import TIMEOUT_MS, expect_no_exception, metric_value, open_page, wait_idle


def test_dragging_the_acceptance_slider(page: Page, streamlit_server):
    open_page(page, streamlit_server.url, "speculative-decoding")
    expect_no_exception(page)
    expect(metric_value(page, "Tokens per pass")).to_have_text("3.36", timeout=TIMEOUT_MS)
    # The role="slider" input is visually hidden inside the thumb: drag the thumb itself.
    thumb = page.locator(".st-key-spec_alpha").get_by_role("slider").locator("xpath=../..")
    box = thumb.bounding_box()
    assert box is not None
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.mouse.move(x, y)
    page.mouse.down()
    page.mouse.move(x - 60, y, steps=8)
    page.mouse.move(x - 120, y, steps=8)
    page.mouse.up()
    wait_idle(page)
    expect(page).to_have_url(re.compile(r"spec_alpha=0\.[0-7]"), timeout=TIMEOUT_MS)
    alpha = float(re.search(r"spec_alpha=([0-9.]+)", page.url).group(1))
    assert alpha < 0.8
    # Fewer drafts kept: fewer tokens per target pass, and the speedup follows.
    expect(metric_value(page, "Tokens per pass")).not_to_have_text("3.36", timeout=TIMEOUT_MS)
    tokens = float(metric_value(page, "Tokens per pass").inner_text())
    assert tokens < 3.36
    expect_no_exception(page)


def test_preset_writes_alpha_and_k_to_the_url_and_a_reload_restores_it(page: Page, streamlit_server):
    open_page(page, streamlit_server.url, "speculative-decoding")
    page.locator(".st-key-spec_method").get_by_text("EAGLE", exact=True).click()  # the label takes clicks
    wait_idle(page)
    expect(page).to_have_url(re.compile("spec_method=EAGLE"), timeout=TIMEOUT_MS)
    # EAGLE's preset: alpha 0.27 (the fit to EAGLE-3 Table 3), k = 3, so 1.36 tokens a pass.
    eagle = spec.METHODS["EAGLE"]
    tokens, alpha = f"{spec.expected_tokens(eagle.alpha, eagle.k):.2f}", f"{eagle.alpha:.2f}"
    expect(metric_value(page, "Tokens per pass")).to_have_text(tokens, timeout=TIMEOUT_MS)
    expect(page.locator(".st-key-spec_alpha")).to_contain_text(alpha)
    expect(page.locator(".st-key-spec_k")).to_contain_text("3")
    # The sliders' defaults follow the method, so the preset's own alpha and k stay out of the URL
    # (Streamlit drops default values) and the method alone restores them.
    assert "spec_alpha" not in page.url and "spec_k" not in page.url
    # The preset writes the sliders through session state on purpose; the server logs no warning
    # with a stack trace for it (.streamlit/config.toml).
    assert "set via the Session State API" not in streamlit_server.output()
    page.reload()
    wait_idle(page)
    expect(metric_value(page, "Tokens per pass")).to_have_text(tokens, timeout=TIMEOUT_MS)
    expect(page.locator(".st-key-spec_alpha")).to_contain_text(alpha)
    # An override is written to the URL and survives a reload too.
    page.locator(".st-key-spec_k").get_by_role("slider").focus()
    page.keyboard.press("ArrowRight")
    wait_idle(page)
    expect(page).to_have_url(re.compile("spec_k=4"), timeout=TIMEOUT_MS)
    page.reload()
    wait_idle(page)
    expect(page.locator(".st-key-spec_k")).to_contain_text("4")
    expect(metric_value(page, "Tokens per pass")).not_to_have_text(tokens, timeout=TIMEOUT_MS)
    expect_no_exception(page)
