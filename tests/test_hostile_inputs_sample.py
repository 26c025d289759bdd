"""CI's fixed sample of scripts/hostile_inputs.py: 300 generated hostile links and 120 generated pastes
(benchmark outputs on Your numbers and config.json files in the sidebar, about half each) through a
real server (websocket readers); every 60th link and every 30th paste of each kind in Chromium too,
each kind pasted and uploaded as a file. 0 exceptions, 0 live markup, 0 disconnects, 0
outside requests. The long run (10,000 links, 2,000 pastes) is the script's; its counts are in the
README."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from scripts.hostile_inputs import run


@pytest.mark.browser
def test_300_hostile_links_and_120_pastes_fixed_sample():
    # In its own thread: pytest-playwright's sync API holds this thread's event loop.
    with ThreadPoolExecutor(1) as pool:
        counts, failures = pool.submit(run, 300, 60, 4, 0, False, 120, 30).result()
    assert counts["ws_checked"] == 420 and counts["pastes_checked"] == 120
    assert counts["browser_checked"] == 10  # 5 links, 2 benchmarks and 3 configs (seed 0)
    for mode in ("pastes", "uploads"):  # each kind pasted and uploaded, in Chromium
        for key in ("yours_text", "custom_cfg_text"):
            assert counts.get(f"browser_{mode}_{key}", 0) >= 1, (mode, key, counts)
    assert not failures, failures[:10]
