"""Hardening for a public deployment, checked against a real server with the repo's config.

- An exception shows readers a generic notice, never its message, type or traceback; the server log
  has the traceback (client.showErrorDetails = "none").
- The websocket refuses a Host header outside server.allowedHosts (DNS rebinding).
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import tempfile
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import pytest
import websockets
from playwright.sync_api import Page, expect

from tests.browser.conftest import ROOT, _free_port
from tests.browser.helpers import TIMEOUT_MS


@pytest.fixture
def raising_server():
    port = _free_port()
    log = tempfile.TemporaryFile()  # noqa: SIM115 (closed after the test)
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "tests/apps/raises_app.py", "--server.headless", "true",
         "--server.address", "127.0.0.1", "--server.port", str(port), "--server.fileWatcherType", "none"],
        cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,  # cwd: the repo's .streamlit/config.toml
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2):
                break
        except OSError:
            time.sleep(0.2)

    def output() -> str:
        log.seek(0)
        return log.read().decode(errors="replace")

    yield url, output
    proc.terminate()
    proc.wait(timeout=10)
    log.close()


def test_readers_see_no_error_details_and_the_server_logs_them(page: Page, raising_server):
    url, output = raising_server
    page.goto(url)
    expect(page.get_by_test_id("stException")).to_have_count(1, timeout=TIMEOUT_MS)
    body = page.locator("body")
    expect(body).not_to_contain_text("secret-detail-1234")
    expect(body).not_to_contain_text("RuntimeError")
    expect(body).not_to_contain_text("internal.py")
    expect(page.get_by_role("link", name="Ask Google")).to_have_count(0)
    deadline = time.monotonic() + 10
    while "secret-detail-1234" not in output() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert "secret-detail-1234" in output() and "Traceback" in output()


def _websocket_accepted(url: str, host: str) -> bool:
    async def attempt() -> bool:
        port = int(url.rsplit(":", 1)[1])
        try:  # the socket goes to 127.0.0.1; the Host header names ``host``
            async with websockets.connect(f"ws://{host}:{port}/_stcore/stream", host="127.0.0.1",
                                          port=port, subprotocols=["streamlit"], open_timeout=10):
                return True
        except (websockets.InvalidStatus, websockets.InvalidHandshake):
            return False
    with ThreadPoolExecutor(1) as pool:  # Playwright's sync API holds this thread's event loop
        return pool.submit(asyncio.run, attempt()).result()


def test_websocket_only_for_allowed_hosts(raising_server):
    url, _ = raising_server
    assert _websocket_accepted(url, "127.0.0.1") and _websocket_accepted(url, "localhost")
    assert not _websocket_accepted(url, "rebind.example.invalid")
