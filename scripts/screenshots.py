"""Take full-page screenshots of every page in headless Chromium (for the README and for review).

Usage: python scripts/screenshots.py OUT_DIR [--width 1280] [--pages two-phases,...] [--query "a=b"]
Starts its own streamlit server on a free port and stops it afterwards.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from playwright.sync_api import sync_playwright

from tests.browser.conftest import CHROMIUM_ARGS, Server, chromium_path
from tests.browser.helpers import wait_idle
from ui.nav import SECTIONS


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out", type=Path)
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--pages", default="", help="comma-separated url paths ('' = landing page)")
    parser.add_argument("--query", default="")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    paths = args.pages.split(",") if args.pages else ["", *(s.url_path for s in SECTIONS)]
    server = Server()
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": args.width, "height": 900})
            for path in paths:
                page.set_viewport_size({"width": args.width, "height": 900})  # measure each page afresh
                page.goto(f"{server.url}/{path}" + (f"?{args.query}" if args.query else ""))
                wait_idle(page)
                # Streamlit scrolls inside its main container, so grow the viewport to its height
                height = page.evaluate(
                    "() => document.querySelector('[data-testid=\"stMain\"]').scrollHeight")
                page.set_viewport_size({"width": args.width, "height": max(900, int(height))})
                page.wait_for_timeout(1500)  # let plotly redraw at the new size
                name = f"{path or 'home'}-{args.width}.png"
                page.screenshot(path=str(args.out / name), full_page=True)
                print(args.out / name)
            browser.close()
    finally:
        server.stop()


if __name__ == "__main__":
    main()
