"""The "Your numbers" page's shared pieces: which sidebar assumptions a fit may move, how a fit
is applied to the sidebar (and so to every page and the URL), and its figure and tables."""

from __future__ import annotations

import html
import math

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from calib.fit import FitResult
from sim.cost import Assumptions
from sim.truth import Prediction
from ui.measured import conditions, conditions_html
from ui.state import request_app_rerun
from ui.theme import COLORS, figure

#: Sidebar slider key -> (assumption, factor from the assumption's unit to the slider's, the
#: slider's (min, max), its step, a label). The fit moves these; the sliders carry them in the URL.
SLIDERS = {
    "compute_eff": ("compute_eff", 1.0, (0.1, 1.0), 0.005, "Compute efficiency"),
    "memory_eff": ("memory_eff", 1.0, (0.3, 1.0), 0.005, "Bandwidth efficiency"),
    "overhead_us": ("host_overhead_s", 1e6, (0.0, 2000.0), 10.0, "Host overhead per step, µs"),
    "seq_host_us": ("sequence_host_s", 1e6, (0.0, 100.0), 0.1, "Host time per sequence per step, µs"),
    "graph_us": ("graph_kernel_s", 1e6, (0.0, 20.0), 0.1, "Kernel cost in a CUDA graph, µs"),
    "launch_us": ("kernel_launch_s", 1e6, (0.0, 100.0), 0.5, "Kernel cost without a graph, µs"),
}
FIT_NAMES = tuple(v[0] for v in SLIDERS.values())
LABELS = {v[0]: v[4] for v in SLIDERS.values()}


PRIOR_WEIGHT = 0.1
#: The most a paste into the page's text box may hold, in characters (a larger file is uploaded: 1 MB).
MAX_PASTE_CHARS = 200_000


def default_fit_names(rows) -> list[str]:
    """What a fit moves unless the reader says otherwise: the bandwidth and the host time (what
    decode-bound runs decide), plus the compute efficiency where a run is math-heavy (a TTFT, an
    offline run, a static batch of 64 or more). Few runs cannot decide six assumptions; freeing
    one the runs barely touch lets it absorb whatever the model misses (a compute efficiency of
    0.1 explaining a server's overhead). Fewer than there are runs, at least one: as many as the runs
    fit them exactly, and the fit's error says nothing."""
    names = ["memory_eff", "host_overhead_s"]
    if any(r.kind in ("ttft_ms", "offline_tok_s") or (r.batch or 0) >= 64 for r in rows):
        names.insert(0, "compute_eff")
    return names[:max(1, len(rows) - 1)]


def slider_bounds() -> dict[str, tuple[float, float]]:
    """The fit's bounds in each assumption's own unit: the sliders' ranges."""
    return {name: (lo / f, hi / f) for name, f, (lo, hi), *_ in SLIDERS.values()}


def slider_values(a: Assumptions) -> dict[str, float]:
    """The sidebar slider values for ``a``, rounded to each slider's step and held to its range."""
    out = {}
    for key, (name, factor, (lo, hi), step, _) in SLIDERS.items():
        value = round(getattr(a, name) * factor / step) * step
        out[key] = float(min(max(value, lo), hi))
        out[key] = round(out[key], 6)
    return out


APPLIED_KEY = "_yours_applied"


def apply_to_sidebar(values: dict[str, float]) -> None:
    """A button callback: set the sidebar's sliders (every page reads them; the URL binds them)."""
    for key, value in values.items():
        st.session_state[key] = value
    st.session_state[APPLIED_KEY] = dict(values)
    request_app_rerun()  # the button is on a page (a fragment): the sidebar must redraw too


def errors_figure(result: FitResult) -> go.Figure:
    """Each row's signed error at the sidebar's assumptions and after the fit."""
    ids = [html.escape(p.row.id) for p in result.before]  # axis labels render Plotly's HTML subset
    traces = []
    for name, preds, color in (("Before the fit", result.before, COLORS["muted"]),
                               ("After the fit", result.after, COLORS["decode"])):
        traces.append(dict(
            type="bar", orientation="h", y=ids, x=[100 * p.error for p in preds], name=name,
            marker=dict(color=color),
            hovertemplate=[f"<b>{html.escape(p.row.id)}</b> ({name.lower()}): model {p.model_value:,.4g} vs "
                           f"measured {p.row.value:,.4g} {html.escape(p.row.unit)}, %{{x:+.1f}}%<br>"
                           f"{conditions_html(p.row)}<extra></extra>" for p in preds],
        ))
    layout = dict(barmode="group", xaxis=dict(title="Model's signed error, %", ticksuffix="%", zeroline=True,
                                              zerolinecolor=COLORS["text"]),
                  yaxis=dict(autorange="reversed", automargin=True))
    return figure(traces, layout, height=120 + 44 * len(ids))


def rows_table(preds: list[Prediction]) -> pd.DataFrame:
    """The rows as read, with the model's value at the current assumptions."""
    return pd.DataFrame([{
        "id": p.row.id, "kind": p.row.kind, "conditions": conditions(p.row),
        "measured": p.row.value, "unit": p.row.unit,
        "model": p.model_value if p.model_value is not None else math.nan,
        "error": f"{p.error:+.1%}" if p.error is not None else p.reason,
    } for p in preds])


def _sig(value: float, digits: int = 4) -> float:
    """``value`` to ``digits`` significant digits (a table of 379.2419 µs reads as 379.2); below
    0.001 (a host time fitted to its bound of 0 read 1.731e-08 µs) it is 0."""
    return 0.0 if abs(value) < 1e-3 else float(f"{value:.{digits}g}")


def at_bound(result: FitResult) -> dict[str, str]:
    """Fitted assumptions that ended on a bound of the fit (the sliders' ranges): name -> 'upper' or
    'lower'. A value there is what the runs asked for but the range does not allow: the model misses
    something in them, and the fit's remaining error is that."""
    out = {}
    for name, (lo, hi) in slider_bounds().items():
        if name in result.fitted:
            v, tol = getattr(result.assumptions, name), 1e-4 * (hi - lo)
            if v >= hi - tol:
                out[name] = "upper"
            elif v <= lo + tol:
                out[name] = "lower"
    return out


def assumptions_table(start: Assumptions, result: FitResult) -> pd.DataFrame:
    rows = []
    bound = at_bound(result)
    for key, (name, factor, *_rest, label) in SLIDERS.items():
        rows.append({"assumption": label, "now": _sig(getattr(start, name) * factor),
                     "fitted": _sig(getattr(result.assumptions, name) * factor),
                     "applied as": slider_values(result.assumptions)[key],
                     "free in the fit": "yes" if name in result.fitted else "no",
                     "note": f"at its {bound[name]} bound" if name in bound else ""})
    return pd.DataFrame(rows)
