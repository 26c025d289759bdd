"""The app in a real browser through nginx (scripts/proxy.py, 2 replicas): the security headers'
Content-Security-Policy breaks nothing, the websocket upgrade works, and every request stays on
the proxy's origin."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Page, expect

from scripts.proxy import Proxy
from tests.browser.helpers import TIMEOUT_MS, expect_no_exception, metric_value, open_page
from ui.nav import SECTIONS


@pytest.fixture(scope="module")
def proxy():
    with Proxy(replicas=2) as p:
        yield p


def test_pages_work_through_the_proxy_under_its_csp(page: Page, proxy):
    violations: list[str] = []
    outside: list[str] = []
    page.on("console", lambda m: violations.append(m.text) if "Content Security Policy" in m.text else None)
    page.on("request", lambda r: outside.append(r.url)
            if urlsplit(r.url).netloc not in ("", urlsplit(proxy.url).netloc)
            and not r.url.startswith(("data:", "blob:")) else None)
    # Pages 00 and 01 here; every page is opened without the proxy by the other browser tests
    open_page(page, proxy.url, SECTIONS[0].url_path)
    expect(page.locator(".js-plotly-plot").first).to_be_visible(timeout=TIMEOUT_MS)
    expect_no_exception(page)
    open_page(page, proxy.url, "continuous-batching")
    before = metric_value(page, "Useful work").inner_text()
    page.locator(".st-key-batching_continuous label").first.click()
    expect(metric_value(page, "Useful work")).not_to_have_text(before, timeout=TIMEOUT_MS)
    assert not violations, violations[:5]
    assert not outside, outside[:5]
