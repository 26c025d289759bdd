"""Hostile links and pastes at scale through a real server (and a real browser for a sample of them).

Usage:
    python scripts/hostile_inputs.py              # 10,000 links and 2,000 pastes, every 33rd in Chromium
    python scripts/hostile_inputs.py --cases 300 --pastes 120 --browser-every 60 --paste-browser-every 30
                                                  # what CI runs

Generates ``--cases`` links (seeded, so a run is reproducible): a page of the app, and a query
string of real setting keys (the page's and the global ones) and unknown keys, with values drawn
from valid values, malformed numbers, numbers in other scripts' digits, huge and empty strings,
control characters, and injection strings (backticks, markdown links and images, HTML, javascript:
links, Streamlit's own markdown directives), each carrying a marker host.

And ``--pastes`` pasted inputs, half of each kind: a benchmark's output on Your numbers (a fixture of
every format the page reads, tests/fixtures/bench, with words or JSON fields replaced by injection
strings and odd numbers, blocks repeated past the record cap, or no benchmark at all), and a
config.json in the sidebar's custom model on any page (a real config from sim/configs with fields
replaced by injection strings, wrong types, NaN, huge numbers; or not JSON, cut short, nested
thousands deep, larger than the text area takes).

Every link is opened on a server this script starts, by a headless websocket reader
(scripts/st_client.py; ``--concurrency`` at a time), and each paste typed into its text area there.
Counted: exceptions (an exception element or a compile error), disconnects (the socket closed or a
run never finished), and live markup: the marker inside any element that is not text shown as text
(a code block, the text area itself, a data frame), or, in a chart, inside a tag Plotly would draw.
Every ``--browser-every``-th link and paste is also opened in headless Chromium (the pastes there
alternately pasted and uploaded as a file, and the page must show that it read them), where no link,
image or element from the input may exist and no request may leave the server. Exits 1 on any
failure.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import json
import os
import random
import re
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlencode, urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from streamlit.proto.PlotlyChart_pb2 import PlotlyChart
from streamlit.proto.TextArea_pb2 import TextArea
from websockets.exceptions import ConnectionClosed

from scripts.load_test import CHANGES, SIDEBAR_CHANGES
from scripts.st_client import ProtocolError, Reader
from sim.configs import MAX_CONFIG_BYTES
from tests.browser.conftest import CHROMIUM_ARGS, ROOT, Server, chromium_path
from ui.custom_model import CUSTOM_MODEL, TEXT_KEY
from ui.nav import HOME, SECTIONS, SOURCES, YOURS
from ui.yours import MAX_PASTE_CHARS

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


#: Where a pasted benchmark and a pasted config.json go: (page url path, link, text area's key).
YOURS_PASTE = (YOURS.url_path, "", "yours_text")
CONFIG_LINK = urlencode([("model", CUSTOM_MODEL)])  # the sidebar's model selector, bound to the link
CONFIG_FILES = sorted((ROOT / "sim" / "configs").glob("*.json"))
BENCH_FILES = sorted(f for f in (ROOT / "tests" / "fixtures" / "bench").iterdir()
                     if f.suffix in (".txt", ".json", ".jsonl", ".csv"))
ODD_VALUES = [*INJECTIONS, "", "NaN", float("nan"), -1, 0, 1e308, 10**30, 2**63, 0.5, None, [], {}, True,
              "٣", "１２８", [[[[[[[[1]]]]]]]], "x" * 5000]
#: Elements that show text as text (never markdown or HTML): the input may appear in them.
PLAIN_KINDS = frozenset({"code", "dataframe"})
#: Markup from an injection string that Plotly would draw (its labels take a subset of HTML).
LIVE_IN_CHART = re.compile(r"<\s*(a|img|iframe|script|b)\b[^>]*(hostile\.invalid|pwned)", re.I)


def _with_marker(rng: random.Random, text: str) -> str:
    return text if MARK in text else text + "\n" + rng.choice(INJECTIONS)


def _not_the_format(rng: random.Random, p_alone: float, p_nested: float, opener: str, closer: str,
                    min_depth: int) -> str | None:
    """Instead of the expected text: an injection string alone (chance ``p_alone``), or one nested
    ``min_depth`` to 5,000 levels deep (up to ``p_nested``); else None."""
    roll = rng.random()
    if roll < p_alone:
        return rng.choice(INJECTIONS)
    if roll < p_nested:
        depth = rng.randint(min_depth, 5000)
        return opener * depth + json.dumps(rng.choice(INJECTIONS)) + closer * depth
    return None


def hostile_config(rng: random.Random) -> str:
    """A config.json as a reader might paste it: a real one (sim/configs) with fields replaced by
    injection strings, wrong types, NaN, huge numbers and deep nesting; or not JSON at all, cut short,
    nested thousands deep, or larger than the text area takes."""
    junk = _not_the_format(rng, 0.06, 0.10, "[", "]", 7)
    if junk is not None:
        return junk
    config = json.loads(rng.choice(CONFIG_FILES).read_text())
    keys = [*config, "model_type", "architectures", "_name_or_path", "torch_dtype", "quantization_config"]
    for _ in range(rng.randint(1, 5)):
        key = rng.choice(keys) if rng.random() < 0.85 else rng.choice(INJECTIONS)
        config[key] = copy.deepcopy(rng.choice(ODD_VALUES))
    if MARK not in json.dumps(config):
        config["_name_or_path"] = rng.choice(INJECTIONS)
    text = json.dumps(config, indent=rng.choice([None, 2]))
    if rng.random() < 0.08:
        text = text[:rng.randint(1, len(text))]
    if rng.random() < 0.04:
        text += " " * 70_000  # past MAX_CONFIG_BYTES: the loader must say so
    return text


def _mutate_json(rng: random.Random, value):
    """A parsed benchmark record with string fields set to injection strings and numbers made odd."""
    if isinstance(value, dict):
        return {k: _mutate_json(rng, v) for k, v in value.items()}
    if isinstance(value, list):
        return [_mutate_json(rng, v) for v in value[:50]]
    if rng.random() < 0.15:
        return copy.deepcopy(rng.choice(ODD_VALUES))
    return value


def hostile_benchmark(rng: random.Random) -> str:
    """A benchmark's output as a reader might paste it (or upload it): one of the fixtures of every
    format the page reads, with words or JSON fields replaced by injection strings and odd numbers,
    blocks repeated past the page's record cap, or something else entirely."""
    junk = _not_the_format(rng, 0.05, 0.08, '{"a":', "}", 33)
    if junk is not None:
        return junk
    path = rng.choice(BENCH_FILES)
    text = path.read_text()
    if path.suffix in (".json", ".jsonl") and rng.random() < 0.6:
        records = [json.loads(line) for line in text.splitlines() if line.strip()] \
            if path.suffix == ".jsonl" else [json.loads(text)]
        text = "\n".join(json.dumps(_mutate_json(rng, record)) for record in records)
    else:  # words of the text replaced: labels, numbers, names, CSV cells
        parts = re.split(r"(\s+|[,:=\"{}\[\]])", text)
        words = [i for i, t in enumerate(parts) if t and not re.fullmatch(r"\s+|[,:=\"{}\[\]]", t)]
        for i in rng.sample(words, min(len(words), rng.randint(1, 6))):
            parts[i] = rng.choice([*INJECTIONS, *MALFORMED, json.dumps(rng.choice(INJECTIONS))[1:-1]])
        text = "".join(parts)
    text = _with_marker(rng, text)
    roll = rng.random()
    if roll < 0.04:  # a sweep past the record cap, within the paste cap
        text = "\n".join([text] * rng.randint(2, 600))[:MAX_PASTE_CHARS]
    elif roll < 0.06:  # past the paste cap: the page must say so, not drop it silently
        text = "\n".join([text] * (MAX_PASTE_CHARS // len(text) + 2))
    return text


def generate_paste(rng: random.Random) -> tuple[str, str, str, str]:
    """(page, link, text area's key, text): a pasted benchmark on Your numbers, or a pasted config.json
    in the sidebar (the custom model selected through the link) on any page."""
    if rng.random() < 0.5:
        return (*YOURS_PASTE, hostile_benchmark(rng))
    return rng.choice(PAGES), CONFIG_LINK, TEXT_KEY, hostile_config(rng)


def live_markup(kind: str, proto: bytes) -> bool:
    """Whether an element shows the input (its marker host, or an injected element's id) as markup:
    anywhere but in an element that shows text as text (a code block, a data frame, a text area's own
    value: its label and help are markdown and still count), or, in a chart, inside a tag Plotly
    would draw."""
    if kind in PLAIN_KINDS:
        return False
    if kind == "text_area":
        box = TextArea.FromString(proto)
        box.ClearField("value")
        box.ClearField("default")
        proto = box.SerializeToString()
    if MARK.encode() not in proto and b"pwned" not in proto:
        return False
    if kind == "plotly_chart":
        spec = json.dumps(json.loads(PlotlyChart.FromString(proto).spec), ensure_ascii=False)
        return bool(LIVE_IN_CHART.search(spec))
    return True


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
            path, query, *paste = queue.get_nowait()  # a link, or (link, text area's key, text)
            where = f"/{path}?{query}" + (f" + {paste[0]} = {paste[1][:80]!r}" if paste else "")
            reader = None
            try:
                reader = await Reader.open(url, path, query, timeout_s=60, keep_elements=True)
                if paste:
                    await reader.set(*paste)
            except (ConnectionClosed, ProtocolError, OSError, TimeoutError) as e:
                counts["disconnects"] += 1
                failures.append(f"disconnect {type(e).__name__}: {where}")
                if reader is not None:
                    await reader.close()
                continue
            except ValueError as e:  # the text area was not there to paste into
                counts["not_pasted"] += 1
                failures.append(f"not pasted ({e}): {where}")
                await reader.close()
                continue
            result = reader.last
            if result.errors:
                counts["exceptions"] += 1
                failures.append(f"exception {result.errors[:1]}: {where}")
            for kind, proto in result.elements_seen:
                if live_markup(kind, proto):
                    counts["live_markup"] += 1
                    failures.append(f"marker in a {kind} element: {where}")
                    break
            counts["ws_checked"] += 1
            counts["pastes_checked"] += bool(paste)
            if counts["ws_checked"] % 500 == 0:
                print(f"{counts['ws_checked']:,} inputs checked, {len(failures)} failures", flush=True)
            await reader.close()

    await asyncio.gather(*(worker() for _ in range(concurrency)))


def check_browser(url: str, cases: list[tuple[str, str]], counts: dict, failures: list[str]) -> None:
    from playwright.sync_api import sync_playwright

    from tests.browser.helpers import open_page

    own = urlsplit(url).netloc
    with tempfile.TemporaryDirectory() as config_home, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS,
                                    env={**os.environ, "XDG_CONFIG_HOME": config_home})
        context = browser.new_context(viewport={"width": 1280, "height": 900},
                                      permissions=["clipboard-read", "clipboard-write"])  # pastes
        page = context.new_page()
        outside: list[str] = []
        page.on("request", lambda r: outside.append(r.url)
                if urlsplit(r.url).netloc not in ("", own) and not r.url.startswith(("data:", "blob:"))
                else None)
        for path, query, *paste in cases:  # a link, or (link, text area's key, text, upload?)
            where = f"/{path}?{query}" + (f" + {paste[0]} = {paste[1][:80]!r}" if paste else "")
            try:
                open_page(page, url, path, query)
                if paste:
                    key, text, upload = paste
                    _paste_or_upload(page, key, text, upload)
                    mode = "uploads" if upload else "pastes"
                    counts[f"browser_{mode}"] += 1
                    counts[f"browser_{mode}_{key}"] = counts.get(f"browser_{mode}_{key}", 0) + 1
            except AssertionError as exc:  # the page never showed its title, or the input: count it, go on
                counts["browser_not_loaded"] += 1
                failures.append(f"browser: page or input did not load ({str(exc).splitlines()[0]}): {where}")
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


#: The text area's label, and the file its uploader takes, for each paste's key.
_UPLOADS = {TEXT_KEY: ("config.json", "config.json", "application/json"),
            "yours_text": ("Benchmark output or rows", "benchmark.txt", "text/plain")}
#: What the page shows once it has read the input, whatever it made of it (a paste the page never
#: received would show none of these).
READ = {TEXT_KEY: ("Read as", "cannot be used", "too large to be a config.json"),
        "yours_text": ("Could not read", "Rows read", "are read.")}


def _over_cap(key: str, text: str) -> bool:
    """Whether a paste of ``text`` is over the text area's cap (which the page then empties)."""
    if key == TEXT_KEY:
        return len(text.encode("utf-8", "replace")) > MAX_CONFIG_BYTES
    return len(text) > MAX_PASTE_CHARS


def _paste_or_upload(page, key: str, text: str, upload: bool) -> None:
    """As a reader would: paste ``text`` into the text area keyed ``key`` (through the clipboard,
    Ctrl+V, then Ctrl+Enter to apply it), or upload it as a file through the uploader beside it; then
    wait for the page to settle and check that it read the input. (Playwright's ``fill`` types the
    text as one insertion that took it 12 s for 100,000 characters and over 30 s for 200,000, where a
    paste of 199,000 takes the page 0.2 s.)"""
    from scripts.visual_sweep import settle

    label, name, mime = _UPLOADS[key]
    if upload:
        if key == "yours_text":  # its uploader is in a popover
            page.get_by_role("button", name="Upload a file").click()
        scope = page.get_by_test_id("stSidebar") if key == TEXT_KEY else page.get_by_test_id("stPopoverBody")
        scope.locator("input[type=file]").set_input_files(
            {"name": name, "mimeType": mime, "buffer": text.encode("utf-8", "surrogatepass")})
    else:
        box = page.get_by_label(label, exact=True)
        page.evaluate("(text) => navigator.clipboard.writeText(text)", text)
        box.focus()
        page.keyboard.press("Control+V")
        # The whole paste reached the box (a textarea keeps every line break as \n), or none of it
        # where it is over the cap.
        pasted = box.input_value()
        if pasted != text.replace("\r\n", "\n").replace("\r", "\n"):
            raise AssertionError(f"the paste reached the text box changed ({len(pasted):,} of "
                                 f"{len(text):,} characters)")
        box.press("Control+Enter")
    settle(page, quiet_ms=800)
    shown = page.locator("body").inner_text()
    if not any(said in shown for said in READ[key]):
        raise AssertionError(f"the {'upload' if upload else 'paste'} was not read: none of {READ[key]} shown")
    if not upload and _over_cap(key, text):
        if page.get_by_label(label, exact=True).input_value():
            raise AssertionError("a paste over the cap was kept in the text box")
        if "at most" not in shown:
            raise AssertionError("a paste over the cap was dropped without naming the cap")


def run(cases_n: int, browser_every: int, concurrency: int, seed: int,
        browser_only: bool = False, pastes_n: int = 0,
        paste_browser_every: int | None = None) -> tuple[dict, list[str]]:
    """``cases_n`` generated links and ``pastes_n`` pasted benchmarks and config.json files (half
    each). Every ``browser_every``-th link is also opened in Chromium, and of each kind of paste every
    ``paste_browser_every``-th (default: ``browser_every``), alternately pasted and uploaded."""
    rng = random.Random(seed)
    cases = [generate(rng) for _ in range(cases_n)]
    pastes = [generate_paste(rng) for _ in range(pastes_n)]
    counts = dict(ws_checked=0, pastes_checked=0, not_pasted=0, browser_checked=0, browser_pastes=0,
                  browser_uploads=0, browser_not_loaded=0, exceptions=0, live_markup=0, disconnects=0,
                  outside_requests=0)
    failures: list[str] = []
    server = Server()
    try:
        if not browser_only:
            asyncio.run(check_ws(server.url, cases + pastes, concurrency, counts, failures))
        if browser_every:
            step = paste_browser_every or browser_every
            in_browser = [(*paste, i % 2 == 1)  # (page, link, key, text, uploaded?)
                          for key in (YOURS_PASTE[2], TEXT_KEY)
                          for i, paste in enumerate([p for p in pastes if p[2] == key][::step])]
            check_browser(server.url, cases[::browser_every] + in_browser, counts, failures)
        if server.proc.poll() is not None:
            failures.append("server exited")
    finally:
        server.stop()
    return counts, failures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=10_000, help="generated links")
    parser.add_argument("--pastes", type=int, default=2_000,
                        help="generated pastes: half benchmark outputs (Your numbers), half config.json")
    parser.add_argument("--browser-every", type=int, default=33, help="0: no browser")
    parser.add_argument("--paste-browser-every", type=int, default=None,
                        help="of each kind of paste, every n-th in Chromium (default: --browser-every)")
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--browser-only", action="store_true",
                        help="only the Chromium sample of the same generated links")
    args = parser.parse_args()
    t0 = time.monotonic()
    counts, failures = run(args.cases, args.browser_every, args.concurrency, args.seed, args.browser_only,
                           args.pastes, args.paste_browser_every)
    print(f"{args.cases:,} generated links and {args.pastes:,} pastes (seed {args.seed}) in "
          f"{time.monotonic() - t0:.0f} s")
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
