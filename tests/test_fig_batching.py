"""Section 01's slot timeline is drawn as one raster (``ui.fig_batching.timeline_raster``): each cell
must show what holds its slot at the cell's middle, no request may vanish, and the figure must keep a
hover point for every request it draws."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ui.theme
from sim.batching import compare
from sim.hardware import GPUS
from sim.models import MODELS
from ui.fig_batching import (
    _PADDING_CODE,
    _REQUEST_COLORS,
    TIMELINE_MAX_SLOTS,
    timeline_figure,
    timeline_raster,
)


def _run(slots: int, n: int, load: str, policy: str, seed: int):
    c = compare(GPUS["H100 SXM"], MODELS["Llama-3.1-8B"], slots=slots, n_requests=n, load=load,
                rate_per_s=4.0, seed=seed)
    return c.run(policy), max(c.static.wall_s, c.continuous.wall_s)


def _oracle(run, shown: int, x_end_s: float, columns: int) -> np.ndarray:
    """The raster cell by cell: what holds the slot at the middle of each column; a request that
    covers no column's middle gets the column it starts in."""
    width = x_end_s / columns
    mids = (np.arange(columns) + 0.5) * width
    z = np.zeros((shown, columns), np.uint8)
    start = run.step_start_s[run.start_step]
    for i in np.flatnonzero(run.slot < shown):
        s = run.slot[i]
        pad = (mids >= run.finish_s[i]) & (mids < run.release_s[i])
        z[s, pad] = _PADDING_CODE
    for i in np.flatnonzero(run.slot < shown):
        s = run.slot[i]
        held = (mids >= start[i]) & (mids < run.finish_s[i])
        if not held.any():
            first = int(np.clip(np.ceil(start[i] / width - 0.5), 0, columns - 1))
            held[first] = True
        z[s, held] = 1 + i % len(_REQUEST_COLORS)
    return z


@settings(max_examples=25)
@given(slots=st.sampled_from([1, 4, 16, 64, 128]), n=st.integers(20, 120),
       load=st.sampled_from(["burst", "poisson"]), policy=st.sampled_from(["static", "continuous"]),
       seed=st.integers(0, 3), columns=st.sampled_from([64, 256, 1024]))
def test_raster_cells_show_what_holds_the_slot(slots, n, load, policy, seed, columns):
    run, x_max = _run(slots, n, load, policy, seed)
    shown = min(slots, TIMELINE_MAX_SLOTS)
    z = timeline_raster(run, shown, x_max * 1.01, columns)
    assert z.shape == (shown, columns) and z.dtype == np.uint8
    np.testing.assert_array_equal(z, _oracle(run, shown, x_max * 1.01, columns))


@pytest.mark.parametrize("policy", ["static", "continuous"])
def test_every_drawn_request_is_in_the_raster_and_has_a_hover_point(policy):
    run, x_max = _run(64, 1000, "burst", policy, 0)
    z = timeline_raster(run, 64, x_max * 1.01)
    for i in np.flatnonzero(run.slot < 64)[::7]:
        assert (z[run.slot[i]] == 1 + i % len(_REQUEST_COLORS)).any(), i
    if policy == "static":
        assert (z == _PADDING_CODE).any()  # static batching pads
    ui.theme.VALIDATE_FIGURES = True
    fig = timeline_figure(run, x_max)
    heat = [t for t in fig.data if t.type == "heatmap"]
    assert len(heat) == 1 and heat[0].z.shape == (64, z.shape[1])
    (requests,) = [t for t in fig.data if t.hovertemplate and "Request #" in t.hovertemplate]
    assert requests.mode == "none"  # hover without drawing a marker per request
    np.testing.assert_array_equal(np.sort(requests.customdata[:, 0]),
                                  np.flatnonzero(run.slot < 64).astype(np.float32))
