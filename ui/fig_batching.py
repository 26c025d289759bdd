"""Figures and tables for section 01 (static vs continuous batching)."""

from __future__ import annotations

import base64
import io

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from PIL import Image, ImageColor

from sim.batching import BatchingRun, Comparison
from ui.bars import Part, stacked_bars_html
from ui.format import count, duration, percent, seconds
from ui.gauge import Gauge
from ui.theme import COLORS, REQUEST_CYCLE, Spec, figure

#: The timeline draws at most this many slots (the first ones), so a 256-slot run stays readable.
TIMELINE_MAX_SLOTS = 64

POLICY_LABEL = {"static": "Static", "continuous": "Continuous"}

#: Request colours: the theme's cycle without the padding colour, so padding never looks like a request.
_REQUEST_COLORS = [c for c in REQUEST_CYCLE if c not in (COLORS["padding"], COLORS["idle"])]


#: The two gauges' names, shared by the gauges, the metrics and the tests.
UTILIZATION_LABEL = "GPU utilization"
USEFUL_WORK_LABEL = "Useful work"


def gauge_readings(run: BatchingRun, other: BatchingRun) -> tuple[Gauge, Gauge]:
    """The two gauges (drawn side by side as SVG, even on a phone: ``ui.gauge``); the black tick and
    the difference in points mark the other mode's reading (the page's caption says so)."""
    return (
        Gauge(run.utilization_gpu, other.utilization_gpu, UTILIZATION_LABEL, "what nvidia-smi shows",
              COLORS["utilization"], f"{other.policy} batching"),
        Gauge(run.useful_work, other.useful_work, USEFUL_WORK_LABEL, "of the capacity in demand",
              COLORS["useful"], f"{other.policy} batching"),
    )


#: Time columns of the slot timeline's raster: about one per pixel of a desktop chart.
TIMELINE_COLUMNS = 1024
#: Hover points across the time axis along a padding or idle stretch (about one every 16 px at 800
#: px: Plotly finds the nearest point within 20 px).
TIMELINE_HOVER_POINTS = 48

#: Raster codes: 0 an empty slot, 1..len(_REQUEST_COLORS) a request (its colour), then padding, then
#: the time after the run's end (transparent: the axis runs to the longer of the two modes).
_IDLE_CODE = 0
_PADDING_CODE = len(_REQUEST_COLORS) + 1
_AFTER_CODE = len(_REQUEST_COLORS) + 2
_RASTER_COLORS = [COLORS["idle"], *_REQUEST_COLORS, COLORS["padding"], "rgba(0,0,0,0)"]


def raster_png(codes: np.ndarray, colors: list[str]) -> str:
    """A raster of codes (uint8, one per pixel) as a palette PNG data URI, colour ``colors[c]`` for code
    ``c``. The slot timeline's 1,024 x 64 codes are ~88 KB as a heatmap's base64 array and a few KB as
    a PNG, and the browser draws an image without painting a canvas cell by cell."""
    image = Image.fromarray(np.ascontiguousarray(codes, np.uint8), mode="P")
    rgba = [ImageColor.getcolor(c, "RGBA") for c in colors]  # "#RRGGBB" or "rgba(r,g,b,0-255)"
    image.putpalette([v for c in rgba for v in c[:3]])
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", optimize=True, transparency=bytes(c[3] for c in rgba))
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def _columns(a, b, width_s: float, columns: int) -> tuple[np.ndarray, np.ndarray]:
    """First and end column of each span [a, b) s: column j covers [j, j + 1) * width_s and belongs
    to a span when its centre lies in it."""
    c0 = np.clip(np.ceil(a / width_s - 0.5), 0, columns).astype(np.int64)
    c1 = np.clip(np.ceil(b / width_s - 0.5), 0, columns).astype(np.int64)
    return c0, np.maximum(c1, c0)


def timeline_raster(run: BatchingRun, shown: int, x_end_s: float,
                    columns: int = TIMELINE_COLUMNS) -> np.ndarray:
    """The first ``shown`` slots x ``columns`` equal time columns over [0, ``x_end_s``) seconds, as
    raster codes (uint8): what holds the slot at the centre of each column, and ``_AFTER_CODE`` from
    the run's end on. A request that covers no column's centre (shorter than a column) is drawn in
    the column where it starts, painted last: it disappears only where another such request of its
    slot starts in the same column."""
    width_s = x_end_s / columns
    z = np.full((shown, columns), _IDLE_CODE, np.uint8)
    z[:, (np.arange(columns) + 0.5) * width_s >= run.wall_s] = _AFTER_CODE
    start = run.step_start_s[run.start_step]
    idx = np.flatnonzero(run.slot < shown)
    pad = idx[run.release_s[idx] > run.finish_s[idx]]
    codes = (1 + idx % len(_REQUEST_COLORS)).astype(np.uint8)
    for rows, a, b, code in (
        (run.slot[pad], run.finish_s[pad], run.release_s[pad], np.full(pad.size, _PADDING_CODE, np.uint8)),
        (run.slot[idx], start[idx], run.finish_s[idx], codes),
    ):
        c0, c1 = _columns(a, b, width_s, columns)
        n = c1 - c0
        first = rows.astype(np.int64) * columns + c0
        offset = np.arange(int(n.sum())) - np.repeat(np.cumsum(n) - n, n)
        z.flat[np.repeat(first, n) + offset] = np.repeat(code, n)
    c0, c1 = _columns(start[idx], run.finish_s[idx], width_s, columns)
    short = c1 == c0
    z[run.slot[idx][short], np.minimum(c0[short], columns - 1)] = codes[short]
    return z


def _hover(x, y, hover: str, custom=None) -> dict:
    """An undrawn trace (``mode="none"``) whose points carry hover text: Plotly finds the nearest point
    without drawing a marker for each (a thousand invisible markers cost ~40 ms a redraw)."""
    assert TIMELINE_MAX_SLOTS <= 256  # a slot index fits a byte
    trace = dict(type="scatter", x=np.asarray(x, np.float32), y=np.asarray(y, np.uint8), mode="none",
                 showlegend=False, hovertemplate=hover + "<extra></extra>")
    if custom is not None:
        trace["customdata"] = np.asarray(custom, dtype=np.float32)
    return trace


def _along(slot, a, b, step_s: float) -> tuple[np.ndarray, np.ndarray]:
    """Points along each segment [a, b) of a slot, about ``step_s`` apart (one at least), so that
    hovering anywhere on a long stretch finds one nearby."""
    n = np.maximum(1, np.ceil((b - a) / step_s)).astype(np.int64)
    k = np.arange(int(n.sum())) - np.repeat(np.cumsum(n) - n, n)
    x = np.repeat(a, n) + (k + 0.5) * np.repeat((b - a) / n, n)
    return x, np.repeat(slot, n)


def _legend_entry(name: str, color: str) -> dict:
    """A legend key for one of the raster's colours (the raster itself is one trace)."""
    return dict(type="scatter", x=[None], y=[None], mode="markers", name=name, hoverinfo="skip",
                marker=dict(symbol="square", size=11, color=color))


def timeline_figure(run: BatchingRun, x_max_s: float) -> go.Figure | Spec:
    """Slot x wall-time: each request in its slot, padding (static) in pink, empty slots in grey.
    ``x_max_s`` fixes the time axis (the longer of the two modes) so a flip shows the change.

    Drawn as one raster (``TIMELINE_COLUMNS`` time columns x the slots, ``timeline_raster``) sent as a
    PNG (``raster_png``), which the browser draws as one image: a thousand rectangles as SVG paths took
    it ~85 ms a redraw, the largest part of a change of this page. Hover comes from undrawn points: one
    at each request's middle, and points all along the padding and idle stretches."""
    shown = min(run.slots, TIMELINE_MAX_SLOTS)
    x_end = x_max_s * 1.01
    req = run.requests
    start = run.step_start_s[run.start_step]
    idx = np.flatnonzero(run.slot < shown)
    z = timeline_raster(run, shown, x_end)
    # an image, not a heatmap: pixels are time columns x slots (``dx`` s wide, one slot high)
    traces = [dict(type="image", source=raster_png(z, _RASTER_COLORS), x0=x_end / z.shape[1] / 2,
                   dx=x_end / z.shape[1], y0=0, dy=1, hoverinfo="skip")]
    traces.append(_hover(
        (start[idx] + run.finish_s[idx]) / 2, run.slot[idx],
        "<b>Request #%{customdata[0]}</b> in slot %{y}<br>prompt %{customdata[1]} tokens, output "
        "%{customdata[2]} tokens<br>arrived %{customdata[3]:.2f} s, first token %{customdata[4]:.2f} s, "
        "done %{customdata[5]:.2f} s",
        np.column_stack([idx, req.prompt_tokens[idx], req.output_tokens[idx], req.arrival_s[idx],
                         run.first_token_s[idx], run.finish_s[idx]])))
    pad = idx[run.release_s[idx] > run.finish_s[idx]]
    step = x_end / TIMELINE_HOVER_POINTS  # padding and idle stretches are long: points along them
    if pad.size:
        traces.append(_hover(*_along(run.slot[pad], run.finish_s[pad], run.release_s[pad], step),
                             "Padding: the request is done but holds its slot, computing tokens nobody "
                             "asked for, until its batch's longest request finishes"))
    slot_i, a, b = run.idle_segments()
    keep = slot_i < shown
    traces.append(_hover(*_along(slot_i[keep], a[keep], b[keep], step),
                         "Idle: the slot is empty, no request in it"))
    traces.append(_legend_entry("Request (colours alternate)", _REQUEST_COLORS[0]))
    if pad.size:
        traces.append(_legend_entry("Padding: finished, still computing", COLORS["padding"]))
    traces.append(_legend_entry("Idle: slot empty", COLORS["idle"]))
    note = f" (first {shown} of {run.slots} slots)" if shown < run.slots else ""
    layout = dict(
        hovermode="closest",
        xaxis=dict(range=[0, x_end], title=dict(text="Wall time (s)")),
        # scaleanchor off: an image trace would otherwise make its pixels square
        yaxis=dict(range=[shown - 0.5, -0.5], title=dict(text="Slot"), showgrid=False, zeroline=False,
                   scaleanchor=False,
                   dtick=max(1, 2 ** int(np.ceil(np.log2(max(shown / 16, 1)))))),
        # room for the title only: page 01 draws the legend as text above the chart (ui.legend)
        margin=dict(t=55),
        title=dict(y=1, yref="container", yanchor="top", pad=dict(t=10)),
        # the keys name the colours of one raster: a click on one would hide nothing
        legend=dict(y=1.01, traceorder="normal", itemclick=False, itemdoubleclick=False),
        # thin white lines between the slots, so neighbouring bars of one colour stay apart: one path
        # (a scatter trace of the same lines cost Plotly ~4 ms more a redraw)
        shapes=[dict(type="path", xref="x", yref="y", layer="above",
                     path=" ".join(f"M0,{y:g}H{x_end:.6g}" for y in np.arange(shown + 1) - 0.5),
                     line=dict(color="white", width=1 if shown > 32 else 2))],
    )
    height = int(np.clip(160 + 7 * shown, 320, 640))
    return figure(traces, layout, height=height,
                  title=f"Who is in which slot: {POLICY_LABEL[run.policy].lower()} batching{note}")


#: The breakdown's parts: (name, Run attribute, colour). The four shares add up to the whole capacity.
BREAKDOWN_PARTS = (
    ("Requested tokens", "requested_share", COLORS["useful"]),
    ("Padding", "padding_share", COLORS["padding"]),
    ("Empty while requests wait", "idle_waiting_share", COLORS["waste"]),
    ("Unused: nobody waiting", "unused_share", COLORS["idle"]),
)
BREAKDOWN_TITLE = "Where the token capacity goes"


def breakdown_html(comparison: Comparison) -> str:
    """Where the token capacity (B slots x steps) goes in each mode: requested tokens, padding, empty
    slots while requests wait, unused; as HTML bars (``ui.bars``: a changing Plotly chart after the
    slot timeline delayed it)."""
    s, k = comparison.static, comparison.continuous
    rows = [(POLICY_LABEL[r.policy], [100 * getattr(r, attr) for _, attr, _ in BREAKDOWN_PARTS])
            for r in (s, k)]
    alt = (f"{BREAKDOWN_TITLE}: requested tokens {percent(s.requested_share)} of it with static batching, "
           f"{percent(k.requested_share)} with continuous; padding {percent(s.padding_share)} with static.")
    return stacked_bars_html(BREAKDOWN_TITLE, rows, [Part(name, color) for name, _, color in BREAKDOWN_PARTS],
                             axis_title="Share of the token capacity (B slots × steps)", alt=alt)


def comparison_table(comparison: Comparison) -> pd.DataFrame:
    """Both modes on the current settings, formatted for reading: one row per measure, one column per
    mode (three columns read on a phone, where eleven did not)."""
    runs = (comparison.static, comparison.continuous)
    measures = {
        "Utilization": lambda r: percent(r.utilization_gpu),
        "Useful work (of capacity in demand)": lambda r: percent(r.useful_work),
        # The next four split all the capacity, as the chart below does: they add to 100 %.
        "Requested tokens": lambda r: percent(r.requested_share),
        "Padding": lambda r: percent(r.padding_share),
        "Empty, requests waiting": lambda r: percent(r.idle_waiting_share),
        "Unused, no demand": lambda r: percent(r.unused_share),
        "Output tok/s": lambda r: count(r.output_tokens_per_s),  # as the metrics show them
        "Tok/s incl. padding": lambda r: count(r.generated_tokens_per_s),
        # waits that run to minutes, in the metrics' units ("1.78 min" there had read "107 s" here)
        "Done after": lambda r: duration(r.wall_s),
        "TTFT p50 / p99": lambda r: f"{duration(r.ttft_p50_s)} / {duration(r.ttft_p99_s)}",
        "TPOT p50 / p99": lambda r: f"{seconds(r.tpot_p50_s)} / {seconds(r.tpot_p99_s)}",
    }
    return pd.DataFrame({POLICY_LABEL[r.policy]: [f(r) for f in measures.values()] for r in runs},
                        index=pd.Index(list(measures), name="Measure"))


def summary_frame(comparison: Comparison) -> pd.DataFrame:
    """Both modes in base units (fractions, seconds, tokens/s), for the CSV."""
    rows = []
    for r in (comparison.static, comparison.continuous):
        rows.append({
            "policy": r.policy, "slots": r.slots, "requests": r.requests.n, "steps": r.n_steps,
            "utilization_gpu": r.utilization_gpu, "useful_work": r.useful_work,
            "requested_share": r.requested_share, "padding_share": r.padding_share,
            "idle_waiting_share": r.idle_waiting_share, "unused_share": r.unused_share,
            "output_tokens_per_s": r.output_tokens_per_s,
            "generated_tokens_per_s": r.generated_tokens_per_s, "requests_per_s": r.requests_per_s,
            "wall_s": r.wall_s, "engine_idle_s": r.idle_s,
            "ttft_p50_s": r.ttft_p50_s, "ttft_p99_s": r.ttft_p99_s,
            "tpot_p50_s": r.tpot_p50_s, "tpot_p99_s": r.tpot_p99_s,
        })
    return pd.DataFrame(rows)


def requests_frame(run: BatchingRun) -> pd.DataFrame:
    """One row per request: its lengths, slot, steps and timings (seconds; TTFT = first token -
    arrival). Times are rounded to the microsecond, which keeps the CSV small and quick to write."""
    req = run.requests
    return pd.DataFrame({
        "request": np.arange(req.n), "prompt_tokens": req.prompt_tokens,
        "output_tokens": req.output_tokens, "arrival_s": req.arrival_s.round(6), "slot": run.slot,
        "prefill_step": run.start_step, "last_token_step": run.end_step,
        "slot_released_step": run.release_step, "first_token_s": run.first_token_s.round(6),
        "finish_s": run.finish_s.round(6), "slot_released_s": run.release_s.round(6),
    })
