"""Figures and tables for section 04 (what to watch instead of utilization)."""

from __future__ import annotations

import dataclasses
import html
import math
from urllib.parse import urlencode

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pyarrow as pa

from sim.metrics import ALERTS, BATCH_SLOTS, SLO, DashboardDay, Scenario, ScenarioRuns, ServingMetrics
from ui import format as fmt
from ui.format import percent, rate, seconds
from ui.measured import conditions_html
from ui.nav import SECTIONS
from ui.theme import COLORS, figure

DASH = "–"  # a metric the run does not model


def _num(fmt: str):
    return lambda v: f"{v:{fmt}}"


#: How each ServingMetrics field reads on the page: (column label, formatter of a finite value).
FIELDS: dict[str, tuple[str, object]] = {
    "utilization_gpu": ("nvidia-smi util", lambda v: percent(v)),
    "mfu": ("MFU (tensor)", lambda v: percent(v)),
    "mbu": ("MBU (DRAM)", lambda v: percent(v, 0)),
    "output_tok_s": ("Output tok/s", lambda v: rate(v, "").strip()),
    "goodput_tok_s": ("Goodput, tok/s", lambda v: rate(v, "").strip()),
    "useful_share": ("Useful share", lambda v: percent(v, 0)),
    "goodput_rps": ("Goodput, req/s", lambda v: f"{fmt.sig(v)}"),
    "slo_attainment": ("Meets SLO", lambda v: percent(v, 0)),
    "ttft_p50_s": ("TTFT p50", seconds),
    "ttft_p99_s": ("TTFT p99", seconds),
    "tpot_p50_s": ("TPOT p50", seconds),
    "tpot_p99_s": ("TPOT p99", seconds),
    "itl_p99_s": ("ITL p99", seconds),
    "kv_cache_use": ("KV cache holding tokens", lambda v: percent(v)),
    "queue_depth": ("Queue", lambda v: f"{fmt.sig(v)}"),
    "preemptions": ("Preemptions", lambda v: f"{v:,.0f}"),
}
#: The columns of the on-screen table, in order (the CSV has every field).
TABLE_FIELDS = ("utilization_gpu", "mfu", "mbu", "output_tok_s", "useful_share", "goodput_tok_s",
                "goodput_rps", "slo_attainment", "ttft_p50_s", "ttft_p99_s", "tpot_p50_s", "itl_p99_s",
                "kv_cache_use", "queue_depth")
#: The column that opens each row's page at the row's settings.
LINK_COLUMN = "Open it"


def show(field: str, value: float) -> str:
    """A metric as the page writes it; NaN (not modelled for that run) as a dash."""
    return FIELDS[field][1](value) if math.isfinite(value) else DASH


def _label(row: Scenario) -> str:
    return f"{row.section} · {row.name}"


def not_run_words(row: Scenario) -> str:
    """Why a scenario did not run, short enough for the table's pinned column: 'too long' (its
    requests or context pass the model's positions) or 'does not fit' (the card's memory); '' where it
    ran. The caption under the table says what each means."""
    if row.metrics.ran:
        return ""
    return "too long" if row.blocked == "positions" else "does not fit"


def row_settings(runs: ScenarioRuns) -> dict[str, tuple[str, dict[str, str]]]:
    """Each scenario row's page and the URL parameters that set that page to the row's settings
    (none: the page's first view). The page then shows the row's numbers (tests/test_consistency.py)."""
    page = {s.number: s.url_path for s in SECTIONS}
    poisson = {"batching_load": "Poisson arrivals"}
    if runs.slots != BATCH_SLOTS:  # the default's slots do not fit this card: the rows' own
        poisson["batching_slots"] = str(runs.slots)
    return {
        "batch1": (page["00"], {}),
        "static": (page["01"], {**poisson, "batching_rate": f"{runs.moderate_rate_rps:g}"}),
        "continuous": (page["01"], {**poisson, "batching_rate": f"{runs.moderate_rate_rps:g}",
                                    "batching_continuous": "true"}),
        "overload": (page["01"], {**poisson, "batching_rate": f"{runs.high_rate_rps:g}",
                                  "batching_continuous": "true"}),
        "reserved": (page["02"], {}), "paged": (page["02"], {}),
        "unchunked": (page["02"], {}), "chunked": (page["02"], {}),
        "plain": (page["03"], {}), "speculative": (page["03"], {}),
    }


def row_links(rows: list[Scenario], runs: ScenarioRuns, setup_params: dict[str, str]) -> list[str]:
    """A relative link per row: its page, the reader's setup (``setup_params``) and the row's settings."""
    settings = row_settings(runs)
    links = []
    for r in rows:
        path, params = settings[r.key]
        query = urlencode({**setup_params, **params})
        links.append(f"{path}?{query}" if query else path)
    return links


def scenario_table(rows: list[Scenario], links: list[str] | None = None) -> pa.Table:
    """The table on screen: one row per scenario, formatted strings ('–' where not modelled), and a
    link to each row's page at its settings. An Arrow table, which ``st.dataframe`` sends as it is:
    a pandas frame cost about 2 ms a run to build and convert (README, "Speed")."""
    data = {"Scenario": [_label(r) + ("" if r.metrics.ran else f" ({not_run_words(r)})") for r in rows]}
    if links is not None:  # beside the name: a wide table scrolls, and the last column was off screen
        data[LINK_COLUMN] = links
    for f in TABLE_FIELDS:
        data[FIELDS[f][0]] = [show(f, getattr(r.metrics, f)) for r in rows]
    data["What is happening"] = [r.what for r in rows]
    return pa.table(data)


def scenario_frame(rows: list[Scenario]) -> pd.DataFrame:
    """Every field of every scenario, in SI units (shares 0-1, seconds), for the CSV."""
    return pd.DataFrame([{"key": r.key, "scenario": r.name, "section": r.section, "what": r.what,
                          **dataclasses.asdict(r.metrics)} for r in rows])


def spread(rows: list[Scenario], field: str) -> tuple[float, float]:
    """(min, max) of a field over the scenarios that model it."""
    v = np.array([getattr(r.metrics, field) for r in rows], dtype=float)
    v = v[np.isfinite(v)]
    return (float(v.min()), float(v.max())) if v.size else (math.nan, math.nan)


def percent_range(lo: float, hi: float) -> str:
    """'87–99%' (one percent sign, so a metric stays short); '98%' where both ends read the same;
    '0.22%–41%' where the low end needs decimals ('0.22–41%' read as one garbled number)."""
    low, high = percent(lo, 0), percent(hi, 0)
    if low == high:
        return high
    return f"{low}–{high}" if "." in low else f"{low.rstrip('%')}–{high}"


def count_range(lo: float, hi: float) -> str:
    """'1,200–4,800'; '1,200' where both ends read the same."""
    low, high = f"{lo:,.0f}", f"{hi:,.0f}"
    return high if low == high else f"{low}–{high}"


def scenario_figure(rows: list[Scenario], offline: list | None = None) -> go.Figure:
    """Two panels, one bar per scenario: what nvidia-smi reads (left, linear) and the output tokens
    per second actually delivered (right, log scale). ``offline``: measured offline runs on this setup
    (``ui.measured.OfflinePoint``), one more row each: the model's value for the run as a hatched bar,
    the measured value as a cross (no utilization was measured)."""
    labels = [_label(r) for r in rows]
    m = [r.metrics for r in rows]
    util = np.array([x.utilization_gpu for x in m]) * 100
    good = np.array([x.output_tok_s for x in m])
    mfu = np.array([x.mfu for x in m]) * 100
    missing = ~np.isfinite(util)
    custom = np.stack([mfu, good, util], axis=-1)
    hover = ("<b>%{y}</b><br>nvidia-smi utilization %{customdata[2]:.1f}%<br>MFU %{customdata[0]:.2f}%"
             "<br>%{customdata[1]:,.0f} output tok/s delivered<extra></extra>")
    offline = offline or []
    run_labels = [f"Measured {html.escape(pt.prediction.row.id)} offline (model {pt.prediction.error:+.0%})"
                  for pt in offline]
    run_values = [v for pt in offline for v in (pt.prediction.row.value, pt.prediction.model_value)]
    finite = np.concatenate([good[np.isfinite(good) & (good > 0)], np.array(run_values, dtype=float)])
    # Room right of the longest bar for its label ("31,470"), even on a phone.
    lo, hi = (math.log10(finite.min()) - 0.3, math.log10(finite.max()) + 0.7) if finite.size else (0, 5)
    traces = [
        dict(type="bar", orientation="h", y=labels, x=np.where(missing, 0, util), xaxis="x", yaxis="y",
             name="nvidia-smi utilization", marker=dict(color=COLORS["utilization"]),
             # A row that did not run says so beside its empty bar (Plotly draws no text on a NaN bar,
             # so the output panel could not carry it), in the caption's words and short: "does not fit
             # on this card" ran past a phone's chart (gpt-oss-120b on one H100).
             text=[not_run_words(r) if mi else f"{u:.0f}%"
                   for u, mi, r in zip(util, missing, rows, strict=True)],
             textposition=["outside" if mi else "inside" for mi in missing], cliponaxis=False,
             insidetextanchor="end",
             textfont=dict(color=[COLORS["muted"] if mi else "white" for mi in missing]), customdata=custom,
             hovertemplate=hover),
        dict(type="bar", orientation="h", y=labels, x=np.where(missing, np.nan, good), xaxis="x2",
             yaxis="y", name="output tok/s", marker=dict(color=COLORS["useful"]),
             text=["" if mi else f"{g:,.0f}" for g, mi in zip(good, missing, strict=True)],
             textposition="outside", cliponaxis=False, customdata=custom, hovertemplate=hover),
    ]
    if offline:
        hover = [f"<b>{html.escape(pt.prediction.row.id)}</b>: measured {pt.prediction.row.value:,.4g} tok/s "
                 f"offline, the model {pt.prediction.model_value:,.4g} ({pt.prediction.error:+.0%})<br>"
                 f"{conditions_html(pt.prediction.row)}<extra></extra>" for pt in offline]
        traces += [
            dict(type="bar", orientation="h", y=run_labels, x=[pt.prediction.model_value for pt in offline],
                 xaxis="x2", yaxis="y", name="model, the same run",
                 marker=dict(color=COLORS["useful"], opacity=0.45, pattern=dict(shape="/")),
                 hovertemplate=hover),
            dict(type="scatter", mode="markers+text", y=run_labels,
                 x=[pt.prediction.row.value for pt in offline], xaxis="x2", yaxis="y", name="measured",
                 text=[f"{pt.prediction.row.value:,.0f}" for pt in offline],
                 textposition="middle right", cliponaxis=False,
                 marker=dict(symbol="x", size=12, color=COLORS["text"]), hovertemplate=hover),
        ]
        labels = labels + run_labels
    layout = dict(
        showlegend=False, bargap=0.3, margin=dict(t=30, b=10, l=10, r=30),
        # The bars carry their readings: no tick labels under the utilization panel, whose "100%" ran
        # into the log axis's first label on a phone; the log axis's labels short (1k, 10k) to stay level.
        xaxis=dict(domain=[0, 0.3], range=[0, 100], showticklabels=False, title=dict(text="utilization")),
        xaxis2=dict(domain=[0.38, 1], type="log", range=[lo, hi], anchor="y", dtick=1, tickformat="~s",
                    title=dict(text="output tok/s (log)")),
        yaxis=dict(autorange="reversed", showgrid=False, categoryorder="array", categoryarray=labels),
    )
    return figure(traces, layout, height=110 + 34 * len(labels))


_TTFT_TICKS = [1e-3, 1e-2, 0.1, 1.0, 10.0, 100.0]
_PANELS = (("y", [0.7, 1.0], "What the dashboard shows"), ("y2", [0.37, 0.63], "What gets done"),
           ("y3", [0.0, 0.3], "What users feel"))


def day_figure(day: DashboardDay, slo: SLO) -> go.Figure:
    """Three panels on one time axis: utilization.gpu and MFU; goodput against the traffic; TTFT p99
    against the target. Hours in which requests queue are shaded across all three."""
    x = day.hours + 12 / day.n_windows  # window middles
    hour = [f"{int(h):02d}:00–{int(h + 24 / day.n_windows):02d}:00" for h in day.hours]
    line = dict(type="scatter", mode="lines+markers", x=x, marker=dict(size=5), customdata=hour)
    traces = [
        line | dict(y=100 * day.utilization_gpu, name="nvidia-smi utilization, %", yaxis="y", xaxis="x",
                    line=dict(color=COLORS["utilization"], width=4),
                    hovertemplate="%{customdata}: utilization.gpu %{y:.1f}%<extra></extra>"),
        line | dict(y=100 * day.mfu, name="MFU (tensor activity), %", yaxis="y", xaxis="x",
                    line=dict(color=COLORS["compute"], width=2.5),
                    hovertemplate="%{customdata}: MFU %{y:.1f}%<extra></extra>"),
        line | dict(y=day.demand_tok_s, name="tokens/s asked for (traffic)", yaxis="y2", xaxis="x2",
                    line=dict(color=COLORS["roofline"], width=1.5, dash="dot"),
                    hovertemplate="%{customdata}: arrivals ask for %{y:,.0f} tok/s<extra></extra>"),
        line | dict(y=day.output_tok_s, name="tokens/s delivered", yaxis="y2", xaxis="x2",
                    line=dict(color=COLORS["decode"], width=3),
                    hovertemplate="%{customdata}: %{y:,.0f} tok/s delivered<extra></extra>"),
        line | dict(y=day.goodput_tok_s(slo), name="goodput: delivered within the targets", yaxis="y2",
                    xaxis="x2", line=dict(color=COLORS["useful"], width=2.5),
                    hovertemplate="%{customdata}: goodput %{y:,.0f} tok/s<extra></extra>"),
        line | dict(y=day.ttft_p99_s, name="time to first token, p99", yaxis="y3", xaxis="x3",
                    line=dict(color=COLORS["waste"], width=3),
                    customdata=np.stack([hour, np.round(day.queue_depth, 1)], axis=-1),
                    hovertemplate="%{customdata[0]}: TTFT p99 %{y:.3s}s, "
                                  "%{customdata[1]} requests waiting on average<extra></extra>"),
    ]
    queued = day.queue_depth > 1
    # the queued hours as one shape (a path of rectangles): one SVG path for Plotly to lay out, not one
    # per hour, and no seams where hours touch
    width = 24 / day.n_windows
    path = " ".join(f"M{h:g},0 L{h + width:g},0 L{h + width:g},1 L{h:g},1 Z" for h in day.hours[queued])
    shapes = ([dict(type="path", path=path, xref="x", yref="paper", fillcolor=COLORS["waste"], opacity=0.07,
                    line=dict(width=0), layer="below")] if path else [])
    shapes += [
        dict(type="line", xref="x2 domain", x0=0, x1=1, yref="y2", y0=day.flat_out_tok_s,
             y1=day.flat_out_tok_s, line=dict(color=COLORS["muted"], width=1, dash="dash")),
        dict(type="line", xref="x3 domain", x0=0, x1=1, yref="y3", y0=slo.ttft_s, y1=slo.ttft_s,
             line=dict(color=COLORS["waste"], width=1, dash="dash")),
    ]
    note = dict(showarrow=False, xanchor="left", font=dict(color=COLORS["muted"], size=11))
    annotations = [dict(text=f"<b>{title}</b>", xref="paper", x=0, yref="paper", y=dom[1] + 0.005,
                        yanchor="bottom", showarrow=False, xanchor="left", font=dict(size=13))
                   for _, dom, title in _PANELS]
    annotations += [
        note | dict(text="flat out: every slot busy", xref="x2 domain", x=0.01, yref="y2",
                    y=day.flat_out_tok_s, yanchor="bottom"),
        note | dict(text=f"your TTFT target, {seconds(slo.ttft_s)}", xref="x3 domain", x=0.01, yref="y3",
                    y=math.log10(slo.ttft_s), yanchor="bottom"),
    ]
    ttft = day.ttft_p99_s[np.isfinite(day.ttft_p99_s)]
    t_lo = math.log10(max(min(float(ttft.min()) if ttft.size else 0.01, slo.ttft_s) / 2, 1e-4))
    t_hi = math.log10(max(float(ttft.max()) if ttft.size else 1.0, slo.ttft_s) * 2)
    # Labels every 6 hours, gridlines every 3: nine "00:00"-wide labels ran together on a phone.
    ticks = dict(tickvals=list(range(0, 25, 6)), ticktext=[f"{h:02d}:00" for h in range(0, 25, 6)],
                 minor=dict(tickmode="array", tickvals=list(range(3, 24, 6)), showgrid=True))
    y_top = 1.08 * max(float(np.nanmax(day.demand_tok_s)), day.flat_out_tok_s)
    layout = dict(
        xaxis=dict(domain=[0, 1], range=[0, 24], anchor="y", showticklabels=False, **ticks),
        xaxis2=dict(domain=[0, 1], range=[0, 24], anchor="y2", matches="x", showticklabels=False,
                    **ticks),
        xaxis3=dict(domain=[0, 1], range=[0, 24], anchor="y3", matches="x",
                    title=dict(text=f"Hour of the day (each simulated as {day.window_s:.2g} s)"), **ticks),
        yaxis=dict(domain=_PANELS[0][1], range=[0, 105], ticksuffix="%"),
        yaxis2=dict(domain=_PANELS[1][1], range=[0, y_top], title=dict(text="tokens/s")),
        yaxis3=dict(domain=_PANELS[2][1], type="log", range=[t_lo, t_hi], title=dict(text="TTFT p99"),
                    tickvals=_TTFT_TICKS, ticktext=[seconds(t) for t in _TTFT_TICKS]),
        shapes=shapes, annotations=annotations, hovermode="x unified",
        legend=dict(orientation="h", yanchor="top", y=-0.12, xanchor="left", x=0),
        margin=dict(t=30, b=10),
    )
    return figure(traces, layout, height=700)


def day_frame(day: DashboardDay, slo: SLO) -> pd.DataFrame:
    """The day, window by window, in SI units."""
    return pd.DataFrame({
        "hour": day.hours, "window_s": day.window_s, "load_vs_flat_out": day.load,
        "arrivals": day.arrivals, "demand_tok_s": day.demand_tok_s,
        "utilization_gpu": day.utilization_gpu, "mfu": day.mfu, "mbu": day.mbu,
        "output_tok_s": day.output_tok_s, "goodput_tok_s": day.goodput_tok_s(slo),
        "requests_running": day.running, "real_time_backlog": day.real_time_backlog,
        "queue_depth": day.queue_depth, "ttft_p99_s": day.ttft_p99_s, "itl_p99_s": day.itl_p99_s,
        "slo_attainment": day.slo_attainment(slo), "goodput_rps": day.goodput_rps(slo),
    })


def _values(metrics: ServingMetrics | None, fields: tuple[str, ...]) -> str:
    if metrics is None:
        return DASH
    return ", ".join(f"{FIELDS[f][0]} {show(f, getattr(metrics, f))}" for f in fields)


def failures_frame(rows: list[Scenario], slo: SLO, pool_preemptions: int, pool_steps: int,
                   replicas: int = 1) -> pd.DataFrame:
    """One row per failure sections 00 to 03 show: what to watch, its names, an alert rule with the reader's
    targets filled in, and the metric's value where the failure shows and where its fix does.
    The preemption row reads section 02's 64-page pool (``pool_preemptions`` in ``pool_steps``); the
    overload's fix is ``replicas`` replicas sharing its traffic (``ScenarioRuns.replicas``)."""
    by_key = {r.key: r for r in rows}
    names = {r.key: _label(r) for r in rows}
    out = []
    for a in ALERTS:
        here = by_key[a.scenario].metrics if a.scenario else None
        fixed = by_key[a.fixed_in].metrics if a.fixed_in else None
        if a.key == "idle_tensor":
            fixed = by_key["speculative"].metrics
        where = names.get(a.scenario, "02 · the 64-page pool, paged")
        value = (_values(here, a.shows) if here is not None
                 else f"{pool_preemptions} preemptions in {pool_steps} steps")
        fires = (pool_preemptions > 0 if here is None else a.fires(here, slo) if here.ran else None)
        after = _values(fixed, a.shows)
        if a.key == "idle_tensor":
            after += " (with speculative decoding)"
        elif a.key == "overload":
            after += (f" (the fix is more replicas: the same traffic split over {replicas} replicas, "
                      f"{replicas}× the GPUs; each replica is the row {names[a.fixed_in]})")
        elif a.fixed_in:
            after += f" ({names[a.fixed_in]})"
        out.append({
            "Failure": a.failure, "Shown in": where, "Watch": a.watch, "Metric names": ", ".join(a.names),
            "How to read them": a.note,
            "Alert": a.rule.format(ttft=seconds(slo.ttft_s), tpot=seconds(slo.tpot_s)),
            "Value there": value, "Fires there": _verdict_word(fires),
            "After the fix": after if a.fixed_in or a.key == "idle_tensor" else DASH,
            # Speculation is idle tensor cores' fix by use, not by name (no fixed_in): its verdict too,
            # by the row's own rule (at low load it can still fire).
            "Fires after the fix": (DASH if fixed is None or not (a.fixed_in or a.key == "idle_tensor")
                                    else _verdict_word(a.fires(fixed, slo) if fixed.ran else None)),
        })
    return pd.DataFrame(out)


#: An alert's verdict where its scenario did not run (it does not fit on the card).
NOT_RUN_VERDICT = "not run"


def _verdict_word(fires: bool | None) -> str:
    return NOT_RUN_VERDICT if fires is None else "yes" if fires else "no"


def failures_display(frame: pd.DataFrame) -> pa.Table:
    """The failures table for ``st.table`` (Markdown cells, which wrap, unlike a data grid's), as an
    Arrow table: Streamlit sends it as it is, with no conversion from pandas on every run."""
    def verdict(v: str) -> str:
        return ("**fires**" if v == "yes" else "quiet" if v == "no"
                else "not run: it does not fit on this card or in the model's positions")

    rows = []
    for r in frame.to_dict("records"):
        names = " · ".join(f"`{n}`" for n in r["Metric names"].split(", "))
        value = f"{r['Value there']} → {verdict(r['Fires there'])}"
        if r["After the fix"] != DASH:
            value += f"  \nafter the fix: {r['After the fix']}"
            if r["Fires after the fix"] != DASH:
                value += f" → {verdict(r['Fires after the fix'])}"
        rows.append({
            "Failure": f"**{r['Failure']}**  \n*{r['Shown in']}*",
            "What catches it": f"{r['Watch']}: {names}  \n{r['How to read them']}",
            "Alert": r["Alert"],
            "Value in the scenario": value,
        })
    return pa.Table.from_pylist(rows)
