"""Nothing a link carries is rendered as markup, and the page talks to no host but its own server.

User text reaches the page in one place today: the notice that names a link's unusable settings
(ui/url_check.py), which shows keys and values. Each page is opened with injection strings as
values of its real settings and as unknown keys; in a real browser no link, image, script or element
from the input may appear, and the input must be visible as plain text. Every request the page makes
(documents, scripts, fonts, images, the favicon, websockets) must go to the app's own server.
"""

from __future__ import annotations

from urllib.parse import urlencode, urlsplit

import pytest
from playwright.sync_api import Page, expect

from tests.browser.helpers import FULL, TIMEOUT_MS, ci_sample, expect_no_exception, open_page, watch_outside
from ui.nav import ALL_PAGES

EVIL = "example.invalid"
# (what it tries, the string): backticks breaking out of inline code, markdown links and images,
# raw HTML, a javascript: link, Streamlit's own markdown extensions.
INJECTIONS = [
    f"x` [click](https://{EVIL}) ![i](https://{EVIL}/i.png) `",
    f"<img src=https://{EVIL}/h.png onerror=window.__pwned=1>",
    "<b id=pwned class=pwned>bold</b><script>window.__pwned=1</script>",
    "[js](javascript:window.__pwned=1)",
    f"```\n</code></pre><a id=pwned href=https://{EVIL}>x</a>",
    ":red[red] **bold** $x^2$ :material/home:",
]
PAGES = list(ALL_PAGES)
#: The notice is the entrypoint's, the same on every page: CI checks three (every page under
#: GPU_LIES_FULL_BROWSER=1).
SAMPLE = ci_sample(PAGES, [p for p in PAGES if p.url_path in ("home", "two-phases", "your-numbers")])


def hostile_query(real_keys: list[str]) -> str:
    """Injections as values of real settings and as unknown keys with a harmless value."""
    pairs = [(key, text) for key, text in zip(real_keys, INJECTIONS, strict=False)]
    pairs += [(text, "1") for text in INJECTIONS[len(real_keys):]]
    pairs += [("note", INJECTIONS[0])]
    return urlencode(pairs)


class Requests:
    """Every request and websocket a page opens, by host."""

    def __init__(self, page: Page, base_url: str) -> None:
        self.own = urlsplit(base_url).netloc
        self.outside: list[str] = []
        self.count = 0
        page.on("request", self._seen)
        page.on("websocket", lambda ws: self._check(ws.url))

    def _seen(self, request) -> None:
        self._check(request.url)

    def _check(self, url: str) -> None:
        self.count += 1
        parts = urlsplit(url)
        if parts.scheme in ("data", "blob", "about"):
            return
        if parts.netloc != self.own:
            self.outside.append(url)


def expect_no_live_markup(page: Page) -> None:
    for selector in (f"a[href*='{EVIL}']", f"img[src*='{EVIL}']", "a[href^='javascript:']", "#pwned",
                     ".pwned", "script:has-text('__pwned')", "[onerror]"):
        expect(page.locator(selector)).to_have_count(0)
    assert page.evaluate("() => window.__pwned === undefined")


@pytest.mark.parametrize("section", SAMPLE, ids=lambda s: s.url_path or "home")
def test_link_text_is_plain_text_and_no_outside_requests(page: Page, streamlit_server, section):
    requests = Requests(page, streamlit_server.url)
    real = ["gpu", "model", "compute_eff"]  # global settings: on every page
    open_page(page, streamlit_server.url, section.url_path, hostile_query(real))
    notice = page.locator(".st-key-url_notice")
    expect(notice).to_be_visible(timeout=TIMEOUT_MS)
    expect_no_live_markup(page)
    # The text itself, verbatim, in the notice's code blocks (the first few in view, the rest in its
    # "more" expander); the notice's own text is fixed (below), so it can only be there.
    expect(notice.get_by_test_id("stCode").first).to_be_visible()
    expect(notice).to_contain_text(f"[click](https://{EVIL})")
    expect(notice).to_contain_text("<b id=pwned")
    expect(notice.get_by_test_id("stAlert").get_by_test_id("stMarkdownContainer")).to_have_text(
        "This link had settings that could not be used as given:")
    expect_no_exception(page)
    assert requests.count > 10
    assert not requests.outside, requests.outside


@pytest.mark.skipif(not FULL, reason="CI: every browser test's pages are checked for outside requests "
                    "(tests/browser/conftest.py), and together they open every page")
def test_a_whole_tour_requests_nothing_from_outside(page: Page, streamlit_server):
    """Every page in turn at its defaults, in one tab (fonts, icons and the favicon included): each
    renders its own heading and no exception."""
    requests = Requests(page, streamlit_server.url)
    for section in PAGES:
        open_page(page, streamlit_server.url, section.url_path)
        expect_no_exception(page)
        expect(page.locator("h1").first).to_contain_text(section.number or section.title)
    favicon = page.locator("link[rel*='icon']").first.get_attribute("href") or ""
    assert EVIL not in favicon and "gstatic" not in favicon, favicon
    assert not requests.outside, requests.outside


def test_a_page_that_stops_early_still_names_the_bad_settings(page: Page, streamlit_server):
    """A setup that does not fit ends page 00 early (ui.layout.stop_page); the link's notice still
    shows, after it, as it does on every page."""
    open_page(page, streamlit_server.url, "two-phases",
              "phases_batch=1024&phases_context=32768&" + urlencode([("gpu", INJECTIONS[0])]))
    expect(page.get_by_text("These settings do not fit in memory")).to_be_visible(timeout=TIMEOUT_MS)
    expect(page.locator(".st-key-url_notice")).to_be_visible(timeout=TIMEOUT_MS)
    expect_no_live_markup(page)
    expect_no_exception(page)


def test_the_outside_request_check_sees_requests_and_websockets(browser):
    """The check every browser test ends with (tests/browser/helpers.py's watch_outside) does see an
    outside image and an outside websocket, and passes loopback ones."""
    context = browser.new_context()
    outside = watch_outside(context)
    try:
        page = context.new_page()
        page.set_content(f"""<img src="https://{EVIL}/i.png"><img src="http://127.0.0.1:9/x.png">
            <script>try {{ new WebSocket("wss://{EVIL}/s"); new WebSocket("ws://localhost:9/s"); }}
            catch (e) {{}}</script>""")
        for _ in range(100):  # until both are reported (polling; no timing is asserted)
            if sum(EVIL in u for u in outside) >= 2:
                break
            page.wait_for_timeout(100)
    finally:
        context.close()
    assert any(u.startswith(f"https://{EVIL}/i.png") for u in outside), outside
    assert any(u.startswith(f"wss://{EVIL}/s") for u in outside), outside
    assert not any("127.0.0.1" in u or "localhost" in u for u in outside), outside
