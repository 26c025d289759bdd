"""Click-to-chart of the app against a bare Streamlit + Plotly page with the same widgets.

Usage: python -m benchmarks.bare_compare [--changes 15]

Writes the bare page itself (a temporary script: each main control's widget, with the same kind,
key, options and URL binding, and one small Plotly chart per control, keyed like the chart the app
redraws, whose data follow the widget), starts a server for it and one for the app, and times the
same input on both in headless Chromium with benchmarks.browser_timing's clock (input event -> the
watched chart's new data drawn; and -> the page settled, its last change to the document). The two
are interleaved change by change in one run, so the machine's load hits both alike. Reports medians
and the ratio app / bare per control.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

from benchmarks.browser_timing import _INIT, Control, time_control
from tests.browser.conftest import CHROMIUM_ARGS, ROOT, Server, chromium_path
from tests.browser.helpers import open_page

# (page url path in the app, control): the main controls.
MAIN = [
    ("two-phases", Control("slider", "phases_batch", "phases_roofline")),
    ("continuous-batching", Control("toggle", "batching_continuous", "batching_gauges")),
    ("continuous-batching", Control("slider", "batching_slots", "batching_timeline")),
    ("paged-attention", Control("toggle", "paging_paged", "paging_pool")),
    ("speculative-decoding", Control("slider", "spec_alpha", "spec_alpha_chart")),
    ("what-to-watch", Control("selectbox", "gpu", "watch_bars", ("A100 80GB SXM", "H100 SXM"))),
]

BARE_APP = '''"""A bare Streamlit + Plotly page with the app's main widgets (benchmarks/bare_compare.py)."""
import plotly.graph_objects as go
import streamlit as st

from sim.hardware import GPUS

st.set_page_config(page_title="bare", layout="wide")
st.title("Bare page")
with st.sidebar:
    gpu = st.selectbox("GPU", list(GPUS), key="gpu", bind="query-params")
POW2 = [2**i for i in range(16)]
values = {
    "phases_batch": st.select_slider("Decode batch", POW2[:11], value=1, key="phases_batch",
                                     bind="query-params"),
    "batching_continuous": st.toggle("Continuous batching", value=False, key="batching_continuous",
                                     bind="query-params"),
    "batching_slots": st.select_slider("Slots", [2**i for i in range(9)], value=64, key="batching_slots",
                                       bind="query-params"),
    "paging_paged": st.toggle("PagedAttention", value=False, key="paging_paged", bind="query-params"),
    "spec_alpha": st.slider("Acceptance", 0.0, 1.0, value=0.7, step=0.01, key="spec_alpha",
                            bind="query-params"),
    "gpu": list(GPUS).index(gpu),
}
for chart, key in [("phases_roofline", "phases_batch"), ("batching_gauges", "batching_continuous"),
                   ("batching_timeline", "batching_slots"), ("paging_pool", "paging_paged"),
                   ("spec_alpha_chart", "spec_alpha"), ("watch_bars", "gpu")]:
    v = float(values[key])
    st.plotly_chart(go.Figure(go.Scatter(x=[0, 1, 2], y=[v, 2 * v + 1, v * v])), key=chart)
'''


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--changes", type=int, default=15)
    args = parser.parse_args()
    load0 = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(dir=ROOT, prefix=".bare-") as tmp, \
            tempfile.TemporaryDirectory() as config_home:
        bare_script = Path(tmp) / "bare_app.py"
        bare_script.write_text(BARE_APP)
        app, bare = Server(), Server(script=str(bare_script.relative_to(ROOT)))
        rows = []
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS,
                                            env={**os.environ, "XDG_CONFIG_HOME": config_home})
                context = browser.new_context(viewport={"width": 1280, "height": 900})
                context.add_init_script(_INIT)
                page_app, page_bare = context.new_page(), context.new_page()
                for path, control in MAIN:
                    page_app.bring_to_front()
                    open_page(page_app, app.url, path)
                    time_control(page_app, control, 0, warmup=2)
                    page_bare.bring_to_front()
                    open_page(page_bare, bare.url, "")
                    time_control(page_bare, control, 0, warmup=2)
                    ms_app, ms_bare, settled_app, settled_bare = [], [], [], []
                    for i in range(args.changes):  # interleaved, change by change
                        page_app.bring_to_front()  # a tab in the background draws late or not at all
                        ms, _, _, settled = time_control(page_app, control, 1, warmup=0, start=i)
                        ms_app += ms
                        settled_app += settled
                        page_bare.bring_to_front()
                        ms, _, _, settled = time_control(page_bare, control, 1, warmup=0, start=i)
                        ms_bare += ms
                        settled_bare += settled
                    a, b = statistics.median(ms_app), statistics.median(ms_bare)
                    sa, sb = statistics.median(settled_app), statistics.median(settled_bare)
                    rows.append((path, control.key, a, b, sa, sb))
                    print(f"{path} {control.key}: app {a:.0f} ms, bare {b:.0f} ms, {a / b:.2f}x; settled "
                          f"app {sa:.0f} ms, bare {sb:.0f} ms", flush=True)
                browser.close()
        finally:
            app.stop()
            bare.stop()
    print()
    print(f"Click-to-chart, app vs a bare Streamlit + Plotly page, {args.changes} interleaved changes "
          f"per control, medians ({os.cpu_count()} cores, load average {load0:.1f} -> "
          f"{os.getloadavg()[0]:.1f}):")
    print()
    print("| Page | Control | App | Bare page | App / bare | Settled: app | Settled: bare |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for path, key, a, b, sa, sb in rows:
        print(f"| {path} | `{key}` | {a:.0f} ms | {b:.0f} ms | {a / b:.2f}x | {sa:.0f} ms | {sb:.0f} ms |")


if __name__ == "__main__":
    main()
