"""End-to-end fixtures: a real ``streamlit run`` server and Debian's headless Chromium (Playwright).

Each test gets a new page (a new Streamlit session) in one browser context shared by the whole run,
so the frontend's scripts come from the browser's cache after the first test (a new context per test
fetched them every time: the home page loaded in 4.4 s in a new context, 1.8 s from the cache).
Tests that need their own cookies, cache or screen make their own contexts. Every request and
websocket any browser test's pages open must go to a loopback host (``helpers.watch_outside``): a
test that made one elsewhere fails.

``streamlit_server`` starts one server for the session; ``fresh_server`` starts a new one for tests
that must prove a URL restores a view on a server that has never seen it.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext

from tests.browser.helpers import watch_outside

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]



def pytest_collection_modifyitems(items):
    """Mark every test under tests/browser, so ``-m "not browser"`` skips them all."""
    here = Path(__file__).parent
    for item in items:
        if here in Path(item.fspath).parents:
            item.add_marker(pytest.mark.browser)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """A streamlit server on a free loopback port, stopped by its PID."""

    def __init__(self, extra_args: tuple[str, ...] = (), port: int | None = None,
                 script: str = "app.py", env: dict[str, str] | None = None,
                 cwd: Path | None = None) -> None:
        self.port = port or _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = tempfile.TemporaryFile()  # noqa: SIM115 (closed in stop())
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", script, "--server.headless", "true",
             "--server.address", "127.0.0.1", "--server.port", str(self.port),
             "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none", *extra_args],
            cwd=cwd or ROOT, stdout=self.log, stderr=subprocess.STDOUT, env={**os.environ, **(env or {})},
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"streamlit exited early:\n{self.output()}")
            try:
                with urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=2) as r:
                    if r.read().decode().strip() == "ok":
                        return
            except OSError:
                time.sleep(0.2)
        log = self.output()
        self.stop()
        raise RuntimeError(f"streamlit did not answer /_stcore/health in 60 s:\n{log}")

    def output(self) -> str:
        self.log.seek(0)
        return self.log.read().decode(errors="replace")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


@pytest.fixture(scope="session")
def streamlit_server() -> Iterator[Server]:
    server = Server()
    yield server
    server.stop()


@pytest.fixture
def fresh_server() -> Iterator[Server]:
    server = Server()
    yield server
    server.stop()


@pytest.fixture
def quick_grace_server() -> Iterator[Server]:
    """A server whose pages' watchdog calls a closed connection lost after 2 s, not 10
    (ui/watchdog.py), for the test that forces one; its stuck-page wait stays 12 s."""
    server = Server(env={"GPU_LIES_WATCHDOG_GRACE_SCALE": "0.2"})
    yield server
    server.stop()


@pytest.fixture
def quick_stuck_server() -> Iterator[Server]:
    """A server whose pages' watchdog reloads a page stuck on placeholders after 2.4 s, not 12, for
    the test that forces one; its lost-connection wait stays 10 s."""
    server = Server(env={"GPU_LIES_WATCHDOG_STUCK_SCALE": "0.2"})
    yield server
    server.stop()


@pytest.fixture(scope="session")
def shared_context(browser: Browser, browser_context_args) -> Iterator[BrowserContext]:
    ctx = browser.new_context(**browser_context_args)
    ctx._gpu_lies_outside = watch_outside(ctx)
    yield ctx
    ctx.close()


@pytest.fixture
def context(shared_context: BrowserContext) -> Iterator[BrowserContext]:
    """pytest-playwright's ``context`` (and so ``page``), shared: the test's pages are closed after it,
    cookies cleared, and the outside requests it made (none allowed) reported."""
    seen = len(shared_context._gpu_lies_outside)
    yield shared_context
    for p in list(shared_context.pages):
        p.close()
    shared_context.clear_cookies()
    outside = shared_context._gpu_lies_outside[seen:]
    assert not outside, f"requests to outside hosts: {outside[:5]}"


def chromium_path() -> str:
    path = os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(path).exists():
        pytest.fail("Chromium not found: install Debian's chromium (scripts/test.sh does).")
    return path


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args, tmp_path_factory):
    config_home = tmp_path_factory.mktemp("chromium-config")
    return {
        **browser_type_launch_args,
        "executable_path": chromium_path(),
        "args": CHROMIUM_ARGS,
        "env": {**os.environ, "XDG_CONFIG_HOME": str(config_home)},
    }


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args):
    return {**browser_context_args, "viewport": {"width": 1280, "height": 900}}
