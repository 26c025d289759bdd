"""Measure the margins Plotly's automargin gives every chart of the app, in headless Chromium.

Usage: python scripts/chart_margins.py [--width 1280] [--python]

For each page (page 05 with its lower sections open) it prints, per chart key, the margins Plotly laid
out (left, right, top, bottom, px) and the base margins the figure was sent with. A chart whose laid-out
margins exceed its base margins was drawn twice: Plotly's automargin finds that the axis labels or the
legend need more room and draws the whole chart again (every change, not only the first). Base margins
of ``ui.layout.CHART_MARGINS`` taken from this script's output (``--python`` prints them as that
table) make the first layout fit, so a change draws each chart once.
Exits 1 when any chart is drawn twice. Starts its own streamlit server on a free port and stops it
afterwards.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from playwright.sync_api import sync_playwright

from tests.browser.conftest import CHROMIUM_ARGS, Server, chromium_path
from tests.browser.helpers import CHART_MARGINS_JS, open_page
from ui.nav import SECTIONS, YOURS

#: Query strings that show every chart of a page (page 05's lower sections are closed by default).
OPEN_ALL = {"under-load": "load_show_curves=true&load_show_prefix=true&load_show_split=true"}

def measure(width: int = 1280, height: int = 900) -> dict[str, list[dict]]:
    """{url path: [{key, laid: [l, r, t, b], base: [l, r, t, b]}, ...]} for every page with charts."""
    server = Server()
    out: dict[str, list[dict]] = {}
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": width, "height": height})
            for path in [s.url_path for s in SECTIONS] + [YOURS.url_path]:
                open_page(page, server.url, path, OPEN_ALL.get(path, ""))
                page.wait_for_timeout(500)  # Plotly draws after the run has finished
                out[path] = page.evaluate(CHART_MARGINS_JS)
            browser.close()
    finally:
        server.stop()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--python", action="store_true", help="print the laid-out margins as a dict")
    args = parser.parse_args()
    pages = measure(args.width)
    if args.python:
        for path, charts in pages.items():
            print(f"    # {path}")
            for c in charts:
                if c["key"] and c["axes"]:  # a chart without axes (an indicator) pushes no margins
                    print(f"    \"{c['key']}\": ({', '.join(str(v) for v in c['laid'])}),")
        return
    print("| Page | Chart | Laid out (l, r, t, b) | Sent (l, r, t, b) | Drawn twice a change |")
    print("|---|---|---|---|---|")
    widened = 0
    for path, charts in pages.items():
        for c in charts:
            twice = any(lv > (bv or 0) for lv, bv in zip(c["laid"], c["base"], strict=True))
            widened += twice
            print(f"| {path} | `{c['key']}` | {c['laid']} | {c['base']} | {'yes' if twice else 'no'} |")
    sys.exit(1 if widened else 0)  # a chart drawn twice a change: update ui.layout.CHART_MARGINS


if __name__ == "__main__":
    main()
