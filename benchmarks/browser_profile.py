"""Where the browser's time goes between a reader's input and the redrawn chart: the app against the
bare page drawing the app's own figure, by script chunk.

Usage: python -m benchmarks.browser_profile [--control batching_slots] [--changes 8]

Starts the app and ``benchmarks.bare_compare``'s bare page that draws the app's figure for the main
control (``--real-figures``'s page), opens each in headless Chromium, and samples the page's
JavaScript with Chrome's CPU profiler (``Profiler`` over CDP, every 250 µs) during each change, with
``benchmarks.browser_timing``'s clock (input event -> the watched chart's new data drawn). Reports,
per change, the self time of each script chunk in that window: Streamlit's frontend is split into
chunks named after what they hold (``react-dom``, ``emotion-styled``: the styled components' CSS,
``PlotlyChart``, ``StreamlitMarkdown``, ``rehype-raw``: raw HTML in markdown, ``index``: the app
shell), so the difference between the two pages says which part of the frontend the app's page
makes work harder. ``(program)`` is the browser's own work outside JavaScript (layout, paint),
``(idle)`` the main thread waiting (for the server, mostly).

A measurement, not a test. The profiler slows the page (its click-to-chart is printed beside the
table): read the chunks' differences, not their sum, as what the app adds.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

from benchmarks.bare_compare import MAIN, NOT_A_FIGURE, REAL_APP, real_figures
from benchmarks.browser_timing import _INIT, time_control
from tests.browser.conftest import CHROMIUM_ARGS, ROOT, Server, chromium_path
from tests.browser.helpers import open_page

SAMPLING_US = 250
#: Frames outside any script: the browser's own work and its idle time.
NATIVE = "(native)"
#: Where Streamlit serves its frontend's scripts.
FRONTEND = "/static/js/"


def chunk_of(url: str) -> str:
    """The chunk a script URL names: ``.../static/js/react-dom.Dzbslgj4.js`` -> ``react-dom``."""
    name = url.rsplit("/", 1)[-1]
    return name.split(".", 1)[0] if name else NATIVE


def self_time_by_chunk(profile: dict, window_ms: float) -> dict[str, float]:
    """Milliseconds of self time per chunk in a CDP ``Profiler.stop`` profile, over the ``window_ms``
    that start at its first sample in the frontend's own scripts (a URL under ``/static/js/``): the
    profiler starts right before the input, and the frontend's input handler is the first of its
    scripts to run (Playwright's own script, which focuses and presses, has no such URL).
    ``(program)``, ``(idle)`` and ``(garbage collector)`` keep their own names. Each sample counts for
    the time since the one before it (as Chrome's DevTools counts it)."""
    nodes = {n["id"]: n["callFrame"] for n in profile["nodes"]}
    t = profile["startTime"]
    times = []
    for delta in profile["timeDeltas"]:
        t += delta
        times.append(t)
    samples = list(zip(profile["samples"], times, strict=True))
    start = next((at for node, at in samples if FRONTEND in nodes[node]["url"]), None)
    out: collections.Counter[str] = collections.Counter()
    if start is None:
        return {}
    end = start + window_ms * 1000
    for (node, at), (_, before) in zip(samples[1:], samples, strict=False):
        if start <= at <= end:
            frame = nodes[node]
            name = frame["functionName"]
            key = name if name in ("(idle)", "(program)", "(garbage collector)") else chunk_of(frame["url"])
            out[key] += (at - before) / 1000
    return dict(out)


def profile_page(url: str, path: str, key: str, changes: int, config_home: str) -> tuple[dict, float]:
    """({chunk: mean ms per change}, mean click-to-chart in ms) for ``changes`` changes of ``key``."""
    control = next(c for _, c in MAIN if c.key == key)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS,
                                    env={**os.environ, "XDG_CONFIG_HOME": config_home})
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        context.add_init_script(_INIT)
        page = context.new_page()
        open_page(page, url, path)
        time_control(page, control, 0, warmup=2)  # an even number: back at the first value
        cdp = context.new_cdp_session(page)
        cdp.send("Profiler.enable")
        cdp.send("Profiler.setSamplingInterval", {"interval": SAMPLING_US})
        total: collections.Counter[str] = collections.Counter()
        clock = 0.0
        for i in range(changes):
            time_control(page, control, 1, warmup=0, start=i,
                         before_input=lambda: cdp.send("Profiler.start"))
            t0, t1 = page.evaluate("() => [window.__bt.t0, window.__bt.t1]")
            total.update(self_time_by_chunk(cdp.send("Profiler.stop")["profile"], t1 - t0))
            clock += t1 - t0
        browser.close()
    return {k: v / changes for k, v in total.items()}, clock / changes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--control", default="batching_slots",
                        help="a main control's widget key (benchmarks.bare_compare.MAIN)")
    parser.add_argument("--changes", type=int, default=8)
    parser.add_argument("--top", type=int, default=12, help="chunks shown, by the app's time")
    args = parser.parse_args()
    path, control = next(((p, c) for p, c in MAIN if c.key == args.control), (None, None))
    if control is None or control.chart in NOT_A_FIGURE:
        parser.error(f"--control: {args.control!r} is not a main control whose chart is a Plotly figure")
    with tempfile.TemporaryDirectory(dir=ROOT, prefix=".bare-") as tmp, \
            tempfile.TemporaryDirectory() as config_home:
        figures = Path(tmp) / "figures.json"
        figures.write_text(json.dumps(real_figures()))
        script = Path(tmp) / "real_app.py"
        script.write_text(REAL_APP.replace("FIGURES_JSON", repr(str(figures))))
        servers = {"app": Server(), "bare": Server(script=str(script.relative_to(ROOT)))}
        try:
            app, app_ms = profile_page(servers["app"].url, path, args.control, args.changes, config_home)
            bare, bare_ms = profile_page(servers["bare"].url, "", args.control, args.changes, config_home)
        finally:
            for server in servers.values():
                server.stop()
    print(f"`{args.control}`, {args.changes} changes each, profiled (click-to-chart with the profiler on: "
          f"app {app_ms:.0f} ms, bare page with the app's figure {bare_ms:.0f} ms; {os.cpu_count()} cores):")
    print()
    print("| Chunk | App, ms per change | Bare page, ms per change | App − bare |")
    print("|---|---:|---:|---:|")
    for chunk in sorted(app, key=app.get, reverse=True)[:args.top]:
        print(f"| `{chunk}` | {app[chunk]:.1f} | {bare.get(chunk, 0.0):.1f} | "
              f"{app[chunk] - bare.get(chunk, 0.0):+.1f} |")


if __name__ == "__main__":
    main()
