"""Hostile links at scale through a real server (and a real browser for a sample of them).

Usage:
    python scripts/hostile_inputs.py                     # 10,000 generated links, 300 in Chromium
    python scripts/hostile_inputs.py --cases 300 --browser-every 60    # what CI runs (a fixed sample)

Generates ``--cases`` links (seeded, so a run is reproducible): a page of the app, and a query
string of real setting keys (the page's and the global ones) and unknown keys, with values drawn
from valid values, malformed numbers, numbers in other scripts' digits, huge and empty strings,
control characters, and injection strings (backticks, markdown links and images, HTML, javascript:
links, Streamlit's own markdown directives), each carrying a marker host.

Every link is opened on a server this script starts, by a headless websocket reader
(scripts/st_client.py; ``--concurrency`` at a time). Counted: exceptions (an exception element or a
compile error), disconnects (the socket closed or a run never finished), and live markup: the marker
inside any element other than a code block (the only place a link's text may appear, as plain text).
Every ``--browser-every``-th link is also opened in headless Chromium, where no link, image or element
from the input may exist and no request may leave the server. Exits 1 on any failure.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlencode, urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from websockets.exceptions import ConnectionClosed

from scripts.load_test import CHANGES, SIDEBAR_CHANGES
from scripts.st_client import ProtocolError, Reader
from tests.browser.conftest import CHROMIUM_ARGS, Server, chromium_path
from ui.nav import HOME, SECTIONS, SOURCES

MARK = "hostile.invalid"
PAGES = ["" if s is HOME else s.url_path for s in (HOME, *SECTIONS, SOURCES)]  # home is at /
INJECTIONS = [
    f"x` [click](https://{MARK}/a) ![i](https://{MARK}/i.png) `",
    f"<img src=https://{MARK}/h.png onerror=window.__pwned=1>",
    f"<a id=pwned href=https://{MARK}>x</a><script>window.__pwned=1</script>",
    f"[js](javascript:window.__pwned=1) https://{MARK}",
    f"```\n</code></pre><b id=pwned>{MARK}</b>",
    f":red[{MARK}] **b** $x^2$ :material/home: <iframe src=https://{MARK}>",
    f"\u202e{MARK}\u0000\r\n%0d%0a",
]
LIVE_SELECTOR = (f"a[href*='{MARK}'], img[src*='{MARK}'], iframe[src*='{MARK}'], #pwned, "
                 "a[href^='javascript:'], [onerror]")
MALFORMED = ["", "NaN", "inf", "-1", "1e309", "0x10", "1,5", "٣", "３", "1\u2003", "true", "[]", "💥",
             "../../etc/passwd", "' OR 1=1 --", "9" * 400]


def generate(rng: random.Random) -> tuple[str, str]:
    path = rng.choice(PAGES)
    rows = [*CHANGES.get(path, []), *SIDEBAR_CHANGES]
    pairs = []
    for _ in range(rng.randint(1, 6)):
        roll = rng.random()
        key = rng.choice(rows)[0] if roll < 0.7 else rng.choice([*INJECTIONS, "unknown", "x" * 300])
        kind = rng.random()
        if kind < 0.2:
            value = str(rng.choice(dict(rows).get(key, ["1"])))
        elif kind < 0.5:
            value = rng.choice(MALFORMED)
        else:
            value = rng.choice(INJECTIONS)
        pairs.append((key, value))
    if not any(MARK in k + v for k, v in pairs):
        pairs.append(("note", rng.choice(INJECTIONS)))
    return path, urlencode(pairs)


async def check_ws(url: str, cases: list[tuple[str, str]], concurrency: int, counts: dict,
                   failures: list[str]) -> None:
    queue: asyncio.Queue = asyncio.Queue()
    for case in cases:
        queue.put_nowait(case)

    async def worker() -> None:
        while not queue.empty():
            path, query = queue.get_nowait()
            where = f"/{path}?{query}"
            try:
                reader = await Reader.open(url, path, query, timeout_s=60, keep_elements=True)
            except (ConnectionClosed, ProtocolError, OSError, TimeoutError) as e:
                counts["disconnects"] += 1
                failures.append(f"disconnect {type(e).__name__}: {where}")
                continue
            result = reader.last
            if result.errors:
                counts["exceptions"] += 1
                failures.append(f"exception {result.errors[:1]}: {where}")
            for kind, proto in result.elements_seen:
                if MARK.encode() in proto and kind != "code":
                    counts["live_markup"] += 1
                    failures.append(f"marker in a {kind} element: {where}")
                    break
            counts["ws_checked"] += 1
            if counts["ws_checked"] % 500 == 0:
                print(f"{counts['ws_checked']:,} links checked, {len(failures)} failures", flush=True)
            await reader.close()

    await asyncio.gather(*(worker() for _ in range(concurrency)))


def check_browser(url: str, cases: list[tuple[str, str]], counts: dict, failures: list[str]) -> None:
    from playwright.sync_api import sync_playwright

    from tests.browser.helpers import open_page

    own = urlsplit(url).netloc
    with tempfile.TemporaryDirectory() as config_home, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS,
                                    env={**os.environ, "XDG_CONFIG_HOME": config_home})
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        page = context.new_page()
        outside: list[str] = []
        page.on("request", lambda r: outside.append(r.url)
                if urlsplit(r.url).netloc not in ("", own) and not r.url.startswith(("data:", "blob:"))
                else None)
        for path, query in cases:
            where = f"/{path}?{query}"
            try:
                open_page(page, url, path, query)
            except AssertionError as exc:  # the page never showed its title: count it, go on
                counts["browser_not_loaded"] += 1
                failures.append(f"browser: page did not load ({str(exc).splitlines()[0]}): {where}")
                continue
            live = page.evaluate("(sel) => document.querySelectorAll(sel).length"
                                 " + (window.__pwned !== undefined ? 1 : 0)", LIVE_SELECTOR)
            if live:
                counts["live_markup"] += 1
                failures.append(f"browser: {live} live elements: {where}")
            if page.get_by_test_id("stException").count():
                counts["exceptions"] += 1
                failures.append(f"browser: exception: {where}")
            counts["browser_checked"] += 1
        counts["outside_requests"] += len(outside)
        failures.extend(f"outside request {u}" for u in outside[:5])
        browser.close()


def run(cases_n: int, browser_every: int, concurrency: int, seed: int,
        browser_only: bool = False) -> tuple[dict, list[str]]:
    rng = random.Random(seed)
    cases = [generate(rng) for _ in range(cases_n)]
    counts = dict(ws_checked=0, browser_checked=0, browser_not_loaded=0, exceptions=0, live_markup=0,
                  disconnects=0, outside_requests=0)
    failures: list[str] = []
    server = Server()
    try:
        if not browser_only:
            asyncio.run(check_ws(server.url, cases, concurrency, counts, failures))
        if browser_every:
            check_browser(server.url, cases[::browser_every], counts, failures)
        if server.proc.poll() is not None:
            failures.append("server exited")
    finally:
        server.stop()
    return counts, failures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--browser-every", type=int, default=33, help="0: no browser")
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--browser-only", action="store_true",
                        help="only the Chromium sample of the same generated links")
    args = parser.parse_args()
    t0 = time.monotonic()
    counts, failures = run(args.cases, args.browser_every, args.concurrency, args.seed, args.browser_only)
    print(f"{args.cases:,} generated links (seed {args.seed}) in {time.monotonic() - t0:.0f} s")
    print()
    print("| Measure | Count |")
    print("|---|---:|")
    for k, v in counts.items():
        print(f"| {k.replace('_', ' ')} | {v:,} |")
    for f in failures[:20]:
        print(f"- {f}")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
