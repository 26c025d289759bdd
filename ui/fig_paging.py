"""Figures and tables for section 02 (reserved vs paged KV cache, and chunked prefill)."""

from __future__ import annotations

import base64
import math
from xml.sax.saxutils import escape

import numpy as np
import pandas as pd
import plotly.graph_objects as go

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
from ui import format as fmt
from ui.theme import COLORS, OKABE_ITO, PERCENT_TICKS, figure

# A full page holds token states: blue, as "Tokens" in the ledger beside it. Two shades alternate
# between requests so that neighbours stand apart; the cell label ("R9·2": request 9, block 2) carries
# the identity, so a shade never pretends to name a request. No page state uses blue (reddish purple:
# reserved, yellow: slack, vermillion: stranded).
REQUEST_COLORS = [OKABE_ITO[c] for c in ("blue", "sky_blue")]
_K = len(REQUEST_COLORS)
# Heatmap codes: 0.._K-1 a full page of a request (by colour), then the page states.
_CODE = {PARTIAL: _K, RESERVED_EMPTY: _K + 1, STRANDED: _K + 2, FREE: _K + 3}
_STATE_COLORS = [COLORS["slack"], COLORS["reserved"], COLORS["waste"], COLORS["free"]]
_N_CODES = _K + len(_STATE_COLORS)

LEDGER_COLORS = dict(zip(LEDGER, [REQUEST_COLORS[0], COLORS["reserved"], COLORS["slack"], COLORS["waste"],
                                  COLORS["free"]], strict=True))
LEDGER_LABELS = dict(zip(LEDGER, ["Token states", "Reserved, still empty", "Last-page slack",
                                  "Free runs too short to use", "Free"], strict=True))
_LEDGER_SHORT = dict(zip(LEDGER, ["Tokens", "Reserved", "Slack", "Too short", "Free"], strict=True))
POLICY_LABELS = {"reserved": "Reserved", "paged": "Paged"}
POLICY_COLORS = {"reserved": COLORS["reserved"], "paged": COLORS["decode"]}


# --- Assembly ------------------------------------------------------------------------------------------
# Five figures a rerun against a 50 ms budget: written as plain dicts and built by ``ui.theme.figure``
# in one unvalidated call; the tests rebuild every figure with ``ui.theme.validated``.


def _figure(data: list[dict], layout: dict, *, height: int, title: str | None,
            legend_below: float | None = None,
            legend_columns: int | None = None, bottom_px: int = 10) -> go.Figure:
    """A figure in the house style from trace and layout dicts.

    ``legend_below``: put the legend under the plot at this paper y (the house style puts it on top,
    where a long one meets the title); ``legend_columns`` lays its entries out in equal columns (a
    horizontal legend that overflows otherwise falls back to one entry per row). Every axis, also
    xaxis2 etc. of subplots, gets the house grid.
    """
    extra: dict = {"margin": {"b": bottom_px}}
    if legend_below is not None:
        extra["legend"] = {"yanchor": "top", "y": legend_below}
    if legend_columns:
        extra.setdefault("legend", {}).update(entrywidth=1 / legend_columns, entrywidthmode="fraction")
    grid = {"gridcolor": COLORS["grid"], "zeroline": False}
    for key, value in layout.items():
        if key.startswith(("xaxis", "yaxis")):
            extra[key] = {**grid, **value}
        elif key == "legend":  # merged: the figure's own legend settings keep ``legend_below``'s place
            extra[key] = {**extra.get(key, {}), **value}
        else:
            extra[key] = value
    return figure(data, extra, height=height, title=title)


def _vline(x: float, color: str, dash: str = "dot", xref: str = "x") -> dict:
    return dict(type="line", x0=x, x1=x, y0=0, y1=1, xref=xref, yref="paper",
                line=dict(color=color, width=1, dash=dash))


def _discrete_scale() -> list[list]:
    """A colourscale mapping code k (placed at k + 0.5 on [0, _N_CODES]) to its colour, no blending."""
    colors = [*REQUEST_COLORS, *_STATE_COLORS]
    scale = []
    for k, c in enumerate(colors):
        scale += [[k / _N_CODES, c], [(k + 1) / _N_CODES, c]]
    return scale


_SCALE = _discrete_scale()


def _label_color(cell_color: str) -> str:
    """The label colour on a cell, as Plotly's heatmap picks it (tinycolor's isLight: brightness of
    128 or more takes dark text)."""
    r, g, b = (int(cell_color[i:i + 2], 16) for i in (1, 3, 5))
    return "#444" if (r * 299 + g * 587 + b * 114) / 1000 >= 128 else "#fff"


_CODE_COLORS = [*REQUEST_COLORS, *_STATE_COLORS]


def labels_image(labels: list[list[str]], codes: list[list[int]], size_frac: float) -> dict:
    """Cell labels (rows x columns; '<br>' between lines) as one SVG layout image over a heatmap whose
    cells are 1 apart from 0: Plotly draws 64 texttemplate labels one ``<text>`` element at a time,
    measuring each: the pool's redraw on a toggle took 14-18 ms, 6-7 with the labels as one vector
    image, which also scales with the cells (``size_frac``: type size as a share of a cell) and stays
    sharp at any pixel ratio. ``codes``: each cell's colour code, for the label's contrast. The hover
    stays with the heatmap."""
    rows, cols, unit = len(labels), len(labels[0]), 100
    font = size_frac * unit
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {cols * unit} {rows * unit}" '
             f'font-family="Inter, \'Source Sans Pro\', Arial, sans-serif" font-size="{font:.1f}" '
             'text-anchor="middle">']
    for i, row in enumerate(labels):
        for j, label in enumerate(row):
            if not label:
                continue
            lines = label.split("<br>")
            fill = _label_color(_CODE_COLORS[codes[i][j]])
            for k, line in enumerate(lines):
                y = (i + 0.5) * unit + (k - (len(lines) - 1) / 2) * 1.2 * font + 0.35 * font
                parts.append(f'<text x="{(j + 0.5) * unit:.0f}" y="{y:.1f}" fill="{fill}">'
                             f'{escape(line)}</text>')
    parts.append("</svg>")
    return dict(source="data:image/svg+xml;base64," + base64.b64encode("".join(parts).encode()).decode(),
                xref="x", yref="y", x=-0.5, y=-0.5, sizex=cols, sizey=rows, xanchor="left", yanchor="top",
                sizing="stretch", layer="above")


# --- Figures -------------------------------------------------------------------------------------------

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
    # More than 8 pages a row (8-token pages cut the pool into 128): shorter labels, smaller type, so
    # they stay inside their cells on a phone; the hover keeps the whole story.
    dense = cols > 8
    for page in range(n):
        st, r, b, f = int(state[page]), int(owner[page]), int(block[page]), int(fill[page])
        if st in (FULL, PARTIAL, RESERVED_EMPTY):
            prompt = int(run.prompt_tokens[r])
            held = (f"Request {r}: {tokens_of[r]:,} tokens in {pages_of[r]} pages (prompt {prompt}, "
                    f"output so far {tokens_of[r] - prompt} of {int(run.output_tokens[r])})")
            if st == FULL:
                text.append(f"R{r}" if dense else f"R{r}·{b}")
                hover.append(f"<b>Page {page}</b>: block {b} of request {r}, full ({f}/{P} tokens)<br>{held}")
            elif st == PARTIAL:
                text.append(f"{f}/{P}" if dense else f"R{r}·{b}<br>{f}/{P}")
                hover.append(f"<b>Page {page}</b>: block {b} of request {r}, its last page: {f}/{P} tokens, "
                             f"<b>{P - f} slots of slack</b><br>{held}")
            else:
                text.append(f"R{r}" if dense else f"R{r}<br>empty")
                hover.append(f"<b>Page {page}</b>: reserved by request {r} for tokens it has not produced "
                             f"(and may never): <b>{P} slots reserved, still empty</b><br>{held}")
        elif st == STRANDED:
            text.append("")
            hover.append(f"<b>Page {page}</b>: free, but in a run shorter than the {head_need} contiguous "
                         f"pages the next request in the queue needs: <b>{P} slots unusable</b>")
        else:
            text.append("")
            hover.append(f"<b>Page {page}</b>: free")
    pad = rows * cols - n
    z = np.concatenate([code + 0.5, np.full(pad, np.nan)]).reshape(rows, cols)
    # Plain nested lists: Plotly's JSON encoder walks object arrays element by element (slow).
    text_grid = np.array([*text, *[""] * pad], dtype=object).reshape(rows, cols).tolist()
    hover_grid = np.array([*hover, *[""] * pad], dtype=object).reshape(rows, cols).tolist()
    code_grid = np.concatenate([code, np.zeros(pad, int)]).astype(int).reshape(rows, cols).tolist()

    data = [dict(
        type="heatmap", z=z,
        hovertext=hover_grid, hovertemplate="%{hovertext}<extra></extra>",
        colorscale=_SCALE, zmin=0, zmax=_N_CODES, showscale=False, xgap=3, ygap=3,
    )]
    for name, color in (("Full page of tokens", REQUEST_COLORS[0]),
                        ("Full page, the next request (they alternate)", REQUEST_COLORS[1]),
                        ("Last page, partly empty (slack)", COLORS["slack"]),
                        ("Reserved, still empty", COLORS["reserved"]),
                        ("Free, run too short to use", COLORS["waste"]),
                        ("Free", COLORS["free"])):
        data.append(dict(type="scatter", x=[None], y=[None], mode="markers", name=name, hoverinfo="skip",
                         marker=dict(symbol="square", size=12, color=color,
                                     line=dict(color=COLORS["muted"], width=0.5))))
    layout = dict(
        plot_bgcolor="white",
        xaxis=dict(showticklabels=False, ticks="", showgrid=False, range=[-0.5, cols - 0.5], fixedrange=True),
        # Square cells, the grid pinned to the top (any spare height goes below it, under the legend).
        yaxis=dict(showticklabels=False, ticks="", showgrid=False, range=[rows - 0.5, -0.5], fixedrange=True,
                   scaleanchor="x", constrain="domain", constraintoward="top"),
        margin=dict(t=4, l=4, r=4),
        # the labels' type: 11 px in a 48 px cell at 1280 px, 9 px in a 32 px cell when dense
        images=[labels_image(text_grid, code_grid, 9 / 32 if dense else 11 / 48)],
    )
    # No title inside: the page writes it above the chart (``pool_title``), so nothing competes with it.
    return _figure(data, layout, height=400, title=None, legend_below=-0.01, legend_columns=2, bottom_px=4)


def pool_title(run: PagingRun, step: int) -> str:
    return f"{POLICY_LABELS[run.policy]}: the {run.n_pages}-page pool at step {step}"


def ledger_figure(comparison: Comparison, step: int) -> go.Figure:
    """Where the pool's memory goes, for both policies: at ``step`` and averaged over the run."""
    rows = []
    for run in (comparison.reserved, comparison.paged):
        label = POLICY_LABELS[run.policy]
        rows.append((label, f"step {step}", run.ledger_share[step]))
        rows.append((label, f"avg. steps {run.warmup_steps}–{run.n_steps - 1}", run.mean_ledger_share))
    y = [[r[0] for r in rows], [r[1] for r in rows]]
    data = [dict(
        type="bar", y=y, x=[100 * float(r[2][i]) for r in rows], orientation="h", name=_LEDGER_SHORT[part],
        marker=dict(color=LEDGER_COLORS[part], line=dict(color="white", width=1.5)),
        hovertemplate=f"<b>{LEDGER_LABELS[part]}</b><br>%{{x:.1f}}% of the pool<extra></extra>",
    ) for i, part in enumerate(LEDGER)]
    layout = dict(barmode="stack", legend=dict(traceorder="normal"),
                  xaxis=dict(range=[0, 104], **PERCENT_TICKS),
                  yaxis=dict(autorange="reversed"),
                  margin=dict(t=10, b=70))  # nothing drawn above the bars: title and legend are page text
    # The page draws the legend as text above the chart (``legend_at``): Plotly's, on top, stacked its
    # five entries one a line in the page's narrow column; below the bars they ran into each other.
    return _figure(data, layout, height=300, title="Where the memory goes (share of the pool's token slots)")


def resident_figure(comparison: Comparison, step: int) -> go.Figure:
    """Requests resident at every step, both policies, with the selected step marked."""
    steps = np.arange(comparison.reserved.n_steps)
    data = []
    for run in (comparison.reserved, comparison.paged):
        label = POLICY_LABELS[run.policy]
        data.append(dict(
            type="scatter", x=steps, y=run.resident, name=label, mode="lines",
            line=dict(color=POLICY_COLORS[run.policy], width=2, shape="hv"),
            hovertemplate=f"<b>{label}</b>, step %{{x}}: %{{y}} requests resident<extra></extra>",
        ))
    top = max(int(comparison.reserved.resident.max()), int(comparison.paged.resident.max()), 1)
    layout = dict(shapes=[_vline(step, COLORS["muted"])],
                  xaxis=dict(range=[0, int(steps[-1])], title=dict(text="Step")),
                  yaxis=dict(range=[0, top * 1.1], title=dict(text="Requests resident")))
    return _figure(data, layout, height=290, title="Requests resident, step by step", legend_below=-0.5,
                   bottom_px=80)


def card_figure(fit: CardFit, measured: dict | None = None, offline: list[dict] | None = None,
                on: str | None = None) -> go.Figure:
    """Decode throughput against batch size on the chosen card (``on``: what runs it, in words, "the
    H100 SXM" or "8 x MI300X"; default the card), with both policies' batch marked;
    ``measured`` is a trace of engines' measured static batches (``ui.measured.batch_trace``),
    ``offline`` the traces of measured offline runs and the model's values for them
    (``ui.measured.offline_traces``)."""
    data = [dict(
        type="scatter", x=fit.curve_batch, y=fit.curve_tokens_per_s, mode="lines", name="Decode throughput",
        line=dict(color=COLORS["muted"], width=2),
        hovertemplate="batch %{x:,}: %{y:,.0f} tok/s<extra></extra>",
    )]
    for policy in ("reserved", "paged"):
        n, b, rate = fit.batch[policy], fit.run_batch[policy], fit.tokens_per_s[policy]
        if b < 1:
            continue
        capped = b < n
        data.append(dict(
            # named by the legend only: two text labels beside close points overlapped on a phone
            type="scatter", x=[b], y=[rate], mode="markers",
            name=(f"{POLICY_LABELS[policy]}: {n:,} fit, {b:,} run (max_num_seqs)" if capped
                  else f"{POLICY_LABELS[policy]}: {n:,} requests fit"),
            marker=dict(color=POLICY_COLORS[policy], size=14, line=dict(color="white", width=1.5)),
            hovertemplate=(f"<b>{POLICY_LABELS[policy]}</b>: {n:,} requests resident"
                           + (f", {b:,} decoding at once (the engine's max_num_seqs)" if capped else "")
                           + f"<br>{rate:,.0f} tok/s, step {fmt.sig(fit.step_s[policy] * 1e3)} ms"
                           "<extra></extra>"),
        ))
    if measured:
        data.append(measured)
    data.extend(offline or ())
    shapes, notes = [], []
    top = int(fit.batch["paged"])  # the KV budget holds no more requests than the paged policy fits
    if top < fit.curve_batch[-1]:
        shapes.append(dict(type="rect", xref="x", yref="paper", x0=max(top, 1), x1=fit.curve_batch[-1],
                           y0=0, y1=1, fillcolor=COLORS["muted"], opacity=0.18, line=dict(width=0),
                           layer="below"))
        # inside the band where it is wide; where it is narrow, ending at its edge (the text ran past
        # the band's end and off the chart)
        lo, hi = math.log10(max(fit.curve_batch[0], 1)), math.log10(fit.curve_batch[-1])
        wide = (hi - math.log10(max(top, 1))) > 0.35 * (hi - lo)
        notes.append(dict(x=math.log10(max(top, 1)), y=0.08, yref="paper", showarrow=False,
                          text="does not fit in memory" if wide else "does not fit →",
                          xanchor="left" if wide else "right", xshift=4 if wide else -4,
                          font=dict(color=COLORS["muted"], size=12)))
    # The curve's own range, fixed: Plotly widens an autoranged axis until every annotation's text fits,
    # and on a phone the compute-bound label stretched this log axis to 10^12 batches.
    xs = [float(fit.curve_batch[0]), float(fit.curve_batch[-1])]
    xs += [float(v) for t in (measured, *(offline or ())) if t for v in t.get("x", ()) if v and v > 0]
    x_lo, x_hi = math.log10(max(min(xs), 1.0)), math.log10(max(xs))
    pad = 0.02 * (x_hi - x_lo)  # the end markers whole
    if math.isfinite(fit.compute_bound_batch) and fit.compute_bound_batch <= fit.curve_batch[-1]:
        shapes.append(_vline(fit.compute_bound_batch, COLORS["compute"]))
        x = math.log10(max(fit.compute_bound_batch, 1.0))
        left = x <= x_lo + 0.5 * (x_hi - x_lo)  # the text runs away from the nearer edge
        notes.append(dict(x=x, y=1, yref="paper", yanchor="top", showarrow=False,
                          align="left" if left else "right",
                          # the first whole batch at or past the crossover, as the page's metric says; on
                          # three short lines: on one (about 215 px) it ran off a phone's chart where
                          # the line sits near the middle (Llama-3.1-405B on 8 x H200: batch 143)
                          text=f"whole step<br>compute-bound<br>from batch "
                               f"{max(math.ceil(fit.compute_bound_batch), 1):,}",
                          xanchor="left" if left else "right",
                          xshift=4 if left else -4, font=dict(color=COLORS["compute"], size=12)))
    layout = dict(shapes=shapes, annotations=notes,
                  xaxis=dict(type="log", range=[x_lo - pad, x_hi + pad],
                             title=dict(text="Decode batch (requests resident)")),
                  yaxis=dict(rangemode="tozero", title=dict(text="Decode throughput, tokens/s")))
    return _figure(data, layout, height=420, title=f"Decode throughput on {on or 'the ' + fit.gpu_name}",
                   legend_below=-0.3, bottom_px=110)


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
        out.append(f"{what}<br><b>{fmt.sig(t * 1e3)} ms</b>: every decoding user waits this long for its "
                   "next token")
    return out


def chunked_figure(result: ChunkedPrefill) -> go.Figure:
    """Each step as a bar as wide as it lasts and as tall as the gap it makes decoders wait; unchunked
    on top, chunked below, on the same axes."""
    data = []
    for row, sched in ((1, result.unchunked), (2, result.chunked)):
        prefill = sched.chunk_tokens > 0
        ms = sched.time_s * 1e3
        hover = np.array(_step_hover(sched, int(sched.prefill_steps.size)), dtype=object)
        for is_prefill, name, color in ((False, "Decode-only step", COLORS["decode"]),
                                        (True, "Step carrying prompt tokens", COLORS["prefill"])):
            sel = prefill == is_prefill
            data.append(dict(
                type="bar", x=sched.start_s[sel] * 1e3 + ms[sel] / 2, y=ms[sel], width=ms[sel], name=name,
                marker=dict(color=color, line=dict(color="white", width=0.5)), legendgroup=name,
                showlegend=row == 1, hovertext=hover[sel].tolist(),
                hovertemplate="%{hovertext}<extra></extra>",
                xaxis="x" if row == 1 else "x2", yaxis="y" if row == 1 else "y2",
            ))
    top = max(result.unchunked.worst_gap_s, result.chunked.worst_gap_s) * 1e3 * 1.1
    end = float(max(result.unchunked.end_s[-1], result.chunked.end_s[-1])) * 1e3
    gap_title = dict(text="Gap between tokens, ms")
    titles = ("Unchunked: the whole prompt<br>in one step",
              f"Chunked: {result.n_chunks} chunks of ≤ {result.chunk_tokens:,} tokens<br>riding along with "
              "the decodes")
    layout = dict(
        bargap=0,
        xaxis=dict(range=[0, end], anchor="y", showticklabels=False),
        yaxis=dict(range=[0, top], domain=[0.56, 0.88], title=gap_title),
        xaxis2=dict(range=[0, end], anchor="y2", matches="x", title=dict(text="Time since the first step "
                                                                         "shown, ms")),
        yaxis2=dict(range=[0, top], domain=[0, 0.33], title=gap_title),
        annotations=[dict(text=t, x=0, y=y, xref="paper", yref="paper", xanchor="left", yanchor="bottom",
                          showarrow=False, font=dict(size=13), align="left")
                     for t, y in zip(titles, (0.89, 0.34), strict=True)],
    )
    return _figure(data, layout, height=540, title="What each decoding user waits between tokens",
                   legend_below=-0.2, bottom_px=110)


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
    """One row per page at ``step``: owner, block, tokens, state. A page no request holds has no
    request or block (blank in the table and the CSV, not a -1 placeholder)."""
    names = {FREE: "free", FULL: "full", PARTIAL: "partly full (slack)",
             RESERVED_EMPTY: "reserved, empty", STRANDED: "free, run too short"}
    held = run.owner[step] >= 0
    return pd.DataFrame({
        "page": np.arange(run.n_pages),
        "request": pd.Series(run.owner[step], dtype="Int64").where(held),
        "block": pd.Series(run.block[step], dtype="Int64").where(held),
        "tokens": run.fill[step],
        "state": pd.Series([names[int(s)] for s in run.state[step]], dtype=object),
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
    for s in (result.unchunked, result.chunked):
        frames.append(pd.DataFrame({
            "chunked": s.chunked, "step": np.arange(s.n_steps), "prompt_tokens": s.chunk_tokens,
            "prefix_cached_tokens": s.prefix_tokens, "decode_seqs": s.decode_seqs,
            "new_tokens": s.new_tokens, "flops": s.cost.flops, "bytes": s.cost.bytes,
            "start_s": s.start_s, "step_time_s": s.time_s,
            "memory_bound": s.cost.memory_bound,
        }))
    return pd.concat(frames, ignore_index=True)
