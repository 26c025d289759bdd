"""Run every benchmark and print a markdown table: ``python -m benchmarks [--sim-only]``."""

from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
import platform

import benchmarks
from benchmarks.core import Result, time_page, time_sim


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sim-only", action="store_true", help="skip the page reruns")
    parser.add_argument("--reruns", type=int, default=30, help="reruns per page case")
    args = parser.parse_args()

    results: list[tuple[str, Result]] = []
    for info in sorted(pkgutil.iter_modules(benchmarks.__path__), key=lambda m: m.name):
        if not info.name.startswith("bench_"):
            continue
        module = importlib.import_module(f"benchmarks.{info.name}")
        for case in getattr(module, "SIM_CASES", []):
            results.append(("sim", time_sim(case)))
        if not args.sim_only:
            for case in getattr(module, "PAGE_CASES", []):
                results.append(("page rerun", time_page(case, args.reruns)))

    print(f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"Python {platform.python_version()}\n")
    print("| kind | what | median ms | p95 ms | target ms | runs | |")
    print("|---|---|---:|---:|---:|---:|---|")
    for kind, r in results:
        print(f"| {kind} | {r.name} | {r.median_ms:.2f} | {r.p95_ms:.2f} | {r.target_ms:g} | {r.runs} | "
              f"{'ok' if r.ok else '**over**'} |")


if __name__ == "__main__":
    main()
