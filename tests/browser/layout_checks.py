"""Checks of what a page draws, in a real browser: charts whose titles, legends and labels nothing
covers or cuts off, tables that fit, metric text that is not cut short. Used by the first-screen test
(``tests/browser/test_first_screen_browser.py``) at the defaults and by ``scripts/visual_sweep.py``
over many setups."""

from __future__ import annotations

from playwright.sync_api import Page

#: The two screens every page is checked on: a laptop and a phone (touch, mobile viewport).
SIZES = {"desktop": dict(viewport={"width": 1280, "height": 800}),
         "phone": dict(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True,
                       device_scale_factor=2)}

# Boxes of the parts of every Plotly chart on the page, in page coordinates.
_CHART_PARTS_JS = """() => Array.from(document.querySelectorAll('.js-plotly-plot')).map((plot, i) => {
  const box = (el) => { const r = el.getBoundingClientRect();
                        return r.width > 0 && r.height > 0 ? [r.left, r.top, r.right, r.bottom] : null; };
  const all = (sel) => Array.from(plot.querySelectorAll(sel)).map(box).filter(Boolean);
  const legend = plot.querySelector('.legend .bg');
  const bar = plot.querySelector('.modebar-container');
  const shown = bar && getComputedStyle(bar).display !== 'none'
                && getComputedStyle(plot.querySelector('.modebar') || bar).opacity !== '0';
  const key = (plot.closest('[class*="st-key-"]') || {}).className || '';
  return {
    name: (key.match(/st-key-[\\w-]+/) || ['chart ' + i])[0],
    svg: box(plot.querySelector('.main-svg')),
    title: all('.gtitle'), legend: legend ? [box(legend)].filter(Boolean) : [],
    axis_titles: all('.g-xtitle text, .g-ytitle text, [class*="g-x"][class$="title"] text, '
                     + '[class*="g-y"][class$="title"] text'),
    labels: all('.textpoint text, .bartext, .annotation-text'),
    plot_areas: all('.nsewdrag'),
    modebar: shown ? all('.modebar-group') : [],
  };
})"""


def _overlap(a, b, slack: float = 1.0) -> bool:
    return (min(a[2], b[2]) - max(a[0], b[0]) > slack) and (min(a[3], b[3]) - max(a[1], b[1]) > slack)


def _inside(inner, outer, slack: float = 1.5) -> bool:
    return (inner[0] >= outer[0] - slack and inner[1] >= outer[1] - slack
            and inner[2] <= outer[2] + slack and inner[3] <= outer[3] + slack)


def check_charts(page: Page, width: int) -> None:
    for chart in page.evaluate(_CHART_PARTS_JS):
        name, svg = chart["name"], chart["svg"]
        if svg is None:
            continue
        assert svg[2] - svg[0] <= width + 1, f"{name} is wider than the screen"
        for part in ("title", "legend", "axis_titles", "labels"):
            for b in chart[part]:
                assert _inside(b, svg), f"{name}: a {part} entry is cut off at {b} (chart {svg})"
        for legend in chart["legend"]:
            for other in chart["title"] + chart["axis_titles"]:
                assert not _overlap(legend, other), f"{name}: the legend covers a title"
        for title in chart["title"]:
            for area in chart["plot_areas"]:
                assert not _overlap(title, area), f"{name}: the title sits on the plot"
        titles = chart["axis_titles"]
        for i, a in enumerate(titles):
            for b in titles[i + 1:]:
                assert not _overlap(a, b), f"{name}: two axis titles overlap"
        for tool in chart["modebar"]:
            for other in chart["title"] + chart["legend"]:
                assert not _overlap(tool, other), f"{name}: the toolbar covers a title or legend"


_OVERFLOWING_CELLS_JS = """() => Array.from(document.querySelectorAll('[data-testid="stTable"] td'))
  .filter(td => td.scrollWidth > td.clientWidth + 1)
  .map(td => `${td.scrollWidth}>${td.clientWidth}: ${td.innerText.slice(0, 40)}`)"""


def check_tables(page: Page, width: int) -> None:
    """Tables fit the screen and no cell's text runs into the next (data grids scroll in their own
    frame, with the first column pinned)."""
    assert page.evaluate(_OVERFLOWING_CELLS_JS) == [], "a table cell's text overflows"
    for table in page.get_by_test_id("stTable").all():
        box = table.bounding_box()
        assert box is None or box["x"] + box["width"] <= width + 1, "a table is wider than the screen"


# Metric text cut short: a value, label or delta whose text is wider than its box (Streamlit ends a
# metric's value in an ellipsis, which hid page 04's "req/s" on a phone for some setups).
_CUT_METRICS_JS = """() => Array.from(document.querySelectorAll(
    '[data-testid="stMetric"] [data-testid="stMarkdownContainer"]'))
  .filter(e => e.scrollWidth > e.clientWidth + 1)
  .map(e => `${e.scrollWidth}>${e.clientWidth}: ${e.innerText.slice(0, 40)}`)"""


def check_metrics_uncut(page: Page) -> None:
    assert page.evaluate(_CUT_METRICS_JS) == [], "a metric's text is cut off"
