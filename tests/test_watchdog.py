"""The watchdog's test-only speed-ups (GPU_LIES_WATCHDOG_GRACE_SCALE, GPU_LIES_WATCHDOG_STUCK_SCALE):
a number scales that wait, clamped to [0.1, 1] (never longer than the default, never under a tenth of
it); what is not a number, or no variable, leaves it as it is."""

from __future__ import annotations

import importlib

import pytest

from ui import watchdog


@pytest.mark.parametrize("wait", ["GRACE", "STUCK"])
@pytest.mark.parametrize(("value", "scale"), [
    (None, 1.0), ("0.2", 0.2), ("1", 1.0), ("5", 1.0), ("0", 0.1), ("-3", 0.1), ("nan", 1.0),
    ("inf", 1.0), ("x", 1.0), ("", 1.0),
])
def test_the_scale_is_clamped_and_bad_values_mean_one(monkeypatch, wait, value, scale):
    name = f"GPU_LIES_WATCHDOG_{wait}_SCALE"
    if value is None:
        monkeypatch.delenv(name, raising=False)
    else:
        monkeypatch.setenv(name, value)
    assert watchdog._test_scale(wait) == scale


def test_the_defaults_without_the_variables_and_each_scale_alone(monkeypatch):
    for wait in ("GRACE", "STUCK"):
        monkeypatch.delenv(f"GPU_LIES_WATCHDOG_{wait}_SCALE", raising=False)
    try:
        importlib.reload(watchdog)
        assert (watchdog.GRACE_MS, watchdog.STUCK_MS) == (10_000, 12_000)
        assert "10000" in watchdog._SCRIPT and "12000" in watchdog._SCRIPT
        monkeypatch.setenv("GPU_LIES_WATCHDOG_STUCK_SCALE", "0.2")
        importlib.reload(watchdog)
        assert (watchdog.GRACE_MS, watchdog.STUCK_MS) == (10_000, 2_400)
    finally:
        monkeypatch.undo()
        importlib.reload(watchdog)
