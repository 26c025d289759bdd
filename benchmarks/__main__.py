"""Run every benchmark and print a markdown table: ``python -m benchmarks [--sim-only]``."""

from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
import platform
from datetime import date

import benchmarks
from benchmarks.core import ROOT, Result, time_page, time_sim

START, END = "<!-- benchmarks:start -->", "<!-- benchmarks:end -->"
COLD_START, COLD_END = "<!-- benchmarks-cold:start -->", "<!-- benchmarks-cold:end -->"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sim-only", action="store_true", help="skip the page reruns")
    parser.add_argument("--reruns", type=int, default=30, help="reruns per page case")
    parser.add_argument("--cold", action="store_true",
                        help="clear Streamlit's caches before every page rerun (first-time settings)")
    parser.add_argument("--write-readme", action="store_true",
                        help="also put the table between the benchmark markers in README.md")
    args = parser.parse_args()

    results: list[tuple[str, Result]] = []
    for info in sorted(pkgutil.iter_modules(benchmarks.__path__), key=lambda m: m.name):
        if not info.name.startswith("bench_"):
            continue
        module = importlib.import_module(f"benchmarks.{info.name}")
        for case in [] if args.cold else getattr(module, "SIM_CASES", []):
            results.append(("sim", time_sim(case)))
        if not args.sim_only:
            for case in getattr(module, "PAGE_CASES", []):
                kind = "page rerun, cold" if args.cold else "page rerun"
                results.append((kind, time_page(case, args.reruns, cold=args.cold)))

    lines = [
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"{date.today().isoformat()}.",
        "",
        "| kind | what | median ms | p95 ms | target ms | runs | |",
        "|---|---|---:|---:|---:|---:|---|",
    ]
    for kind, r in results:
        lines.append(f"| {kind} | {r.name} | {r.median_ms:.2f} | {r.p95_ms:.2f} | {r.target_ms:g} | "
                     f"{r.runs} | {'ok' if r.ok else '**over**'} |")
    table = "\n".join(lines)
    print(table)
    if args.write_readme:
        readme = ROOT / "README.md"
        text = readme.read_text()
        first, last = (COLD_START, COLD_END) if args.cold else (START, END)
        start, end = text.index(first) + len(first), text.index(last)
        readme.write_text(text[:start] + "\n" + table + "\n" + text[end:])


if __name__ == "__main__":
    main()
