"""Fit the cost model's named assumptions to measured rows: one fit for the calibration script
(``scripts/calibrate.py``, which made the defaults) and for a reader's own benchmark (the "Your
measurements" panel).

Least squares on log time with a soft-L1 loss (20 % scale): rows within ~20 % count as squares, rows
further off (harness effects the model does not name) count linearly, so one odd row cannot drag the
rest. Every row counts once, with the same assumptions for every row. The microbenchmark kinds
(``gemm_tflops``, ``hbm_tbps``) bound the efficiencies and are not fitted to.

A reader's benchmark often has a handful of rows, fewer than the six assumptions: those rows then
cannot decide every assumption. ``prior_weight`` adds one residual per assumption that pulls it
towards its starting value (in units of its scale), so the assumptions the rows do not constrain stay
where they were and the ones they do move; the calibration script fits with no prior.

This module uses SciPy's ``least_squares`` (bounded trust-region reflective); ``sim`` stays numpy only.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import least_squares

from sim.cost import DEFAULT_ASSUMPTIONS, Assumptions
from sim.truth import Prediction, Row, predict

#: (name, lower, upper, scale): the fitted assumptions and their bounds. The efficiencies are shares
#: of each GPU's own microbenchmarks (its best GEMM, its STREAM-like copy), so they stay at or below
#: 1: a serving kernel never beats what the GPU's microbenchmark reached. The time constants stay
#: inside what such costs physically are.
PARAMS: tuple[tuple[str, float, float, float], ...] = (
    ("compute_eff", 0.30, 1.0, 1.0),
    ("memory_eff", 0.50, 1.0, 1.0),
    # Host time with the GPU idle: at most 0.5 ms a step. Dashboards read nvidia-smi at ~90-100 %
    # during decode; more idle time than that would contradict them.
    ("host_overhead_s", 0.0, 0.5e-3, 1e-3),
    ("kernel_launch_s", 2e-6, 20e-6, 1e-5),  # CUDA launch (~4 us) to eager PyTorch dispatch (~20 us)
    ("graph_kernel_s", 0.5e-6, 3e-6, 1e-5),  # a graph-replayed kernel's fixed cost
    # An all-reduce hop (2(n-1) an all-reduce, besides the kernel's fixed cost): from a fraction of a
    # microsecond (NCCL's tuning model: 0.47 us a ring hop on NVLink) to 5 us (70 us on 8 GPUs, above
    # nccl-tests' 25-45 us there).
    ("allreduce_hop_s", 0.1e-6, 5e-6, 1e-6),
    # Host time per sampling sequence a step: none (C++ runtimes overlapping it) to 50 us (Python
    # engines' per-request bookkeeping, as vLLM V0's).
    ("sequence_host_s", 0.0, 50e-6, 1e-5),
)
PARAM_NAMES = tuple(p[0] for p in PARAMS)
MICROBENCHMARKS = ("gemm_tflops", "hbm_tbps")
#: Rates, not times: their residual is inverted so every residual is log(model time / measured time).
RATE_KINDS = ("static_batch_tok_s", "offline_tok_s")
SOFT_L1_SCALE = 0.2


@dataclass(frozen=True)
class FitResult:
    """What a fit found, and how the rows sit before and after it."""

    assumptions: Assumptions
    rms_log_error: float  # over the fitted rows, after the fit
    rows: tuple[Row, ...]  # the rows that were fitted
    before: tuple[Prediction, ...]  # at the starting assumptions
    after: tuple[Prediction, ...]  # at the fitted assumptions
    fitted: tuple[str, ...]  # the assumptions that were free


def _predict(row: Row, a: Assumptions, setups: dict | None) -> Prediction:
    return predict(row, a, setup=(setups or {}).get(row.id))


def fitted_rows(rows: Sequence[Row], setups: dict | None = None,
                start: Assumptions = DEFAULT_ASSUMPTIONS) -> list[Row]:
    """The rows a fit can use: not microbenchmarks, and expressible by the model."""
    return [r for r in rows if r.kind not in MICROBENCHMARKS
            and _predict(r, start, setups).model_value is not None]


def assumptions_from(x: np.ndarray, start: Assumptions = DEFAULT_ASSUMPTIONS,
                     names: Sequence[str] = PARAM_NAMES) -> Assumptions:
    scale = {n: s for n, *_, s in PARAMS}
    values = {n: float(v * scale[n]) for n, v in zip(names, x, strict=True)}
    return dataclasses.replace(start, **values)


def log_time_errors(predictions: Sequence[Prediction]) -> np.ndarray:
    """log(model time / measured time) for each prediction (rates inverted)."""
    out = []
    for p in predictions:
        sign = -1.0 if p.row.kind in RATE_KINDS else 1.0
        out.append(sign * np.log(p.model_value / p.row.value))
    return np.array(out)


def loss(predictions: Sequence[Prediction]) -> float:
    """The fit's objective at these predictions: sum of 2 s^2 (sqrt(1 + (r / s)^2) - 1) over the
    log-time residuals r (s = SOFT_L1_SCALE), twice the cost least_squares reports (same minimum)."""
    r = log_time_errors(predictions) / SOFT_L1_SCALE
    return float(np.sum(2.0 * SOFT_L1_SCALE**2 * (np.sqrt(1.0 + r**2) - 1.0)))


def fit(rows: Sequence[Row], start: Assumptions = DEFAULT_ASSUMPTIONS, *,
        names: Sequence[str] = PARAM_NAMES, prior_weight: float = 0.0,
        setups: dict | None = None, start_inset: float = 0.05,
        bounds: dict[str, tuple[float, float]] | None = None) -> FitResult:
    """Fit the assumptions ``names`` to ``rows`` from ``start``. ``setups`` maps a row id to the
    (gpu, model) it ran on, for rows whose GPU or model is not a preset (a reader's own setup).
    ``start_inset``: the search starts this share of each bound's range inside it (see below).
    ``bounds``: name -> (lower, upper) in the assumption's own unit, replacing PARAMS' bounds (the
    app's sliders allow a wider range than the calibration's physical bounds).
    Raises ValueError when no row can be fitted."""
    rows = fitted_rows(rows, setups, start)
    if not rows:
        raise ValueError("no row the model can express: nothing to fit")
    given = bounds or {}
    bounds = {n: (*given.get(n, (lo, hi)), s) for n, lo, hi, s in PARAMS}
    unknown = [n for n in names if n not in bounds]
    if unknown:
        raise ValueError(f"not a fitted assumption: {', '.join(unknown)}")
    x0 = np.array([getattr(start, n) / bounds[n][2] for n in names])
    lo = np.array([bounds[n][0] / bounds[n][2] for n in names])
    hi = np.array([bounds[n][1] / bounds[n][2] for n in names])
    # Start a little inside the bounds: a default at its bound (several are) sits where the
    # trust-region search takes no step outward, and it could stay there.
    inset = start_inset * (hi - lo)
    x_start = np.clip(x0, lo, hi)
    x0 = np.clip(x0, lo + inset, hi - inset)

    def residuals(x):
        a = assumptions_from(x, start, names)
        r = log_time_errors([_predict(row, a, setups) for row in rows])
        if prior_weight > 0:
            r = np.concatenate([r, prior_weight * (x - x_start)])
        return r

    res = least_squares(residuals, x0, bounds=(lo, hi), method="trf", loss="soft_l1",
                        f_scale=SOFT_L1_SCALE)
    fitted = assumptions_from(res.x, start, names)
    before = tuple(_predict(r, start, setups) for r in rows)  # the reader's start, not the inset
    after = tuple(_predict(r, fitted, setups) for r in rows)
    rms = float(np.sqrt(np.mean(log_time_errors(after) ** 2)))
    return FitResult(fitted, rms, tuple(rows), before, after, tuple(names))
