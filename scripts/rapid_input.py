"""Rapid input, many runs: does the page survive 200 key presses in 10 s, and end on the right view?

Usage:
    python scripts/rapid_input.py                       # every target, 5 runs each
    python scripts/rapid_input.py --runs 8 --targets batching_slots,spec_alpha
    python scripts/rapid_input.py --cache-on            # Streamlit's ForwardMsg cache back on

Starts its own server on a free loopback port and drives headless Chromium (tests/browser/rapid.py
says what a run does and what counts as losing the page). ``--cache-on`` starts the server with
``--global.minCachedMessageSize 10000`` (Streamlit's default) instead of the repo's setting that
turns the cache off, to measure what the setting buys. Prints one line per run and a table.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from playwright.sync_api import sync_playwright

from tests.browser.conftest import CHROMIUM_ARGS, Server, chromium_path
from tests.browser.rapid import TARGETS, run_once


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--presses", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--targets", default="", help="comma-separated widget keys (default: all)")
    parser.add_argument("--mode", choices=["keys", "queued"], default="keys",
                        help="keys: Playwright key presses (default); queued: inputs scheduled in the page")
    parser.add_argument("--cache-on", action="store_true", help="Streamlit's default ForwardMsg cache")
    args = parser.parse_args()
    wanted = [t for t in args.targets.split(",") if t]
    targets = [t for t in TARGETS if not wanted or t.key in wanted]
    extra = ("--global.minCachedMessageSize", "10000") if args.cache_on else ()
    server = Server(extra_args=extra)
    config_home = tempfile.TemporaryDirectory()
    rows = []
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS,
                                        env={**os.environ, "XDG_CONFIG_HOME": config_home.name})
            context = browser.new_context(viewport={"width": 1280, "height": 900})
            for target in targets:
                outcomes = []
                for run in range(args.runs):
                    o = run_once(context, server.url, target, args.presses, args.seconds, args.mode)
                    outcomes.append(o)
                    print(f"{target.name} run {run + 1}: {'ok' if o.ok else 'FAILED'}; "
                          f"{o.inputs} inputs in {o.seconds:.1f} s, settled {o.settle_s:.1f} s later "
                          f"on {o.final_value}; disconnects {int(o.disconnected)} {o.fatal[:1]} "
                          f"{o.mismatches[:2]}", flush=True)
                rows.append((target, outcomes))
            browser.close()
    finally:
        server.stop()
        config_home.cleanup()
    print()
    print(f"ForwardMsg cache {'on (Streamlit default)' if args.cache_on else 'off (repo config)'}; "
          f"{args.presses} inputs ({args.mode}) over at least {args.seconds:.0f} s per run; "
          f"{os.cpu_count()} cores.")
    print()
    print("| Page: control | Runs | Disconnects | Final view wrong | Settle after last input, median / max |")
    print("|---|---:|---:|---:|---:|")
    failed = 0
    for target, outcomes in rows:
        settles = sorted(o.settle_s for o in outcomes)
        disc = sum(o.disconnected for o in outcomes)
        wrong = sum(bool(o.mismatches) for o in outcomes)
        failed += disc + wrong
        print(f"| {target.name} | {len(outcomes)} | {disc} | {wrong} | "
              f"{settles[len(settles) // 2]:.1f} s / {settles[-1]:.1f} s |")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
