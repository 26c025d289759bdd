"""What one more element on a page costs a reader's every change, in a real browser.

Usage: python -m benchmarks.element_cost [--changes 12]

Writes a small Streamlit page (a temporary script): a toggle and the one Plotly chart it redraws,
then, after the chart, a number of filler elements of one kind that the toggle does not change
(captions, markdown, metrics, sliders, containers, columns, static charts, sliders inside a closed
expander). Each variant is opened in its own tab of one headless Chromium, and the toggle is timed
on every tab in turn, change by change (``benchmarks.browser_timing``'s clock: input event -> the
chart's new data drawn), so the machine's load hits all variants alike. Reports each variant's
median and, against the page without fillers, the milliseconds each added element costs.

Why it matters here: Streamlit 1.67's frontend renders every element of the page again on each pass
of a run (``ElementNodeRenderer`` is not memoised), so an element that does not change still costs
every change on its page, and the app's pages carry 50-90 elements where the bare page of
``benchmarks.bare_compare`` carries about 15 (README, "Speed"). A measurement, not a test.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

from benchmarks.browser_timing import _INIT, Control, time_control
from tests.browser.conftest import CHROMIUM_ARGS, Server, chromium_path
from tests.browser.helpers import open_page

PAGE = '''"""benchmarks/element_cost.py's page: a toggle, its chart, and fillers that never change."""
import plotly.graph_objects as go
import streamlit as st

st.set_page_config(page_title="element cost", layout="wide")
st.title("Element cost")
kind = st.query_params.get("kind", "none")
n = int(st.query_params.get("n", "0"))
on = st.toggle("Switch", key="switch")
fig = go.Figure(go.Bar(x=list(range(64)), y=[(i * (7 if on else 3)) % 11 for i in range(64)]))
fig.update_layout(height=300, margin=dict(l=40, r=10, t=10, b=30))
st.plotly_chart(fig, key="chart")
if kind == "closed_expander":
    box = st.expander("Closed")
for i in range(n):
    if kind == "caption":
        st.caption(f"A caption, number {i}, a line of grey text under a chart.")
    elif kind == "markdown":
        st.markdown(f"Some **markdown** text, number {i}, with `code` and a [link](#x).")
    elif kind == "metric":
        st.metric(f"Metric {i}", f"{i * 3.1:.1f} ms", help="What this metric means.", border=True)
    elif kind == "slider":
        st.slider(f"Slider {i}", 0, 100, 50, key=f"s{i}")
    elif kind == "container":
        with st.container():
            st.caption(f"A caption in a container, {i}.")
    elif kind == "columns":
        a, b = st.columns(2)
        a.caption(f"left {i}")
        b.caption(f"right {i}")
    elif kind == "chart":
        f = go.Figure(go.Scatter(x=list(range(64)), y=[(i * j) % 11 for j in range(64)]))
        f.update_layout(height=250, margin=dict(l=40, r=10, t=10, b=30))
        st.plotly_chart(f, key=f"c{i}")
    elif kind == "closed_expander":
        box.slider(f"Slider {i}", 0, 100, 50, key=f"s{i}")
'''

# (kind, count, elements the browser renders for it: the fillers and their layout blocks)
VARIANTS = [
    ("none", 0, 0),
    ("caption", 40, 40),
    ("markdown", 40, 40),
    ("metric", 40, 40),
    ("slider", 20, 20),
    ("container", 20, 40),  # a block and the caption in it
    ("columns", 20, 100),  # a row, two columns, a block in each, two captions
    ("chart", 4, 4),
    ("closed_expander", 20, 20),  # sliders inside one closed expander
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--changes", type=int, default=12)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "element_cost_page.py"
        script.write_text(PAGE, encoding="utf-8")
        server = Server(script=str(script), cwd=Path(tmp))
        control = Control("toggle", "switch", "chart")
        samples: dict[str, list[float]] = {kind: [] for kind, *_ in VARIANTS}
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
                tabs = {}
                for kind, count, _ in VARIANTS:
                    tab = browser.new_page(viewport={"width": 1280, "height": 800})
                    tab.add_init_script(_INIT)
                    open_page(tab, server.url, "", f"kind={kind}&n={count}")
                    time_control(tab, control, 2, warmup=0)  # warm-up: Plotly loaded, caches filled
                    tabs[kind] = tab
                for i in range(args.changes):
                    for kind, tab in tabs.items():
                        tab.bring_to_front()
                        ms, *_ = time_control(tab, control, 1, warmup=0, start=i)
                        samples[kind].extend(ms)
                browser.close()
        finally:
            server.stop()
    base = statistics.median(samples["none"])
    print(f"Click-to-chart of a toggle and its chart with fillers after it, {args.changes} interleaved "
          "changes per variant, medians (1280 x 800, headless Chromium):\n")
    print("| Fillers | Elements | Median | Added | Per element |")
    print("|---|---:|---:|---:|---:|")
    for kind, count, elements in VARIANTS:
        med = statistics.median(samples[kind])
        per = f"{(med - base) / elements:.2f} ms" if elements else "-"
        label = "none" if kind == "none" else f"{count} x {kind.replace('_', ' ')}"
        print(f"| {label} | {elements} | {med:.0f} ms | {med - base:+.0f} ms | {per} |")


if __name__ == "__main__":
    main()
