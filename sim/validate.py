"""Argument checks shared by every sim entry point: a bad value raises ``ValueError`` naming the
argument and the allowed range, so a page (or a caller) can say exactly what was wrong."""

from __future__ import annotations

import math

import numpy as np


def check_int(name: str, value, lo: int, hi: int) -> int:
    """``value`` as an int, if it is an integer (not a bool) in [lo, hi]."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not lo <= value <= hi:
        raise ValueError(f"{name} must be an integer in [{lo}, {hi}], got {value!r}")
    return int(value)


def check_float(name: str, value, lo: float, hi: float) -> float:
    """``value`` as a float, if it is a finite real number (not a bool) in [lo, hi]."""
    if (isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating))
            or not math.isfinite(value) or not lo <= value <= hi):
        raise ValueError(f"{name} must be a number in [{lo:g}, {hi:g}], got {value!r}")
    return float(value)


def check_choice(name: str, value, choices) -> str:
    """``value``, if it is one of ``choices``."""
    if value not in choices:
        raise ValueError(f"{name} must be one of {list(choices)}, got {value!r}")
    return value
