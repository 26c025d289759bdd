"""Page furniture shared by every section: header and lede, the two expanders, the next link."""

from __future__ import annotations

import base64
import re
import threading
import time
from collections.abc import Callable

import numpy as np
import streamlit as st
from _plotly_utils.utils import is_homogeneous_array, is_skipped_key, plotlyjsShortTypes, to_typed_array_spec
from plotly.basedatatypes import BaseFigure
from streamlit.runtime.scriptrunner import get_script_run_ctx

from ui import legend
from ui.nav import SOURCES_PATH, next_section
from ui.perf import SCRIPT_LOCK
from ui.setup import current_setup
from ui.state import reset_button, restore
from ui.theme import COLORS, PLOTLY_CONFIG, Spec
from ui.url_check import CLOSED_SECTIONS_KEY, STOPPED_KEY

#: House CSS, one block for every page. Written here, not in .streamlit/config.toml, because it needs
#: media queries: a compact first screen (the page's control and its result above the fold at 1280x800
#: and on a 390x844 phone), no Plotly toolbar on touch screens (it covers chart titles and legends
#: there; pinch-zoom and tap-for-hover still work), and tables that wrap instead of running off a phone.
PAGE_CSS = """<style>
[data-testid="stMainBlockContainer"] { padding-top: 4.25rem; padding-bottom: 4rem; }
[data-testid="stMainBlockContainer"] h1 { font-size: 2.05rem; line-height: 1.2; padding: 0.1rem 0 0.2rem; }
@media (max-width: 640px) {
  [data-testid="stMainBlockContainer"] { padding-top: 3.6rem; padding-left: 0.85rem;
                                          padding-right: 0.85rem; }
  [data-testid="stMainBlockContainer"] h1 { font-size: 1.45rem; }
  [data-testid="stMainBlockContainer"] [data-testid="stVerticalBlock"] { gap: 0.7rem; }
  [data-testid="stMetric"] { padding: 0.45rem 0.6rem; }
  [data-testid="stMetricValue"] { font-size: 1.55rem; }
  /* metric rows (ui.layout.metric_row): two a line, not one per line as their content's width made them */
  [data-testid="stHorizontalBlock"] > [data-testid="stElementContainer"]:has(> [data-testid="stMetric"]) {
    flex: 1 1 9rem; min-width: 0; }
  [data-testid="stMetricLabel"], [data-testid="stMetricLabel"] * { white-space: normal !important; }
  /* a value wraps at its spaces rather than ending in an ellipsis that hides its unit ("0.00456 r..."
     for page 04's static goodput on some setups); not on a laptop, where a metric is as wide as its
     unwrapped value (min-content, below) */
  [data-testid="stMetricValue"], [data-testid="stMetricValue"] * {
    white-space: normal !important; text-overflow: clip !important; }
  [data-testid="stMetricDelta"], [data-testid="stMetricDelta"] * {
    white-space: normal !important; text-overflow: clip !important; height: auto !important; }
  [data-testid="stMainBlockContainer"] h2, [data-testid="stMainBlockContainer"] h3 { font-size: 1.2rem; }
  [data-testid="stTable"] table { table-layout: fixed; width: 100%; }
  [data-testid="stTable"] td, [data-testid="stTable"] th { word-break: break-word; hyphens: auto;
                                                            font-size: 0.8rem; padding: 0.3rem; }
  [data-testid="stTable"] td *, [data-testid="stTable"] th * {
    overflow-wrap: anywhere !important; word-break: normal !important; white-space: normal !important; }
  [data-testid="stTable"] th, [data-testid="stTable"] th * { word-break: normal !important; }
  /* markdown tables ("How this is computed"'s operators): inside the column, cells wrapping */
  [data-testid="stMarkdown"] table { table-layout: fixed; width: 100%; }
  [data-testid="stMarkdown"] td, [data-testid="stMarkdown"] th { overflow-wrap: anywhere;
                                                                  font-size: 0.8rem; padding: 0.3rem; }
}
@media (min-width: 641px) {
  /* metric rows on a laptop: one line where their contents fit, shared equally (a fifth metric had
     wrapped alone and stretched across the page) */
  [data-testid="stHorizontalBlock"] > [data-testid="stElementContainer"]:has(> [data-testid="stMetric"]) {
    flex: 1 1 0; min-width: min-content; }
  [data-testid="stHorizontalBlock"] [data-testid="stMetricLabel"],
  [data-testid="stHorizontalBlock"] [data-testid="stMetricLabel"] * { white-space: normal !important; }
}
[data-testid="stTable"] td, [data-testid="stTable"] th { white-space: normal; }
[data-testid="stTable"] td div, [data-testid="stTable"] th div { display: block !important; max-width: 100%; }
[data-testid="stTable"] code { white-space: normal; overflow-wrap: anywhere; word-break: normal; }
@media (max-width: 640px) {
  .st-key-watch_failures table, .st-key-watch_failures tbody, .st-key-watch_failures tr,
  .st-key-watch_failures td { display: block; width: 100% !important; }
  .st-key-watch_failures thead { display: none; }
  .st-key-watch_failures tr { padding: 0.5rem 0 0.6rem; border-bottom: 1px solid __GRID__; }
  .st-key-watch_failures td { border: none !important; padding: 0.15rem 0.2rem !important;
                              font-size: 0.85rem !important; }
  .st-key-watch_failures td:nth-of-type(2)::before { content: "What catches it"; }
  .st-key-watch_failures td:nth-of-type(3)::before { content: "Alert"; }
  .st-key-watch_failures td:nth-of-type(4)::before { content: "Value in the scenario"; }
  .st-key-watch_failures td::before { display: block; font-size: 0.72rem; color: __MUTED__;
                                      text-transform: uppercase; letter-spacing: 0.03em; }
}
@media (hover: none) { .modebar-container { display: none !important; } }
.gl-legend { display: flex; flex-wrap: wrap; gap: 0.15rem 1.1rem; font-size: 0.8rem; line-height: 1.5;
             margin: -0.6rem 0 0.2rem 0.4rem; }
.gl-item { display: inline-flex; align-items: center; gap: 0.4rem; }
.gl-key { display: inline-block; width: 0.7rem; height: 0.7rem; flex: none; }
.gl-line { width: 1.5rem; height: 0; }
.gl-square { box-shadow: inset 0 0 0 1px __OUTLINE__; }
.gl-circle { border-radius: 50%; }
.gl-diamond { transform: rotate(45deg) scale(0.8); }
.gl-cross { width: auto; height: auto; font-weight: 700; line-height: 1; }
.gl-gauges { display: flex; gap: 0.5rem; }
.gl-gauge { flex: 1 1 0; min-width: 0; text-align: center; }
.gl-gauge-title { font-size: 0.9rem; line-height: 1.25; }
.gl-gauge-title span { font-size: 0.72rem; color: __MUTED__; }
.gl-gauge svg { display: block; width: 100%; height: auto; max-height: 155px; margin-top: 0.2rem; }
.gl-bars { margin: 0 0 0.4rem; }
.gl-bars-title { margin: 0 0 1rem; }
.gl-bars-row { display: flex; align-items: center; gap: 0.5rem; margin: 3px 0; }
.gl-bars-name { flex: 0 0 6.5rem; font-size: 0.85rem; line-height: 1.2; text-align: right; }
.gl-strip .gl-bars-name { flex-basis: 9.5rem; }
.gl-bars-track { flex: 1; display: flex; height: 2.2rem; background: __FREE__; min-width: 0; }
.gl-seg { display: flex; align-items: center; justify-content: center; overflow: hidden; white-space: nowrap;
          font-size: 0.8rem; }
.gl-bars-ticks { flex: 1; position: relative; height: 1.2rem; border-top: 1px solid __GRID__;
                 font-size: 0.75rem; color: __MUTED__; }
.gl-bars-ticks span { position: absolute; top: 0.1rem; transform: translateX(-50%); }
.gl-bars-ticks span:first-child { transform: none; }
.gl-bars-ticks span:last-child { transform: translateX(-100%); }
.gl-bars-axis-title { font-size: 0.8rem; color: __MUTED__; text-align: center; padding-left: 7rem; }
.gl-strip .gl-bars-axis-title { padding-left: 10rem; }
.gl-cells { flex: 1; display: flex; gap: 3px; min-width: 0; }
.gl-cell, .gl-cells-heads span { flex: 1 1 0; min-width: 0; display: flex; align-items: center;
                                 justify-content: center; overflow: hidden; }
.gl-cell { height: 1.45rem; font-size: 0.85rem; }
.gl-cells-heads span { font-size: 0.75rem; color: __MUTED__; }
.gl-cells .gl-cell-last { flex: 1 0 2.6rem; margin-left: 0.6rem; }
@media (max-width: 640px) {
  .gl-bars-name { flex-basis: 4.6rem; font-size: 0.75rem; }
  .gl-strip .gl-bars-name { flex-basis: 6.6rem; }
  .gl-bars-axis-title { padding-left: 5rem; }
  .gl-strip .gl-bars-axis-title { padding-left: 7rem; }
  .gl-cell { font-size: 0.7rem; }
  .gl-cells { gap: 2px; }
  .gl-cells .gl-cell-last { flex: 0 0 2.6rem; margin-left: 0.3rem; }
  .gl-cells-heads span { font-size: 0.65rem; }
}
</style>""".replace("__MUTED__", COLORS["muted"]).replace("__FREE__", COLORS["free"]).replace(
    "__GRID__", COLORS["grid"]).replace("__OUTLINE__", COLORS["muted"] + "4D")  # 30 % alpha


class PageStopped(Exception):
    """Raised by ``stop_page``; the entrypoint catches it after the page has run."""


def stop_page() -> None:
    """End the page here (after it said why), but let the entrypoint finish its run: unlike
    ``st.stop()``, which ends the whole script, the shared link's notice and the watchdog still
    come after it. The run notes it (``STOPPED_KEY``): a shared link's settings the page would have
    drawn further down were not used, not refused (``ui.url_check``)."""
    st.session_state[STOPPED_KEY] = True
    raise PageStopped


def page_style() -> None:
    """The house CSS (call once per run, from the entrypoint). A style-only ``st.html`` takes no room."""
    st.html(PAGE_CSS)


def header(number: str, title: str, lede: str, *, prefix: str | None = None,
           after_reset: Callable[[], None] | None = None) -> None:
    """Section number and title, the reader's current setup (with the page's reset button), and a
    short lede: the page's point in a sentence or two, so its control and result fit the first screen.

    ``prefix`` (the page's widget keys start with it) restores the page's remembered settings before
    its widgets are drawn and puts a reset button beside the setup line (``ui.state``);
    ``after_reset`` runs after that button has set the knobs back (``ui.state.reset``).
    """
    if prefix:
        restore(prefix)
    st.title(f"{number} · {title}" if number else title)
    with st.container(horizontal=True, vertical_alignment="center", gap="small", wrap=False):
        st.caption(f"For **{current_setup().label}** · setup in the sidebar")
        if prefix:
            reset_button(prefix, after_reset)
    st.markdown(lede)


def metric_row():
    """A row for headline metrics that wraps on narrow screens (2 a row on a phone, 4 on a laptop)
    instead of stacking one per line as ``st.columns`` does."""
    return st.container(horizontal=True, wrap=True, gap="small")


def metric_slots(n: int) -> list:
    """A drop-in for ``st.columns(n)`` when every column holds one metric: ``n`` handles on one
    wrapping row (``metric_row``), so ``slots[i].metric(...)`` keeps its order on a laptop and wraps
    two a line on a phone instead of stacking one per line."""
    row = metric_row()
    return [row] * n


#: Top margin a title inside a figure takes (``ui.theme.style``: 95 px titled, 50 untitled).
_TITLE_MARGIN_PX = 45


def _take_title(fig) -> str | None:
    """Move a figure's own title out of it: a Plotly title never wraps, so a long one runs off a phone,
    and a wrapping legend climbs onto it. The title is kept on the figure (``_chart_title``) so a
    cached figure drawn again still has it."""
    moved = getattr(fig, "_chart_title", None)
    if isinstance(fig, Spec):
        title, margin = fig._layout.get("title"), fig._layout.get("margin")
        text = title.pop("text", None) if isinstance(title, dict) else None
        if text:
            fig._chart_title = moved = text
            if isinstance(margin, dict) and margin.get("t") is not None:
                margin["t"] = max(10, margin["t"] - _TITLE_MARGIN_PX)
        return moved
    text = fig.layout.title.text
    if text:
        fig._chart_title = moved = text
        top = fig.layout.margin.t
        fig.layout.title.text = None
        if top is not None:
            fig.layout.margin.t = max(10, top - _TITLE_MARGIN_PX)
    return moved


#: Each chart's margins in px (left, right, top, bottom) as Plotly's automargin lays them out at the
#: defaults on a 1280-px-wide page, measured by ``scripts/chart_margins.py --python``. A chart sent with
#: smaller margins is drawn twice on every change: Plotly finds that its axis labels or legend need
#: more room, widens the margins and draws the whole chart again (on page 00 that second drawing was
#: about 44 ms of a change's ~190 ms in the browser). Sent with these as its base margins, the first
#: layout fits and a change draws each chart once. Automargin stays on: a label longer than at the
#: defaults (another model's name, a phone's wrapped legend) still gets its room, at the cost of the
#: second drawing for that chart. The margins are only ever raised, so at other settings and on a
#: phone a chart keeps at least these (page 00's waterfall its 231-px left margin for its labels).
#: ``tests/browser/test_first_screen_browser.py`` (``_check_drawn_once``) checks at 1280 px that no
#: chart is widened at the defaults; ``tests/test_chart_margins.py`` that every entry is a drawn chart.
CHART_MARGINS: dict[str, tuple[int, int, int, int]] = {
    # two-phases
    "phases_roofline": (80, 10, 10, 64),
    "phases_busy": (139, 10, 50, 64),
    "phases_operators": (60, 10, 50, 64),
    "phases_ttft": (80, 10, 50, 64),
    "phases_gap_chart": (231, 10, 10, 64),
    # continuous-batching
    "batching_timeline": (74, 10, 13, 71),
    # paged-attention
    "paging_pool": (9, 4, 4, 10),
    "paging_ledger": (183, 23, 10, 70),
    "paging_resident": (66, 10, 50, 106),
    "paging_card": (76, 17, 50, 136),
    "paging_chunked": (73, 10, 50, 114),
    # speculative-decoding
    "spec_alpha_chart": (61, 16, 50, 66),
    "spec_batch_chart": (71, 22, 50, 66),
    # what-to-watch
    "watch_bars": (209, 30, 30, 66),
    "watch_day": (92, 10, 30, 124),
    # under-load
    "load_timeline": (130, 10, 60, 64),
    "load_tbt_curve": (92, 10, 50, 64),
    "load_ttft_curve": (92, 10, 50, 64),
    "load_dashboard": (73, 10, 50, 64),
    "load_prefix_curve": (73, 10, 50, 64),
    "load_disagg": (66, 10, 50, 64),
}
_SIDES = ("l", "r", "t", "b")


def _base_margins(fig, key: str) -> None:
    """Raise the figure's margins to ``CHART_MARGINS[key]`` (never lower them)."""
    base = CHART_MARGINS.get(key)
    if base is None:
        return
    if isinstance(fig, Spec):
        margin = fig._layout.setdefault("margin", {})
        for side, px in zip(_SIDES, base, strict=True):
            margin[side] = max(margin.get(side) or 0, px)
        return
    for side, px in zip(_SIDES, base, strict=True):
        fig.layout.margin[side] = max(fig.layout.margin[side] or 0, px)


#: Readers share cached figures: taking a figure's title, raising its margins and encoding it happen
#: under this lock, so no reader encodes (and caches) a figure another is halfway through changing.
_FIGURE_LOCK = threading.Lock()


def _key_only(trace: dict) -> bool:
    """A trace that draws nothing, there only to be a legend key (a heatmap's colours, a raster's):
    a scatter whose x and y are empty or a lone None."""
    def empty(values) -> bool:
        return values is None or (isinstance(values, (list, tuple)) and len(values) <= 1
                                  and all(v is None for v in values))

    return trace.get("type", "scatter") == "scatter" and empty(trace.get("x")) and empty(trace.get("y"))


def _take_legend(fig) -> list[legend.Entry]:
    """Move a figure's legend out of it (``ui.legend``): its entries, read from the traces, and the
    figure's own legend turned off. The traces that were only keys go too: Plotly still processes
    each (about 1 ms a trace on a 2-core machine: page 02's pool had five). Kept on the figure
    (``_legend``) like its title, so a cached figure drawn again still has them."""
    moved = getattr(fig, "_legend", None)
    if moved is not None:
        return moved
    if isinstance(fig, Spec):
        fig._legend = moved = legend.entries(fig._data)
        fig._data = [t for t in fig._data if not _key_only(t)]
        fig._layout["showlegend"] = False
        fig._sent = None
    else:
        traces = [t.to_plotly_json() for t in fig.data]
        fig._legend = moved = legend.entries(traces)
        fig.data = [t for t, d in zip(fig.data, traces, strict=True) if not _key_only(d)]
        fig.layout.showlegend = False
    return moved


def _legend_label(title: str | None) -> str:
    return f"Legend: {title}" if title else "Legend"


def chart(fig, *, key: str, alt: str, title: str | None = None, send_first: bool = False,
          legend_at: str | None = None) -> None:
    """A Plotly chart with its title above it as text (so it wraps on a phone and a wrapping legend
    never hides it), its base margins (``CHART_MARGINS``), a stable key, alt text for screen readers,
    and the house config. ``send_first``: the chart the page's main control moves, sent to the
    browser before the rest of the page is computed (``send_what_is_drawn``). ``legend_at`` ("above"
    or "below"): the figure's legend drawn as text there instead of by Plotly (``ui.legend``: Plotly
    lays a legend out again on every change, 10-20 ms of the drawing)."""
    if legend_at not in (None, "above", "below"):
        raise ValueError(f"legend_at must be 'above', 'below' or None, not {legend_at!r}")
    with _FIGURE_LOCK:
        title = title or _take_title(fig)
        keys = _take_legend(fig) if legend_at else []
        _base_margins(fig, key)
        sent = _Sent.of(fig)
    if title:
        st.markdown(f"**{title}**")
    if keys and legend_at == "above":
        st.markdown(legend.to_html(keys, _legend_label(title)), unsafe_allow_html=True)
    st.plotly_chart(sent, key=key, alt=alt, config=PLOTLY_CONFIG, width="stretch")
    if keys and legend_at == "below":
        st.markdown(legend.to_html(keys, _legend_label(title)), unsafe_allow_html=True)
    if send_first:
        send_what_is_drawn()


#: Seconds a run pauses after its main chart (``send_what_is_drawn``); 0 turns the pause off (the
#: AppTest suite, which has no browser to draw for: tests/conftest.py).
SEND_FIRST_S = 0.1


def send_what_is_drawn() -> None:
    """Pause the run briefly so the server sends what it has drawn so far, and the browser draws it
    on its own, before the rest of the page arrives.

    The browser handles the messages that reach it together in one pass: when a change's whole page
    arrives at once, the chart the reader moved waits for every element and chart below it (Plotly
    redraws each changed chart in full, 10-30 ms apiece). Streamlit sends an element as soon as its run
    has made it, but the run holds the interpreter while it computes the rest of the page, and the
    server's sending thread gets its turn too late. The pause lets it send; the main chart is then drawn
    first and the rest of the page follows. It should last as long as the browser takes to draw what
    came up to the chart: with 12 ms the rest of the page still reached the browser before it had
    drawn the chart on the 2-core machines of the README's runs, and 40 ms was too short on the slowest
    of them (machine E: 90-250 ms from the chart's message to the chart drawn), where the rest of the
    page, arriving meanwhile, held the chart back; 100 ms made it 7-33 % sooner on every main control
    in one A/B run and on five of six in another, the page settling no later except after page 01's
    slots (README, "Speed": click-to-chart and the page settling, before and after). Skipped on a
    page's first view (``note_page``) and when the server is busy (``SCRIPT_LOCK.busy()``, checked
    once, before the pause: another reader's run waits for the page lock, or this run waited for it,
    or another reader's run ended within the last second): the pause holds the lock, which under load
    is the other readers' time."""
    if SEND_FIRST_S > 0 and _redrawing_the_same_page() and not SCRIPT_LOCK.busy():
        time.sleep(SEND_FIRST_S)


_DRAWN_PAGE_KEY = "_drawn_page"  # the page the session's last run drew
_SAME_PAGE_KEY = "_redrawing_same_page"


def note_page(url_path: str) -> None:
    """Call before a page runs: notes whether the session's last run drew the same page. Only then
    does ``send_what_is_drawn`` pause: a page that fills a container above its main chart after the
    chart (pages 01, 03, 04) would otherwise show the chart first, then push it down on a first view;
    on a redraw the container still holds the last run's elements, so nothing moves."""
    st.session_state[_SAME_PAGE_KEY] = st.session_state.get(_DRAWN_PAGE_KEY) == url_path
    st.session_state[_DRAWN_PAGE_KEY] = url_path


def _redrawing_the_same_page() -> bool:
    return bool(st.session_state.get(_SAME_PAGE_KEY))


_EARLY_MISSED_KEY = "_early_chart_missed"


def redraw_values(keys: tuple[str, ...]) -> dict | None:
    """On a redraw of the same page, the values the page's widgets ``keys`` hold for this run (the
    reader's change is in the session state before the run starts), so that the page can compute its
    main chart and send it before it draws those widgets and its headline numbers; None on a first
    view, on a Back or Forward in the browser (the widgets then take the URL's values as they are
    drawn, and the session still holds the ones the reader left, as ``ui.setup.setup_from_state``
    knows), where any of them has no value yet, or right after such an early chart was found wrong
    (``check_redraw_values``).

    Why: the browser draws a rerun's elements in a few passes, each over the whole page, and the
    chart the reader moved is drawn in the pass its message arrives in. On pages 03 and 04 it came
    after four headline metrics (styled, with help icons) and the widgets; sent first, with the pause
    after it (``send_what_is_drawn``), it was drawn 11-16 % sooner (``benchmarks.ab_compare``; page
    01's slot timeline, behind its controls and gauges, 5-14 %; on page 02, whose chart follows only
    its widgets, the same reordering gained nothing measurable, so that page keeps its order). On a
    first view the order stays the page's reading order, since the containers above the chart are
    still empty and the chart would jump."""
    state = st.session_state
    if state.pop(_EARLY_MISSED_KEY, False) or not _redrawing_the_same_page():
        return None
    ctx = get_script_run_ctx(suppress_warning=True)
    if ctx is not None and ctx.is_history_navigation:
        return None
    if any(k not in state for k in keys):
        return None
    return {k: state[k] for k in keys}


def check_redraw_values(early: dict | None, drawn: dict) -> None:
    """The widgets' values as drawn against those ``redraw_values`` gave the early chart: should
    they differ (not expected: a widget returns its session-state value, and a Back or Forward, where
    the URL's value wins, keeps the reading order), the run starts again with the page in reading
    order, so no chart for another setting stays on the page."""
    if early is not None and any(early[k] != drawn[k] for k in early):
        st.session_state[_EARLY_MISSED_KEY] = True
        st.rerun()


class _Sent(BaseFigure):
    """A built figure as ``st.plotly_chart`` sends it: the figure's dict with its arrays encoded.
    Handed a figure, Streamlit calls ``to_dict()``, which deep-copies every array and list of the
    figure (about a tenth of a page's rerun); the JSON it writes is the same.

    The encoded dict is built once per figure and sent as it is, not copied per send: sending only
    reads it. Streamlit 1.67 takes it through ``to_dict()``, ``plotly.io.to_json(fig,
    validate=False)`` (whose one write, popping each trace's ``uid``, finds none: ``of`` drops them)
    and reads its width and height (tests/test_figures_sent.py checks that a send leaves it as it
    was). Copying its dicts for every send cost 0.3-1.9 ms of a rerun on pages 00-04."""

    def __init__(self, spec: dict) -> None:  # no BaseFigure.__init__: nothing is validated again
        object.__setattr__(self, "_spec", spec)

    @classmethod
    def of(cls, fig) -> _Sent:
        """A figure drawn again (pages cache their figures) reuses its encoded arrays: only the
        dicts are copied for each send."""
        encoded = getattr(fig, "_sent", None)
        if encoded is None:
            encoded = {"data": [_structure(t) for t in fig._data], "layout": _structure(fig._layout)}
            for trace in encoded["data"]:
                trace.pop("uid", None)  # plotly.io.to_json drops it; here, so the send writes nothing
            _to_base64(encoded)  # numpy arrays as base64, as plotly's own to_dict does
            if isinstance(fig, Spec):  # a go.Figure (under test) can still be changed after a send
                fig._sent = encoded
        return cls(encoded)

    def to_dict(self) -> dict:
        return self._spec


_PLAIN = (str, int, float, bool, type(None))
_NESTED = (dict, list, tuple)


_INT_RANGES = [(np.dtype(t), np.iinfo(t)) for t in ("int8", "int16", "int32")]
_UINT_RANGES = [(np.dtype(t), np.iinfo(t)) for t in ("uint8", "uint16", "uint32")]


def _typed_array(v: np.ndarray):
    """``to_typed_array_spec`` for a numeric numpy array, with the same result, without its way
    through narwhals and a read-only copy (py-spy put a sixth of page 03's script time in encoding its
    figures' arrays); anything else goes to plotly's own function."""
    if v.dtype.kind not in "fiu" or not v.size or v.dtype.byteorder not in "=|":
        return to_typed_array_spec(v)
    if v.dtype.kind in "iu" and v.dtype.itemsize == 8:  # plotly.js has no 64-bit integers: narrowed
        lo, hi = v.min(), v.max()
        for dtype, info in (_INT_RANGES if v.dtype.kind == "i" else _UINT_RANGES):
            if lo >= info.min and hi <= info.max:
                v = v.astype(dtype)
                break
        else:
            return to_typed_array_spec(v)
    short = plotlyjsShortTypes.get(str(v.dtype))
    if short is None:
        return to_typed_array_spec(v)
    spec = {"dtype": short, "bdata": base64.b64encode(np.ascontiguousarray(v)).decode("ascii")}
    if v.ndim > 1:
        spec["shape"] = str(v.shape)[1:-1]
    return spec


def _to_base64(obj) -> None:
    """Plotly's ``convert_to_base64`` (numpy arrays as typed-array specs, in place) with the same
    result, asking its per-value array test only of values that are neither plain scalars, nested
    containers nor numpy arrays: that test ran on every key of every figure (~1 ms a figure)."""
    if isinstance(obj, dict):
        for key, value in obj.items():
            kind = type(value)
            if kind in _PLAIN or is_skipped_key(key):
                continue
            if kind is np.ndarray:
                obj[key] = _typed_array(value)
            elif kind in _NESTED:
                _to_base64(value)
            elif is_homogeneous_array(value):
                obj[key] = to_typed_array_spec(value)
            else:
                _to_base64(value)
    elif isinstance(obj, (list, tuple)):
        for value in obj:
            if type(value) in _NESTED:
                _to_base64(value)


def _structure(value):
    """A copy of the dicts (and lists holding dicts) in ``value``, sharing everything else: what
    ``_to_base64`` rewrites in place, and no more."""
    if isinstance(value, dict):
        return {k: _structure(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)) and any(isinstance(v, (dict, list, tuple)) for v in value):
        return [_structure(v) for v in value]
    return value


#: Session-state key of the "How this is computed" expander (True while open; one per page).
HOW_KEY = "_how_open"


def how_computed(body_md: str | Callable[[], str], assumptions: list[str], sources: list[str]) -> None:
    """The "How this is computed" expander: equations, the simplifications, and the sources. Like the
    Data expander, its text is sent only while it is open (opening it reruns the page). ``body_md``
    may be a function returning the text, called only while the expander is open: for text that
    quotes a computation the rest of the page does not need."""
    box = st.expander("How this is computed", icon=":material/functions:", key=HOW_KEY, on_change="rerun")
    if not box.open:
        return
    with box:
        st.markdown(body_md() if callable(body_md) else body_md)
        st.markdown("**Assumptions and simplifications**")
        st.markdown("\n".join(f"- {a}" for a in assumptions))
        st.markdown("**Sources**")
        st.markdown("\n".join(f"- {s}" for s in sources))
        st.page_link(SOURCES_PATH, label="All sources, in one place", icon=":material/menu_book:")


def data_expander(frames, key: str, notes: dict[str, str] | None = None) -> None:
    """The "Data" expander: each table behind the charts, with a CSV download.

    ``frames`` is a dict of name -> DataFrame, or a function returning one. The tables are built and
    sent only while the expander is open (Streamlit's lazy expander: opening it reruns the page),
    not on every rerun of a page whose reader never looks at them. ``notes``: a line under a table,
    by its name (what its blank cells mean, say)."""
    box = st.expander("Data", icon=":material/table:", key=data_key(key), on_change="rerun")
    if not box.open:
        return
    with box:
        for name, frame in (frames() if callable(frames) else frames).items():
            slug = re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")  # a table's own name, not its place
            st.markdown(f"**{name}**")
            st.dataframe(frame, hide_index=True, width="stretch")
            if notes and name in notes:
                st.caption(notes[name])
            st.download_button(  # the CSV is made when clicked, not on every rerun
                f"Download {name} (CSV)", lambda frame=frame: frame.to_csv(index=False).encode(),
                file_name=f"{key}_{slug}.csv", mime="text/csv", key=f"{key}_csv_{slug}",
                icon=":material/download:",
            )


def lazy_section(label: str, key: str, *, icon: str | None = None, open_for: tuple[str, ...] = ()):
    """A section built and sent only while it is open (opening it reruns the page): the place for a
    part of a page whose simulations cost more than its first screen. Its open state is in the URL
    (``key``), so a shared link opens it; a link that sets one of its widgets (``open_for``, their
    keys) opens it too, so that the setting shows. Returns the section to draw into, or None while
    it is closed."""
    # Opened through the session state, once: the expander's id is made from its arguments, so an
    # ``expanded`` that changed with the URL would make it a new widget (closed) when the reader set
    # the widget back to its default and the URL dropped it.
    asked = any(k in st.query_params for k in open_for)
    if asked and key not in st.session_state and key not in st.query_params:
        st.session_state[key] = True
    box = st.expander(label, key=key, icon=icon, on_change="rerun", bind="query-params")
    # The URL check names a setting of a closed section (a link that sets it and also closes the
    # section) as such, instead of as no setting of this page.
    closed = st.session_state.setdefault(CLOSED_SECTIONS_KEY, {})
    for k in open_for:
        if box.open:
            closed.pop(k, None)
        else:
            closed[k] = label
    return box if box.open else None



def data_key(key: str) -> str:
    """The session-state key of a page's "Data" expander (True while open). It starts with an
    underscore, so no page's settings (``<prefix>_...``) include it."""
    return f"_data_open_{key}"


def next_link(current_path: str) -> None:
    """A link to the next section, at the end of every page."""
    following = next_section(current_path)
    st.divider()
    if following is None:
        st.caption("That is the whole story.")
        return
    st.page_link(following.path, label=f"Next: {following.label} →", icon=following.icon)
