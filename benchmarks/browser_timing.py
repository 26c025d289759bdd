"""Click-to-chart time in a real browser: from a reader's input to the redrawn chart.

Usage: python -m benchmarks.browser_timing [--changes 15] [--pages two-phases,...]

Starts its own streamlit server on a free loopback port, opens each page in headless Debian
Chromium (Playwright) and changes one control at a time the way a reader does: arrow keys on a
focused slider, a click on a toggle's label, a click on a selectbox's option or on a radio
control's button. For each change it measures, in the page's own clock, the time from the input
event (the ``keydown`` or ``click`` event's timestamp) to the first animation frame at which the
watched Plotly chart's data differs from what it drew before the input (``gd.data`` of the
``.js-plotly-plot`` element, compared as JSON; page 01's gauges, SVG drawn as page text, by their
markup). Before the next change it waits for the app to go
idle and for 300 ms without a websocket message (the server's run has sent all of the page).
Reports the median and p95 over ``--changes`` changes per control (after two warm-up changes) as a
markdown table. A measurement, not a test: nothing here asserts on time.

Which control to move on which page is data: CONTROLS maps a page's url path to Control rows. Pages
in ui.nav.SECTIONS without a row are listed as skipped.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from playwright.sync_api import Page, sync_playwright

from tests.browser.conftest import CHROMIUM_ARGS, Server, chromium_path
from tests.browser.helpers import TIMEOUT_MS, open_page, wait_idle
from ui.nav import SECTIONS


@dataclass(frozen=True)
class Control:
    """One control a reader moves, and the chart that must follow it."""

    kind: str  # "slider" (arrow keys), "toggle" (click the label), "selectbox", "radio"
    key: str  # the widget's key: the element carries the CSS class st-key-<key>
    chart: str  # key of the st.plotly_chart (or of the container of the SVG) that must redraw
    values: Sequence[str] = ()  # selectbox / radio: the option labels to alternate between

    @property
    def name(self) -> str:
        how = {"slider": "arrow key", "toggle": "click", "selectbox": "pick option",
               "radio": "click option"}[self.kind]
        return f"`{self.key}` ({self.kind}, {how})"


CONTROLS: dict[str, list[Control]] = {
    "two-phases": [
        Control("slider", "phases_batch", "phases_roofline"),
        Control("slider", "phases_prompt", "phases_roofline"),
        Control("selectbox", "gpu", "phases_roofline", ("A100 80GB SXM", "H100 SXM")),
        Control("radio", "weights", "phases_busy", ("fp8", "bf16")),
    ],
    "continuous-batching": [
        Control("toggle", "batching_continuous", "batching_gauges"),
        Control("slider", "batching_slots", "batching_timeline"),
    ],
    "paged-attention": [
        Control("toggle", "paging_paged", "paging_pool"),
        Control("slider", "paging_step", "paging_pool"),
    ],
    "speculative-decoding": [
        Control("slider", "spec_alpha", "spec_alpha_chart"),
        Control("slider", "spec_batch", "spec_batch_chart"),
    ],
    "what-to-watch": [
        # The latency targets only move layout lines and shading, which this timer does not watch (it
        # waits for new trace data): time the setup changes, which recompute every scenario.
        Control("selectbox", "gpu", "watch_bars", ("A100 80GB SXM", "H100 SXM")),
        Control("selectbox", "model", "watch_day", ("Qwen2.5-7B", "Llama-3.1-8B")),
    ],
}

# Page-side helpers. The listeners keep the timestamp of the latest input event (in the capture
# phase, before Streamlit's handlers); the fingerprint is the watched chart's plotted data (its JSON
# is compared only once the data object has been replaced, to keep the per-frame check cheap).
# The init script also notes when the frontend first sends a websocket frame after the input (the
# rerun request), which splits the time into the frontend's part and the server's + drawing.
_INIT = """(() => {
  window.__bt = {t0: null, sent: null, recv: null};
  for (const type of ["keydown", "click"]) {
    document.addEventListener(type, (e) => { window.__bt.t0 = e.timeStamp; window.__bt.sent = null; }, true);
  }
  const Native = window.WebSocket;  // note the last frame received after the input
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener("message", () => {
        window.__bt.heard = performance.now();  // any message, for the quiet period between changes
        if (window.__bt.sent !== null) window.__bt.recv = performance.now();
      });
    }
  };
  // the page settles: the last change to the document after the input (every chart drawn)
  window.__bt.last = null;
  new MutationObserver(() => { window.__bt.last = performance.now(); })
    .observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
  const send = Native.prototype.send;
  Native.prototype.send = function (data) {
    if (window.__bt.t0 !== null && window.__bt.sent === null) window.__bt.sent = performance.now();
    return send.call(this, data);
  };
})();"""
#: Milliseconds without a websocket message that end a change (the server's run has sent everything).
QUIET_MS = 300
_QUIET = """(ms) => performance.now() - (window.__bt.heard ?? 0) > ms"""
# The watched element: the Plotly chart inside the element keyed ``key`` (its ``gd.data``), or, where
# there is none, the gauges' SVG drawn there as page text (page 01: ui/gauge.py), by its markup (not
# the metrics' help icons, also SVG, in the same container).
_DRAWN = """(key) => {
  const root = document.querySelector(`.st-key-${key}`);
  if (!root) return false;
  const gd = root.querySelector('.js-plotly-plot');
  if (gd) return !!(gd.data && gd._fullData);
  return !!root.querySelector('.gl-gauges svg');
}"""
_FINGERPRINT = """(key) => {
  const root = document.querySelector(`.st-key-${key}`);
  if (!root) return false;
  const gd = root.querySelector('.js-plotly-plot');
  if (gd) {
    if (!gd.data) return false;
    window.__bt.ref = gd.data;
    window.__bt.json = JSON.stringify(gd.data);
    return true;
  }
  const svg = Array.from(root.querySelectorAll('.gl-gauges svg'), s => s.outerHTML).join('');
  if (!svg) return false;
  window.__bt.ref = null;
  window.__bt.json = svg;
  return true;
}"""
_CHANGED = """(key) => {
  const root = document.querySelector(`.st-key-${key}`);
  if (!root) return false;
  const gd = root.querySelector('.js-plotly-plot');
  if (gd) {
    if (!gd.data || !gd._fullData || gd.data === window.__bt.ref) return false;
    if (JSON.stringify(gd.data) === window.__bt.json) { window.__bt.ref = gd.data; return false; }
  } else {
    const svg = Array.from(root.querySelectorAll('.gl-gauges svg'), s => s.outerHTML).join('');
    if (!svg || svg === window.__bt.json) return false;
  }
  window.__bt.t1 = performance.now();
  return true;
}"""


def _act(page: Page, control: Control, i: int) -> None:
    """Make the i-th change: alternate directions / values so that every input changes the value."""
    root = page.locator(f".st-key-{control.key}")
    if control.kind == "slider":
        slider = root.get_by_role("slider")
        slider.focus()
        slider.press("ArrowRight" if i % 2 == 0 else "ArrowLeft")
    elif control.kind == "toggle":
        root.locator("label").first.click()
    elif control.kind == "selectbox":
        root.get_by_role("combobox").click()
        page.get_by_role("option", name=control.values[i % len(control.values)], exact=True).click()
    elif control.kind == "radio":
        root.get_by_text(control.values[i % len(control.values)], exact=True).click()
    else:
        raise ValueError(f"unknown control kind {control.kind!r}")


def time_control(page: Page, control: Control, changes: int, warmup: int = 2, start: int = 0,
                 before_input: Callable[[], object] | None = None,
                 ) -> tuple[list[float], list[float], list[float], list[float]]:
    """Milliseconds from input to redrawn chart, from input to the rerun request being sent, from
    input to the run's last websocket frame, and from input to the page settling (its last DOM
    change before it went idle: every chart below the watched one drawn too), for ``changes``
    changes of ``control``."""
    page.wait_for_function(_DRAWN, arg=control.chart, timeout=TIMEOUT_MS)  # Plotly loads lazily
    samples: list[float] = []
    sent: list[float] = []
    done: list[float] = []
    settled: list[float] = []
    for i in range(changes + warmup):
        if not page.evaluate(_FINGERPRINT, control.chart):
            raise RuntimeError(f"no plotly chart or SVG keyed {control.chart!r} on the page")
        page.evaluate("() => { Object.assign(window.__bt, "
                      "{t0: null, t1: null, sent: null, recv: null, last: null}); }")
        if before_input is not None:  # benchmarks.browser_profile starts its profiler here
            before_input()
        _act(page, control, start + i)  # start: where a caller timing one change at a time is
        page.wait_for_function(_CHANGED, arg=control.chart, polling="raf", timeout=TIMEOUT_MS)
        wait_idle(page)
        # The run is over only when its last message is in: Streamlit shows its "running" status only
        # for runs longer than a moment, so wait_idle alone can return while the server still sends
        # the rest of the page, which the next change would then pay for.
        page.wait_for_function(_QUIET, arg=QUIET_MS, timeout=TIMEOUT_MS)
        t0, t1, t_sent, t_recv, t_last = page.evaluate(
            "() => [window.__bt.t0, window.__bt.t1, window.__bt.sent, window.__bt.recv, "
            "window.__bt.last ?? window.__bt.t1]")
        if i >= warmup:
            samples.append(t1 - t0)
            sent.append(t_sent - t0 if t_sent is not None else float("nan"))
            done.append(t_recv - t0 if t_recv is not None else float("nan"))
            settled.append(max(t_last, t1) - t0)
    return samples, sent, done, settled


def _p95(ms: list[float]) -> float:
    ms = sorted(ms)
    return ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--changes", type=int, default=15, help="timed changes per control (default 15)")
    parser.add_argument("--pages", default="", help="comma-separated url paths (default: every page)")
    args = parser.parse_args()
    if not 1 <= args.changes <= 200:
        parser.error("--changes must be in [1, 200]")
    wanted = [p for p in args.pages.split(",") if p] or [s.url_path for s in SECTIONS]
    sections = [s for s in SECTIONS if s.url_path in wanted]

    rows: list[tuple[str, str, float, float, float, float, float]] = []
    skipped = [s.label for s in sections if s.url_path not in CONTROLS]
    load0 = os.getloadavg()[0]
    server = Server()
    config_home = tempfile.TemporaryDirectory()
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(
                executable_path=chromium_path(), args=CHROMIUM_ARGS,
                env={**os.environ, "XDG_CONFIG_HOME": config_home.name})
            context = browser.new_context(viewport={"width": 1280, "height": 900})
            context.add_init_script(_INIT)
            page = context.new_page()
            for section in sections:
                for control in CONTROLS.get(section.url_path, []):
                    open_page(page, server.url, section.url_path)  # each control from defaults
                    ms, sent, done, _ = time_control(page, control, args.changes)
                    rows.append((section.label, control.name, statistics.median(ms), _p95(ms), max(ms),
                                 statistics.median(sent), statistics.median(done)))
                    print(f"{section.label}, {control.name}: median {rows[-1][2]:.0f} ms, "
                          f"p95 {rows[-1][3]:.0f} ms", flush=True)
            browser.close()
    finally:
        server.stop()
        config_home.cleanup()

    print()
    print(f"### Click-to-chart time in headless Chromium ({args.changes} changes per control, "
          f"{os.cpu_count()} cores, load average {load0:.1f} → {os.getloadavg()[0]:.1f})")
    print()
    print("| Page | Control | Median | p95 | Max | Input → rerun sent | Input → last frame of the run |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for label, name, med, p95, worst, to_send, to_done in rows:
        print(f"| {label} | {name} | {med:.0f} ms | {p95:.0f} ms | {worst:.0f} ms | {to_send:.0f} ms | "
              f"{to_done:.0f} ms |")
    print()
    print("Median, p95, max: input event → the chart's new data drawn. The last two columns are medians: "
          "when the frontend sent the rerun request, and when the last websocket frame of the run "
          "(script_finished and the status change after it) arrived.")
    if skipped:
        print()
        print(f"No CONTROLS row (skipped): {', '.join(skipped)}.")


if __name__ == "__main__":
    main()
