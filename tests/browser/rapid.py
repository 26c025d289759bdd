"""Rapid input in a real browser: many key presses or toggles in a few seconds, then the final view
must match a fresh load of the final URL.

Used by tests/browser/test_rapid_input_browser.py (a short fixed sample in CI) and by
scripts/rapid_input.py (the long runs whose figures are in the README).

A burst is ``presses`` inputs spread evenly over ``seconds`` (the pacing is how fast a hand is, not a
timing assertion). Then the page must settle: no script running, no stale (greyed-out) element. What
counts as losing the page:

- the browser console reports a failed websocket message or a fatal connection error (Streamlit's
  "Cached ForwardMsg MISS", then DISCONNECTED_FOREVER), or the page's websocket closes;
- the settled view differs from what a fresh session shows for the same URL: the widget's value, the
  URL itself, every chart's plotted data and every metric's value are compared.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field

from playwright.sync_api import BrowserContext, Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.browser.helpers import TIMEOUT_MS, open_page, wait_idle


@dataclass(frozen=True)
class Target:
    """A page's main control, driven rapidly."""

    path: str  # the page's url path
    kind: str  # "slider" (arrow keys on the focused thumb) or "toggle" (clicks on its label)
    key: str  # the widget key (CSS class st-key-<key>)
    query: str = ""  # URL values the page opens with (a sidebar control some setups show)

    @property
    def name(self) -> str:
        return f"{self.path}: {self.key} ({self.kind})"


# Each page's main slider, the toggles, and a slider of the sidebar.
TARGETS = [
    Target("two-phases", "slider", "phases_batch"),
    Target("continuous-batching", "slider", "batching_slots"),
    Target("continuous-batching", "toggle", "batching_continuous"),
    Target("paged-attention", "slider", "paging_step"),
    Target("paged-attention", "toggle", "paging_paged"),
    Target("speculative-decoding", "slider", "spec_alpha"),
    Target("what-to-watch", "slider", "watch_ttft"),
    Target("under-load", "slider", "load_rate"),
    # a sidebar control: every input reruns the whole app (the page first, then the sidebar)
    Target("two-phases", "slider", "skew", "model=Qwen3-30B-A3B"),
]

# Plotted data of every chart and every metric's value, keyed by the element's position.
_VIEW = """() => {
  const charts = [...document.querySelectorAll('.js-plotly-plot')].map(gd => JSON.stringify(
    (gd.data || []).map(t => { const c = {...t}; delete c.uid; return c; })));
  const metrics = [...document.querySelectorAll('[data-testid="stMetric"]')].map(m => m.innerText);
  return {charts, metrics};
}"""

# Before any of the page's scripts: note every websocket frame's time and every close, so that
# "settled" can mean "no frame for a while" and a closed connection is seen even if nothing is logged.
_INIT = """(() => {
  window.__rapid = {last: performance.now(), closed: 0, opened: 0};
  const Native = window.WebSocket;
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      window.__rapid.opened += 1;
      this.addEventListener("message", () => { window.__rapid.last = performance.now(); });
      this.addEventListener("close", () => { window.__rapid.closed += 1; });
    }
  };
  const send = Native.prototype.send;
  Native.prototype.send = function (data) {
    window.__rapid.last = performance.now();
    return send.call(this, data);
  };
})();"""
_QUIET = """(ms) => performance.now() - window.__rapid.last > ms
  && !document.querySelector('[data-testid="stStatusWidget"]')
  && !document.querySelector('[data-stale="true"]')
  && !document.querySelector('[data-testid="stSkeleton"]')"""
QUIET_MS = 1500  # no websocket frame for this long, nothing running, nothing stale: settled

# Signs, in the console, that the frontend gave up on the connection.
FATAL_MARKS = ("Failed to process a Websocket message", "Cached ForwardMsg MISS", "fatal error",
               "DISCONNECTED_FOREVER")


@dataclass
class Outcome:
    target: Target
    inputs: int
    seconds: float  # from the first input until the page had handled the last
    settle_s: float  # from the last input until the page was idle
    final_value: str
    url: str
    fatal: list[str] = field(default_factory=list)
    ws_closed: int = 0
    mismatches: list[str] = field(default_factory=list)

    @property
    def disconnected(self) -> bool:
        return bool(self.fatal) or self.ws_closed > 0

    @property
    def ok(self) -> bool:
        return not self.disconnected and not self.mismatches


class Watch:
    """Console errors and websocket closes of one page."""

    def __init__(self, page: Page) -> None:
        self.fatal: list[str] = []
        self.closed = 0
        page.on("console", self._console)
        page.on("websocket", lambda ws: ws.on("close", self._close))

    def _console(self, msg) -> None:
        if any(mark in msg.text for mark in FATAL_MARKS):
            self.fatal.append(msg.text[:300])

    def _close(self, *_args) -> None:
        self.closed += 1


def _value(page: Page, target: Target) -> str:
    root = page.locator(f".st-key-{target.key}")
    if target.kind == "slider":
        thumb = root.get_by_role("slider").first
        return thumb.get_attribute("aria-valuetext") or thumb.get_attribute("aria-valuenow") or ""
    return str(root.get_by_role("switch").first.is_checked())


def settle(page: Page, timeout_ms: float = 30_000) -> None:
    """Wait until no websocket frame has passed for QUIET_MS, no script runs and nothing on the page is
    stale (greyed out). (Streamlit shows its running indicator only after a delay, so "no indicator"
    alone right after an input proves nothing.)"""
    wait_idle(page)
    page.wait_for_function(_QUIET, arg=QUIET_MS, timeout=timeout_ms, polling=100)


# Inputs are scheduled in the page at fixed times, as a keyboard delivers them: if the page is busy
# drawing, they queue and run as soon as it is free (Playwright's own key press waits for the page to
# handle each one, which would slow the hand down to the page's pace and hide the problem). The slider
# (react-aria) handles arrow keys in its own keydown handler, so a dispatched key event moves it as a
# real one does.
_BURST = """([key, kind, presses, ms]) => new Promise(resolve => {
  const find = () => document.querySelector(
    `.st-key-${key} ` + (kind === "slider" ? 'input[type="range"]' : "label"));
  const press = (target, k) => {
    for (const type of ["keydown", "keyup"]) {
      target.dispatchEvent(new KeyboardEvent(type, {key: k, code: k, bubbles: true, cancelable: true}));
    }
  };
  // Where the slider is, in steps from its start, counted here (the value updates asynchronously).
  const first = find();
  const step = Number(first.step) || 1;
  const top = Math.round((Number(first.max) - Number(first.min)) / step);
  let at = Math.round((Number(first.value) - Number(first.min)) / step), dir = 1, done = 0;
  const t0 = performance.now();
  const one = () => {
    const target = find();
    if (kind === "slider") {
      if (at + dir > top || at + dir < 0) dir = -dir;  // at an end: turn, so every input counts
      at += dir;
      target.focus();
      press(target, dir > 0 ? "ArrowRight" : "ArrowLeft");
    } else {
      target.click();
    }
    done += 1;
    if (done === presses) resolve(performance.now() - t0);
  };
  for (let i = 0; i < presses; i++) setTimeout(one, i * ms);
})"""


def burst(page: Page, target: Target, presses: int, seconds: float, mode: str = "keys") -> float:
    """``presses`` inputs over ``seconds``: arrow keys sweeping the slider end to end and back
    (turning at either end, so every input changes the value), or clicks on a toggle's label.

    ``mode`` "keys": Playwright's trusted key presses and clicks, at most one per seconds/presses;
    each waits until the page has taken the previous one, so a busy page slows the hand down (this
    is the mode that reproduces Streamlit's cache miss). "queued": the inputs are scheduled inside the
    page at fixed times and queue while it is busy (exactly ``presses`` in ``seconds`` of schedule).
    Returns the seconds until the page had taken the last input."""
    selector = "input[type='range']" if target.kind == "slider" else "label"
    handle = page.locator(f".st-key-{target.key} {selector}").first
    expect(handle).to_be_visible(timeout=TIMEOUT_MS)
    if mode == "queued":
        return page.evaluate(_BURST, [target.key, target.kind, presses, seconds * 1000 / presses]) / 1000
    if target.kind == "slider":
        handle.focus()
        lo, hi, step, value = (float(handle.get_attribute(a) or d) for a, d in
                               (("min", 0), ("max", 1), ("step", 1), ("value", 0)))
        top, at = round((hi - lo) / step), round((value - lo) / step)
    direction = 1
    start = time.monotonic()
    for i in range(presses):
        if target.kind == "slider":
            if not 0 <= at + direction <= top:  # at an end: turn, so every input counts
                direction = -direction
            at += direction
            page.keyboard.press("ArrowRight" if direction > 0 else "ArrowLeft")
        else:
            handle.click()
        wait = start + (i + 1) * seconds / presses - time.monotonic()
        if wait > 0:
            page.wait_for_timeout(wait * 1000)
    return time.monotonic() - start


def run_once(context: BrowserContext, base_url: str, target: Target, presses: int = 200,
             seconds: float = 10.0, mode: str = "keys") -> Outcome:
    """One burst on a fresh page, then the settled view compared with a fresh load of its URL."""
    page = context.new_page()
    page.add_init_script(_INIT)
    watch = Watch(page)
    try:
        open_page(page, base_url, target.path, target.query)
        handled_s = burst(page, target, presses, seconds, mode)
        t1 = time.monotonic()
        stuck = None
        try:
            settle(page)
        except PlaywrightTimeout:
            stuck = page.locator("[data-stale='true']").count()
        t2 = time.monotonic() - QUIET_MS / 1000
        outcome = Outcome(target, presses, handled_s, max(0.0, t2 - t1), _value(page, target), page.url)
        outcome.fatal = watch.fatal
        outcome.ws_closed = max(watch.closed, page.evaluate("() => window.__rapid.closed"))
        if stuck is not None:
            outcome.mismatches.append(f"never settled: {stuck} stale elements after 30 s")
            outcome.settle_s = float("inf")
            return outcome
        view = page.evaluate(_VIEW)
        fresh = context.new_page()
        fresh.add_init_script(_INIT)
        try:
            fresh.goto(page.url)
            wait_idle(fresh)
            expect(fresh.locator(f".st-key-{target.key}")).to_be_visible(timeout=TIMEOUT_MS)
            settle(fresh)
            expected = fresh.evaluate(_VIEW)
            expected_value = _value(fresh, target)
        finally:
            fresh.close()
        if outcome.final_value != expected_value:
            outcome.mismatches.append(f"widget {outcome.final_value} vs fresh load {expected_value}")
        if len(view["charts"]) != len(expected["charts"]):
            outcome.mismatches.append(f"{len(view['charts'])} charts vs {len(expected['charts'])}")
        for i, (a, b) in enumerate(zip(view["charts"], expected["charts"], strict=False)):
            if a != b:
                outcome.mismatches.append(f"chart {i} differs from a fresh load of the URL")
        if view["metrics"] != expected["metrics"]:
            diff = [(a, b) for a, b in zip(view["metrics"], expected["metrics"], strict=False) if a != b]
            outcome.mismatches.append(f"metrics differ: {json.dumps(diff[:3])}")
        return outcome
    finally:
        page.close()
