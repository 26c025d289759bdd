"""Take screenshots of every page in headless Chromium (for the README and for review).

Usage: python scripts/screenshots.py OUT_DIR [--size 1280x800] [--size 390x844] [--pages two-phases,...]
       [--query "a=b"] [--first-screen | --only-first-screen] [--phone-scale 2]
Each size gives NAME-WIDTH.png, the whole page; with --first-screen, NAME-WIDTH-first.png too, just
what fits the first screen; with --only-first-screen, NAME-WIDTH.png is the first screen alone (the
README's). Widths under 500 px are taken as a phone (touch, mobile viewport, --phone-scale pixels).
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


def _size(text: str) -> tuple[int, int]:
    width, height = text.lower().split("x")
    return int(width), int(height)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out", type=Path)
    parser.add_argument("--size", type=_size, action="append",
                        help="WIDTHxHEIGHT of the first screen (repeatable; default 1280x800 and 390x844)")
    parser.add_argument("--pages", default="", help="comma-separated url paths ('' = landing page)")
    parser.add_argument("--query", default="")
    parser.add_argument("--first-screen", action="store_true", help="also save the first screen alone")
    parser.add_argument("--only-first-screen", action="store_true", help="save the first screen alone")
    parser.add_argument("--phone-scale", type=float, default=2.0, help="device pixels per CSS pixel, phones")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    paths = args.pages.split(",") if args.pages else ["", *(s.url_path for s in SECTIONS)]
    server = Server()
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
            for width, height in args.size or [(1280, 800), (390, 844)]:
                phone = width < 500
                context = browser.new_context(viewport={"width": width, "height": height},
                                              is_mobile=phone, has_touch=phone,
                                              device_scale_factor=args.phone_scale if phone else 1)
                page = context.new_page()
                for path in paths:
                    page.set_viewport_size({"width": width, "height": height})  # measure each page afresh
                    page.goto(f"{server.url}/{path}" + (f"?{args.query}" if args.query else ""))
                    wait_idle(page)
                    page.wait_for_timeout(1200)  # let plotly lay out
                    name = f"{path or 'home'}-{width}"
                    if args.only_first_screen:
                        page.screenshot(path=str(args.out / f"{name}.png"))
                        print(args.out / f"{name}.png")
                        continue
                    if args.first_screen:
                        page.screenshot(path=str(args.out / f"{name}-first.png"))
                        print(args.out / f"{name}-first.png")
                    # Streamlit scrolls inside its main container, so grow the viewport to its height
                    full = page.evaluate(
                        "() => document.querySelector('[data-testid=\"stMain\"]').scrollHeight")
                    page.set_viewport_size({"width": width, "height": max(height, int(full))})
                    page.wait_for_timeout(1500)  # let plotly redraw at the new size
                    page.screenshot(path=str(args.out / f"{name}.png"), full_page=True)
                    print(args.out / f"{name}.png")
                context.close()
            browser.close()
    finally:
        server.stop()


if __name__ == "__main__":
    main()
