"""A reader's benchmark as rows the model can price: parsed rows (``calib.parsers``) that do not
name their GPU or model ran on the setup the reader has chosen (the app's sidebar).

Pure: no I/O, nothing evaluated.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from calib.parsers import rows_to_csv
from sim.cost import ROOFLINE_FLOOR, Assumptions
from sim.hardware import GPU, GPUS
from sim.memory import describe, memory_plan
from sim.models import ALL_MODELS, KV_DTYPES, WEIGHT_DTYPES, Model
from sim.truth import (
    COLUMNS,
    Prediction,
    Row,
    RowError,
    int4_group_for,
    online_cap,
    online_max_qps,
    parse_rows,
    predict,
    row_setup,
)

MAX_READER_ROWS = 200
#: Queued ShareGPT runs are simulated step by step (``sim.truth.queued_schedule``, which keeps 16
#: schedules): at most this many a file, each of at most MAX_QUEUED_REQUESTS requests and
#: MAX_QUEUED_OUTPUT_TOKENS output tokens (a step makes at least one, so a kept schedule stays under
#: 8 MB), so that one paste costs the server seconds.
MAX_QUEUED_RUNS = 8
MAX_QUEUED_REQUESTS = 5000
MAX_QUEUED_OUTPUT_TOKENS = 500_000
MAX_QPS = 1e6  # requests a second: far beyond any one replica
MIN_VALUE = 1e-6  # a measured value below this (ms, tok/s) is not a measurement


@dataclass(frozen=True)
class ReaderRows:
    rows: tuple[Row, ...]
    setups: dict[str, tuple[GPU, Model]]  # row id -> (gpu, model) for rows on the reader's setup
    notes: tuple[str, ...]
    reasons: dict[str, str]  # row id -> why it is shown but not priced


def reader_rows(parsed: Sequence[dict[str, str]], gpu: GPU, model: Model,
                assumptions: Assumptions | None = None) -> ReaderRows:
    """Rows (ids made unique) and the setup each runs on. A row's blank GPU is ``gpu``; its blank
    model is ``model`` (the sidebar's, a pasted config included), at the row's precisions and GPU
    count where it gives them and the sidebar's where it does not. Raises ``RowError`` naming the
    field a row gets wrong."""
    if len(parsed) > MAX_READER_ROWS:
        raise RowError(f"{len(parsed)} rows: at most {MAX_READER_ROWS} are fitted at once")
    filled, setups, notes, seen = [], {}, [], set()
    for i, raw in enumerate(parsed, start=1):
        row = {k: str(raw.get(k, "") or "").strip() for k in COLUMNS}
        rid = row["id"] or f"yours-{i}"
        while rid in seen:
            rid = f"{rid}-{i}"
        seen.add(rid)
        row["id"] = rid
        # on the sidebar's setup: a blank GPU or model, or one the app has no preset for (priced on
        # the sidebar's only where that is custom: the reader gave its shapes or figures)
        on_ours = (not row["gpu"] or not row["model"] or row["gpu"] not in GPUS
                   or row["model"] not in ALL_MODELS)
        if not row["weights"]:
            named = ALL_MODELS.get(row["model"]) if row["model"] and row["model"] != model.name else None
            # Another preset than the sidebar's: as its checkpoint ships (gpt-oss: MXFP4); else the sidebar's.
            row["weights"] = named.shipped_dtype if named is not None else model.weight_dtype
            notes.append(f"{rid}: weights not stated; {row['weights']}, "
                         + ("as that model's checkpoint ships" if named is not None else "the sidebar's"))
        if not row["kv"]:
            row["kv"] = model.kv_dtype
        if not row["gpus"]:
            row["gpus"] = str(model.tp)
        filled.append(row)
        if on_ours:
            setups[rid] = row
    rows = tuple(parse_rows(rows_to_csv(filled)))
    out_setups, reasons = {}, {}
    queued = 0
    for r in rows:
        if r.id in setups:
            g = gpu if not setups[r.id]["gpu"] else GPUS.get(r.gpu)
            base = model if not setups[r.id]["model"] else ALL_MODELS.get(r.model)
            if g is None and gpu.name not in GPUS:  # the sidebar's custom GPU stands for the one named
                g = gpu
                notes.append(f"{r.id}: GPU {r.gpu!r} is not a preset; priced on the sidebar's {gpu.name}")
            if base is None and model.name not in ALL_MODELS:  # likewise a pasted config.json
                base = model
                notes.append(f"{r.id}: model {r.model!r} is not a preset; priced as the sidebar's "
                             f"{model.name}")
            if g is None or base is None:
                reasons[r.id] = (f"GPU {r.gpu!r} is not a preset (pick Custom under GPU in the sidebar, "
                                 "with its figures, to price it)" if g is None else
                                 f"model {r.model!r} is not one of the app's models (pick 'Custom (paste "
                                 "config.json)' under Model in the sidebar, with its config, to price it)")
                continue
            if r.weights not in WEIGHT_DTYPES or r.kv not in KV_DTYPES:
                reasons[r.id] = f"precision {r.weights}/{r.kv} is not one the model prices"
                continue
            try:
                if r.gpus > 1:
                    g.allreduce_bandwidth(r.gpus)
                run = base.with_precision(r.weights, r.kv, int4_group_for(r.engine))
                # "EP" in the engine (trtllm-bench's EP Size): the experts whole per GPU, as sim.truth
                ep = r.gpus > 1 and bool(run.n_experts) and re.search(r"\bEP\b", r.engine) is not None
                out_setups[r.id] = (g, run.with_tp(r.gpus, ep))
            except ValueError as exc:
                reasons[r.id] = str(exc)
                continue
        why = _implausible(r, out_setups.get(r.id) or row_setup(r))
        if not why and _queued(r):
            queued += 1
            if queued > MAX_QUEUED_RUNS:
                why = (f"more than {MAX_QUEUED_RUNS} queued ShareGPT runs in one file (each is simulated "
                       "step by step)")
        if why:
            reasons[r.id] = why
            out_setups.pop(r.id, None)
        elif r.kind == "tpot_ms" and r.qps is not None and math.isfinite(r.qps):
            note = _saturated(r, out_setups.get(r.id) or row_setup(r), assumptions)
            if note:
                notes.append(f"{r.id}: {note}")
    notes.extend(f"{rid}: {why}; shown, not priced" for rid, why in reasons.items())
    return ReaderRows(rows, out_setups, tuple(notes), reasons)


def _saturated(r: Row, setup, assumptions: Assumptions | None = None) -> str:
    """Where a row's request rate is more than the model's server sustains at its lengths (at
    ``assumptions``, the ones the row is priced with; None: the defaults), say so: the row is then
    priced with the running batch at its cap (``sim.truth.online_tpot_s``)."""
    if isinstance(setup, str) or r.prompt_tokens is None or r.output_tokens is None:
        return ""
    g, m = setup
    top = online_max_qps(g, m, r.prompt_tokens, r.output_tokens, concurrency=r.concurrency,
                         **({"assumptions": assumptions} if assumptions is not None else {}))
    if r.qps < top:
        return ""
    cap = online_cap(g, m, r.prompt_tokens, r.output_tokens, r.concurrency)
    return (f"at {r.qps:g} requests/s the model's server is saturated (at the "
            + ("sidebar's" if assumptions is not None else "default") + f" assumptions it sustains about "
            f"{top:.3g} at these lengths), so the row is priced with {cap:,} requests running at once"
            + (" (the run's concurrency cap), a closed loop" if r.concurrency else
               " (what the KV cache or max_num_seqs allows) and the rest queued"))


def _queued(r: Row) -> bool:
    """An offline run of ShareGPT lengths: the model simulates it step by step."""
    return r.kind == "offline_tok_s" and r.workload == "sharegpt"


def _implausible(r: Row, setup) -> str:
    """Why a row cannot be priced as it stands (lengths, load, a setup that cannot exist), or ""."""
    if r.kind in ("gemm_tflops", "hbm_tbps"):
        return ""
    if r.value < MIN_VALUE:
        return f"value {r.value:g} is below {MIN_VALUE:g}"
    if r.prompt_tokens is not None and r.prompt_tokens < 1:
        return "prompt_tokens must be at least 1"
    if r.output_tokens is not None and r.output_tokens < 1 and r.kind != "ttft_ms":
        return "output_tokens must be at least 1"
    if r.qps is not None and math.isfinite(r.qps) and r.qps > MAX_QPS:
        return f"qps above {MAX_QPS:g} requests a second"
    if _queued(r) and (r.requests or 1000) > MAX_QUEUED_REQUESTS:
        return (f"a queued ShareGPT run of more than {MAX_QUEUED_REQUESTS:,} requests (each is simulated "
                "step by step)")
    if _queued(r) and (r.requests or 1000) * (r.output_tokens or 0) > MAX_QUEUED_OUTPUT_TOKENS:
        return (f"a queued ShareGPT run of more than {MAX_QUEUED_OUTPUT_TOKENS:,} output tokens (each is "
                "simulated step by step)")
    if isinstance(setup, str) or setup is None or r.kind == "offline_tok_s":
        return ""  # truth names what it cannot express; an offline run sizes its own batch
    g, m = setup
    # a static batch must fit whole; an online run only one request at a time (a concurrency cap
    # above what fits leaves the rest waiting, as the engine does: sim.truth.online_cap)
    plan = memory_plan(g, m, int(r.batch or 1) if r.kind == "static_batch_tok_s" else 1,
                       int((r.prompt_tokens or 1) + (r.output_tokens or 0)))
    if not plan.fits:
        return "does not fit in memory: " + describe(plan)
    return _beyond_the_floor(r, setup)


#: How far past the pure roofline floor a measurement may be before it is refused as a unit slip.
FLOOR_MARGIN = 2.0


def _beyond_the_floor(r: Row, setup) -> str:
    """Why a row is faster than this setup could run it even at the spec peaks with no fixed costs
    (``ROOFLINE_FLOOR``) by more than FLOOR_MARGIN, or "": a unit slip (seconds typed as ms, a total
    over all GPUs as one's) or a run the row does not describe (speculative decoding)."""
    if r.kind not in ("ttft_ms", "tpot_ms", "static_batch_tok_s"):
        return ""  # offline and online rows simulate their runs: too dear to price twice
    try:
        floor = predict(r, ROOFLINE_FLOOR, setup=setup).model_value
    except (ValueError, ZeroDivisionError, FloatingPointError, OverflowError):
        return ""
    if floor is None or not math.isfinite(floor) or floor <= 0:
        return ""
    rate = r.kind == "static_batch_tok_s"
    if (r.value > FLOOR_MARGIN * floor) if rate else (r.value < floor / FLOOR_MARGIN):
        return (f"{r.value:g} {r.unit} is {'above' if rate else 'below'} what this setup could do even at "
                f"its spec peaks with no fixed costs ({floor:.4g} {r.unit}) by more than {FLOOR_MARGIN:g}x: "
                "check the unit (ms or s, one GPU or all), the setup, or whether the run used speculative "
                "decoding")
    return ""


def price(got: ReaderRows, assumptions: Assumptions) -> list[Prediction]:
    """Each row's prediction: unpriced rows carry the reader's reason, and a row the model still
    cannot price (an exception, a value that is not finite) carries that, never a traceback."""
    out = []
    for r in got.rows:
        if r.id in got.reasons:
            out.append(Prediction(r, None, got.reasons[r.id]))
            continue
        try:
            p = predict(r, assumptions, setup=got.setups.get(r.id))
        except (ValueError, ZeroDivisionError, IndexError, OverflowError, FloatingPointError) as exc:
            p = Prediction(r, None, f"the model cannot price it ({exc})")
        if p.model_value is not None and not (math.isfinite(p.model_value) and p.model_value > 0):
            p = Prediction(r, None, "the model's value is not a finite positive number")
        out.append(p)
    return out
