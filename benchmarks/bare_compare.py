"""Click-to-chart of the app against a bare Streamlit + Plotly page with the same widgets.

Usage: python -m benchmarks.bare_compare [--changes 15] [--real-figures] [--sidebar]

Writes the bare page itself (a temporary script: each main control's widget, with the same kind,
key, options and URL binding, and one small Plotly chart per control, keyed like the chart the app
redraws, whose data follow the widget), starts a server for it and one for the app, and times the
same input on both in headless Chromium with benchmarks.browser_timing's clock (input event -> the
watched chart's new data drawn; and -> the page settled, its last change to the document). The two
are interleaved change by change in one run, so the machine's load hits both alike. Reports medians
and the ratio app / bare per control.

``--real-figures`` adds the bare page drawing the app's own figure for each control; ``--sidebar``
adds the bare page with the app's own sidebar (``ui.setup.render_setup_controls``: the setup's
widgets, captions and assumptions) in place of its one GPU selectbox. Each extra page is timed in the
same interleaving, and its columns say what that part of the app costs a bare page.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

from benchmarks.browser_timing import _INIT, Control, time_control
from benchmarks.figure_redraw import changed_charts
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


#: Watched elements that are not Plotly charts in the app (page 01's gauges are SVG: ui/gauge.py): the
#: third page draws the bare page's chart for them, and the table has no figure columns for them.
NOT_A_FIGURE = {"batching_gauges"}

REAL_APP = BARE_APP.replace("import streamlit as st\n", """import json

import streamlit as st


@st.cache_resource
def _figures():
    \"\"\"{chart key: (figure at the control's first value, at the other)}, as the app sent them.\"\"\"
    with open(FIGURES_JSON) as f:
        spec = json.load(f)
    return {k: tuple(go.Figure(fig) for fig in pair) for k, pair in spec.items()}
""").replace(
    "    st.plotly_chart(go.Figure(go.Scatter(x=[0, 1, 2], y=[v, 2 * v + 1, v * v])), key=chart)\n",
    """    first = st.session_state.setdefault(f"_first_{key}", values[key])
    if chart in _figures():
        st.plotly_chart(_figures()[chart][0 if values[key] == first else 1], key=chart,
                        config={"displayModeBar": False, "displaylogo": False}, width="stretch")
    else:  # the app draws no figure there (NOT_A_FIGURE): the bare page's chart
        st.plotly_chart(go.Figure(go.Scatter(x=[0, 1, 2], y=[v, 2 * v + 1, v * v])), key=chart)
""")


SIDEBAR_APP = BARE_APP.replace(
    'from sim.hardware import GPUS\n',
    'from sim.hardware import GPUS\nfrom ui.setup import render_setup_controls\n',
).replace(
    'with st.sidebar:\n    gpu = st.selectbox("GPU", list(GPUS), key="gpu", bind="query-params")',
    'with st.sidebar:  # the app\'s own sidebar, as the app draws it on a first run\n'
    '    gpu = render_setup_controls().gpu.name')


def _real_columns(key: str, app_ms: float, bare_ms: float, real_ms: float) -> str:
    """The table's three columns of the bare page drawing the app's figure (none for NOT_A_FIGURE)."""
    if key_chart(key) in NOT_A_FIGURE:
        return " – | – | – |"
    return f" {real_ms:.0f} ms | {real_ms / bare_ms:.2f}x | {app_ms / real_ms:.2f}x |"


def _sidebar_columns(app_ms: float, bare_ms: float, sidebar_ms: float) -> str:
    """The table's three columns of the bare page with the app's sidebar."""
    return f" {sidebar_ms:.0f} ms | {sidebar_ms / bare_ms:.2f}x | {app_ms / sidebar_ms:.2f}x |"


def key_chart(key: str) -> str:
    """The watched element of the main control keyed ``key``."""
    return next(control.chart for _, control in MAIN if control.key == key)


def real_figures() -> dict[str, list[dict]]:
    """{watched chart key: [figure before, figure after]} for every main control, from the app."""
    import ui.layout
    import ui.theme

    ui.theme.VALIDATE_FIGURES = False  # the figures the app sends
    ui.layout.SEND_FIRST_S = 0.0
    out = {}
    for _, control in MAIN:
        if control.chart in NOT_A_FIGURE:
            continue
        charts = {c: (a, b) for c, a, b in changed_charts(control.key)}
        out[control.chart] = list(charts[control.chart])
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--changes", type=int, default=15)
    parser.add_argument("--real-figures", action="store_true",
                        help="add the bare page drawing the app's own figure for each control")
    parser.add_argument("--sidebar", action="store_true",
                        help="add the bare page with the app's own sidebar")
    args = parser.parse_args()
    load0 = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(dir=ROOT, prefix=".bare-") as tmp, \
            tempfile.TemporaryDirectory() as config_home:
        scripts = {"bare": BARE_APP}
        if args.real_figures:
            figures = Path(tmp) / "figures.json"
            figures.write_text(json.dumps(real_figures()))
            scripts["real"] = REAL_APP.replace("FIGURES_JSON", repr(str(figures)))
        if args.sidebar:
            scripts["sidebar"] = SIDEBAR_APP
        servers = {"app": Server()}
        for name, text in scripts.items():
            script = Path(tmp) / f"{name}_app.py"
            script.write_text(text)
            servers[name] = Server(script=str(script.relative_to(ROOT)))
        rows = []
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS,
                                            env={**os.environ, "XDG_CONFIG_HOME": config_home})
                context = browser.new_context(viewport={"width": 1280, "height": 900})
                context.add_init_script(_INIT)
                tabs = {name: context.new_page() for name in servers}
                for path, control in MAIN:
                    for name, tab in tabs.items():
                        tab.bring_to_front()
                        open_page(tab, servers[name].url, path if name == "app" else "")
                        time_control(tab, control, 0, warmup=2)
                    ms = {name: [] for name in tabs}
                    settled = {name: [] for name in tabs}
                    for i in range(args.changes):  # interleaved, change by change
                        for name, tab in tabs.items():
                            tab.bring_to_front()  # a tab in the background draws late or not at all
                            one, _, _, done = time_control(tab, control, 1, warmup=0, start=i)
                            ms[name] += one
                            settled[name] += done
                    med = {name: statistics.median(v) for name, v in ms.items()}
                    med_settled = {name: statistics.median(v) for name, v in settled.items()}
                    rows.append((path, control.key, med, med_settled))
                    print(f"{path} {control.key}: " + ", ".join(f"{n} {v:.0f} ms" for n, v in med.items())
                          + f"; app / bare {med['app'] / med['bare']:.2f}x; settled "
                          + ", ".join(f"{n} {v:.0f} ms" for n, v in med_settled.items()), flush=True)
                browser.close()
        finally:
            for server in servers.values():
                server.stop()
    print()
    print(f"Click-to-chart, app vs a bare Streamlit + Plotly page, {args.changes} interleaved changes "
          f"per control, medians ({os.cpu_count()} cores, load average {load0:.1f} -> "
          f"{os.getloadavg()[0]:.1f}):")
    print()
    real, side = args.real_figures, args.sidebar
    print("| Page | Control | App | Bare page | App / bare |"
          + (" Bare page, app's figure | Its figure / bare | App / its figure |" if real else "")
          + (" Bare page, app's sidebar | Its sidebar / bare | App / bare with its sidebar |" if side else "")
          + " Settled: app | Settled: bare |")
    extra = "---:|---:|---:|"
    print("|---|---|---:|---:|---:|" + (extra if real else "") + (extra if side else "") + "---:|---:|")
    for path, key, med, med_settled in rows:
        a, b = med["app"], med["bare"]
        print(f"| {path} | `{key}` | {a:.0f} ms | {b:.0f} ms | {a / b:.2f}x |"
              + (_real_columns(key, a, b, med["real"]) if real else "")
              + (_sidebar_columns(a, b, med["sidebar"]) if side else "")
              + f" {med_settled['app']:.0f} ms | {med_settled['bare']:.0f} ms |")


if __name__ == "__main__":
    main()
