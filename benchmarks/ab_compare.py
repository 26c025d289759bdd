"""Click-to-chart of the working tree against an earlier revision of the app, interleaved.

Usage: python -m benchmarks.ab_compare --base REV [--changes 15] [--controls key,key]

Checks REV out into a temporary git worktree, serves it beside the working tree (two servers, the
same Python environment), and times each of benchmarks.bare_compare's main controls on both in one
headless Chromium, change by change in turn, with benchmarks.browser_timing's clock (input event ->
the watched chart's new data drawn; and -> the page settled). A change to how a page sends or draws
is judged by this run, not by two runs minutes apart: on a 2-core machine one page's median moves by
a third between runs (README, "Speed"). Reports medians per control and the ratio head / base.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

from benchmarks.bare_compare import MAIN
from benchmarks.browser_timing import _INIT, time_control
from tests.browser.conftest import CHROMIUM_ARGS, ROOT, Server, chromium_path
from tests.browser.helpers import open_page


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", required=True, help="the revision to compare against (e.g. HEAD~1)")
    parser.add_argument("--changes", type=int, default=15)
    parser.add_argument("--controls", default="", help="comma-separated widget keys (default: all six)")
    args = parser.parse_args()
    wanted = [k for k in args.controls.split(",") if k]
    controls = [(path, c) for path, c in MAIN if not wanted or c.key in wanted]
    if not controls:
        parser.error(f"--controls: none of {wanted} is a main control")
    rev = subprocess.run(["git", "rev-parse", "--short", args.base], cwd=ROOT, check=True,
                         capture_output=True, text=True).stdout.strip()
    load0 = os.getloadavg()[0]
    rows = []
    with tempfile.TemporaryDirectory() as tmp, tempfile.TemporaryDirectory() as config_home:
        base_tree = Path(tmp) / "base"
        subprocess.run(["git", "worktree", "add", "--detach", "-q", str(base_tree), rev], cwd=ROOT,
                       check=True)
        head, base = None, None
        try:
            head, base = Server(), Server(cwd=base_tree)
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS,
                                            env={**os.environ, "XDG_CONFIG_HOME": config_home})
                context = browser.new_context(viewport={"width": 1280, "height": 900})
                context.add_init_script(_INIT)
                tabs = {"head": context.new_page(), "base": context.new_page()}
                urls = {"head": head.url, "base": base.url}
                for path, control in controls:
                    for name, tab in tabs.items():
                        tab.bring_to_front()
                        open_page(tab, urls[name], path)
                        time_control(tab, control, 0, warmup=2)
                    ms = {"head": [], "base": []}
                    settled = {"head": [], "base": []}
                    for i in range(args.changes):  # interleaved, change by change, alternating who leads
                        for name in (("head", "base") if i % 2 == 0 else ("base", "head")):
                            tabs[name].bring_to_front()  # a background tab draws late or not at all
                            t, _, _, s = time_control(tabs[name], control, 1, warmup=0, start=i)
                            ms[name] += t
                            settled[name] += s
                    row = (path, control.key, *(statistics.median(ms[n]) for n in ("base", "head")),
                           *(statistics.median(settled[n]) for n in ("base", "head")))
                    rows.append(row)
                    print(f"{path} {control.key}: base {row[2]:.0f} ms, head {row[3]:.0f} ms, "
                          f"{row[3] / row[2]:.2f}x; settled base {row[4]:.0f}, head {row[5]:.0f} ms",
                          flush=True)
                browser.close()
        finally:
            for server in (head, base):
                if server is not None:
                    server.stop()
            subprocess.run(["git", "worktree", "remove", "--force", str(base_tree)], cwd=ROOT, check=False)
    print()
    print(f"Click-to-chart, working tree vs {rev}, {args.changes} interleaved changes per control, "
          f"medians ({os.cpu_count()} cores, load average {load0:.1f} -> {os.getloadavg()[0]:.1f}):")
    print()
    print(f"| Page | Control | {rev} | Working tree | Head / base | Settled: {rev} | Settled: head |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for path, key, b, h, sb, sh in rows:
        print(f"| {path} | `{key}` | {b:.0f} ms | {h:.0f} ms | {h / b:.2f}x | {sb:.0f} ms | {sh:.0f} ms |")


if __name__ == "__main__":
    main()
