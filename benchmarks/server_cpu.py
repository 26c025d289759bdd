"""Server CPU and bytes per rerun on a real ``streamlit run`` server, per page and main control.

Usage: python -m benchmarks.server_cpu [--reruns 20] [--cache-on]

Starts its own server on a free loopback port and opens each page with one headless reader
(scripts/st_client.py, Streamlit's websocket protocol, no rendering). For each control it changes the
widget back and forth ``--reruns`` times, one change at a time, and reads the server process's CPU
time (user + system, every thread: the script run, serialising figures, the websocket) from /proc
before and after each rerun; with one reader and nothing else running on the server, the difference
is what that rerun cost. Also reported: the bytes the server sent for the rerun, and the reader's
wall time from sending the change to script_finished. The first two changes of each control warm
the caches and are not counted. ``--cache-on`` runs the server with Streamlit's default ForwardMsg
cache (``global.minCachedMessageSize`` 10000) instead of the repo's setting that turns it off.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from scripts.procstat import tree_cpu_s as cpu_s  # the server and its simulation workers
from scripts.st_client import Reader
from tests.browser.conftest import Server

# (page url path, widget key, two values to alternate between)
CONTROLS = [
    ("two-phases", "phases_batch", [16, 64]),
    ("two-phases", "phases_prompt", [1024, 8192]),
    ("continuous-batching", "batching_continuous", [True, False]),
    ("continuous-batching", "batching_slots", [32, 64]),
    ("paged-attention", "paging_paged", [True, False]),
    ("paged-attention", "paging_step", [120, 200]),
    ("speculative-decoding", "spec_alpha", [0.6, 0.8]),
    ("speculative-decoding", "spec_batch", [16, 64]),
    ("what-to-watch", "watch_ttft", [0.5, 2.0]),
    ("what-to-watch", "gpu", ["A100 80GB SXM", "H100 SXM"]),  # the sidebar: a full rerun
    ("under-load", "load_policy", ["Chunked prefill", "Prefill-first"]),
]


async def measure(url: str, pid: int, reruns: int, controls: list, warmup: int = 2) -> list[tuple]:
    rows = []
    for path, key, values in controls:
        reader = await Reader.open(url, path, timeout_s=60)
        cpu, size, wall = [], [], []
        for i in range(reruns + warmup):
            if i == warmup:
                start = cpu_s(pid)
            before = cpu_s(pid)
            result = await reader.set(key, values[i % 2])
            await asyncio.sleep(0.05)  # let the server finish sending (its CPU after script_finished)
            if i >= warmup:
                cpu.append((cpu_s(pid) - before) * 1e3)
                size.append(result.bytes / 1024)
                wall.append(result.elapsed_s * 1e3)
            if result.errors:
                raise RuntimeError(f"{path} {key}: {result.errors}")
        # The mean over all counted reruns: one clock tick of error in all, not one per rerun.
        mean = (cpu_s(pid) - start) * 1e3 / reruns
        await reader.close()
        rows.append((path, key, statistics.median(cpu), max(cpu), statistics.median(size),
                     statistics.median(wall), mean))
        print(f"{path} {key}: CPU median {rows[-1][2]:.0f} ms, {rows[-1][4]:.0f} KiB", flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reruns", type=int, default=20)
    parser.add_argument("--cache-on", action="store_true")
    parser.add_argument("--server-arg", action="append", default=[],
                        help="a streamlit option, e.g. --server-arg=--runner.postScriptGC=true")
    parser.add_argument("--pages", default="", help="comma-separated url paths (default: all)")
    args = parser.parse_args()
    extra = ("--global.minCachedMessageSize", "10000") if args.cache_on else ()
    server = Server(extra_args=(*extra, *args.server_arg))
    try:
        wanted = [p for p in args.pages.split(",") if p]
        controls = [c for c in CONTROLS if not wanted or c[0] in wanted]
        rows = asyncio.run(measure(server.url, server.proc.pid, args.reruns, controls))
    finally:
        server.stop()
    tick = 1000 / os.sysconf("SC_CLK_TCK")
    print()
    print(f"Server CPU per rerun, {args.reruns} reruns per control, ForwardMsg cache "
          f"{'on' if args.cache_on else 'off'}, {os.cpu_count()} cores (CPU clock tick {tick:.0f} ms):")
    print()
    print("| Page | Control | CPU median | CPU mean | CPU max | Sent per rerun | Change → script_finished |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for path, key, med, worst, kib, wall, mean in rows:
        print(f"| {path} | `{key}` | {med:.0f} ms | {mean:.1f} ms | {worst:.0f} ms | {kib:.0f} KiB "
              f"| {wall:.0f} ms |")


if __name__ == "__main__":
    main()
