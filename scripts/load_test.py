"""Many readers at once: N concurrent Streamlit sessions open shared links and move widgets.

Usage:
    python scripts/load_test.py                      # 20 sessions for 3 minutes
    python scripts/load_test.py --sessions 20 --duration-s 120
    python scripts/load_test.py --smoke              # 4 sessions for 15 s: a quick check

Starts its own ``streamlit run app.py`` on a free loopback port (tests.browser.conftest.Server) and
stops it afterwards; all traffic goes to 127.0.0.1. Each session is a headless websocket reader
(scripts/st_client.py) that does what the browser does, without rendering: it opens a shared link
(a page with a few widget values in the query string), checks the link was applied, then changes one
widget at a time, pausing a random think time between changes (``--think-s``, 3 s on average; 0
for a stress test); after ``--updates-per-visit`` changes it leaves and opens another shared link
(a new session), so sessions come and go.

What counts as an error (the run exits 1 if there is any): an exception element in the page, a
compile error, a page not found, a shared link whose values the widgets did not take, a timeout
waiting for script_finished, a dropped connection, and an inconsistency: two sessions that show
the same page with the same widget values but different metric values (one session's state
leaking into another's would show up here).

Reported: sessions, updates, errors, the update time (from sending the rerun to receiving
script_finished, p50/p95/max), the first-load time of a link, server CPU, and the server's resident
memory (RSS of the process and its children, sampled every 0.25 s) at start, at intervals, at peak
and at the end, after every session has closed.

Which widgets change on which page is data: CHANGES maps a page's url path to (widget key, values)
rows; SIDEBAR_CHANGES are the global setup widgets, moved on every page. Pages registered in
ui.nav.SECTIONS without a CHANGES row get only sidebar changes (the run says so).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import resource
import statistics
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from websockets.exceptions import ConnectionClosed

from scripts.procstat import tree_cpu_s, tree_status_kib
from scripts.st_client import ProtocolError, Reader, encode
from sim.hardware import GPUS
from sim.models import KV_DTYPES, MODELS, WEIGHT_DTYPES
from tests.browser.conftest import Server
from ui.nav import SECTIONS
from ui.workers import ENV as WORKERS_ENV
from ui.workers import MAX_WORKERS

Change = tuple[str, list[Any]]  # (widget key, values it may take)

# The global setup in the sidebar (ui/setup.py): on every page.
SIDEBAR_CHANGES: list[Change] = [
    ("gpu", list(GPUS)),
    ("model", list(MODELS)),
    ("weights", list(WEIGHT_DTYPES)),
    ("kv", list(KV_DTYPES)),
    ("compute_eff", [0.4, 0.6, 0.8]),
    ("memory_eff", [0.6, 0.8, 0.95]),
    ("overhead_us", [0.0, 300.0, 1000.0]),
    ("seq_host_us", [0.0, 10.0, 40.0]),
]

# Per page (url path): the page's own widgets and values a reader would pick. Add a row per page.
CHANGES: dict[str, list[Change]] = {
    "two-phases": [
        ("phases_prompt", [256, 1024, 2048, 8192, 32768]),
        ("phases_batch", [1, 4, 16, 64, 256, 1024]),
        ("phases_context", [128, 512, 4096, 32768]),
    ],
    "continuous-batching": [
        ("batching_continuous", [True, False]),
        ("batching_slots", [8, 32, 64, 128]),
        ("batching_requests", [100, 500, 1000]),
        ("batching_load", ["All at once", "Poisson arrivals"]),  # the options as labelled
    ],
    "paged-attention": [
        ("paging_paged", [True, False]),
        ("paging_step", [30, 120, 200]),
        ("paging_page_tokens", [8, 16, 32]),
        ("paging_chunk", [128, 512, 2048]),
    ],
    "speculative-decoding": [
        ("spec_alpha", [0.5, 0.7, 0.9]),
        ("spec_k", [2, 4, 8]),
        ("spec_batch", [1, 16, 256]),
        ("spec_method", ["Draft model", "EAGLE", "n-gram lookup"]),
    ],
    "what-to-watch": [
        ("watch_ttft", [0.5, 1.0, 2.0]),
        ("watch_tpot", [25.0, 50.0, 100.0]),
    ],
    # Page 05's first screen. Its three lower sections (load curves, prefix caching, disaggregation)
    # run their searches only when a reader opens one, which these readers do not do (README).
    "under-load": [
        ("load_policy", ["Prefill-first", "Decode-first", "Chunked prefill"]),
        ("load_rate", [30, 60, 80]),
        ("load_workload", ["Chat, long-tailed", "Fixed 1,024 → 128"]),
    ],
}

PAGES = [("", "landing page"), *((s.url_path, s.label) for s in SECTIONS)]


@dataclass
class Stats:
    updates_s: list[float] = field(default_factory=list)
    opens_s: list[float] = field(default_factory=list)
    visits: int = 0
    errors: list[str] = field(default_factory=list)
    seen: dict[tuple, tuple] = field(default_factory=dict)  # (path, widget states) -> metrics
    consistency_checks: int = 0

    def error(self, where: str, what: str) -> None:
        self.errors.append(f"{where}: {what}")

    def check(self, reader: Reader, where: str) -> None:
        """Errors of the last run, and the same inputs must show the same numbers in every session."""
        result = reader.last
        for e in result.errors:
            self.error(where, e)
        if not result.metrics:
            return
        inputs = (reader.path, getattr(reader, "sections", ()),  # the sections a link opened show more
                  tuple(sorted((k, reader.value(k).SerializeToString(deterministic=True))
                               for k in reader.widgets)))
        metrics = tuple(sorted(result.metrics.items()))
        self.consistency_checks += 1
        if self.seen.setdefault(inputs, metrics) != metrics:
            self.error(where, f"inconsistent: same inputs, different numbers: {metrics} vs "
                              f"{self.seen[inputs]}")


# Page 05's lower sections run their searches only when opened (a lazy expander whose open state is in
# the URL). With --open-sections F a reader's link to that page opens one of them on a share F of visits.
SECTION_LINKS: dict[str, list[str]] = {
    "under-load": ["load_show_curves", "load_show_prefix", "load_show_split"],
}


def changes_for(path: str) -> list[Change]:
    return [*CHANGES.get(path, []), *SIDEBAR_CHANGES]


def shared_link(rng: random.Random, path: str) -> list[tuple[str, Any]]:
    """A link someone might share: up to three non-default widget values in the query string."""
    rows = rng.sample(changes_for(path), k=rng.randint(0, 3))
    return [(key, rng.choice(values)) for key, values in rows]


async def reader_loop(n: int, url: str, deadline: float, args: argparse.Namespace, stats: Stats) -> None:
    rng = random.Random(args.seed * 1000 + n)
    visit = 0
    while time.monotonic() < deadline:
        path, _ = PAGES[(n + visit) % len(PAGES)]
        visit += 1
        link = shared_link(rng, path)
        sections = []
        if args.open_sections and path in SECTION_LINKS and rng.random() < args.open_sections:
            sections = [(rng.choice(SECTION_LINKS[path]), "true")]  # not a widget: not checked below
        query = urlencode([(k, str(v)) for k, v in [*link, *sections]])
        where = f"session {n} /{path}?{query}"
        reader = None
        try:
            reader = await Reader.open(url, path, query, timeout_s=args.timeout_s)
            reader.sections = tuple(sections)
            stats.visits += 1
            stats.opens_s.append(reader.last.elapsed_s)
            stats.check(reader, where)
            refused = any("does not fit" in a for a in reader.last.alerts)
            for key, value in link:  # the link's values reached the widgets
                if key not in reader.widgets and refused:
                    continue  # the page said the setup does not fit, and drew no widgets below that
                if key not in reader.widgets:
                    stats.error(where, f"widget {key!r} not rendered")
                    continue
                kind, el = reader.widgets[key]
                if reader.value(key) != encode(kind, el, value)[0]:
                    stats.error(where, f"shared link not applied: {key}={value!r}, "
                                       f"widget holds {reader.value(key)}")
            for _ in range(args.updates_per_visit):
                await asyncio.sleep(args.think_s * rng.uniform(0.5, 1.5))  # 0: yields only
                if time.monotonic() >= deadline:
                    break
                rows = [(k, v) for k, v in changes_for(path) if k in reader.widgets]
                if not rows:
                    stats.error(where, "no widget to change")
                    break
                key, values = rng.choice(rows)
                kind, el = reader.widgets[key]
                current = reader.value(key)
                choices = [v for v in values if encode(kind, el, v)[0] != current] or values
                value = rng.choice(choices)
                result = await reader.set(key, value)
                stats.updates_s.append(result.elapsed_s)
                stats.check(reader, f"{where} set {key}={value!r}")
        except (ProtocolError, ConnectionClosed, OSError, TimeoutError, ValueError) as e:
            stats.error(where, f"{type(e).__name__}: {e}")
            await asyncio.sleep(1.0)  # do not spin on a dead server
        finally:
            if reader is not None:
                try:
                    await asyncio.wait_for(reader.close(), args.timeout_s)
                except (ConnectionClosed, OSError, TimeoutError) as e:
                    stats.error(where, f"close: {type(e).__name__}: {e}")


# --- server memory and CPU -------------------------------------------------------------------


class RssSampler(threading.Thread):
    """Samples the RSS (MiB) of a process and its children every ``period_s`` seconds."""

    def __init__(self, pid: int | list[int], period_s: float = 0.25) -> None:
        super().__init__(daemon=True)
        self.pids = pid if isinstance(pid, list) else [pid]
        self.period_s = period_s
        self.samples: list[tuple[float, float]] = []  # (monotonic time, MiB)
        self._stop_event = threading.Event()

    def rss_mib(self) -> float:
        kib = sum(tree_status_kib(pid, "VmRSS") for pid in self.pids)
        return kib / 1024

    def run(self) -> None:
        while not self._stop_event.is_set():
            self.samples.append((time.monotonic(), self.rss_mib()))
            self._stop_event.wait(self.period_s)

    def stop(self) -> None:
        self._stop_event.set()
        self.join()

    def at(self, t: float) -> float:
        """The last sample taken at or before ``t``."""
        before = [mib for when, mib in self.samples if when <= t]
        return before[-1] if before else self.samples[0][1]

    def medians(self, t0: float, t1: float, period_s: float = 60.0) -> list[float]:
        """The median sample of each whole ``period_s`` from ``t0`` to ``t1`` (a trend the single samples
        above hide: each run allocates and frees tens of MiB, so one sample reads a moment, not a level)."""
        out = []
        start = t0
        while start + period_s <= t1 + 1e-9:
            window = [mib for when, mib in self.samples if start <= when < start + period_s]
            if window:
                out.append(statistics.median(window))
            start += period_s
        return out


# --- the run ---------------------------------------------------------------------------------


def _pct(samples_s: list[float], q: float) -> float:
    ms = sorted(s * 1e3 for s in samples_s)
    return ms[min(len(ms) - 1, round(q * (len(ms) - 1)))] if ms else float("nan")


async def warm_up(url: str, args: argparse.Namespace) -> None:
    """One visit per page with one change each, so that start RSS is a server that has served."""
    for path, _ in PAGES:
        reader = await Reader.open(url, path, timeout_s=args.timeout_s)
        key, values = next((k, v) for k, v in changes_for(path) if k in reader.widgets)
        await reader.set(key, values[-1])
        await reader.close()


async def drive(url: str, args: argparse.Namespace, stats: Stats) -> None:
    deadline = time.monotonic() + args.duration_s
    tasks = []
    for n in range(args.sessions):  # stagger arrivals over the first second or two
        tasks.append(asyncio.create_task(reader_loop(n, url, deadline, args, stats)))
        await asyncio.sleep(min(0.1, args.duration_s / max(1, args.sessions) / 4))
    # Bounded: every reader stops at the deadline; each network wait is bounded by --timeout-s.
    done, pending = await asyncio.wait(tasks, timeout=args.duration_s + 3 * args.timeout_s + 30)
    for t in pending:
        t.cancel()
        stats.error("harness", "a session did not stop in time")
    for t in done:
        if t.exception() is not None:
            stats.error("harness", f"{type(t.exception()).__name__}: {t.exception()}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=20, help="concurrent readers (default 20)")
    parser.add_argument("--duration-s", type=float, default=180.0, help="length of the run (default 180)")
    parser.add_argument("--think-s", type=float, default=3.0,
                        help="mean pause between a reader's changes, uniform in [0.5, 1.5]x (default 3)")
    parser.add_argument("--updates-per-visit", type=int, default=10,
                        help="changes before a reader leaves and opens another link (default 10)")
    parser.add_argument("--timeout-s", type=float, default=30.0, help="longest wait for one run")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--smoke", action="store_true", help="4 sessions for 15 s")
    parser.add_argument("--skip", default="",
                        help="comma-separated url paths readers do not open (e.g. under-load: page 05's "
                             "first view of a setup costs seconds of CPU, see README)")
    parser.add_argument("--open-sections", type=float, default=0.0,
                        help="share of page-05 visits whose link opens one of its lower sections (0..1)")
    parser.add_argument("--replicas", type=int, default=0,
                        help="N > 0: N replicas behind nginx (scripts/proxy.py), readers go through it")
    parser.add_argument("--sim-workers", type=int, default=None,
                        help="worker processes each server runs its simulations in (WTGL_SIM_WORKERS, "
                             "ui/workers.py; 0: in the server's own process); default: the app's default")
    args = parser.parse_args()
    if args.sim_workers is not None:
        if not 0 <= args.sim_workers <= MAX_WORKERS:
            parser.error(f"--sim-workers must be in [0, {MAX_WORKERS}]")
        os.environ[WORKERS_ENV] = str(args.sim_workers)  # the servers inherit it
    if args.smoke:
        args.sessions, args.duration_s = 4, 15.0
    if not 1 <= args.sessions <= 200 or not 1 <= args.duration_s <= 3600:
        parser.error("--sessions must be in [1, 200] and --duration-s in [1, 3600]")

    skipped = {p for p in args.skip.split(",") if p}
    PAGES[:] = [(p, label) for p, label in PAGES if p not in skipped]
    missing = [s.url_path for s in SECTIONS if s.url_path not in CHANGES and s.url_path not in skipped]
    if missing:
        print(f"note: no CHANGES row for {', '.join(missing)}: only the sidebar is moved there")

    if args.replicas:
        from scripts.proxy import Proxy
        proxy = Proxy(args.replicas).__enter__()
        server, pids, stop = proxy, proxy.pids, proxy.__exit__
    else:
        server = Server()
        pids, stop = [server.proc.pid], server.stop

    def cpu() -> float:  # the servers and their simulation workers (ui/workers.py)
        return sum(tree_cpu_s(pid) for pid in pids)

    def alive() -> bool:
        return all(os.path.exists(f"/proc/{pid}") for pid in pids)

    try:
        sampler = RssSampler(pids)
        cold_mib = sampler.rss_mib()
        for _ in range(max(1, 2 * args.replicas)):  # each replica warmed (the proxy spreads readers)
            asyncio.run(warm_up(server.url, args))  # imports and caches: not what we measure
        sampler.start()
        time.sleep(1.0)
        cpu0, t0 = cpu(), time.monotonic()
        me0, load0 = resource.getrusage(resource.RUSAGE_SELF), os.getloadavg()[0]
        stats = Stats()
        asyncio.run(drive(server.url, args, stats))
        t_load_end = time.monotonic()
        cpu_load = cpu() - cpu0
        me1, load1 = resource.getrusage(resource.RUSAGE_SELF), os.getloadavg()[0]
        cpu_me = me1.ru_utime + me1.ru_stime - me0.ru_utime - me0.ru_stime
        time.sleep(5.0)  # every session has closed: let the server drop them
        t_end = time.monotonic()
        peak_hwm_mib = sum(tree_status_kib(pid, "VmHWM") for pid in pids) / 1024
        sampler.stop()
        if not alive():
            stats.error("server", "a server process exited")
    finally:
        stop()

    load_s = t_load_end - t0
    rss = [mib for _, mib in sampler.samples]
    start_mib, peak_mib, end_mib = sampler.at(t0), max(rss), sampler.at(t_end)
    timeline = " → ".join(f"{sampler.at(t0 + f * load_s):.0f}" for f in (0, 0.25, 0.5, 0.75, 1.0))
    pages = ", ".join(f"/{p}" for p, _ in PAGES)
    print()
    workers = os.environ.get(WORKERS_ENV, "the default")
    where = (f"{args.replicas} replicas behind nginx" if args.replicas else "one server")
    where += f", simulation workers per server: {workers}"
    print(f"### Load test: {args.sessions} concurrent readers, {args.duration_s:.0f} s, {where}")
    print()
    print(f"Each reader opens a shared link (one of {pages}, with up to three widget values in the URL), "
          f"changes one widget every {args.think_s:g} s on average, and opens a new link after "
          f"{args.updates_per_visit} changes. Server and readers share this machine's "
          f"{os.cpu_count()} cores."
          + (f" {args.open_sections:.0%} of the links to page 05 open one of its lower sections."
             if args.open_sections else ""))
    print()
    print("| Measure | Value |")
    print("|---|---|")
    print(f"| Sessions (concurrent / opened in all) | {args.sessions} / {stats.visits} |")
    print(f"| Widget updates | {len(stats.updates_s)} ({len(stats.updates_s) / load_s:.1f}/s) |")
    print(f"| Errors | {len(stats.errors)} |")
    print(f"| Same inputs, same numbers across sessions | {stats.consistency_checks} checks |")
    print(f"| Update time, rerun sent → script_finished: p50 / p95 / max | "
          f"{_pct(stats.updates_s, 0.5):.0f} / {_pct(stats.updates_s, 0.95):.0f} / "
          f"{_pct(stats.updates_s, 1.0):.0f} ms |")
    print(f"| Opening a link (first run): p50 / p95 | {_pct(stats.opens_s, 0.5):.0f} / "
          f"{_pct(stats.opens_s, 0.95):.0f} ms |")
    print(f"| CPU during the run: server / the readers' process | {100 * cpu_load / load_s:.0f}% / "
          f"{100 * cpu_me / load_s:.0f}% of one core |")
    runs = len(stats.updates_s) + len(stats.opens_s)
    print(f"| Server CPU per script run (updates and link opens) | {1e3 * cpu_load / max(1, runs):.0f} ms |")
    print(f"| Machine load average (1 min) at start / end | {load0:.1f} / {load1:.1f} "
          f"({os.cpu_count()} cores, shared with other work) |")
    print(f"| Server RSS: cold → start (after one visit per page) → peak → end (all sessions closed) | "
          f"{cold_mib:.0f} → {start_mib:.0f} → {peak_mib:.0f} → {end_mib:.0f} MiB "
          f"(VmHWM {peak_hwm_mib:.0f} MiB) |")
    print(f"| Server RSS at 0, ¼, ½, ¾, end of the load | {timeline} MiB |")
    minutes = sampler.medians(t0, t_load_end)
    if minutes:
        print(f"| Server RSS, median of each minute of the load | "
              f"{' → '.join(f'{m:.0f}' for m in minutes)} MiB |")
    if stats.errors:
        print()
        print("Errors (first 20):")
        for e in stats.errors[:20]:
            print(f"- {e}")
    if stats.updates_s:
        print()
        print(f"Median update time {statistics.median(stats.updates_s) * 1e3:.0f} ms over "
              f"{len(stats.updates_s)} updates.")
    return 1 if stats.errors else 0


if __name__ == "__main__":
    sys.exit(main())
