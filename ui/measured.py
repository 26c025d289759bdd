"""Measured points on the model's own charts: one helper for every page.

The rows are the shipped copy of measured.csv (``sim.measured``) that match the sidebar's setup
exactly: the GPU preset, the model, both precisions and the GPU count. Each is priced by
``sim.truth.predict`` at the row's own conditions and the sidebar's assumptions, so the signed
error on hover is the model's error for that run, not for the slider's settings.
"""

from __future__ import annotations

import dataclasses
import html
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from sim.cost import decode_step_cost, prefill_cost
from sim.gap import Gap, explain_decode, explain_prefill
from sim.measured import rows_for
from sim.models import INT4_GROUP
from sim.truth import Prediction, Row, int4_group_for, kv_policy_for, offline_run_batch, predict, row_lengths
from ui import format as fmt
from ui.theme import COLORS


@dataclass(frozen=True)
class MeasuredPoint:
    """A measured row placed on a roofline: the step it describes, as the model counts its FLOP
    and bytes, run in the time the engine measured (and in the model's time)."""

    prediction: Prediction
    phase: str  # "decode" or "prefill"
    intensity: float  # FLOP / byte of the step
    measured_tflops: float  # the step's FLOP / measured seconds, TFLOP/s
    model_tflops: float  # the step's FLOP / the model's seconds at the row's conditions
    gap: Gap | None = None  # the step from the roofline floor to the estimate (sim.gap)
    measured_step_s: float = 0.0

    @property
    def row(self) -> Row:
        return self.prediction.row


def predictions(setup, kinds: tuple[str, ...]) -> list[Prediction]:
    """The rows of ``kinds`` measured on exactly this setup, each with the model's value."""
    return list(_predictions(setup.gpu, setup.model, setup.assumptions, tuple(kinds)))


# Pricing a setup's rows is a pure function of the setup, and pages ask for it on every rerun (an
# online row alone iterates its queue 50 times): computed once per setup, bounded.
@lru_cache(maxsize=128)
def _predictions(gpu, model, assumptions, kinds: tuple[str, ...]) -> tuple[Prediction, ...]:
    rows = rows_for(gpu.name, model, kinds)
    return tuple(p for p in (predict(r, assumptions, setup=(gpu, _as_run(model, r))) for r in rows)
                 if p.model_value is not None)


def _as_run(model, row: Row):
    """The sidebar's model as the row's engine stored it: INT4 with that engine's group (gpt-fast's
    32, not AWQ's 128), so a page prices a run as ``python -m sim.truth`` does."""
    group = int4_group_for(row.engine)
    if model.weight_dtype != "int4" or group == model.int4_group:
        return model
    return dataclasses.replace(model, int4_group=group)


def conditions_html(row: Row) -> str:
    """``conditions`` escaped for Plotly's hover text, which renders an HTML subset (the engine column
    is free text), the engine on a line of its own: a hover box wider than its chart is cut off."""
    engine, _, rest = conditions(row).rpartition("; ")  # the engine's own name may hold a "; "
    return html.escape(engine) + "<br>" + html.escape(rest)


def conditions(row: Row) -> str:
    """The run's conditions in a few words, as plain text (a table shows it as written)."""
    parts = []
    if row.batch:
        parts.append(f"batch {row.batch}")
    if row.concurrency:
        parts.append(f"concurrency {row.concurrency}")
    if row.qps:
        parts.append(f"{row.qps:g} req/s")
    if row.requests and row.kind == "offline_tok_s":
        parts.append(f"{row.requests:,} requests")
    if row.prompt_tokens is not None:
        parts.append(f"prompt {row.prompt_tokens:,}")
    if row.output_tokens is not None:
        parts.append(f"output {row.output_tokens:,}")
    if row.weights == "int4" and int4_group_for(row.engine) != INT4_GROUP:
        parts.append(f"INT4 in groups of {int4_group_for(row.engine)}")
    return f"{row.engine}; " + ", ".join(parts)


def _batch(row: Row) -> int:
    return row.batch or row.concurrency or 1


def _step_s(row: Row, value: float) -> tuple[str, float] | None:
    """(phase, seconds of one step) for a row with a value in the row's unit, or None."""
    if row.kind == "static_batch_tok_s":
        return "decode", (row.batch or 1) / value
    if row.kind == "tpot_ms" and row.concurrency:
        return "decode", value / 1e3
    if row.kind == "ttft_ms":
        return "prefill", value / 1e3
    return None


def roofline_points(setup) -> list[MeasuredPoint]:
    """Rows with a decode step (static batches, closed-loop online runs) or a prefill (TTFT) on this
    setup, placed on the roofline. A static batch is placed as its decode step at the run's mean
    context (prompt + output / 2); an online run at its concurrency."""
    return list(_roofline_points(setup.gpu, setup.model, setup.assumptions))


@lru_cache(maxsize=64)
def _roofline_points(gpu, model, assumptions) -> tuple[MeasuredPoint, ...]:
    out = []
    for p in _predictions(gpu, model, assumptions, ("static_batch_tok_s", "tpot_ms", "ttft_ms")):
        r = p.row
        measured, modelled = _step_s(r, r.value) or (None, None), _step_s(r, p.model_value)
        if modelled is None:
            continue
        phase, run = measured[0], _as_run(model, r)
        if phase == "decode":
            ctx = int((r.prompt_tokens or 0) + (r.output_tokens or 0) / 2)
            cost = decode_step_cost(gpu, run, _batch(r), ctx, assumptions)
            g = explain_decode(gpu, run, _batch(r), ctx, assumptions)
        else:
            cost = prefill_cost(gpu, run, r.prompt_tokens or 1, 1, assumptions)
            g = explain_prefill(gpu, run, r.prompt_tokens or 1, assumptions)
        flops = float(np.ravel(cost.flops)[0])
        out.append(MeasuredPoint(p, phase, float(np.ravel(cost.intensity)[0]), flops / measured[1] / 1e12,
                                 flops / modelled[1] / 1e12, g, measured[1]))
    return tuple(out)


def roofline_trace(points: list[MeasuredPoint]) -> dict:
    """A scatter trace (a plain dict for ``ui.theme.figure``) of measured points, error on hover."""
    return dict(
        type="scatter", mode="markers", name="Measured (engines)",
        x=[pt.intensity for pt in points], y=[pt.measured_tflops for pt in points],
        # A thin cross: the model's point under it stays visible (a solid x hid the decode dot).
        marker=dict(symbol="x-thin", size=13, color=COLORS["text"], line=dict(width=2, color=COLORS["text"])),
        hoverlabel=dict(align="left"),
        hovertemplate=[
            f"<b>{html.escape(pt.row.id)}</b>: {pt.phase} measured at %{{y:,.3~r}} TFLOP/s<br>"
            f"{conditions_html(pt.row)}<br>measured {pt.row.value:,.4g} {html.escape(pt.row.unit)}, model "
            f"{pt.prediction.model_value:,.4g} ({pt.prediction.error:+.0%} in {html.escape(pt.row.unit)})"
            f"<br>{_compact_gap(pt)}"
            "<extra></extra>" for pt in points],
    )


def _compact_gap(pt: MeasuredPoint) -> str:
    """The gap in two short lines (a hover box wider than the chart is cut at its edge): the step's
    roofline floor, the model's estimate (its largest named assumption) and the measured step, in ms."""
    if pt.gap is None:
        return ""
    g = pt.gap
    top = max(g.steps_s, key=g.steps_s.get)
    return (f"one step: measured {fmt.sig(pt.measured_step_s * 1e3)} ms, model "
            f"{fmt.sig(g.estimate_s * 1e3)} ms<br>roofline floor {fmt.sig(g.floor_s * 1e3)} ms "
            f"(most of the gap above it: {top}, {g.shares()[top]:.0%})")


def summary(preds: list[Prediction], what: str = "measurement") -> str:
    """One line for under a chart: the matching rows and the model's errors, or that there are none
    (``what``: the kind of run the chart draws, where it draws only some kinds)."""
    if not preds:
        return f"No {what} for this setup in measured.csv (GPU, model, precisions and GPU count)."
    errs = ", ".join(f"{p.row.id} {p.error:+.0%}" for p in preds)
    return (f"Measured on this setup: {fmt.counted(len(preds), 'run')}; the model's signed error at each "
            f"run's conditions: {errs} (ids of measured.csv's rows; the README lists each with its engine "
            "and source).")


@dataclass(frozen=True)
class GapView:
    """What page 00's waterfall explains: the step, in words, and the measured run at it if any."""

    gap: Gap
    where: str
    measured_s: float | None
    row: Row | None
    note: str


def explain_gap(setup, phase: str, *, batch: int, context: int, prompt: int,
                points: list[MeasuredPoint]) -> GapView:
    """The waterfall for the page's decode step (``batch`` at ``context``) or its prefill
    (``prompt``). Where a measured run on this setup has that batch (or that prompt), the waterfall
    explains that run, at its own mean context, and ends on its measured time."""
    decode = phase == "Decode"
    same = [pt for pt in points if pt.phase == phase.lower()
            and (_batch(pt.row) == batch if decode else pt.row.prompt_tokens == prompt)]
    row = same[0].row if same else None
    model = _as_run(setup.model, row) if row else setup.model
    if decode:
        ctx = int((row.prompt_tokens or 0) + (row.output_tokens or 0) / 2) if row else context
        g = explain_decode(setup.gpu, model, batch, ctx, setup.assumptions)
        where = f"batch {batch} at {ctx:,} cached tokens"
        if row:
            where += ", the measured run's mean context"
        measured_s = _step_s(row, row.value)[1] if row else None
    else:
        g = explain_prefill(setup.gpu, model, prompt, setup.assumptions)
        where, measured_s = f"one {prompt:,}-token prompt", (row.value / 1e3 if row else None)
    if row:
        note = (f"The last bar is {html.escape(row.id)} ({html.escape(row.engine)}), measured at these "
                "settings" + (": its time per output token, batch / tok/s, so its prefill is spread over "
                              "it (slightly above a pure decode step)." if row.kind == "static_batch_tok_s"
                              else "."))
        if model is not setup.model:
            note += (f" The bars price its weights as {html.escape(row.engine.split(' ')[0])} stored them: "
                     f"INT4 in groups of {model.int4_group} ({model.weight_bytes_per_element * 8:.2g} bits a "
                     f"weight), not the sidebar's {setup.model.int4_group}.")
    elif points:
        # What to set to reach each run: the Step and the slider of that phase, by name.
        at = ", ".join(f"a decode at batch {_batch(pt.row)} (Step: Decode, Decode batch {_batch(pt.row)})"
                       if pt.phase == "decode" else
                       f"a prefill of {fmt.a_count(pt.row.prompt_tokens)}-token prompt (Step: Prefill, "
                       f"Prompt {pt.row.prompt_tokens:,})" for pt in points)
        note = ("No measured run at these settings; this setup's "
                + ("run is " if len(points) == 1 else "runs are ") + at + ".")
    else:
        note = "No measured run on this setup."
    return GapView(g, where, measured_s, row, note)


def batch_trace(preds: list[Prediction]) -> dict | None:
    """Static-batch runs as points at (batch, measured tok/s) for a throughput-vs-batch chart, with
    the model's value at each run's conditions and the error on hover; None when there are none."""
    pts = [p for p in preds if p.row.kind == "static_batch_tok_s"]
    if not pts:
        return None
    return dict(
        type="scatter", mode="markers", name="Measured (engines' static batches)",
        x=[_batch(p.row) for p in pts], y=[p.row.value for p in pts],
        marker=dict(symbol="x", size=11, color=COLORS["text"]),
        hovertemplate=[f"<b>{html.escape(p.row.id)}</b>: {p.row.value:,.4g} tok/s measured<br>"
                       f"{conditions_html(p.row)}<br>model at these conditions {p.model_value:,.4g} "
                       f"({p.error:+.0%})<extra></extra>" for p in pts],
    )


def _hover(p: Prediction, what: str) -> str:
    return (f"<b>{html.escape(p.row.id)}</b>: {what}<br>{conditions_html(p.row)}<br>model at these "
            f"conditions {p.model_value:,.4g} {html.escape(p.row.unit)} ({p.error:+.0%})<extra></extra>")


def ttft_trace(preds: list[Prediction]) -> dict | None:
    """Measured time-to-first-token runs as points at (prompt tokens, measured ms) for a TTFT-vs-prompt
    chart, the model's value at each run's own prompt and its error on hover; None when there are
    none."""
    pts = [p for p in preds if p.row.kind == "ttft_ms" and p.row.prompt_tokens]
    if not pts:
        return None
    return dict(
        type="scatter", mode="markers", name="Measured TTFT (engines)",
        x=[p.row.prompt_tokens for p in pts], y=[p.row.value for p in pts],
        marker=dict(symbol="x", size=11, color=COLORS["text"]),
        hovertemplate=[_hover(p, f"TTFT {p.row.value:,.4g} ms measured") for p in pts],
    )


@dataclass(frozen=True)
class OfflinePoint:
    """A measured offline run (requests queued at once) and the batch the model runs it at."""

    prediction: Prediction
    batch: int  # requests the model runs at once (sim.truth.offline_run_batch: a ShareGPT run's mean)


def offline_points(setup, preds: list[Prediction]) -> list[OfflinePoint]:
    """The offline runs among ``preds``, each with the batch the model decodes it at on ``setup``."""
    out = []
    for p in preds:
        r = p.row
        if r.kind != "offline_tok_s":
            continue
        prompt, output = row_lengths(r)
        b = offline_run_batch(setup.gpu, setup.model, prompt, output, r.requests or 1000,
                              kv_policy_for(r.engine), r.workload)
        if isinstance(b, int):
            out.append(OfflinePoint(p, b))
    return out


def offline_traces(points: list[OfflinePoint]) -> list[dict]:
    """Two traces for a throughput-vs-batch chart: each offline run's measured output tok/s (✕) and the
    model's value for the same run (○), both at the batch the model's KV cache holds, which is where
    the model runs it. Both include the prompts' prefill, which a decode-only curve leaves out (and
    the curve is priced at its own page's lengths, not the run's)."""
    if not points:
        return []
    x = [pt.batch for pt in points]
    return [
        dict(type="scatter", mode="markers", name="Measured offline run (at the batch the model fits)",
             x=x, y=[pt.prediction.row.value for pt in points],
             marker=dict(symbol="x-thin", size=13, color=COLORS["text"], line=dict(width=2.5)),
             hovertemplate=[_hover(pt.prediction, f"{pt.prediction.row.value:,.4g} tok/s measured offline"
                                                  f"<br>the model runs it at batch {pt.batch:,}"
                                                  + (" on average (it shrinks as the long outputs finish)"
                                                     if pt.prediction.row.workload == "sharegpt" else ""))
                            for pt in points]),
        dict(type="scatter", mode="markers", name="Model, the same offline run",
             x=x, y=[pt.prediction.model_value for pt in points],
             marker=dict(symbol="circle-open", size=12, color=COLORS["text"], line=dict(width=2)),
             hovertemplate=[_hover(pt.prediction, f"the model's {pt.prediction.model_value:,.4g} tok/s "
                                                  f"for this run, at batch {pt.batch:,}")
                            for pt in points]),
    ]
