"""End-to-end fixtures: a real ``streamlit run`` server and Debian's headless Chromium (Playwright).

Each test module gets a page in a fresh browser context. ``streamlit_server`` starts one server for
the session; ``fresh_server`` starts a new one for tests that must prove a URL restores a view on a
server that has never seen it.
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
                 script: str = "app.py") -> None:
        self.port = port or _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = tempfile.TemporaryFile()  # noqa: SIM115 (closed in stop())
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", script, "--server.headless", "true",
             "--server.address", "127.0.0.1", "--server.port", str(self.port),
             "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none", *extra_args],
            cwd=ROOT, stdout=self.log, stderr=subprocess.STDOUT,
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
