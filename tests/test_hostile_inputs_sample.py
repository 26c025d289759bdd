"""CI's fixed sample of scripts/hostile_inputs.py: 300 generated hostile links through a real server
(websocket readers), 5 of them in Chromium too: 0 exceptions, 0 live markup, 0 disconnects, 0 outside
requests. The long run (10,000 links) is the script's; its counts are in the README."""

from __future__ import annotations

import pytest

from scripts.hostile_inputs import run


@pytest.mark.browser
def test_300_hostile_links_fixed_sample():
    counts, failures = run(cases_n=300, browser_every=60, concurrency=4, seed=0)
    assert counts["ws_checked"] == 300 and counts["browser_checked"] == 5
    assert not failures, failures[:10]
