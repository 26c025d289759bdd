"""Figures and tables for section 05 (one GPU under load): data in, figure out."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from sim.load import Disaggregation, LoadRun, Sweep, Targets
from ui import format as fmt
from ui.theme import COLORS, OKABE_ITO, figure

POLICY_LABEL = {
    "prefill-first": "Prefill-first",
    "decode-first": "Decode-first",
    "chunked": "Chunked prefill",
}
POLICY_COLOR = {
    "prefill-first": COLORS["prefill"],
    "decode-first": OKABE_ITO["reddish_purple"],
    "chunked": COLORS["decode"],
}
POLICY_DASH = {"prefill-first": "solid", "decode-first": "dot", "chunked": "solid"}
_GRID = {"gridcolor": COLORS["grid"], "zeroline": False}


def _fig(traces: list[dict], layout: dict, *, height: int = 340, title: str | None = None) -> go.Figure:
    extra = {k: ({**_GRID, **v} if k.startswith(("xaxis", "yaxis")) else v) for k, v in layout.items()}
    return figure(traces, extra, height=height, title=title)


def _hline(y: float, text: str, color: str = COLORS["text"], left: bool = False) -> tuple[dict, dict]:
    shape = dict(
        type="line", xref="paper", x0=0, x1=1, y0=y, y1=y, line=dict(color=color, width=1.5, dash="dash")
    )
    note = dict(
        xref="paper",
        x=0 if left else 1,
        y=y,
        yref="y",
        text=text,
        showarrow=False,
        xanchor="left" if left else "right",
        yanchor="bottom",
        font=dict(size=11, color=color),
    )
    return shape, note


def _vline(x: float, color: str = COLORS["muted"], dash: str = "dot") -> dict:
    return dict(type="line", x0=x, x1=x, y0=0, y1=1, yref="paper", line=dict(color=color, width=1, dash=dash))


# --- the long prompt among the users -------------------------------------------------------------


def timeline_users(run: LoadRun, n_users: int = 4) -> tuple[int, list[int]]:
    """The longest prompt of the run's middle half, and up to ``n_users`` requests that were decoding
    when it arrived (the ones whose tokens it can delay)."""
    s = run.stream
    n = s.n
    mid = np.arange(n // 4, max(3 * n // 4, n // 4 + 1))
    mid = mid[~run.rejected[mid]] if mid.size else mid
    if not mid.size:
        return 0, []
    long_rid = int(mid[np.argmax(s.prompt_tokens[mid])])
    t = s.arrival_s[long_rid]
    busy = np.nonzero((run.first_token_s < t) & (run.finish_s > t + 0.05) & ~run.rejected)[0]
    if busy.size > n_users:
        busy = busy[np.linspace(0, busy.size - 1, n_users).astype(int)]
    return long_rid, [int(r) for r in busy]


def timeline_figure(run: LoadRun, long_rid: int, users: list[int], tbt_target_s: float) -> go.Figure:
    """A row per user and a tick per token, around the arrival of the long prompt: vermillion where a
    token came later than the TBT target after the one before (it waited for a prefill)."""
    s = run.stream
    t0 = float(s.arrival_s[long_rid])
    t_first = t0 + float(run.ttft_s[long_rid])
    span = max(t_first - t0, 0.2)
    lo, hi = t0 - 0.5 * span, t_first + span
    # Run on to where every user's tokens resume: under prefill-first the prompts that arrived during
    # the long one prefill next, so the stall (the vermillion tick that ends it) can outlast t_first.
    for rid in users:
        times = run.token_times_s(rid)
        after = times[(times > t0) & (times > t_first - 1e-9)]
        if after.size and after[0] > hi - 0.25 * span:
            hi = min(after[0] + 0.25 * span, t0 + 20 * span)
    traces = []
    rows = []
    for row, rid in enumerate(users):
        times = run.token_times_s(rid)
        gaps = np.diff(times, prepend=np.nan)
        keep = (times >= lo) & (times <= hi)
        label = f"User {rid}"
        rows.append(label)
        late = keep & (gaps > tbt_target_s)
        for mask, color in ((keep & ~late, COLORS["decode"]), (late, COLORS["waste"])):
            traces.append(
                dict(
                    type="scatter",
                    mode="markers",
                    x=times[mask] - t0,
                    y=np.full(int(mask.sum()), row),
                    marker=dict(symbol="line-ns-open", size=14, line=dict(width=2), color=color),
                    customdata=gaps[mask] * 1e3,
                    showlegend=False,
                    hovertemplate="token at %{x:.3f} s; %{customdata:.1f} ms after the one before<extra>"
                    + label
                    + "</extra>",
                )
            )
    label = f"{int(s.prompt_tokens[long_rid]):,}-token prompt"
    rows.append(label)
    long_row = len(rows) - 1
    traces.append(
        dict(
            type="scatter",
            mode="markers",
            x=[t_first - t0],
            y=[long_row],
            showlegend=False,
            marker=dict(symbol="diamond", size=11, color=COLORS["prefill"]),
            hovertemplate="first token after %{x:.3f} s<extra>long prompt</extra>",
        )
    )
    for name, color in (
        ("token", COLORS["decode"]),
        (f"token over the TBT target ({tbt_target_s * 1e3:.0f} ms)", COLORS["waste"]),
    ):
        traces.append(
            dict(
                type="scatter",
                mode="markers",
                x=[None],
                y=[None],
                name=name,
                marker=dict(symbol="line-ns-open", size=12, line=dict(width=2), color=color),
            )
        )
    shapes = [
        dict(
            type="rect",
            x0=0,
            x1=t_first - t0,
            y0=0,
            y1=1,
            yref="paper",
            fillcolor=COLORS["prefill"],
            opacity=0.12,
            line=dict(width=0),
        )
    ]
    notes = [
        dict(
            x=0,
            y=0.01,
            yref="paper",
            xanchor="left",
            yanchor="bottom",
            showarrow=False,
            text=" prefill",  # short: on a phone the band is narrow (it ran into the diamond)
            font=dict(size=11, color=COLORS["prefill"]),
        )
    ]
    # Under prefill-first the prompts that arrived during the long one prefill next, before anyone
    # decodes: the users' wait runs past the long prompt's band. Shade it too, or the white gap up to
    # their next tokens reads as unexplained.
    resumed = [float(t[t > t_first - 1e-9][0]) for rid in users
               if (t := run.token_times_s(rid))[t > t0].size and (t > t_first - 1e-9).any()]
    resume = min(resumed, default=t_first)
    if resume - t_first > 0.1 * span:
        shapes.append(dict(type="rect", x0=t_first - t0, x1=resume - t0, y0=0, y1=1, yref="paper",
                           fillcolor=COLORS["prefill"], opacity=0.06, line=dict(width=0)))
        # At the band's right end, inside it: from its left end (the diamond) it ran past a phone's
        # chart where the users resume near the axis's end (DeepSeek-V3 on 8 x B200).
        notes.append(dict(x=resume - t0, y=0.01, yref="paper", xanchor="right", yanchor="bottom",
                          xshift=-2, showarrow=False, text="queued prefills ",
                          font=dict(size=11, color=COLORS["prefill"])))
    return _fig(
        traces,
        dict(
            xaxis=dict(title="seconds from the long prompt's arrival", range=[lo - t0, hi - t0]),
            yaxis=dict(
                tickvals=list(range(len(rows))),
                ticktext=rows,
                range=[len(rows) - 0.5, -0.5],
                showgrid=False,
                zeroline=False,
            ),
            shapes=shapes,
            annotations=notes,
            margin=dict(t=60, l=10),
        ),
        height=110 + 34 * len(rows),
    )


# --- latency, goodput and utilization against load ---------------------------------------------------


_LOG_TICKS = [0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500]


def _tick(v: float) -> str:
    return f"{v * 1e3:g} ms" if v < 1 else f"{v:g} s"


def backlog_points(sw: Sweep, slack_s: float, capacity: float) -> list[bool]:
    """Which of a load curve's runs are past what the policy serves: from the first whose queue grows
    through the run (``LoadRun.steady`` with the slack ``LoadRun.meets`` allows: ``Targets.steady_slack_s``)
    on, since a queue that grows at one rate grows at any higher one, and none at or below the policy's
    confirmed capacity."""
    out, past = [], False
    for rate, run in zip(sw.rate_per_s.tolist(), sw.runs, strict=True):
        past = past or not run.steady(slack_s)
        out.append(past and not rate <= capacity)
    return out


def latency_figure(
    sweeps: dict[str, Sweep], what: str, target_s: float, rate_now: float, capacities: dict[str, float],
    slack_s: float = 0.0,
) -> go.Figure:
    """p99 TBT ('tbt') or p99 TTFT ('ttft') of each policy against the arrival rate, the target dashed,
    the page's rate dotted, each policy's capacity marked, the runs past what it serves hollow
    (``backlog_points`` with ``slack_s``)."""
    field = {"tbt": "tbt_p99_s", "ttft": "ttft_p99_s"}[what]
    traces = []
    for policy, sw in sweeps.items():
        y = getattr(sw, field)
        # Hollow where the run's queue grows through it: its p99 is then the backlog's at the run's end,
        # set by the run's length as much as by the rate (so a curve can dip past saturation).
        steady = [not b for b in backlog_points(sw, slack_s, capacities.get(policy, 0.0))]
        traces.append(
            dict(
                type="scatter",
                mode="lines+markers",
                x=sw.rate_per_s,
                y=np.maximum(y, 1e-4),
                name=POLICY_LABEL[policy],
                line=dict(color=POLICY_COLOR[policy], dash=POLICY_DASH[policy], width=2),
                marker=dict(size=5 if all(steady) else [5 if s else 7 for s in steady],
                            symbol="circle" if all(steady) else
                            ["circle" if s else "circle-open" for s in steady]),
                hovertemplate="%{x:,.3~r} req/s: %{y:,.3~r} s<extra>" + POLICY_LABEL[policy] + "</extra>",
            )
        )
        cap = capacities.get(policy, math.nan)
        # On the policy's own curve (log-interpolated), at its capacity; not below the lowest rate swept,
        # where the curve says nothing (the caption gives it instead).
        if cap > 0 and cap >= float(sw.rate_per_s[0]):
            at_cap = float(np.exp(np.interp(cap, sw.rate_per_s, np.log(np.maximum(y, 1e-4)))))
            traces.append(
                dict(
                    type="scatter",
                    mode="markers",
                    x=[cap],
                    y=[at_cap],
                    showlegend=False,
                    marker=dict(
                        symbol="diamond",
                        size=11,
                        color=POLICY_COLOR[policy],
                        line=dict(color="white", width=1),
                    ),
                    hovertemplate=f"capacity {fmt.sig(cap)} req/s<extra>{POLICY_LABEL[policy]}</extra>",
                )
            )
        knee = sw.knee_per_s
        if what == "ttft" and math.isfinite(knee):  # where queueing starts to set the TTFT
            k = int(np.searchsorted(sw.rate_per_s, knee))
            traces.append(
                dict(
                    type="scatter",
                    mode="markers",
                    x=[knee],
                    y=[float(max(y[k], 1e-4))],
                    showlegend=False,
                    marker=dict(symbol="x", size=10, color=POLICY_COLOR[policy]),
                    hovertemplate=f"knee {fmt.sig(knee)} req/s: queueing sets the TTFT from here"
                    f"<extra>{POLICY_LABEL[policy]}</extra>",
                )
            )
    shape, note = _hline(
        target_s, f"target {target_s * 1e3:.0f} ms" if target_s < 1 else f"target {fmt.sig(target_s)} s"
    )
    name = "p99 time between tokens" if what == "tbt" else "p99 time to first token"
    note["yref"] = "y"
    note["y"] = math.log10(target_s)
    return _fig(
        traces,
        dict(
            xaxis=dict(title="arrival rate (requests/s)"),
            yaxis=dict(
                title=f"{name} (log)",
                type="log",
                tickvals=_LOG_TICKS,
                ticktext=[_tick(v) for v in _LOG_TICKS],
            ),
            shapes=[shape, _vline(rate_now)],
            annotations=[note],
        ),
        height=330,
    )


def dashboard_figure(sweeps: dict[str, Sweep], rate_now: float, targets: Targets) -> go.Figure:
    """What a dashboard shows (nvidia-smi utilization, grey, one line a policy) and what users get (the
    share of requests meeting both targets, a colour a policy), against load."""
    traces = []
    for k, (policy, sw) in enumerate(sweeps.items()):
        traces.append(
            dict(
                type="scatter",
                mode="lines",
                x=sw.rate_per_s,
                y=100 * sw.utilization_gpu,
                name="GPU utilization (each policy)",
                legendgroup="util",
                showlegend=k == 0,
                line=dict(color=COLORS["utilization"], dash=POLICY_DASH[policy], width=1.5),
                hovertemplate="%{y:.1f} %<extra>nvidia-smi, " + POLICY_LABEL[policy] + "</extra>",
            )
        )
        traces.append(
            dict(
                type="scatter",
                mode="lines+markers",
                x=sw.rate_per_s,
                y=100 * sw.attainment(targets),
                name=f"{POLICY_LABEL[policy]}: on target",
                line=dict(color=POLICY_COLOR[policy], dash=POLICY_DASH[policy], width=2),
                marker=dict(size=5),
                hovertemplate="%{y:.1f} % of requests meet both targets<extra>"
                + POLICY_LABEL[policy]
                + "</extra>",
            )
        )
    return _fig(
        traces,
        dict(
            xaxis=dict(title="arrival rate (requests/s)"),
            yaxis=dict(title="% (requests on target; GPU utilization)", range=[0, 103]),
            shapes=[_vline(rate_now)],
        ),
        height=360,
    )


# --- prefix caching ------------------------------------------------------------------------------


def prefix_figure(
    n_prefixes: np.ndarray, hit: np.ndarray, ideal: np.ndarray, room: float, now: int
) -> go.Figure:
    """Hit rate against the number of distinct prefixes: LRU under the memory limit vs a cache that
    never evicts (only first uses miss); the gap between them is thrashing."""
    n_prefixes, hit, ideal = (np.asarray(a, dtype=float) for a in (n_prefixes, hit, ideal))
    traces = [
        dict(
            type="scatter",
            mode="lines+markers",
            x=n_prefixes,
            y=100 * ideal,
            name="Cache that never evicts",
            line=dict(color=COLORS["muted"], dash="dot", width=1.5),
            hovertemplate="%{y:.1f} %<extra>no eviction</extra>",
        ),
        dict(
            type="scatter",
            mode="lines+markers",
            x=n_prefixes,
            y=100 * hit,
            name="LRU in this GPU's KV cache",
            line=dict(color=COLORS["useful"], width=2),
            hovertemplate="%{x} prefixes: %{y:.1f} % hits<extra>LRU</extra>",
        ),
    ]
    shapes = [_vline(now)]
    notes = []
    if math.isfinite(room) and n_prefixes.min() <= room <= n_prefixes.max():
        shapes.append(_vline(room, COLORS["waste"], "dash"))
        notes.append(
            dict(
                x=math.log10(room),
                y=0.03,
                yref="paper",
                text="cache full of prefixes ",
                showarrow=False,
                xanchor="right",
                yanchor="bottom",
                font=dict(size=11, color=COLORS["waste"]),
            )
        )
    return _fig(
        traces,
        dict(
            xaxis=dict(title="distinct prefixes (log)", type="log"),
            yaxis=dict(title="prefix hit rate (%)", range=[0, 103]),
            shapes=shapes,
            annotations=notes,
        ),
        height=320,
    )


# --- disaggregation ------------------------------------------------------------------------------


def disagg_figure(d: Disaggregation) -> go.Figure:
    """Capacity per GPU of every P:D split, against the same GPUs colocated."""
    labels = [f"{p}P : {q}D" for p, q, _ in d.splits]
    values = [v for *_, v in d.splits]
    best = d.best
    colors = [COLORS["useful"] if (p, q) == best[:2] else COLORS["kv"] for p, q, _ in d.splits]
    traces = [
        dict(
            type="bar",
            x=labels,
            y=values,
            marker=dict(color=colors),
            name="Disaggregated",
            hovertemplate="%{x}: %{y:,.3~r} req/s per GPU<extra></extra>",
            showlegend=False,
        )
    ]
    shape, note = _hline(
        d.colocated_per_gpu,
        f"colocated {fmt.sig(d.colocated_per_gpu)} req/s per GPU",
        COLORS["prefill"],
        left=True,
    )
    return _fig(
        traces,
        dict(
            # two lines where the instances have several GPUs: on one, the title ran past a phone's chart
            xaxis=dict(title=(f"{d.n_gpus} GPUs " if d.gpus_per_instance == 1 else
                              f"{d.n_gpus} instances of {d.gpus_per_instance} GPUs<br>")
                       + "split into prefill (P) and decode (D)"),
            yaxis=dict(title="capacity per GPU (req/s)", rangemode="tozero"),
            shapes=[shape],
            annotations=[note],
        ),
        height=300,
    )


# --- tables --------------------------------------------------------------------------------------


def requests_frame(run: LoadRun) -> pd.DataFrame:
    s = run.stream
    return pd.DataFrame(
        {
            "request": np.arange(s.n),
            "arrival (s)": s.arrival_s.round(4),
            "prompt tokens": s.prompt_tokens,
            "output tokens": s.output_tokens,
            "TTFT (s)": run.ttft_s.round(4),
            "TPOT (ms)": (1e3 * run.tpot_s).round(2),
            "end to end (s)": run.e2e_s.round(3),
            # No shared prefix: blank (sim.load's -1 is a code, not a number to show).
            "prefix": pd.Series(s.prefix_id, dtype="Int64").where(s.prefix_id >= 0),
            "prefix cached": run.cache_hit,
            "rejected": run.rejected,
        }
    )


def sweep_frame(sweeps: dict[str, Sweep], targets: Targets) -> pd.DataFrame:
    rows = []
    for policy, sw in sweeps.items():
        good, att, met = sw.goodput_rps(targets), sw.attainment(targets), sw.met(targets)
        for i, r in enumerate(sw.rate_per_s):
            rows.append(
                {
                    "policy": policy,
                    "rate (req/s)": round(float(r), 4),
                    "TTFT p50 (s)": sw.ttft_p50_s[i],
                    "TTFT p99 (s)": sw.ttft_p99_s[i],
                    "TBT p50 (ms)": 1e3 * sw.tbt_p50_s[i],
                    "TBT p99 (ms)": 1e3 * sw.tbt_p99_s[i],
                    "goodput (req/s)": good[i],
                    "on target (%)": 100 * att[i],
                    "utilization.gpu (%)": 100 * sw.utilization_gpu[i],
                    "targets met": bool(met[i]),
                }
            )
    return pd.DataFrame(rows)


def splits_frame(d: Disaggregation) -> pd.DataFrame:
    rows = [
        {
            "prefill GPUs": p,
            "decode GPUs": q,
            "capacity per GPU (req/s)": round(v, 3),
            "vs colocated": round(v / d.colocated_per_gpu, 3) if d.colocated_per_gpu > 0 else math.inf,
        }
        for p, q, v in d.splits
    ]
    return pd.DataFrame(rows)


def prefix_frame(n_prefixes, hit, ideal) -> pd.DataFrame:
    hit, ideal = np.asarray(hit, dtype=float), np.asarray(ideal, dtype=float)
    return pd.DataFrame(
        {
            "distinct prefixes": n_prefixes,
            "hit rate LRU (%)": np.round(100 * hit, 2),
            "hit rate, no eviction (%)": np.round(100 * ideal, 2),
        }
    )


def timeline_frame(run: LoadRun, long_rid: int, users: list[int]) -> pd.DataFrame:
    """The timeline's tokens: each user's token times and the gap before each (the whole request)."""
    t0 = float(run.stream.arrival_s[long_rid])
    parts = []
    for rid in users:
        times = run.token_times_s(rid)
        parts.append(
            pd.DataFrame(
                {
                    "user (request)": rid,
                    "token": np.arange(1, times.size + 1),
                    "time from the long prompt's arrival (s)": (times - t0).round(4),
                    "gap before (ms)": (1e3 * np.diff(times, prepend=np.nan)).round(2),
                }
            )
        )
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
