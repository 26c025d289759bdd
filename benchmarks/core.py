"""The benchmark harness: timing a sim call, and timing a page's rerun through AppTest."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class SimCase:
    name: str  # e.g. "cost.decode_step_cost, defaults"
    fn: Callable[[], Any]  # the call to time, arguments bound
    target_ms: float


@dataclass(frozen=True)
class PageCase:
    name: str  # e.g. "00 Two phases: batch slider"
    page: str  # script path, e.g. "app_pages/two_phases.py"
    # (widget kind, key, values): each rerun sets the next value in turn (e.g. a slider swept)
    changes: Sequence[tuple[str, str, Sequence[Any]]]
    target_ms: float = 50.0
    params: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Result:
    name: str
    median_ms: float
    p95_ms: float
    target_ms: float
    runs: int

    @property
    def ok(self) -> bool:
        return self.median_ms <= self.target_ms


def _summary(name: str, samples_s: list[float], target_ms: float) -> Result:
    ms = sorted(s * 1e3 for s in samples_s)
    p95 = ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))]
    return Result(name, statistics.median(ms), p95, target_ms, len(ms))


def time_sim(case: SimCase, min_runs: int = 20, budget_s: float = 1.0) -> Result:
    case.fn()  # warm up
    samples: list[float] = []
    start = time.perf_counter()
    while len(samples) < min_runs or (time.perf_counter() - start < budget_s and len(samples) < 500):
        t0 = time.perf_counter()
        case.fn()
        samples.append(time.perf_counter() - t0)
    return _summary(case.name, samples, case.target_ms)


def _clear_caches() -> None:
    """Every cache a new setup misses: the pages' own (``ui.sim_cache``; Streamlit's clear does not
    reach them), the measured rows' predictions and the cost model's per-setup tables."""
    import sim.cost
    import sim.models
    import sim.truth
    import ui.measured
    import ui.sim_cache

    ui.sim_cache.clear_all()
    for module in (ui.measured, sim.cost, sim.models, sim.truth):
        for value in list(vars(module).values()):
            if callable(getattr(value, "cache_clear", None)):
                value.cache_clear()


def time_page(case: PageCase, reruns: int = 30, cold: bool = False) -> Result:
    """Median and p95 of a page's rerun after a widget change (AppTest, server side).

    The changes cycle through a few values, so pages that cache their runs mostly hit the cache after
    the first cycle (a reader flipping back and forth). ``cold`` clears Streamlit's caches before
    every rerun: the cost of a setting no reader has asked for yet.
    """
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    for key, value in case.params.items():
        at.query_params[key] = value
    at.run()
    at.switch_page(case.page)
    for key, value in case.params.items():  # the page's own run reads its widgets' values too
        at.query_params[key] = value
    at.run()
    samples: list[float] = []
    steps = [(kind, key, v) for kind, key, values in case.changes for v in values]
    for i in range(reruns + 2):
        kind, key, value = steps[i % len(steps)]
        getattr(at, kind)(key=key).set_value(value)
        if cold:
            _clear_caches()
            st.cache_data.clear()
            st.cache_resource.clear()
        t0 = time.perf_counter()
        at.run()
        elapsed = time.perf_counter() - t0
        if at.exception:
            raise RuntimeError(f"{case.name}: exception on rerun: {at.exception[0].value}")
        if i >= 2:  # the first reruns warm caches and imports
            samples.append(elapsed)
    return _summary(case.name, samples, case.target_ms)
