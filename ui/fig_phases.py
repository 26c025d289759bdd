"""Figures and tables for section 00 (two phases on the roofline)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from sim.cost import Assumptions
from sim.gap import STAGES, Gap
from sim.hardware import GPU
from sim.models import Model
from sim.phases import TTFTCurve, TwoPhases, roofline
from ui import format as fmt
from ui.theme import COLORS, OKABE_ITO, PERCENT_TICKS, figure

# The axes hold still while sliders move (FLOP/byte, log10) unless a point would fall off them: then
# they widen to keep every plotted point on the chart (long prompts at FP8 on a B200 go past 40,000).
INTENSITY_RANGE = (0.25, 40000.0)
_DECADES_BELOW_PEAK = 3.3


def _point_tflops(cost) -> float:
    return float(cost.flops[0] / cost.time_s[0]) / 1e12


def axis_ranges(result: TwoPhases, peak_tflops: float) -> tuple[list[float], list[float]]:
    """log10 ranges of (intensity, TFLOP/s): the fixed ones, widened by half a decade beyond any point
    that would fall outside them."""
    xs = [float(c.intensity[0]) for c in (result.prefill, result.decode)]
    ys = [_point_tflops(c) for c in (result.prefill, result.decode)]
    x_lo, x_hi = np.log10(INTENSITY_RANGE)
    x_lo = min(x_lo, np.floor(np.log10(min(xs)) - 0.5))
    x_hi = max(x_hi, np.ceil(np.log10(max(xs)) + 0.5))
    top = np.log10(peak_tflops)
    y_lo = min(top - _DECADES_BELOW_PEAK, np.floor(np.log10(min(ys)) - 0.3))
    return [float(x_lo), float(x_hi)], [float(y_lo), float(top + 0.6)]


def roofline_figure(result: TwoPhases, gpu: GPU, model: Model, assumptions: Assumptions,
                    measured: dict | None = None, decode_fits: bool = True,
                    why_not: str = "does not fit in memory") -> go.Figure:
    """Log-log roofline of the GPU with the ridge point, the prefill point and the decode point;
    ``measured`` is a trace of engines' measured points (``ui.measured.roofline_trace``). Where the
    decode batch does not fit (``decode_fits`` False) its point is drawn hollow and grey, labelled so,
    with ``why_not`` and no numbers on hover: where it would sit, not a result."""
    peak_t = gpu.peak_flops(model.compute_precision) / 1e12
    (x_lo, x_hi), (y_lo, y_hi) = axis_ranges(result, peak_t)
    x = np.logspace(x_lo, x_hi, 200)
    spec, effective = roofline(gpu, model, x, assumptions)
    top, ridge, knee = np.log10(peak_t), result.ridge_point, result.knee_point
    # The achievable line flattens at its own knee (its GEMM rate / its bandwidth): the page's
    # compute-bound verdicts are against it, so it is drawn where it differs from the spec ridge.
    show_knee = result.knee_apart != 0
    lines_lo, lines_hi = (min(ridge, knee), max(ridge, knee)) if show_knee else (ridge, ridge)
    precision = gpu.math_precision(model.compute_precision).upper()
    # Plain dicts through ui.theme.figure (one unvalidated build; graph objects cost ~30 ms a rerun).
    traces = [
        dict(type="scatter", x=x, y=spec / 1e12, name=f"Roofline ({precision} spec)", mode="lines",
             line=dict(color=COLORS["roofline"], width=2),
             hovertemplate="%{x:,.3~r} FLOP/B → %{y:,.3~r} TFLOP/s<extra>spec</extra>"),
        dict(type="scatter", x=x, y=effective / 1e12, name="Achievable", mode="lines",
             line=dict(color=COLORS["muted"], width=1.5, dash="dash"),
             hovertemplate="%{x:,.3~r} FLOP/B → %{y:,.3~r} TFLOP/s<extra>achievable (with the "
                           "assumptions)</extra>"),
    ]
    for name, cost, color, symbol, label, real in (
        ("Prefill", result.prefill, COLORS["prefill"], "diamond",
         f"prefill, {result.prompt_tokens:,}-token prompt", True),
        ("Decode", result.decode, COLORS["decode"], "circle",
         f"decode, batch {result.batch:,} @ {result.context_tokens:,} tokens", decode_fits),
    ):
        where = "bottom left" if lines_lo / 4 <= float(cost.intensity[0]) < lines_hi else "bottom right"
        if not real:  # where it would sit: hollow, grey, no numbers
            color = COLORS["muted"]
            traces.append(dict(
                type="scatter", x=[float(cost.intensity[0])], y=[_point_tflops(cost)],
                name=f"{label}: does not fit", mode="markers+text",
                marker=dict(color=color, size=15, symbol=f"{symbol}-open", line=dict(color=color, width=2)),
                text=[f"{name}: does not fit"], textposition=where, textfont=dict(color=color, size=13),
                hovertemplate=f"<b>{label}</b><br>{why_not}: no numbers<extra></extra>"))
            continue
        traces.append(dict(
            type="scatter", x=[float(cost.intensity[0])], y=[_point_tflops(cost)], name=label,
            mode="markers+text",
            marker=dict(color=color, size=15, symbol=symbol, line=dict(color="white", width=1.5)),
            # Left of the marker where a knee or ridge line lies just right of it (the label ran over
            # the knee's line on a phone), else right of it.
            text=[name], textposition=where,
            textfont=dict(color=color, size=14),
            hovertemplate=(f"<b>{label}</b><br>%{{x:,.3~r}} FLOP/B<br>%{{y:,.3~r}} TFLOP/s achieved"
                           f"<br>MFU {float(cost.mfu[0]):.2%}<extra></extra>"),
        ))
    if measured and measured["x"]:
        traces.append(measured)
    muted = COLORS["muted"]
    # (x FLOP/B, y TFLOP/s, text, which side of (x, y) it sits on, colour): one text trace rather than
    # layout annotations, which Plotly measures and places one by one on every redraw (3-7 ms of this
    # chart's 13-18 on a 2-core machine: docs/speed-log.md, fourteenth pass).
    nudge = 10 ** 0.06  # a few pixels off the ridge's and knee's lines
    labels = [
        # right of the ridge line, under the flat roof where nothing is plotted; three short
        # lines, so that on a phone it stays inside the chart (one line ran off it on an L4)
        (ridge * nudge, 10 ** (top - 1.4), f"ridge<br>{ridge:.0f} FLOP/B<br>({precision})", "middle right",
         muted),
        *([(knee / nudge, 10 ** (top - 2.4), f"knee<br>{knee:.0f} FLOP/B<br>(achievable)", "middle left",
            muted)] if show_knee else []),
        (10 ** (x_lo + 0.05), 10 ** (top + 0.35), "← memory-bound", "middle right", COLORS["decode"]),
        (10 ** (x_hi - 0.05), 10 ** (top + 0.35), "compute-bound →", "middle left", COLORS["prefill"]),
    ]
    traces.append(dict(
        type="scatter", mode="text", x=[lb[0] for lb in labels], y=[lb[1] for lb in labels],
        text=[lb[2] for lb in labels], textposition=[lb[3] for lb in labels],
        textfont=dict(color=[lb[4] for lb in labels]), hoverinfo="skip", showlegend=False, cliponaxis=False,
    ))
    layout = dict(
        # The lines stop just above the roof: the "memory-bound" / "compute-bound" labels above it
        # cross their x on a phone.
        shapes=[dict(type="line", x0=ridge, x1=ridge, y0=10**y_lo, y1=10 ** (top + 0.15), yref="y",
                     line=dict(color=muted, width=1, dash="dot"))]
        + ([dict(type="line", x0=knee, x1=knee, y0=10**y_lo, y1=10 ** (top + 0.15), yref="y",
                 line=dict(color=muted, width=1, dash="dash"))] if show_knee else []),
    )
    layout.update(
        # The page draws the legend as text below the chart (ui.layout.chart(legend_at="below")):
        # inside the plot it covered the decode point's label on a phone.
        margin=dict(t=10),
        xaxis=dict(type="log", range=[x_lo, x_hi], dtick=1, title="Arithmetic intensity (FLOP/byte)"),
        yaxis=dict(type="log", range=[y_lo, y_hi], dtick=1,
                   title="Achieved TFLOP/s" + (" per GPU" if model.tp > 1 else "")),
    )
    return figure(traces, layout, height=360)


def busy_figure(result: TwoPhases) -> go.Figure:
    """For each phase, the share of the step the tensor cores and the HBM are busy."""
    rows = []
    for phase, cost in (("Prefill", result.prefill), ("Decode", result.decode)):
        step = float(cost.time_s[0])
        rows.append((phase, "HBM: weights", float(cost.weight_time_s[0]), step, COLORS["weights"]))
        rows.append((phase, "HBM: KV cache", float(cost.kv_time_s[0]), step, COLORS["kv"]))
        rows.append((phase, "Tensor math", float(cost.compute_time_s[0]), step, COLORS["compute"]))
    traces = []
    for part in ("HBM: weights", "HBM: KV cache", "Tensor math"):
        sel = [r for r in rows if r[1] == part]
        unit = "Tensor cores" if part == "Tensor math" else "HBM"
        traces.append(dict(
            type="bar", y=[[r[0] for r in sel], [unit] * len(sel)], x=[100 * r[2] / r[3] for r in sel],
            orientation="h", name=part, marker=dict(color=sel[0][4]),
            customdata=[[r[2] * 1e3, r[3] * 1e3] for r in sel],
            hovertemplate=(f"<b>{part}</b><br>%{{x:.1f}}% of the step"
                           "<br>%{customdata[0]:,.3~r} ms of %{customdata[1]:,.3~r} ms<extra></extra>"),
        ))
    layout = dict(
        barmode="stack",
        # 100 % shown, on a phone too: a little room past it (PERCENT_TICKS)
        xaxis=dict(range=[0, 104], title="Share of the step each unit works",
                   **PERCENT_TICKS),
        yaxis=dict(autorange="reversed"),
    )
    return figure(traces, layout, height=300)


OPERATOR_LABELS = {"embed": "embedding", "qkv": "QKV projection", "attention": "attention",
                   "o_proj": "output projection", "mlp": "MLP", "allreduce": "all-reduce (TP)",
                   "lm_head": "LM head"}
_OPERATOR_COLORS = {"embed": OKABE_ITO["yellow"], "qkv": OKABE_ITO["sky_blue"],
                    "attention": OKABE_ITO["orange"], "o_proj": OKABE_ITO["bluish_green"],
                    "mlp": OKABE_ITO["blue"], "allreduce": OKABE_ITO["vermillion"],
                    "lm_head": OKABE_ITO["reddish_purple"]}


def operator_figure(result: TwoPhases) -> go.Figure:
    """Where each phase's step goes, operator by operator (the cost model's breakdown), with the
    host's time (no kernel running) last; hover names the bound of each."""
    traces = []
    phases = (("Prefill", result.prefill), ("Decode", result.decode))
    present = [n for n in OPERATOR_LABELS if n in result.decode.operators]
    for name, label in (*((n, OPERATOR_LABELS[n]) for n in present), ("host", "host (no kernel)")):
        shares, hover = [], []
        for _, cost in phases:
            step = float(cost.time_s[0])
            if name == "host":
                t, bound, extra = float(cost.host_time_s[0]), "the CPU", ""
            else:
                op = cost.operators[name]
                t = float(op.time_s[0] + op.launch_s[0])
                bound = "memory" if bool(op.memory_bound[0]) else "math"
                extra = (f"<br>{fmt.sig(float(op.flops[0]) / 1e9)} GFLOP, "
                         f"{fmt.sig(float(op.bytes[0]) / 1e6, 4)} MB; "
                         f"kernel costs {float(op.launch_s[0]) * 1e6:,.0f} µs")
            shares.append(100 * t / step if step > 0 else 0.0)
            hover.append(f"<b>{label}</b>: {fmt.sig(t * 1e3)} ms, {100 * t / step:.1f}% of the step; "
                         f"bound by {bound}{extra}<extra></extra>")
        traces.append(dict(
            type="bar", y=[p for p, _ in phases], x=shares, orientation="h", name=label,
            marker=dict(color=_OPERATOR_COLORS.get(name, COLORS["idle"])), hovertemplate=hover,
        ))
    layout = dict(
        barmode="stack",
        xaxis=dict(range=[0, 100], title="Share of the step, by operator", ticksuffix="%"),
        yaxis=dict(autorange="reversed"), legend=dict(traceorder="normal"),
    )
    return figure(traces, layout, height=260)


GAP_LABELS = {"roofline floor": "Roofline floor (spec peaks, one overlap)",
              "sustained bandwidth": "+ sustained bandwidth", "compute efficiency": "+ compute efficiency",
              "operators in turn": "+ operators in turn", "kernel and host costs": "+ kernel and host costs",
              "KV-cache reads": "+ KV-cache reads", "communication (TP)": "+ all-reduces (TP)"}


def gap_figure(g: Gap, measured_s: float | None = None, measured_label: str = "Measured") -> go.Figure:
    """From the roofline floor to the model's estimate, one bar per named assumption in the order
    the model applies them (``sim.gap``), then the measured step when there is one. Bars read in ms
    and in their share of the gap."""
    steps = g.steps_s
    gap = g.estimate_s - g.floor_s

    def added(v: float) -> str:
        t = "+0 ms" if v <= 0 else "+<0.01 ms" if v < 1e-5 else f"+{fmt.sig(v * 1e3, 2)} ms"
        return f"{t} · {v / gap:.0%}" if gap > 0 else t

    # The numbers go in the axis labels, under each name (bar-end text runs off a phone's screen).
    labels = [f"{GAP_LABELS[STAGES[0]]}<br>{fmt.sig(g.floor_s * 1e3)} ms",
              *(f"{GAP_LABELS[k]}<br>{added(v)}" for k, v in steps.items()),
              f"Model's estimate<br>{fmt.sig(g.estimate_s * 1e3)} ms"]
    values = [g.floor_s * 1e3, *(v * 1e3 for v in steps.values()), g.estimate_s * 1e3]
    measures = ["absolute", *(["relative"] * len(steps)), "total"]
    traces = [dict(
        type="waterfall", orientation="h", y=labels, x=values, measure=measures, name="Model",
        connector=dict(line=dict(color=COLORS["grid"])),
        increasing=dict(marker=dict(color=COLORS["overhead"])),
        totals=dict(marker=dict(color=COLORS["decode"])),
        hovertemplate="<b>%{y}</b><extra></extra>",
    )]
    if measured_s is not None:
        err = g.estimate_s / measured_s - 1
        traces.append(dict(
            type="bar", orientation="h",
            y=[f"{measured_label}<br>{fmt.sig(measured_s * 1e3)} ms; the model's time {err:+.0%}"],
            x=[measured_s * 1e3], name="Measured", marker=dict(color=COLORS["text"]),
            hovertemplate="<b>%{y}</b><extra></extra>"))
    top = max(values[-1], measured_s * 1e3 if measured_s else 0.0)
    layout = dict(
        showlegend=False, margin=dict(t=10, r=10),
        xaxis=dict(title="Time of one step, ms", range=[0, top * 1.05]),
        yaxis=dict(autorange="reversed", automargin=True),
    )
    return figure(traces, layout, height=80 + 40 * (len(labels) + (measured_s is not None)))


def ttft_figure(curve: TTFTCurve, prompt_tokens: int, ttft_s: float,
                measured: dict | None = None) -> go.Figure:
    """Time to first token against prompt length (log-log): the model's curve, the page's prompt,
    engines' measured TTFTs (``ui.measured.ttft_trace``), and the prompts whose KV does not fit
    shaded."""
    x, y = curve.prompt_tokens, curve.ttft_s * 1e3
    traces = [
        dict(type="scatter", x=x, y=y, mode="lines", name="Model: one prompt, idle server",
             line=dict(color=COLORS["prefill"], width=2.5),
             hovertemplate="%{x:,}-token prompt: TTFT %{y:,.3~r} ms<extra>model</extra>"),
        dict(type="scatter", x=[prompt_tokens], y=[ttft_s * 1e3], mode="markers", name="This prompt",
             marker=dict(symbol="diamond", size=13, color=COLORS["prefill"],
                         line=dict(color="white", width=1.5)),
             hovertemplate="%{x:,}-token prompt: TTFT %{y:,.3~r} ms<extra>the slider's prompt</extra>"),
    ]
    if measured:
        traces.append(measured)
    shapes, notes = [], []
    top = curve.max_prompt_tokens
    if top < x[-1]:
        shapes.append(dict(type="rect", xref="x", yref="paper", x0=max(top, x[0]), x1=x[-1], y0=0, y1=1,
                           fillcolor=COLORS["muted"], opacity=0.18, line=dict(width=0), layer="below"))
        notes.append(dict(x=float(np.log10(max(top, x[0]))), y=0.95, yref="paper", showarrow=False,
                          text="KV does not fit", xanchor="left", xshift=4,
                          font=dict(color=COLORS["muted"], size=12)))
    layout = dict(
        shapes=shapes, annotations=notes,
        xaxis=dict(type="log", dtick=1, title=dict(text="Prompt, tokens")),
        yaxis=dict(type="log", dtick=1, title=dict(text="Time to first token, ms")),
    )
    return figure(traces, layout, height=380)


def phases_table(result: TwoPhases) -> pd.DataFrame:
    """One row per phase: the step's inputs and every cost quantity, in base units."""
    rows = []
    for phase, cost, tokens in (("prefill", result.prefill, result.prompt_tokens),
                                ("decode", result.decode, result.batch)):
        rows.append({
            "phase": phase,
            "new_tokens": tokens,
            "flops": float(cost.flops[0]),
            "bytes": float(cost.bytes[0]),
            "kv_bytes": float(cost.kv_bytes[0]),
            "intensity_flop_per_byte": float(cost.intensity[0]),
            "compute_time_s": float(cost.compute_time_s[0]),
            "memory_time_s": float(cost.memory_time_s[0]),
            "step_time_s": float(cost.time_s[0]),
            "bound": "memory" if bool(cost.memory_bound[0]) else "compute",
            "mfu": float(cost.mfu[0]),
            "mbu": float(cost.mbu[0]),
        })
    return pd.DataFrame(rows)
