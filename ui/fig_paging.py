"""Figures and tables for section 02 (reserved vs paged KV cache, and chunked prefill)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from sim.chunked import ChunkedPrefill, Schedule
from sim.paging import (
    FREE,
    FULL,
    LEDGER,
    PARTIAL,
    RESERVED_EMPTY,
    STRANDED,
    CardFit,
    Comparison,
    PagingRun,
)
from ui.theme import COLORS, OKABE_ITO, style

# Requests get the palette's colours that no page state uses (orange: reserved, yellow: slack,
# vermillion: stranded), so a state is never mistaken for a request. Cell labels carry the identity.
REQUEST_COLORS = [OKABE_ITO[c] for c in ("blue", "bluish_green", "reddish_purple", "sky_blue")]
_K = len(REQUEST_COLORS)
# Heatmap codes: 0.._K-1 a full page of a request (by colour), then the page states.
_CODE = {PARTIAL: _K, RESERVED_EMPTY: _K + 1, STRANDED: _K + 2, FREE: _K + 3}
_STATE_COLORS = [COLORS["slack"], COLORS["reserved"], COLORS["waste"], COLORS["free"]]
_N_CODES = _K + len(_STATE_COLORS)

LEDGER_COLORS = dict(zip(LEDGER, [COLORS["useful"], COLORS["reserved"], COLORS["slack"], COLORS["waste"],
                                  COLORS["free"]], strict=True))
LEDGER_LABELS = dict(zip(LEDGER, ["Token states", "Reserved but unused", "Last-page slack",
                                  "Free runs too short to use", "Free"], strict=True))
_LEDGER_SHORT = dict(zip(LEDGER, ["Token states", "Reserved, unused", "Last-page slack", "Runs too short",
                                  "Free"], strict=True))
POLICY_LABELS = {"reserved": "Reserved", "paged": "Paged"}
POLICY_COLORS = {"reserved": COLORS["reserved"], "paged": COLORS["decode"]}


def _discrete_scale() -> list[list]:
    """A colourscale mapping code k (placed at k + 0.5 on [0, _N_CODES]) to its colour, no blending."""
    colors = [*REQUEST_COLORS, *_STATE_COLORS]
    scale = []
    for k, c in enumerate(colors):
        scale += [[k / _N_CODES, c], [(k + 1) / _N_CODES, c]]
    return scale


_SCALE = _discrete_scale()


def _legend_below(fig: go.Figure, y: float, bottom_px: int, columns: int | None = None) -> go.Figure:
    """Move the legend under the plot (the house style puts it on top, where it meets the title).

    ``columns``: lay the entries out in that many equal columns (a horizontal legend that overflows
    otherwise falls back to one entry per row)."""
    legend = dict(orientation="h", yanchor="top", y=y, xanchor="left", x=0)
    if columns:
        legend.update(entrywidth=1 / columns, entrywidthmode="fraction")
    fig.update_layout(legend=legend, margin=dict(b=bottom_px))
    return fig


def pool_figure(run: PagingRun, step: int) -> go.Figure:
    """The pool at ``step`` as a grid of pages (row-major from the top left), one heatmap."""
    n, P = run.n_pages, run.page_tokens
    cols = math.ceil(math.sqrt(n))
    rows = math.ceil(n / cols)
    owner, block, fill, state = run.owner[step], run.block[step], run.fill[step], run.state[step]
    owned = owner >= 0
    # Tokens and pages each resident request holds at this step (for the hover).
    ids, inverse = np.unique(owner[owned], return_inverse=True)
    tokens_of = dict(zip(ids.tolist(), np.bincount(inverse, weights=fill[owned]).astype(int).tolist(),
                         strict=True))
    pages_of = dict(zip(ids.tolist(), np.bincount(inverse).tolist(), strict=True))
    head_need = int(run.head_need_pages[step])

    code = np.where(state == FULL, np.maximum(owner, 0) % _K, 0)
    for s, c in _CODE.items():
        code = np.where(state == s, c, code)
    text, hover = [], []
    for page in range(n):
        st, r, b, f = int(state[page]), int(owner[page]), int(block[page]), int(fill[page])
        if st in (FULL, PARTIAL, RESERVED_EMPTY):
            held = (f"Request {r}: {tokens_of[r]:,} tokens in {pages_of[r]} pages "
                    f"(prompt {int(run.prompt_tokens[r])}, output so far "
                    f"{tokens_of[r] - int(run.prompt_tokens[r])} of {int(run.output_tokens[r])})")
            if st == FULL:
                text.append(f"R{r}·{b}")
                hover.append(f"<b>Page {page}</b>: block {b} of request {r}, full ({f}/{P} tokens)<br>{held}")
            elif st == PARTIAL:
                text.append(f"R{r}·{b}<br>{f}/{P}")
                hover.append(f"<b>Page {page}</b>: block {b} of request {r}, its last page: {f}/{P} tokens, "
                             f"<b>{P - f} slots of slack</b><br>{held}")
            else:
                text.append(f"R{r}<br>empty")
                hover.append(f"<b>Page {page}</b>: reserved by request {r} for tokens it has not produced "
                             f"(and may never): <b>{P} slots reserved but unused</b><br>{held}")
        elif st == STRANDED:
            text.append("")
            hover.append(f"<b>Page {page}</b>: free, but in a run shorter than the {head_need} contiguous "
                         f"pages the next request in the queue needs: <b>{P} slots unusable</b>")
        else:
            text.append("")
            hover.append(f"<b>Page {page}</b>: free")
    pad = rows * cols - n
    z = np.concatenate([code + 0.5, np.full(pad, np.nan)]).reshape(rows, cols)
    text_grid = np.array([*text, *[""] * pad], dtype=object).reshape(rows, cols)
    hover_grid = np.array([*hover, *[""] * pad], dtype=object).reshape(rows, cols)

    fig = go.Figure(go.Heatmap(
        z=z, text=text_grid, texttemplate="%{text}", textfont=dict(size=11),
        hovertext=hover_grid, hovertemplate="%{hovertext}<extra></extra>",
        colorscale=_SCALE, zmin=0, zmax=_N_CODES, showscale=False, xgap=3, ygap=3,
    ))
    for name, color in (("Full page (colour: request)", REQUEST_COLORS[0]),
                        ("Last page, partly empty (slack)", COLORS["slack"]),
                        ("Reserved, still empty", COLORS["reserved"]),
                        ("Free, run too short to use", COLORS["waste"]),
                        ("Free", COLORS["free"])):
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name=name, hoverinfo="skip",
                                 marker=dict(symbol="square", size=12, color=color,
                                             line=dict(color=COLORS["muted"], width=0.5))))
    fig.update_xaxes(showticklabels=False, showgrid=False, range=[-0.5, cols - 0.5], fixedrange=True)
    fig.update_yaxes(showticklabels=False, showgrid=False, range=[rows - 0.5, -0.5], fixedrange=True,
                     scaleanchor="x")
    fig = style(fig, height=600, title=f"{POLICY_LABELS[run.policy]}: the {n}-page pool at step {step}")
    fig.update_layout(plot_bgcolor="white")
    return _legend_below(fig, -0.01, 60, columns=2)


def ledger_figure(comparison: Comparison, step: int) -> go.Figure:
    """Where the pool's memory goes, for both policies: at ``step`` and averaged over the run."""
    rows = []
    for run in (comparison.reserved, comparison.paged):
        label = POLICY_LABELS[run.policy]
        rows.append((label, f"step {step}", run.ledger_share[step]))
        rows.append((label, f"avg. steps {run.warmup_steps}–{run.n_steps - 1}", run.mean_ledger_share))
    fig = go.Figure()
    for i, part in enumerate(LEDGER):
        fig.add_trace(go.Bar(
            y=[[r[0] for r in rows], [r[1] for r in rows]], x=[100 * r[2][i] for r in rows],
            orientation="h", name=_LEDGER_SHORT[part], marker_color=LEDGER_COLORS[part],
            marker_line=dict(color=COLORS["grid"], width=1),
            hovertemplate=f"<b>{LEDGER_LABELS[part]}</b><br>%{{x:.1f}}% of the pool<extra></extra>",
        ))
    fig.update_layout(barmode="stack")
    fig.update_xaxes(range=[0, 100], ticksuffix="%")
    fig.update_yaxes(autorange="reversed")
    fig = style(fig, height=340, title="Where the memory goes (share of the pool's token slots)")
    fig = _legend_below(fig, -0.12, 70, columns=2)
    fig.update_layout(legend_traceorder="normal")
    return fig


def resident_figure(comparison: Comparison, step: int) -> go.Figure:
    """Requests resident at every step, both policies, with the selected step marked."""
    fig = go.Figure()
    steps = np.arange(comparison.reserved.n_steps)
    for run in (comparison.reserved, comparison.paged):
        label = POLICY_LABELS[run.policy]
        fig.add_trace(go.Scatter(
            x=steps, y=run.resident, name=label, mode="lines", line=dict(color=POLICY_COLORS[run.policy],
                                                                         width=2, shape="hv"),
            hovertemplate=f"<b>{label}</b>, step %{{x}}: %{{y}} requests resident<extra></extra>",
        ))
    fig.add_vline(x=step, line=dict(color=COLORS["muted"], width=1, dash="dot"))
    top = max(int(comparison.reserved.resident.max()), int(comparison.paged.resident.max()), 1)
    fig.update_xaxes(range=[0, steps[-1]], title="Step")
    fig.update_yaxes(range=[0, top * 1.1], title="Requests resident")
    return _legend_below(style(fig, height=290, title="Requests resident, step by step"), -0.3, 70)


def card_figure(fit: CardFit) -> go.Figure:
    """Decode throughput against batch size on the chosen card, with both policies' batch marked."""
    fig = go.Figure()
    fig.add_trace(go.Scatter(
        x=fit.curve_batch, y=fit.curve_tokens_per_s, mode="lines", name="Decode throughput",
        line=dict(color=COLORS["muted"], width=2),
        hovertemplate="batch %{x:,}: %{y:,.0f} tok/s<extra></extra>",
    ))
    for policy in ("reserved", "paged"):
        b, rate = fit.batch[policy], fit.tokens_per_s[policy]
        if b < 1:
            continue
        fig.add_trace(go.Scatter(
            x=[b], y=[rate], mode="markers+text", name=f"{POLICY_LABELS[policy]}: {b:,} requests fit",
            marker=dict(color=POLICY_COLORS[policy], size=14, line=dict(color="white", width=1.5)),
            text=[POLICY_LABELS[policy]], textposition="top left" if policy == "reserved" else "bottom right",
            textfont=dict(color=POLICY_COLORS[policy], size=13),
            hovertemplate=(f"<b>{POLICY_LABELS[policy]}</b>: {b:,} requests resident<br>"
                           f"{rate:,.0f} tok/s, step {fit.step_s[policy] * 1e3:.3g} ms<extra></extra>"),
        ))
    if math.isfinite(fit.compute_bound_batch) and fit.compute_bound_batch <= fit.curve_batch[-1]:
        fig.add_vline(x=fit.compute_bound_batch, line=dict(color=COLORS["compute"], width=1, dash="dot"))
        fig.add_annotation(x=math.log10(fit.compute_bound_batch), y=1, yref="paper", showarrow=False,
                           text=f"compute-bound from batch {fit.compute_bound_batch:,.0f}",
                           xanchor="left", xshift=4, font=dict(color=COLORS["compute"], size=12))
    fig.update_xaxes(type="log", title="Decode batch (requests resident)")
    fig.update_yaxes(rangemode="tozero", title="Decode throughput, tokens/s")
    fig = style(fig, height=400, title=f"Decode throughput on the {fit.gpu_name}")
    return _legend_below(fig, -0.2, 80)


def _step_hover(sched: Schedule, n_chunks: int) -> list[str]:
    out = []
    chunk_no = 0
    for q, prefix, seqs, t in zip(sched.chunk_tokens.tolist(), sched.prefix_tokens.tolist(),
                                  sched.decode_seqs.tolist(), sched.time_s.tolist(), strict=True):
        if q:
            chunk_no += 1
            what = f"{seqs} decode tokens + {q:,} prompt tokens"
            if sched.chunked:
                what += f" (chunk {chunk_no} of {n_chunks}, {prefix:,} already cached)"
        else:
            what = f"{seqs} decode tokens only"
        out.append(f"{what}<br><b>{t * 1e3:.3g} ms</b>: every decoding user waits this long for its "
                   "next token")
    return out


def chunked_figure(result: ChunkedPrefill) -> go.Figure:
    """Each step as a bar as wide as it lasts and as tall as the gap it makes decoders wait."""
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.12,
                        subplot_titles=("Unchunked: the whole prompt in one step",
                                        f"Chunked: {result.n_chunks} chunks of ≤ {result.chunk_tokens:,} "
                                        "tokens riding along with the decodes"))
    for row, sched in ((1, result.unchunked), (2, result.chunked)):
        n_chunks = int(sched.prefill_steps.size)
        prefill = sched.chunk_tokens > 0
        ms = sched.time_s * 1e3
        hover = np.array(_step_hover(sched, n_chunks), dtype=object)
        for is_prefill, name, color in ((False, "Decode-only step", COLORS["decode"]),
                                        (True, "Step carrying prompt tokens", COLORS["prefill"])):
            sel = prefill == is_prefill
            fig.add_trace(go.Bar(
                x=(sched.start_s[sel] * 1e3 + ms[sel] / 2), y=ms[sel], width=ms[sel], name=name,
                marker=dict(color=color, line=dict(color="white", width=0.5)), legendgroup=name,
                showlegend=row == 1, hovertext=hover[sel], hovertemplate="%{hovertext}<extra></extra>",
            ), row=row, col=1)
    top = max(result.unchunked.worst_gap_s, result.chunked.worst_gap_s) * 1e3 * 1.1
    end = max(result.unchunked.end_s[-1], result.chunked.end_s[-1]) * 1e3
    fig.update_yaxes(range=[0, top], title="Gap between tokens, ms")
    fig.update_xaxes(range=[0, end])
    fig.update_xaxes(title="Time since the first step shown, ms", row=2, col=1)
    fig.update_layout(bargap=0)
    fig = style(fig, height=500, title="What each decoding user waits between tokens")
    fig.update_annotations(font=dict(size=13), xanchor="left", x=0)
    return _legend_below(fig, -0.14, 80)


# --- Tables for the Data expander ----------------------------------------------------------------------

def steps_table(comparison: Comparison) -> pd.DataFrame:
    """One row per step: both policies' counts and ledgers, in token slots."""
    out = {"step": np.arange(comparison.reserved.n_steps)}
    for run in (comparison.reserved, comparison.paged):
        p = run.policy
        out[f"{p}_resident"] = run.resident
        out[f"{p}_waiting"] = run.waiting
        out[f"{p}_preempted"] = run.preempted
        out[f"{p}_finished"] = run.finished
        for i, part in enumerate(LEDGER):
            out[f"{p}_{part.replace(' ', '_')}_slots"] = run.ledger[:, i]
    return pd.DataFrame(out)


def pages_table(run: PagingRun, step: int) -> pd.DataFrame:
    """One row per page at ``step``: owner, block, tokens, state."""
    names = {FREE: "free", FULL: "full", PARTIAL: "partly full (slack)",
             RESERVED_EMPTY: "reserved, empty", STRANDED: "free, run too short"}
    return pd.DataFrame({
        "page": np.arange(run.n_pages),
        "request": run.owner[step],
        "block": np.where(run.owner[step] >= 0, run.block[step], -1),
        "tokens": run.fill[step],
        "state": [names[int(s)] for s in run.state[step]],
    })


def card_table(fit: CardFit) -> pd.DataFrame:
    return pd.DataFrame([{
        "policy": p,
        "kv_budget_bytes": fit.kv_budget_bytes,
        "slots_per_request_tokens": fit.slots_per_request[p],
        "context_tokens": fit.context_tokens,
        "requests_resident": fit.batch[p],
        "decode_step_s": fit.step_s[p],
        "decode_tokens_per_s": fit.tokens_per_s[p],
    } for p in ("reserved", "paged")])


def chunked_table(result: ChunkedPrefill) -> pd.DataFrame:
    frames = []
    for name, s in (("unchunked", result.unchunked), ("chunked", result.chunked)):
        frames.append(pd.DataFrame({
            "schedule": name, "step": np.arange(s.n_steps), "prompt_tokens": s.chunk_tokens,
            "prefix_cached_tokens": s.prefix_tokens, "decode_seqs": s.decode_seqs,
            "new_tokens": s.new_tokens, "flops": s.cost.flops, "bytes": s.cost.bytes,
            "start_s": s.start_s, "step_time_s": s.time_s,
            "bound": np.where(s.cost.memory_bound, "memory", "compute"),
        }))
    return pd.concat(frames, ignore_index=True)
