"""Open every page (the start page, the six sections, Your numbers, Sources) under many sidebar
setups, on a 390x844 phone and at 1280x800, in headless Chromium (page 05 with its lower sections
open; every other setup with each section's main control moved off its default), wait until the page
has stopped changing, and run the first-screen test's layout checks on each
(``tests/browser/layout_checks.py``): no exception shown, no chart title, legend, axis title or label
cut off or covered, no table wider than the screen, no metric text cut short. The CI run makes these
checks at the defaults only; a label that fits the default model's numbers can run off the chart for
another's.

Usage: python scripts/visual_sweep.py [--sizes phone,desktop] [--setups 0:10] [--shots DIR]

Prints one line per page view and a count of failures; with --shots, a screenshot of each failing
view. Exits 1 when any view fails. Starts its own streamlit server on a free port.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from playwright.sync_api import sync_playwright

from scripts.chart_margins import OPEN_ALL
from tests.browser.conftest import CHROMIUM_ARGS, Server, chromium_path
from tests.browser.helpers import open_page
from tests.browser.layout_checks import SIZES, check_charts, check_metrics_uncut, check_tables
from ui.nav import ALL_PAGES

#: Sidebar setups (URL query strings) chosen to differ from the defaults in what the pages draw:
#: tensor parallelism, FP8/INT4/FP4 weights, mixture-of-experts and MLA models, small cards, a model
#: that does not fit, a tiny model, one measured model.
SETUPS = (
    "gpu=A100+80GB+SXM&model=Llama-3.1-70B&gpus=4",
    "gpu=H200+SXM&model=Llama-3.1-405B&weights=fp8&kv=fp8&gpus=8",
    "gpu=MI300X&model=Mixtral-8x7B&gpus=2",
    "gpu=L4&model=Llama-3.1-8B&weights=int4",
    "gpu=B200&model=DeepSeek-V3&weights=nvfp4&gpus=8",
    "gpu=H100+SXM&model=gpt-oss-120b&weights=mxfp4",
    "gpu=H100+SXM&model=Llama-3.1-70B",
    "gpu=L40S&model=Qwen3-30B-A3B&weights=fp8",
    "gpu=H100+SXM&model=Llama-3.2-1B",
    "gpu=A100+80GB+SXM&model=GPT-J-6B",
    "gpu=H200+SXM&model=Llama-3.1-70B&gpus=2&weights=fp8",
)


#: Each section's main control moved off its default (every other setup is opened this way): a
#: chart's labels move with them.
MOVED = {
    "two-phases": "phases_batch=256",
    "continuous-batching": "batching_continuous=true&batching_slots=256",
    "paged-attention": "paging_paged=true",
    "speculative-decoding": "spec_method=EAGLE-3&spec_batch=64",
    "what-to-watch": "watch_tpot=20",
    "under-load": "load_policy=Chunked+prefill",
}


_SHAPE_JS = """() => [document.querySelectorAll('[data-testid="stElementContainer"]').length,
  document.querySelectorAll('[data-testid="stSkeleton"]').length,
  document.querySelectorAll('.js-plotly-plot').length]"""


def settle(page, quiet_ms: int = 1200, limit_ms: int = 60_000) -> None:
    """Wait until the page's elements have stopped changing for ``quiet_ms``: ``open_page`` returns
    once a title shows and no placeholder is left, which a long first run (page 05 with its sections
    open: seconds) passes mid-way; Streamlit's running indicator did not show during such a run."""
    last, quiet, waited = None, 0, 0
    while quiet < quiet_ms and waited < limit_ms:
        shape = page.evaluate(_SHAPE_JS)
        quiet = quiet + 200 if shape == last and shape[1] == 0 else 0
        last = shape
        page.wait_for_timeout(200)
        waited += 200


def check_view(page, width: int) -> None:
    """The layout checks on the page as it stands; raises AssertionError on the first failure."""
    errors = page.get_by_test_id("stException")
    if errors.count():
        raise AssertionError("exception shown: " + errors.first.inner_text()[:200])
    notice = page.locator(".st-key-url_notice")
    text = notice.first.inner_text() if notice.count() else ""
    if "not a valid value" in text or "not a setting" in text:  # the sweep's own link is wrong
        raise AssertionError("the link's settings were not all used: " + " ".join(text.split())[:300])
    check_charts(page, width)
    check_tables(page, width)
    check_metrics_uncut(page)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="phone,desktop")
    parser.add_argument("--setups", default=f"0:{len(SETUPS)}", help="a slice of SETUPS, START:STOP")
    parser.add_argument("--shots", type=Path, default=None, help="folder for screenshots of failing views")
    args = parser.parse_args()
    start, stop = (int(v) for v in args.setups.split(":"))
    setups = SETUPS[start:stop]
    if args.shots:
        args.shots.mkdir(parents=True, exist_ok=True)
    server = Server()
    views = failures = 0
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
            for size in args.sizes.split(","):
                context = browser.new_context(**SIZES[size])
                page = context.new_page()
                width = SIZES[size]["viewport"]["width"]
                for i, query in enumerate(setups, start=start):
                    for section in ALL_PAGES:
                        views += 1
                        try:
                            extra = [OPEN_ALL.get(section.url_path, "")]  # page 05's lower sections open
                            if i % 2:
                                extra.append(MOVED.get(section.url_path, ""))
                            link = "&".join(part for part in (query, *extra) if part)
                            open_page(page, server.url, section.url_path, link)
                            settle(page)  # also lets Plotly lay out legends after the first paint
                            check_view(page, width)
                            print(f"ok    {size:7} {section.url_path:22} {link}", flush=True)
                        except AssertionError as e:
                            failures += 1
                            why = str(e).splitlines()[0][:300]
                            print(f"FAIL  {size:7} {section.url_path:22} {link} :: {why}", flush=True)
                            if args.shots:
                                page.screenshot(path=str(args.shots / f"fail-{failures}.png"))
                context.close()
    finally:
        server.stop()
    print(f"{views} views, {failures} failing")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
