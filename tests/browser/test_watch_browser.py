"""Page 04 in a real browser: the scenario table and both charts render; moving the TTFT target
changes what counts and the URL; a copied URL restores the targets and the setup."""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect

from sim.metrics import SLO, dashboard_day
from tests.browser.helpers import TIMEOUT_MS, expect_no_exception, metric_value, open_page, wait_idle
from ui.setup import DEFAULT_SETUP


def _missing_at_defaults() -> str:
    """The "Hours missing the SLO" page 04 shows at its first view, from the model itself."""
    d = DEFAULT_SETUP
    day = dashboard_day(d.gpu, d.model, d.assumptions)
    return f"{day.hours_missing(SLO())} of {day.n_windows}"


def test_renders_and_the_ttft_target_moves_what_counts(page: Page, streamlit_server):
    open_page(page, streamlit_server.url, "what-to-watch")
    expect_no_exception(page)
    expect(metric_value(page, "nvidia-smi utilization")).to_have_text("90–98%", timeout=TIMEOUT_MS)
    expect(page.locator(".st-key-watch_bars .js-plotly-plot")).to_have_count(1, timeout=TIMEOUT_MS)
    expect(page.locator(".st-key-watch_day .js-plotly-plot")).to_have_count(1, timeout=TIMEOUT_MS)
    expect(page.get_by_test_id("stDataFrame").first).to_be_visible()
    missing = _missing_at_defaults()
    expect(metric_value(page, "Hours missing the SLO")).to_have_text(missing, timeout=TIMEOUT_MS)
    slider = page.locator(".st-key-watch_ttft").get_by_role("slider")
    slider.focus()
    slider.press("End")  # the loosest target: 10 s
    wait_idle(page)
    expect(page).to_have_url(re.compile(r"watch_ttft=10"), timeout=TIMEOUT_MS)
    expect(metric_value(page, "Hours missing the SLO")).not_to_have_text(missing, timeout=TIMEOUT_MS)
    expect(metric_value(page, "nvidia-smi utilization")).to_have_text("90–98%")  # the runs did not change
    expect_no_exception(page)


def test_copied_url_restores_targets_and_setup(page: Page, streamlit_server):
    open_page(page, streamlit_server.url, "what-to-watch", "gpu=A100+80GB+SXM&watch_ttft=2.5&watch_tpot=100")
    expect(page.locator(".st-key-gpu").get_by_role("combobox")).to_have_value("A100 80GB SXM")
    expect(page.locator(".st-key-watch_ttft")).to_contain_text("2.5")
    expect(page.locator(".st-key-watch_tpot")).to_contain_text("100")
    expect(page.get_by_text("on A100 80GB SXM", exact=False).first).to_be_visible()
    expect_no_exception(page)
