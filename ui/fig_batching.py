"""Figures and tables for section 01 (static vs continuous batching)."""

from __future__ import annotations

import copy

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from sim.batching import BatchingRun, Comparison
from ui.format import percent, rate, seconds
from ui.theme import COLORS, FONT, REQUEST_CYCLE, Spec, figure

#: The timeline draws at most this many slots (the first ones), so a 256-slot run stays readable.
TIMELINE_MAX_SLOTS = 64

POLICY_LABEL = {"static": "Static", "continuous": "Continuous"}

#: Request colours: the theme's cycle without the padding colour, so padding never looks like a request.
_REQUEST_COLORS = [c for c in REQUEST_CYCLE if c not in (COLORS["padding"], COLORS["idle"])]


def _gauge(value: float, reference: float, title: str, subtitle: str, color: str) -> dict:
    return dict(
        type="indicator", mode="gauge+number+delta", value=100 * value, domain=dict(x=[0, 1], y=[0, 0.86]),
        title=dict(text=f"{title}<br><span style='font-size:11px;color:{COLORS['muted']}'>{subtitle}</span>",
                   font=dict(size=14, color=COLORS["text"])),
        number=dict(suffix="%", valueformat=".1f", font=dict(size=26, color=COLORS["text"])),
        delta=dict(reference=100 * reference, valueformat=".1f", suffix=" pts",
                   increasing=dict(color=COLORS["useful"]), decreasing=dict(color=COLORS["waste"]),
                   font=dict(size=12)),
        gauge=dict(
            axis=dict(range=[0, 100], tickcolor=COLORS["muted"], tickwidth=1, tickvals=[0, 50, 100],
                      showticklabels=False),
            bar=dict(color=color, thickness=0.7),
            bgcolor=COLORS["free"], borderwidth=1, bordercolor=COLORS["grid"],
            threshold=dict(line=dict(color=COLORS["text"], width=3), thickness=0.85,
                           value=100 * reference),
        ),
    )


#: The two gauges' names, shared by the figures, the metrics and the tests.
UTILIZATION_LABEL = "GPU utilization"
USEFUL_WORK_LABEL = "Useful work"


def gauges_figures(run: BatchingRun, other: BatchingRun) -> tuple[go.Figure | Spec, go.Figure | Spec]:
    """The two gauges, one small figure each, side by side even on a phone; the black tick and the
    delta ("pts") mark the other mode's reading (the page's caption says so)."""
    gauges = (
        _gauge(run.utilization_gpu, other.utilization_gpu, UTILIZATION_LABEL, "what nvidia-smi shows",
               COLORS["utilization"]),
        _gauge(run.useful_work, other.useful_work, USEFUL_WORK_LABEL, "of the capacity in demand",
               COLORS["useful"]),
    )
    return tuple(figure([g], _gauge_layout(), house=False) for g in gauges)


def _gauge_layout() -> dict:
    """A gauge figure's layout, a new dict each time (a sent figure's layout is changed in place)."""
    return dict(height=200, margin=dict(l=14, r=14, t=44, b=4), font=copy.deepcopy(FONT),
                paper_bgcolor="white")


_HALF = 0.43  # half the height of a slot's bar, in slot units


def _rects(slot, start, end, color: str, name: str, hover_name: str) -> dict:
    """Rectangles [start, end) x slot as ONE filled polygon path (a ``toself`` scatter): a browser draws
    a thousand of them as a single SVG path, where a thousand bars cost ~300 ms per redraw. Per-item
    hover comes from ``_hover_points`` (requests only: every extra marker costs drawing time too)."""
    n = len(slot)
    x = np.column_stack([start, end, end, start, start, np.full(n, np.nan)]).ravel()
    y0, y1 = slot - _HALF, slot + _HALF
    y = np.column_stack([y0, y0, y1, y1, y0, np.full(n, np.nan)]).ravel()
    # float32: half the bytes on the wire (Plotly sends typed arrays), far finer than a pixel
    return dict(type="scatter", x=x.astype(np.float32), y=y.astype(np.float32), mode="lines",
                fill="toself", fillcolor=color, name=name,
                line=dict(width=0, color=color), hoverinfo="skip", legendgroup=hover_name)


def _hover_points(slot, start, end, custom, hover: str, group: str) -> dict:
    """Invisible markers at the middle of each rectangle carrying its hover text."""
    return dict(type="scatter", x=((start + end) / 2).astype(np.float32), y=slot.astype(np.float32),
                mode="markers", showlegend=False, marker=dict(size=6, opacity=0),
                customdata=np.asarray(custom, dtype=np.float32), hovertemplate=hover,
                legendgroup=group)


def timeline_figure(run: BatchingRun, x_max_s: float) -> go.Figure | Spec:
    """Slot x wall-time: each request in its slot, padding (static) in pink, empty slots in grey.
    ``x_max_s`` fixes the time axis (the longer of the two modes) so a flip shows the change."""
    shown = min(run.slots, TIMELINE_MAX_SLOTS)
    req = run.requests
    start = run.step_start_s[run.start_step]
    idx = np.flatnonzero(run.slot < shown)
    slot = run.slot[idx].astype(float)
    traces = []
    colour_of = idx % len(_REQUEST_COLORS)
    for c, color in enumerate(_REQUEST_COLORS):
        sel = colour_of == c
        traces.append(_rects(slot[sel], start[idx][sel], run.finish_s[idx][sel], color,
                             "Request (colours alternate)" if c == 0 else f"requests {c}", "requests"))
        if c:
            traces[-1]["showlegend"] = False
    traces.append(_hover_points(
        slot, start[idx], run.finish_s[idx],
        np.column_stack([idx, req.prompt_tokens[idx], req.output_tokens[idx], req.arrival_s[idx],
                         run.first_token_s[idx], run.finish_s[idx]]),
        "<b>Request #%{customdata[0]}</b> in slot %{y}<br>prompt %{customdata[1]} tokens, output "
        "%{customdata[2]} tokens<br>arrived %{customdata[3]:.2f} s, first token %{customdata[4]:.2f} s, "
        "done %{customdata[5]:.2f} s<extra></extra>", "requests"))
    pad = idx[run.release_s[idx] > run.finish_s[idx]]
    if pad.size:
        traces.append(_rects(run.slot[pad].astype(float), run.finish_s[pad], run.release_s[pad],
                             COLORS["padding"], "Padding: finished, still computing", "padding"))
        traces[-1].update(hoveron="fills", hoverinfo="text",
                          text="Padding: the request is done but holds its slot, computing tokens nobody "
                               "asked for, until its batch's longest request finishes")
    slot_i, a, b = run.idle_segments()
    keep = slot_i < shown
    traces.append(_rects(slot_i[keep].astype(float), a[keep], b[keep], COLORS["idle"], "Idle: slot empty",
                         "idle"))
    traces[-1].update(hoveron="fills", hoverinfo="text", text="Idle: the slot is empty, no request in it")
    note = f" (first {shown} of {run.slots} slots)" if shown < run.slots else ""
    layout = dict(
        hovermode="closest",
        xaxis=dict(range=[0, x_max_s * 1.01], title=dict(text="Wall time (s)")),
        yaxis=dict(range=[shown - 0.5, -0.5], title=dict(text="Slot"), showgrid=False, zeroline=False,
                   dtick=max(1, 2 ** int(np.ceil(np.log2(max(shown / 16, 1)))))),
        margin=dict(t=86),
        title=dict(y=1, yref="container", yanchor="top", pad=dict(t=10)),
        legend=dict(y=1.01, traceorder="normal"),
    )
    height = int(np.clip(160 + 7 * shown, 320, 640))
    return figure(traces, layout, height=height,
                  title=f"Who is in which slot: {POLICY_LABEL[run.policy].lower()} batching{note}")


def breakdown_figure(comparison: Comparison) -> go.Figure | Spec:
    """Where the token capacity (B slots x steps) goes in each mode: requested tokens, padding, idle."""
    runs = [comparison.static, comparison.continuous]
    names = [POLICY_LABEL[r.policy] for r in runs]
    traces = []
    for label, attr, color in (
        ("Requested tokens", "useful_share", COLORS["useful"]),
        ("Padding", "padding_share", COLORS["padding"]),
        ("Empty while requests wait", "idle_waiting_share", COLORS["waste"]),
        ("Unused: nobody waiting", "unused_share", COLORS["idle"]),
    ):
        values = [100 * getattr(r, attr) for r in runs]
        traces.append(dict(
            type="bar", y=names, x=values, orientation="h", name=label,
            marker=dict(color=color),
            text=[f"{v:.0f}%" if v >= 4 else "" for v in values], textposition="inside",
            insidetextanchor="middle",
            hovertemplate=f"<b>%{{y}}</b>: {label}<br>%{{x:.1f}}% of the slot-steps<extra></extra>",
        ))
    layout = dict(
        barmode="stack",
        xaxis=dict(range=[0, 100], ticksuffix="%", title="Share of the token capacity (B slots × steps)"),
        yaxis=dict(autorange="reversed"),
        # room for the title above the top legend
        margin=dict(t=86),
        title=dict(y=1, yref="container", yanchor="top", pad=dict(t=10)),
        legend=dict(y=1.01, traceorder="normal"),
    )
    return figure(traces, layout, height=250, title="Where the token capacity goes")


def comparison_table(comparison: Comparison) -> pd.DataFrame:
    """Both modes on the current settings, formatted for reading."""
    rows = []
    for r in (comparison.static, comparison.continuous):
        rows.append({
            "Mode": POLICY_LABEL[r.policy],
            "Utilization": percent(r.utilization_gpu),
            "Useful work": percent(r.useful_work),
            "Padding": percent(r.padding_share),
            "Empty, requests waiting": percent(r.idle_waiting_share),
            "Unused, no demand": percent(r.unused_share),
            "Output tok/s": rate(r.output_tokens_per_s, ""),
            "Tok/s incl. padding": rate(r.generated_tokens_per_s, ""),
            "Done after": seconds(r.wall_s),
            "TTFT p50 / p99": f"{seconds(r.ttft_p50_s)} / {seconds(r.ttft_p99_s)}",
            "TPOT p50 / p99": f"{seconds(r.tpot_p50_s)} / {seconds(r.tpot_p99_s)}",
        })
    return pd.DataFrame(rows)


def summary_frame(comparison: Comparison) -> pd.DataFrame:
    """Both modes in base units (fractions, seconds, tokens/s), for the CSV."""
    rows = []
    for r in (comparison.static, comparison.continuous):
        rows.append({
            "policy": r.policy, "slots": r.slots, "requests": r.requests.n, "steps": r.n_steps,
            "utilization_gpu": r.utilization_gpu, "useful_work": r.useful_work,
            "useful_share": r.useful_share, "padding_share": r.padding_share,
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
