"""Shared test configuration: hypothesis profiles and AppTest helpers."""

from __future__ import annotations

import functools
import hashlib
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from streamlit import config
from streamlit.components.v2 import manifest_scanner
from streamlit.runtime.scriptrunner.script_cache import ScriptCache
from streamlit.testing.v1 import AppTest
from streamlit.util import calc_hash

import ui.layout
import ui.theme
import ui.workers
from ui.layout import _DRAWN_PAGE_KEY as DRAWN_PAGE_KEY
from ui.nav import ALL_PAGES, HOME

ui.theme.VALIDATE_FIGURES = True  # every figure a page builds under test is validated by plotly
# No pause after a page's main chart (ui.layout.send_what_is_drawn): AppTest has no browser to draw
# it first, and the pause would add ~40 ms to every page run of the suite. The browser tests' servers
# run as readers' do, with it.
ui.layout.SEND_FIRST_S = 0.0
# In-process pages (AppTest) run their simulations in the calling thread: a worker process for each
# pytest worker would only add its start-up. tests/test_workers.py runs them in workers; the browser
# tests' servers run as a reader's does, with the default pool (ui.workers).
ui.workers.FORCE_WORKERS = 0

ROOT = Path(__file__).resolve().parent.parent

# Each new AppTest's first run scans every installed distribution for Streamlit v2 component
# manifests (Streamlit 1.67, ``BidiComponentManager.discover_and_register_components``): 0.2 s here,
# about a quarter of a page test's time. The installed packages do not change during a test run, so
# one scan per process is the same answer (the app has no v2 components; the scan finds none). A real
# server scans once, at start-up.
manifest_scanner.scan_component_manifests = functools.cache(manifest_scanner.scan_component_manifests)

# Each AppTest run also starts a new ScriptCache, so app.py and the page's script are read, parsed for
# Streamlit's "magic" and compiled again on every run (3-7 % of the page tests' time). One compiled
# copy a file per process, keyed on its absolute path, a hash of its bytes (reading is cheap; compiling
# is what costs) and the magic setting, so a file a test writes or rewrites is compiled afresh.
_BYTECODE: dict = {}
_compile_script = ScriptCache.get_bytecode


def _shared_bytecode(self, script_path: str):
    path = os.path.abspath(script_path)
    with open(path, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    key = (path, digest, config.get_option("runner.magicEnabled"))
    if key not in _BYTECODE:
        _BYTECODE[key] = _compile_script(self, script_path)
    return _BYTECODE[key]


ScriptCache.get_bytecode = _shared_bytecode

# CI: derandomised so a red run is reproducible; locally: random, to keep finding new cases.
settings.register_profile("ci", derandomize=True, deadline=None, max_examples=60,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", deadline=None, max_examples=60,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("ci" if os.environ.get("CI") else "dev")


# --- the browser lanes ------------------------------------------------------------------------------
# Tests that drive Chromium (everything under tests/browser, and the hostile-links sample) are
# CPU-hungry: one takes ~1.5 of the CI machine's 2 cores (renderer, its GPU process, the server),
# and two at once each ran 2-4 times slower than alone, so two pytest-xdist workers sharing them out
# gained almost nothing over one. With ``--browser-lane`` (scripts/test.sh) most of them run one after
# another in one worker from the start, while the other worker takes the other files and then the
# last few browser files (BROWSER_LATE), so neither worker waits idle at the end.
BROWSER_LANE = ("tests/browser/", "tests/test_hostile_inputs_sample.py")
BROWSER_LATE = tuple(f"tests/browser/test_{name}_browser.py" for name in ("two_phases", "watch", "yours"))


def browser_lane(nodeid: str) -> str | None:
    """Which lane a test is in: "early", "late", or None (not a browser-lane test)."""
    if nodeid.startswith(BROWSER_LATE):
        return "late"
    return "early" if nodeid.startswith(BROWSER_LANE) else None


def pytest_addoption(parser):
    parser.addoption("--browser-lane", action="store_true",
                     help="with -n 2 --dist loadfile: the Chromium tests one after another in one worker "
                          "from the start, the other files and then a few browser files in the other "
                          "(tests/conftest.py)")


def pytest_collection_modifyitems(config, items):
    """With --browser-lane: the early lane first, then the other files, then the late lane (a stable
    sort: the order within each is kept)."""
    if config.getoption("browser_lane"):
        items.sort(key=lambda item: {"early": 0, None: 1, "late": 2}[browser_lane(item.nodeid)])


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist's: unknown under -p no:xdist
def pytest_xdist_make_scheduler(config, log):
    if not config.getoption("browser_lane") or config.getoption("dist") != "loadfile":
        return None  # the lanes are a variant of --dist loadfile; other modes stay as xdist has them
    from xdist.scheduler import LoadFileScheduling

    class BrowserLane(LoadFileScheduling):
        """pytest-xdist's per-file scheduling, with each lane's browser tests as one work unit. Units go
        out in collection order (not largest first), so the early lane is the first handed out and the
        late lane the last."""

        def __init__(self, config, log=None):
            super().__init__(config, log)
            config.option.loadscopereorder = False

        def _split_scope(self, nodeid: str) -> str:
            lane = browser_lane(nodeid)
            return f"browser-{lane}" if lane else super()._split_scope(nodeid)

    return BrowserLane(config, log)


#: Per page, the URL parameters that open every section it sends only on demand
#: (``ui.layout.lazy_section``): tests that cover a page's every widget and chart add these.
ALL_SECTIONS: dict[str, dict[str, str]] = {
    "app_pages/load.py": {"load_show_curves": "true", "load_show_prefix": "true", "load_show_split": "true"},
}


def open_app(page: str | None = None, params: dict[str, str | list[str]] | None = None) -> AppTest:
    """Run the app from its entrypoint with URL query parameters ``params``, on ``page`` (a script
    path such as ``app_pages/two_phases.py``; None: the landing page), as a browser opening that link
    does: one run, on that page. Raises if the page is not registered.

    Before its first run AppTest names a page by its file name, which does not match a page that
    ``st.navigation`` registers under its own url_path, so ``switch_page`` would land on the default
    page. The run is pointed at the page's script hash instead (Streamlit's ``calc_hash`` of the
    url_path, as ``st.Page`` computes it); that saved a run of the landing page per test (0.25 s).
    """
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    for key, value in (params or {}).items():
        at.query_params[key] = value
    if page is not None:
        section = next((s for s in ALL_PAGES if s.path == page), None)
        if section is None:
            raise ValueError(f"{page!r} is not a registered page")
        if section is not HOME:
            at._page_hash = calc_hash(section.url_path)  # AppTest 1.67's field for the page to run
    at.run()
    if page is not None and section is not HOME and DRAWN_PAGE_KEY in at.session_state:
        drawn = at.session_state[DRAWN_PAGE_KEY]
        assert drawn == section.url_path, f"open_app({page!r}) ran {drawn!r}, not {section.url_path!r}"
    return at


def metric(at: AppTest, label: str) -> str:
    """The displayed value of the metric with this label."""
    for m in at.metric:
        if m.label == label:
            return m.value
    raise KeyError(f"no metric {label!r}; have {[m.label for m in at.metric]}")


def number(text: str) -> float:
    """Parse a displayed metric value such as '6.32 ms', '1,234 tok/s', '0.26%' into a float
    in the unit shown (ms stays ms)."""
    head = text.replace(",", "").split()[0].rstrip("%x×")
    return float(head)


def ms(text: str) -> float:
    """A displayed duration ('948 µs', '6.32 ms', '1.2 s') in milliseconds."""
    value, unit = text.replace(",", "").split()[:2]
    return float(value) * {"µs": 1e-3, "ms": 1.0, "s": 1e3, "min": 6e4, "h": 3.6e6}[unit]


def open_data(at: AppTest, key: str) -> AppTest:
    """Open a page's "Data" expander (``ui.layout.data_expander``; its tables are built only while
    it is open, as a reader opening it reruns the page) and rerun."""
    from ui.layout import data_key

    at.session_state[data_key(key)] = True
    return at.run()


def open_how(at: AppTest) -> AppTest:
    """Open the page's "How this is computed" expander (sent only while open) and rerun."""
    from ui.layout import HOW_KEY

    at.session_state[HOW_KEY] = True
    return at.run()
