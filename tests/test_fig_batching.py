"""Section 01's slot timeline is drawn as one raster (``ui.fig_batching.timeline_raster``): each cell
must show what holds its slot at the cell's middle, no request may vanish, and the figure must keep a
hover point for every request it draws."""

from __future__ import annotations

import base64
import io

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from sim.batching import compare
from sim.hardware import GPUS
from sim.models import MODELS
from ui.fig_batching import (
    _AFTER_CODE,
    _PADDING_CODE,
    _RASTER_COLORS,
    _REQUEST_COLORS,
    TIMELINE_HOVER_POINTS,
    TIMELINE_MAX_SLOTS,
    timeline_figure,
    timeline_raster,
)

#: Setups that fit their card, from a small dense model on an L4 to a mixture of experts on an H200:
#: each sets the run's time scale, and so how many requests are shorter than a column.
SETUPS = [("H100 SXM", "Llama-3.1-8B"), ("L4", "Llama-3.2-1B"), ("A100 80GB SXM", "Mistral-7B"),
          ("H200 SXM", "Qwen3-30B-A3B"), ("MI300X", "gpt-oss-20b")]


def _run(slots: int, n: int, load: str, policy: str, seed: int, setup=SETUPS[0]):
    gpu, model = setup
    c = compare(GPUS[gpu], MODELS[model], slots=slots, n_requests=n, load=load, rate_per_s=4.0, seed=seed)
    return c.run(policy), max(c.static.wall_s, c.continuous.wall_s)


def _oracle(run, shown: int, x_end_s: float, columns: int) -> np.ndarray:
    """The raster cell by cell: transparent from the run's end on, idle where nothing holds the
    slot, else padding or the request holding the slot at the column's middle; a request that
    covers no column's middle is drawn in the column where it starts, after everything else."""
    width = x_end_s / columns
    mids = (np.arange(columns) + 0.5) * width
    z = np.where(mids >= run.wall_s, _AFTER_CODE, 0).astype(np.uint8)[None, :].repeat(shown, 0)
    start = run.step_start_s[run.start_step]
    drawn = np.flatnonzero(run.slot < shown)
    for i in drawn:
        z[run.slot[i], (mids >= run.finish_s[i]) & (mids < run.release_s[i])] = _PADDING_CODE
    short = []
    for i in drawn:
        held = (mids >= start[i]) & (mids < run.finish_s[i])
        z[run.slot[i], held] = 1 + i % len(_REQUEST_COLORS)
        if not held.any():
            short.append(i)
    for i in short:
        z[run.slot[i], min(int(np.ceil(start[i] / width - 0.5)), columns - 1)] = 1 + i % len(_REQUEST_COLORS)
    return z


@settings(max_examples=25)
@given(slots=st.sampled_from([1, 4, 16, 64, 128]), n=st.integers(20, 120),
       load=st.sampled_from(["burst", "poisson"]), policy=st.sampled_from(["static", "continuous"]),
       seed=st.integers(0, 3), columns=st.sampled_from([64, 256, 1024]), setup=st.sampled_from(SETUPS))
def test_raster_cells_show_what_holds_the_slot(slots, n, load, policy, seed, columns, setup):
    run, x_max = _run(slots, n, load, policy, seed, setup)
    shown = min(slots, TIMELINE_MAX_SLOTS)
    z = timeline_raster(run, shown, x_max * 1.01, columns)
    assert z.shape == (shown, columns) and z.dtype == np.uint8
    np.testing.assert_array_equal(z, _oracle(run, shown, x_max * 1.01, columns))


@pytest.mark.parametrize("setup", SETUPS)
@pytest.mark.parametrize("policy", ["static", "continuous"])
def test_every_drawn_request_is_in_the_raster_and_has_a_hover_point(policy, setup):
    run, x_max = _run(64, 1000, "burst", policy, 0, setup)
    columns = 1024
    width = x_max * 1.01 / columns
    z = timeline_raster(run, 64, x_max * 1.01)
    start = run.step_start_s[run.start_step]
    drawn = np.flatnonzero(run.slot < 64)
    first = np.clip(np.ceil(start / width - 0.5), 0, columns - 1).astype(int)
    short = drawn[np.ceil(run.finish_s[drawn] / width - 0.5) <= np.ceil(start[drawn] / width - 0.5)]
    forced: dict[tuple[int, int], list[int]] = {}  # cell -> the short requests drawn there
    for j in short:
        forced.setdefault((run.slot[j], first[j]), []).append(j)
    hidden = 0
    for i in drawn:  # every request shows its colour in its own columns, unless all of them are
        # taken by other requests shorter than a column, drawn where they start
        c1 = max(int(np.ceil(run.finish_s[i] / width - 0.5)), first[i] + 1)
        own = z[run.slot[i], first[i]:c1]
        if not (own == 1 + i % len(_REQUEST_COLORS)).any():
            assert all(set(forced.get((run.slot[i], c), [])) - {i}
                       for c in range(first[i], c1)), i
            hidden += 1
    assert hidden <= len(drawn) // 200  # rare: at most 0.5 % of the requests
    if policy == "static":
        assert (z == _PADDING_CODE).any()  # static batching pads
    assert (z[:, -1] == _AFTER_CODE).all()  # the axis runs 1 % past the longer mode's end
    fig = timeline_figure(run, x_max)
    (image,) = [t for t in fig.data if t.type == "image"]
    np.testing.assert_array_equal(_decode(image.source)[0], z)  # the PNG is the raster, pixel for pixel
    # placed as the raster's cells: column j over [j, j + 1) * dx s from 0, slot i centred on y = i
    x_end = fig.layout.xaxis.range[1]
    assert image.x0 - image.dx / 2 == pytest.approx(0, abs=1e-9)
    assert image.dx * z.shape[1] == pytest.approx(x_end)
    assert (image.y0, image.dy) == (0, 1)
    assert fig.layout.yaxis.scaleanchor is False  # cells as wide as time says, not square
    (requests,) = [t for t in fig.data if t.hovertemplate and "Request #" in t.hovertemplate]
    assert requests.mode == "none"  # hover without drawing a marker per request
    np.testing.assert_array_equal(np.sort(requests.customdata[:, 0]), drawn.astype(np.float32))


@pytest.mark.parametrize("setup", SETUPS)
def test_padding_and_idle_stretches_have_hover_points_all_along(setup):
    run, x_max = _run(64, 1000, "burst", "static", 0, setup)
    fig = timeline_figure(run, x_max)
    step = x_max * 1.01 / TIMELINE_HOVER_POINTS
    shown = np.flatnonzero(run.slot < 64)
    pad = shown[run.release_s[shown] > run.finish_s[shown]]
    idle_slot, idle_a, idle_b = run.idle_segments()
    stretches = {"Padding": (run.slot[pad], run.finish_s[pad], run.release_s[pad]),
                 "Idle": (idle_slot, idle_a, idle_b)}
    for label, (slots, a, b) in stretches.items():
        (trace,) = [t for t in fig.data if t.hovertemplate and t.hovertemplate.startswith(label)]
        assert trace.mode == "none"
        # every point of a stretch lies within a step of the next, and its ends within half a step
        # of one: hovering anywhere on it finds one
        for s, lo, hi in list(zip(slots, a, b, strict=True))[::25]:
            x = np.sort(trace.x[(trace.y == s) & (trace.x >= lo) & (trace.x < hi)].astype(float))
            assert x.size >= 1, (label, s, lo, hi)
            edges = np.r_[x[0] - lo, np.diff(x) / 2, hi - x[-1]]
            assert edges.max() <= 0.5 * step * 1.001 + 1e-6 * hi, (label, s, lo, hi, edges.max())


def _decode(source: str) -> tuple[np.ndarray, list[tuple[int, int, int, int]]]:
    """A palette PNG data URI as its codes and its RGBA palette."""
    assert source.startswith("data:image/png;base64,")
    image = Image.open(io.BytesIO(base64.b64decode(source.split(",", 1)[1])))
    assert image.mode == "P"
    rgb = image.getpalette()
    alpha = image.info["transparency"]  # Pillow reads a single transparent entry back as its index
    if isinstance(alpha, int):
        alpha = bytes(0 if i == alpha else 255 for i in range(alpha + 1))
    palette = [(*rgb[3 * i:3 * i + 3], alpha[i] if i < len(alpha) else 255) for i in range(len(rgb) // 3)]
    return np.asarray(image), palette


def test_each_code_has_its_own_colour():
    run, x_max = _run(16, 100, "burst", "static", 0)
    image = next(t for t in timeline_figure(run, x_max).data if t.type == "image")
    codes, palette = _decode(image.source)
    used = palette[:len(_RASTER_COLORS)]
    assert len(set(used)) == len(_RASTER_COLORS)  # no two codes look alike
    for code, color in enumerate(_RASTER_COLORS):
        if color.startswith("#"):
            assert used[code] == (*(int(color[i:i + 2], 16) for i in (1, 3, 5)), 255), code
    assert used[_AFTER_CODE][3] == 0  # after the run's end: transparent
    assert set(np.unique(codes)) <= set(range(len(_RASTER_COLORS)))
