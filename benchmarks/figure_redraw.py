"""What each main control costs Plotly in the browser: the redraw of every chart it changes.

Usage: python -m benchmarks.figure_redraw [--reps 20] [--width 800]

For each main control of benchmarks.bare_compare it runs the page through AppTest at two values of
the control, keeps the charts whose figures differ (the charts a reader's change redraws), and times
``Plotly.react`` between the two figures in headless Chromium, on a blank page with the plotly.js the
plotly package ships (Streamlit 1.67 bundles the same major version): from the call to the promise
resolved and a forced layout, alternated ``--reps`` times, median per chart. Streamlit's own work
(React, its element styling) and the network are left out: this isolates the charts, so a figure's
design can be compared with another (the slot timeline as SVG paths against one raster, for example).
A measurement, not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
from pathlib import Path

import plotly
from playwright.sync_api import sync_playwright

import ui.layout
import ui.theme
from tests.browser.conftest import CHROMIUM_ARGS, chromium_path
from tests.conftest import open_app

#: control key -> (page script, URL values before, after): one step of the control, as a reader makes it.
CHANGES = {
    "phases_batch": ("app_pages/two_phases.py", {"phases_batch": "8"}, {"phases_batch": "16"}),
    "batching_continuous": ("app_pages/batching.py", {"batching_continuous": "false"},
                            {"batching_continuous": "true"}),
    "batching_slots": ("app_pages/batching.py", {"batching_slots": "64"}, {"batching_slots": "32"}),
    "paging_paged": ("app_pages/paging.py", {"paging_paged": "false"}, {"paging_paged": "true"}),
    "spec_alpha": ("app_pages/speculative.py", {"spec_alpha": "0.7"}, {"spec_alpha": "0.71"}),
    "gpu": ("app_pages/watch.py", {"gpu": "A100 80GB SXM"}, {"gpu": "H100 SXM"}),
}

_REACT = """async ([a, b, reps, width]) => {
  const host = document.getElementById('g'); host.innerHTML = '';
  const div = document.createElement('div'); host.appendChild(div);
  const copy = x => JSON.parse(JSON.stringify(x));  // Plotly changes the objects it is given
  const layout = f => Object.assign(copy(f.layout), {width});
  await Plotly.newPlot(div, copy(a.data), layout(a), {displayModeBar: false});
  const ms = [];
  for (let i = 0; i < reps; i++) {
    const f = i % 2 ? a : b;
    const t = performance.now();
    await Plotly.react(div, copy(f.data), layout(f), {displayModeBar: false});
    document.body.offsetHeight;  // the layout the drawing asks for
    ms.push(performance.now() - t);
  }
  Plotly.purge(div);
  ms.sort((x, y) => x - y);
  return ms[Math.floor(ms.length / 2)];
}"""


def _charts(page: str, params: dict) -> dict[str, dict]:
    """The page's charts as sent, by their key (the element id ends with it)."""
    at = open_app(page, params)
    if at.exception:
        raise RuntimeError(f"{page} {params}: {[e.value for e in at.exception]}")
    return {c.proto.id.rsplit("-", 1)[-1]: json.loads(c.proto.spec) for c in at.get("plotly_chart")}


def changed_charts(key: str) -> list[tuple[str, dict, dict]]:
    """(chart, figure before, figure after) for every chart one step of ``key`` changes."""
    page, before, after = CHANGES[key]
    a, b = _charts(page, before), _charts(page, after)
    return [(chart, a[chart], b[chart]) for chart in a if chart in b and a[chart] != b[chart]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=20, help="redraws per chart (default 20)")
    parser.add_argument("--width", type=int, default=800, help="chart width in px (default 800)")
    args = parser.parse_args()
    ui.theme.VALIDATE_FIGURES = False  # the figures the app sends
    ui.layout.SEND_FIRST_S = 0.0
    work = {key: changed_charts(key) for key in CHANGES}
    with tempfile.TemporaryDirectory() as tmp, tempfile.TemporaryDirectory() as config_home:
        shutil.copy(Path(plotly.__file__).parent / "package_data" / "plotly.min.js", tmp)
        Path(tmp, "page.html").write_text(
            '<html><body><script src="plotly.min.js"></script><div id="g"></div></body></html>')
        rows = []
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS,
                                        env={**os.environ, "XDG_CONFIG_HOME": config_home})
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(f"file://{tmp}/page.html")
            for key, charts in work.items():
                ms = {chart: page.evaluate(_REACT, [a, b, args.reps, args.width]) for chart, a, b in charts}
                rows.append((key, ms))
                print(f"{key}: " + ", ".join(f"{c} {m:.1f} ms" for c, m in ms.items()), flush=True)
            browser.close()
    print()
    print(f"Plotly.react per changed chart, median of {args.reps} redraws at {args.width} px "
          f"(plotly.js from plotly {plotly.__version__}, {os.cpu_count()} cores):")
    print()
    print("| Control | Charts it redraws | Plotly, per chart | Plotly, all |")
    print("|---|---:|---|---:|")
    for key, ms in rows:
        each = ", ".join(f"`{c}` {m:.0f} ms" for c, m in ms.items())
        print(f"| `{key}` | {len(ms)} | {each} | {sum(ms.values()):.0f} ms |")


if __name__ == "__main__":
    main()
