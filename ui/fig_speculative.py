"""Figures and tables for section 03 (speculative decoding)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from sim.speculative import AlphaSweep, BatchSweep, Rounds, Speculation, accepted_law
from ui.bars import Cell, Part, strip_html
from ui.theme import COLORS, OKABE_ITO, figure

STRIP_ROUNDS = 8  # rounds drawn in the Monte Carlo strip
#: Draft lengths drawn on the speedup-against-acceptance chart, each with a fixed colour; the
#: reader's k, when it is not one of them, is drawn in blue.
K_COLORS = {1: OKABE_ITO["sky_blue"], 2: OKABE_ITO["orange"], 4: OKABE_ITO["bluish_green"],
            8: OKABE_ITO["reddish_purple"], 16: OKABE_ITO["vermillion"]}
Y_CAP = 10.0  # speedup axes never go higher (the 1/(1-alpha) ceiling runs off the top)

_CELL = {  # status code -> (name, colour, text in the cell, hover text)
    1: ("accepted draft", COLORS["useful"], "✓", "accepted: the target agrees, the token is kept"),
    2: ("rejected draft", COLORS["waste"], "✗", "rejected: the target disagrees; this and every "
                                                "later draft of the round is thrown away"),
    0: ("not reached", COLORS["idle"], "", "discarded: comes after a rejection, never checked"),
}


def _figure(height: int, title: str, traces: list[dict], layout: dict) -> go.Figure:
    """Traces (dicts with a ``type``) on the house style (``ui.theme.figure``)."""
    return figure(traces, layout, height=height, title=title)


def _hline(y: float) -> dict:
    """A dotted full-width line at ``y`` (what ``fig.add_hline`` draws)."""
    return dict(type="line", xref="paper", x0=0, x1=1, yref="y", y0=y, y1=y,
                line=dict(color=COLORS["roofline"], width=1, dash="dot"))


def _label(x: float, y: float, text: str, **kw) -> dict:
    return dict(x=x, y=y, text=text, showarrow=False, xanchor="left", yshift=-10,
                font=dict(color=COLORS["muted"], size=11)) | kw


def _legend_below(entry_width: float) -> dict:
    """Half-width charts: the legend goes under the axis title, in columns, not over the title."""
    return dict(legend=dict(orientation="h", yanchor="top", y=-0.2, xanchor="left", x=0,
                            entrywidth=entry_width, entrywidthmode="fraction"), margin=dict(b=10))


def _diamond(x: float, y: float, name: str, hover: str) -> dict:
    return dict(type="scatter", x=[x], y=[y], name=name, mode="markers", hovertemplate=hover,
                marker=dict(color=OKABE_ITO["black"], size=14, symbol="diamond",
                            line=dict(color="white", width=2)))


def rounds_html(rounds: Rounds, alt: str, n: int = STRIP_ROUNDS, rate: str | None = None) -> str:
    """A strip of the first ``n`` Monte Carlo rounds: each row is k proposed tokens coloured by fate,
    then the one token the target's pass always adds (a bonus after k accepts, else a correction).
    ``rate`` names the acceptance the rounds draw with (default "α = ..."; a tree's per-depth p). As
    HTML cells (``ui.bars``: a changing Plotly chart drawn right after the α chart delayed it)."""
    status = rounds.status(n)
    n, k = status.shape
    accepted = rounds.accepted[:n]
    cells = {code: Cell(Part(name, color), text, hover) for code, (name, color, text, hover) in _CELL.items()}
    target = Part("target's token (bonus or correction)", COLORS["decode"])
    last = [Cell(target, "+1", "bonus: all drafts accepted, the verify pass also yields the next token"
                 if a == k else "correction: the target's own token replaces the rejected draft")
            for a in accepted]
    return strip_html(
        f"{n} rounds of the Monte Carlo ({rate or f'α = {rounds.alpha:.2f}'}): accepted prefix + 1 token per "
        "target pass",
        [f"Round {i + 1}: {a} + 1 = {a + 1}" for i, a in enumerate(accepted)], status.tolist(), cells, last,
        columns=[str(i + 1) for i in range(k)], last_column="target",
        axis_title=f"Draft 1 to {k}, then the target's own token", alt=alt)


def _y_top(*values: float) -> float:
    finite = [v for v in values if math.isfinite(v)]
    return min(Y_CAP, max(2.0, 0.5 * math.ceil(2.2 * max(finite, default=2.0))))


def _plain_label(sweep: AlphaSweep) -> dict:
    """The 1x line's label where no curve runs: under the line at the right end where every curve
    ends well above 1 (the usual case: at the left the curves cross 1 and the label sat on them),
    else above it at the left end, where the curves start below 1."""
    if sweep.speedup.size and float(np.nanmin(sweep.speedup[:, -1])) >= 1.15:  # every k, the reader's too
        return _label(0.98, 1, "plain decode (1×)", xanchor="right")
    return _label(0.02, 1, "plain decode (1×)", yshift=10)


def alpha_figure(sweep: AlphaSweep, spec: Speculation) -> go.Figure:
    """Speedup against acceptance rate for several draft lengths, the ceiling of a free draft and
    verify (1/(1-alpha) for a chain; 1/(1-p) for a tree, whose depths are kept with p > alpha), plain
    decode at 1x, and the reader's point."""
    tree = spec.method.verify_tokens is not None  # a depth is kept with p > α: the ceiling is 1/(1−p)
    traces = [dict(
        type="scatter", x=sweep.alphas, y=np.minimum(sweep.ceiling, 10 * Y_CAP),
        name="1/(1−p) ceiling, p a depth kept" if tree else "1/(1−α) ceiling",
        mode="lines", line=dict(color=COLORS["muted"], width=1.5, dash="dash"),
        hovertemplate="α %{x:.2f}: no k can beat %{y:.2f}× (free draft and verify)<extra></extra>",
    )]
    for k in sorted({*K_COLORS, spec.k}):
        row = int(np.nonzero(sweep.ks == k)[0][0])
        mine = k == spec.k
        traces.append(dict(
            type="scatter", x=sweep.alphas, y=sweep.speedup[row],
            name=f"k = {k}" + (" (yours)" if mine else ""), mode="lines", opacity=1.0 if mine else 0.75,
            line=dict(color=K_COLORS.get(k, COLORS["decode"]), width=3.5 if mine else 1.6),
            hovertemplate=f"k = {k}, α %{{x:.2f}} → %{{y:.2f}}× faster<extra></extra>",
        ))
    traces.append(_diamond(spec.alpha, spec.speedup, "your setting",
                           f"<b>your setting</b><br>α {spec.alpha:.2f}, k = {spec.k}<br>"
                           f"{spec.expected_tokens:.2f} tokens per pass<br>%{{y:.2f}}× faster"
                           "<extra></extra>"))
    layout = dict(
        shapes=[_hline(1)], annotations=[_plain_label(sweep)],
        xaxis=dict(range=[0, 1], title=dict(text="Draft acceptance rate α")),
        yaxis=dict(range=[0, _y_top(float(np.max(sweep.speedup)))],
                   title=dict(text="Speedup over plain decode (×)")),
    ) | _legend_below(0.5)
    return _figure(400, f"Speedup against acceptance, batch {spec.batch}", traces, layout)


def batch_figure(sweep: BatchSweep, spec: Speculation, measured: dict | None = None,
                 modelled: dict | None = None) -> go.Figure:
    """Speedup against batch size at the reader's alpha and k, with where the verify pass turns
    compute-bound, the break-even line, and (on the matching setup) the measured EAGLE gains."""
    lo, hi = float(sweep.batches[0]), float(sweep.batches[-1])
    shapes, annotations = [_hline(1)], [_label(math.log10(lo), 1, "break-even (1×)")]

    def side(x: float) -> dict:
        """A band's label runs into its band, or back from its edge in the right half of the axis (where
        it ran off the chart)."""
        right = x > math.log10(lo) + 0.6 * (math.log10(hi) - math.log10(lo))
        return dict(xanchor="right", xshift=-4) if right else {}
    start = sweep.verify_compute_bound_batch
    top = _y_top(float(np.max(sweep.full_acceptance_speedup)),
                 *(max(measured[n]) for n in ("EAGLE", "EAGLE-3")) if measured else ())
    if sweep.max_batch < hi:  # past the card's memory: marked, and the curve drawn faint
        x0 = max(float(sweep.max_batch), lo)
        shapes.append(dict(type="rect", xref="x", yref="paper", x0=x0, x1=hi, y0=0, y1=1,
                           fillcolor=COLORS["muted"], opacity=0.18, line=dict(width=0), layer="below"))
        where = side(math.log10(x0))  # back from the band's edge: an arrow points into it
        # The label's two lines go where the curve and the break-even line are not, over the 0.7 of a
        # decade of batch the label spans beside the band's edge (it had sat on a curve near 0.5).
        near = (sweep.batches >= x0 / 5) & (sweep.batches <= x0) if where else \
            (sweep.batches >= x0) & (sweep.batches <= x0 * 5)
        busy = [*(sweep.speedup[near] / top).tolist(), 1 / top]
        if math.isfinite(start) and abs(math.log10(start) - math.log10(x0)) < 0.7:
            busy.append(0.95)  # the verify pass's label, at the top
        y = next((c for c in (0.55, 0.8, 0.35, 0.9, 0.2) if not any(c - 0.13 <= b <= c + 0.03 for b in busy)),
                 0.55)
        annotations.append(_label(math.log10(x0), y, "does not fit<br>in memory →" if where else
                                  "does not fit<br>in memory", yref="paper", yanchor="top", yshift=0,
                                  **where))
    if math.isfinite(start):
        shapes.insert(0, dict(type="rect", xref="x", yref="paper", x0=start, x1=hi, y0=0, y1=1,
                              fillcolor=COLORS["compute"], opacity=0.12, line=dict(width=0),
                              layer="below"))
        where = side(math.log10(start))
        annotations.append(_label(math.log10(start), 1, "verify pass →<br>compute-bound" if where else
                                  "verify pass<br>compute-bound", yref="paper", yanchor="top", yshift=0,
                                  **where))
    fits = sweep.fits
    last = int(np.nonzero(fits)[0][-1]) + 1 if fits.any() else 0
    traces = [dict(
        type="scatter", x=sweep.batches[:last], y=sweep.speedup[:last],
        name=f"model, α {spec.alpha:.2f}, k = {spec.k}",
        mode="lines", line=dict(color=COLORS["decode"], width=3),
        customdata=np.stack([sweep.tokens_per_s, sweep.plain_tokens_per_s], axis=-1)[:last],
        hovertemplate=("batch %{x}: %{y:.2f}×<br>%{customdata[0]:,.0f} tok/s speculative vs "
                       "%{customdata[1]:,.0f} plain<extra></extra>"),
    )]
    if last < sweep.batches.size:
        traces.append(dict(
            type="scatter", x=sweep.batches[max(last - 1, 0):], y=sweep.speedup[max(last - 1, 0):],
            name="model, past the card's memory", mode="lines",
            line=dict(color=COLORS["muted"], width=2, dash="dot"),
            hovertemplate="batch %{x}: does not fit in memory (%{y:.2f}× if it did)<extra></extra>",
        ))
    if measured is not None:
        for name, color, symbol in (("EAGLE", COLORS["compute"], "circle"),
                                    ("EAGLE-3", OKABE_ITO["reddish_purple"], "square")):
            traces.append(dict(
                type="scatter", x=measured["batches"], y=measured[name], mode="markers",
                name=f"measured {name}",
                marker=dict(color=color, size=9, symbol=symbol, line=dict(color="white", width=1)),
                hovertemplate=[
                    f"<b>measured {name}</b> (EAGLE-3 Table 3: SGLang, H100, Llama-3.1-8B, chain of 3)"
                    f"<br>batch %{{x}}: %{{y:.2f}}× throughput"
                    + (f"<br>model, {name} preset in this setting: {modelled[name][i]:.2f}× "
                       f"({modelled[name][i] / measured[name][i] - 1:+.0%})" if modelled else "")
                    + "<extra></extra>" for i in range(len(measured["batches"]))],
            ))
    traces.append(_diamond(spec.batch, spec.speedup, "your batch",
                           f"<b>your batch</b> {spec.batch}: %{{y:.2f}}×<extra></extra>"))
    ticks = [b for b in (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024) if lo <= b <= hi]
    layout = dict(
        shapes=shapes, annotations=annotations,
        xaxis=dict(type="log", range=[math.log10(lo) - 0.04, math.log10(hi) + 0.04], tickvals=ticks,
                   title=dict(text="Batch size (sequences decoding together)")),
        yaxis=dict(range=[0, top], title=dict(text="Speedup over plain decode (×)")),
    ) | _legend_below(0.5)
    return _figure(400, f"Speedup against load, {spec.context_tokens:,}-token context", traces, layout)


def rounds_table(rounds: Rounds) -> pd.DataFrame:
    """How often each accepted-prefix length came up in the Monte Carlo, against the law
    P(j) = alpha^j (1 - alpha) for j < k and alpha^k for j = k."""
    j = np.arange(rounds.k + 1)
    count = rounds.histogram
    return pd.DataFrame({"accepted_drafts": j, "tokens_committed": j + 1, "rounds": count,
                         "share": count / count.sum(), "probability": accepted_law(rounds.alpha, rounds.k)})


def alpha_table(sweep: AlphaSweep) -> pd.DataFrame:
    """One row per alpha: the free draft's ceiling (``AlphaSweep.ceiling``) and the speedup at every k."""
    columns = {"alpha": sweep.alphas, "free_ceiling": sweep.ceiling}
    columns |= {f"speedup_k{k}": row for k, row in zip(sweep.ks, sweep.speedup, strict=True)}
    return pd.DataFrame(columns)


def batch_table(sweep: BatchSweep) -> pd.DataFrame:
    return pd.DataFrame({
        "batch": sweep.batches, "speedup": sweep.speedup,
        "speculative_tokens_per_s": sweep.tokens_per_s, "plain_tokens_per_s": sweep.plain_tokens_per_s,
        "verify_bound": np.where(sweep.verify_memory_bound, "memory", "compute"),
        "decode_bound": np.where(sweep.decode_memory_bound, "memory", "compute"),
    })


def k_table(spec: Speculation) -> pd.DataFrame:
    return pd.DataFrame({"k": spec.k_grid, "speedup": spec.speedup_by_k})


def summary_table(spec: Speculation) -> pd.DataFrame:
    """The round at the reader's setting, in base units."""
    rows = {
        "alpha": spec.alpha, "k": spec.k, "batch": spec.batch, "context_tokens": spec.context_tokens,
        "expected_tokens_per_pass": spec.expected_tokens,
        "monte_carlo_mean_tokens": spec.rounds.mean_tokens,
        "monte_carlo_std_error": spec.rounds.std_error,
        "decode_step_s": spec.decode_step_s, "draft_step_s": spec.draft_step_s,
        "verify_pass_s": spec.verify_s, "round_s": spec.round_s,
        "draft_cost_ratio_c": spec.cost_ratio, "speedup": spec.speedup,
        "closed_form_speedup": spec.closed_form_speedup, "flops_per_token_ratio": spec.flops_ratio,
        "tokens_per_s": spec.tokens_per_s, "plain_tokens_per_s": spec.plain_tokens_per_s,
        "best_k": spec.best_k, "best_speedup": spec.best_speedup,
    }
    return pd.DataFrame({"quantity": list(rows), "value": [float(v) for v in rows.values()]})
