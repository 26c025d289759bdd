"""Every section's point on its first screen, at 1280x800 and on a 390x844 phone, and charts whose
titles, legends and labels nothing covers or cuts off.

For each section: the main control and the result it moves must lie inside the first viewport
(bounding boxes, no scrolling). For every chart on the page: its title, legend, axis titles, text
labels and annotations stay inside the chart, the legend meets neither the title nor an axis title,
the title does not sit on the plot area, and no Plotly toolbar shows (it floated over titles and
legends), not even on hover.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.browser.helpers import (
    CHART_MARGINS_JS,
    TIMEOUT_MS,
    ci_sample,
    expect_no_exception,
    metric_value,
    open_page,
    watch_outside,
)
from tests.browser.layout_checks import SIZES, check_charts, check_metrics_uncut, check_tables
from ui.layout import CHART_MARGINS


def _points(selector: str):
    return lambda page: page.locator(selector)


def _metric(label: str):
    return lambda page: metric_value(page, label)


#: url path -> (the main control, the results it moves: each a function of the page to a locator).
FIRST_SCREEN = {
    "two-phases": (".st-key-phases_batch",
                   [_points(".st-key-phases_roofline .scatterlayer path.point")]),
    "continuous-batching": (".st-key-batching_continuous",
                            [_points(".st-key-batching_gauges text.number")]),
    "paged-attention": (".st-key-paging_paged", [_points(".st-key-paging_pool .nsewdrag")]),
    "speculative-decoding": (".st-key-spec_alpha", [_metric("Speedup"), _metric("Tokens per pass")]),
    "what-to-watch": (".st-key-watch_ttft",
                      [_metric("Goodput, continuous"), _metric("Goodput, static")]),
    "under-load": (".st-key-load_policy", [_metric("p99 TBT"), _metric("GPU utilization")]),
}

def _check_drawn_once(page: Page) -> None:
    """At the defaults on a 1280-px page no chart's automargin widens its margins: Plotly would draw
    that chart twice on every change (``ui.layout.CHART_MARGINS``; scripts/chart_margins.py)."""
    for chart in page.evaluate(CHART_MARGINS_JS):
        if chart["key"] in CHART_MARGINS:
            fits = all(laid <= (base or 0) for laid, base in zip(chart["laid"], chart["base"], strict=True))
            assert fits, f"{chart['key']} was laid out with margins {chart['laid']}, sent with " \
                f"{chart['base']}: it is drawn twice on every change (update ui.layout.CHART_MARGINS)"


def _in_first_screen(page: Page, locator, width: int, height: int, what: str) -> None:
    expect(locator.first).to_be_visible(timeout=TIMEOUT_MS)
    for i in range(locator.count()):
        b = locator.nth(i).bounding_box()
        assert b is not None, what
        assert b["x"] >= -1 and b["y"] >= -1 and b["x"] + b["width"] <= width + 1 \
            and b["y"] + b["height"] <= height + 1, f"{what} #{i} is outside the first screen: {b}"


#: Every page at both sizes under GPU_LIES_FULL_BROWSER=1; CI: every page on a phone (the tighter
#: screen) and three at 1280 x 800 (page 02's: two of its charts had come to be drawn twice a change
#: at 1280 px, unseen while only the full run opened it there).
CASES = ci_sample([(size, path) for size in SIZES for path in FIRST_SCREEN],
                  [*(("phone", p) for p in FIRST_SCREEN), ("desktop", "two-phases"),
                   ("desktop", "paged-attention"), ("desktop", "what-to-watch")])


@pytest.fixture(scope="module")
def sized_contexts(browser: Browser, browser_context_args):
    """One context per screen size for the module (its cache shared by that size's pages)."""
    contexts: dict = {}
    yield lambda size: contexts.setdefault(
        size, browser.new_context(**{**browser_context_args, **SIZES[size]}))
    for context in contexts.values():
        context.close()


@pytest.fixture
def sized_page(request, sized_contexts):
    page = sized_contexts(request.param).new_page()
    outside = watch_outside(page)
    yield page, request.param
    page.close()
    assert not outside, f"requests to outside hosts: {outside[:5]}"


# Per row of metrics (ui.layout.metric_row) with two or more: the tops of its first two, and their text.
_METRIC_ROWS_JS = """() => Array.from(document.querySelectorAll('[data-testid="stHorizontalBlock"]'))
  .map(row => Array.from(row.children).filter(c => c.querySelector(':scope > [data-testid="stMetric"]')))
  .filter(metrics => metrics.length >= 2)
  .map(metrics => [metrics[0].getBoundingClientRect().top, metrics[1].getBoundingClientRect().top,
                   metrics[0].innerText.split('\\n')[0]])"""


def _check_metric_rows_pair_up(page: Page) -> None:
    """On a phone a row of metrics wraps two a line (ui.layout.PAGE_CSS), not one per line as their
    content's width had made it: each row's first two metrics side by side."""
    rows = page.evaluate(_METRIC_ROWS_JS)
    assert rows, "no row of metrics on the page"
    for first_top, second_top, label in rows:
        assert abs(first_top - second_top) < 2, f"the metric row starting with {label!r} stacks one per line"


@pytest.mark.parametrize(("sized_page", "path"), CASES, indirect=["sized_page"], ids=lambda c: str(c))
def test_control_and_result_on_the_first_screen_and_charts_uncovered(sized_page, path, streamlit_server):
    page, size = sized_page
    width, height = SIZES[size]["viewport"]["width"], SIZES[size]["viewport"]["height"]
    open_page(page, streamlit_server.url, path)
    expect_no_exception(page)
    expect(page.locator(".js-plotly-plot .main-svg").first).to_be_visible(timeout=TIMEOUT_MS)
    page.wait_for_timeout(500)  # Plotly lays out legends and titles after the first paint
    control, results = FIRST_SCREEN[path]
    _in_first_screen(page, page.locator(control), width, height, f"{path}: the control {control}")
    for result in results:
        _in_first_screen(page, result(page), width, height, f"{path}: a result")
    check_charts(page, width)
    check_tables(page, width)
    check_metrics_uncut(page)
    if size == "desktop":
        _check_drawn_once(page)
    else:
        _check_metric_rows_pair_up(page)
    # No Plotly toolbar, even on hover (it floated over titles and legends): hover one chart to try.
    plot = page.locator(".js-plotly-plot").first
    plot.hover(position={"x": 30, "y": 30}, trial=size == "phone")
    page.wait_for_timeout(150)
    bars = page.locator(".modebar-container")
    for i in range(bars.count()):
        assert not bars.nth(i).evaluate(
            "e => getComputedStyle(e).display !== 'none' && e.getBoundingClientRect().height > 0 "
            "&& getComputedStyle(e.querySelector('.modebar') || e).opacity !== '0'"), "a toolbar shows"
    check_charts(page, width)


def test_a_long_metric_value_wraps_on_a_phone(sized_contexts, streamlit_server):
    """Page 04 on 2 x H200 with Llama-3.1-70B in FP8: static batching's goodput is 0.00456 req/s,
    wider than a phone's half-width metric. The value wraps at its space and keeps its unit."""
    page = sized_contexts("phone").new_page()
    try:
        open_page(page, streamlit_server.url, "what-to-watch",
                  "gpu=H200+SXM&model=Llama-3.1-70B&gpus=2&weights=fp8")
        value = metric_value(page, "Goodput, static")
        expect(value).to_contain_text("req/s", timeout=TIMEOUT_MS)
        assert value.inner_text().count(".") == 1 and float(value.inner_text().split()[0]) < 0.01
        check_metrics_uncut(page)
    finally:
        page.close()


def test_the_visual_sweeps_sample(sized_contexts, streamlit_server):
    """CI's fixed sample of ``scripts/visual_sweep.py`` (every section x 11 setups x both screens): page
    02 on a phone with Llama-3.1-405B in FP8 on 8 x H200, where the card chart's compute-bound label
    had run off the chart."""
    from scripts.visual_sweep import SETUPS, check_view

    page = sized_contexts("phone").new_page()
    try:
        open_page(page, streamlit_server.url, "paged-attention", SETUPS[1])
        expect(page.locator(".st-key-paging_card .main-svg").first).to_be_visible(timeout=TIMEOUT_MS)
        page.wait_for_timeout(500)
        check_view(page, SIZES["phone"]["viewport"]["width"])
    finally:
        page.close()
