"""Small helpers for driving the Streamlit UI in Playwright."""

from __future__ import annotations

import ipaddress
import os
from urllib.parse import urlsplit

from playwright.sync_api import Page, expect

TIMEOUT_MS = 20_000
#: Loading placeholders get longer: a page left with them and no script running reloads itself
#: after ui.watchdog.STUCK_MS (12 s; the tests that force it use a server with a fifth of that) and
#: must get the time to come back (README, *Restarts*).
PLACEHOLDER_TIMEOUT_MS = 45_000
#: CI runs a fixed sample of the long parametrized browser checks (the suite's ~6 minute budget);
#: GPU_LIES_FULL_BROWSER=1 runs every case (README, "Tests").
FULL = os.environ.get("GPU_LIES_FULL_BROWSER") == "1"


LOCAL_SCHEMES = ("data", "blob", "about", "chrome-error")


def outside_url(url: str) -> bool:
    """Whether a request goes anywhere but a loopback host (data:, blob:, about: and an error page's
    chrome-error: are local; so is any 127.x.y.z, ::1 and localhost)."""
    parts = urlsplit(url)
    if parts.scheme in LOCAL_SCHEMES or not parts.hostname or parts.hostname == "localhost":
        return False
    try:
        return not ipaddress.ip_address(parts.hostname).is_loopback
    except ValueError:  # a name, not an address
        return True


def watch_outside(target) -> list[str]:
    """Collect every request and websocket that a context's pages (or one page) open to an outside
    host, into the list returned. Attach it before the pages are opened."""
    outside: list[str] = []

    def check(url: str) -> None:
        if outside_url(url):
            outside.append(url)

    def watch_page(page) -> None:
        page.on("websocket", lambda ws: check(ws.url))

    target.on("request", lambda r: check(r.url))
    if hasattr(target, "new_page"):  # a context: its pages' websockets too
        target.on("page", watch_page)
        for page in target.pages:
            watch_page(page)
    else:
        watch_page(target)
    return outside


#: Every Plotly chart's key, the margins Plotly laid it out with (automargin included) and the base
#: margins it was sent with, each [left, right, top, bottom] px (``ui.layout.CHART_MARGINS``), and
#: whether it has axes (a chart without axes, such as an indicator, has no margins to push).
CHART_MARGINS_JS = """() => [...document.querySelectorAll('.js-plotly-plot')].map(gd => {
  const holder = gd.closest('[class*="st-key-"]');
  const key = holder ? [...holder.classList].find(c => c.startsWith('st-key-')).slice(7) : null;
  const s = gd._fullLayout._size, m = gd.layout.margin || {};
  return {key, laid: [s.l, s.r, s.t, s.b].map(Math.round), base: [m.l, m.r, m.t, m.b],
          axes: gd._fullLayout._has('cartesian')};
})"""


def ci_sample(cases: list, sample: list) -> list:
    """Every case under GPU_LIES_FULL_BROWSER=1; otherwise those of ``sample`` that are cases."""
    return list(cases) if FULL else [c for c in cases if c in sample]


def open_page(page: Page, base_url: str, path: str = "", query: str = "") -> None:
    """Open ``base_url/path?query`` and wait until the app has rendered and stopped running."""
    url = f"{base_url}/{path}" + (f"?{query}" if query else "")
    _track_requests(page)
    page.goto(url)
    wait_idle(page)


def _track_requests(page: Page) -> None:
    """Keep the page's unfinished requests (for the message when placeholders never resolve)."""
    if getattr(page, "_gpu_lies_pending", None) is not None:
        return
    pending: dict = {}
    page._gpu_lies_pending = pending
    page.on("request", lambda r: pending.__setitem__(id(r), r.url))
    page.on("requestfinished", lambda r: pending.pop(id(r), None))
    page.on("requestfailed", lambda r: pending.__setitem__(id(r), f"FAILED {r.url} {r.failure}"))


def wait_idle(page: Page) -> None:
    """Wait for the app to render a title, for no script run to be in progress and for no element to
    be a loading placeholder.

    A run in progress shows as greyed-out elements: Streamlit 1.67 marks an element
    ``data-stale="true"`` while a run that has started has not drawn it again (as
    ``tests/browser/rapid.py``'s settling check reads it), whereas its running indicator
    (``stStatusWidget``) appears only after a delay, so a short run never shows it. Both are checked."""
    for _ in range(2):  # twice: a page that reloaded itself (the watchdog) is waited for again
        expect(page.locator("h1").first).to_be_visible(timeout=TIMEOUT_MS)
        expect(page.get_by_test_id("stStatusWidget")).to_have_count(0, timeout=TIMEOUT_MS)
        try:
            expect(page.get_by_test_id("stSkeleton")).to_have_count(0, timeout=PLACEHOLDER_TIMEOUT_MS)
        except AssertionError as err:  # say what the placeholders wait for: the next run can be read
            raise AssertionError(f"{err}\n{_placeholder_report(page)}") from None
        expect(page.locator('[data-stale="true"]')).to_have_count(0, timeout=TIMEOUT_MS)


def _placeholder_report(page: Page) -> str:
    """Which elements are still placeholders, the page's unfinished requests, its watchdog state."""
    try:
        where = page.evaluate("""() => [...document.querySelectorAll('[data-testid="stSkeleton"]')]
            .slice(0, 12).map(s => {
              const box = s.closest('[data-testid="stElementContainer"]');
              return box ? box.className.split(' ').filter(c => c.startsWith('st')).join('.') : '?';
            })""")
        scripts = page.evaluate("""() => performance.getEntriesByType('resource')
            .filter(e => e.name.endsWith('.js')).length""")
        watchdog = page.evaluate("() => JSON.stringify(window.__gpuLiesWatchdog || null)")
    except Exception as exc:  # a report, never the failure itself
        return f"(no report: {exc})"
    pending = list(getattr(page, "_gpu_lies_pending", {}).values())[:20]
    return (f"placeholders in: {where}; scripts loaded: {scripts}; unfinished requests: {pending}; "
            f"watchdog: {watchdog}")


def expect_no_exception(page: Page) -> None:
    expect(page.get_by_test_id("stException")).to_have_count(0)


def metric_value(page: Page, label: str):
    """Locator of the value of the st.metric with this label."""
    metric = page.get_by_test_id("stMetric").filter(has=page.get_by_text(label, exact=True))
    return metric.get_by_test_id("stMetricValue")
