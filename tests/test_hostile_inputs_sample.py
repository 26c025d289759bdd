"""CI's fixed sample of scripts/hostile_inputs.py: 300 generated hostile links through a real server
(websocket readers), 5 of them (every 60th) in Chromium too: 0 exceptions, 0 live markup, 0
disconnects, 0 outside requests. The long run (10,000 links) is the script's; its counts are in the README."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from scripts.hostile_inputs import run


@pytest.mark.browser
def test_300_hostile_links_fixed_sample():
    # In its own thread: pytest-playwright's sync API holds this thread's event loop.
    with ThreadPoolExecutor(1) as pool:
        counts, failures = pool.submit(run, 300, 60, 4, 0).result()
    assert counts["ws_checked"] == 300 and counts["browser_checked"] == 5
    assert not failures, failures[:10]
