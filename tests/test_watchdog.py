"""The watchdog's test-only speed-up (GPU_LIES_WATCHDOG_SCALE): a number scales its two waits, clamped
to [0.1, 1] (never longer than the defaults, never under a tenth of them); what is not a number, or
no variable, leaves them as they are."""

from __future__ import annotations

import pytest

from ui import watchdog


@pytest.mark.parametrize(("value", "scale"), [
    (None, 1.0), ("0.2", 0.2), ("1", 1.0), ("5", 1.0), ("0", 0.1), ("-3", 0.1), ("nan", 1.0),
    ("inf", 1.0), ("x", 1.0), ("", 1.0), ("٣", 1.0),
])
def test_the_scale_is_clamped_and_bad_values_mean_one(monkeypatch, value, scale):
    if value is None:
        monkeypatch.delenv("GPU_LIES_WATCHDOG_SCALE", raising=False)
    else:
        monkeypatch.setenv("GPU_LIES_WATCHDOG_SCALE", value)
    assert watchdog._test_scale() == scale


def test_the_defaults_without_the_variable():
    assert (watchdog.GRACE_MS, watchdog.STUCK_MS) == (10_000, 12_000)
    assert "10000" in watchdog._SCRIPT and "12000" in watchdog._SCRIPT
