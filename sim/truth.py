"""The model against measurements: predict every row of a measured.csv-style file.

    python -m sim.truth ../shared/measured.csv

Each row is run the way it describes (MEASURED.md section 1), with the same assumptions for every
row:

- ``static_batch_tok_s``: ``batch`` prompts prefilled together, then ``output_tokens - 1`` decode
  steps at growing context; batch x output / total time.
- ``ttft_ms``: one prefill of ``prompt_tokens`` on an idle server.
- ``tpot_ms``: an online run in steady state. N sequences decode together; prompts arrive at rate
  lambda and each prefill rides one step, lengthening it by its prefill time. Time between a
  sequence's tokens is t_decode(N) / (1 - lambda * t_prefill). Poisson load (``qps``): N = lambda x
  end-to-end time (Little's law); closed loop (``concurrency`` C): N = C and lambda = C / end-to-end.
  The closed loop is a quadratic in the time per token; the Poisson load is solved by fixed-point
  iteration, with N at most the requests the server runs at once (its KV cache at full length and
  ``max_num_seqs``, or the run's concurrency cap). A rate at or above what that many sustain in a
  closed loop (``online_max_qps``) runs as that closed loop: the queue grows, the batch stays full.
- ``offline_tok_s``: ``requests`` queued at t = 0. Fixed lengths: the engine runs as many as its KV
  cache holds at full length (prompt + output, reserved up front, TensorRT-LLM's
  guaranteed-no-evict policy), at most the engine's cap (MAX_NUM_SEQS for TensorRT-LLM, vLLM's
  ``max_num_seqs`` for the GPU otherwise, or the row's ``batch`` where the run set its own, as
  trtllm-bench's ``--max_batch_size``); every request is prefilled in chunks of
  MAX_BATCHED_TOKENS and decoded at the mean context. ShareGPT lengths: the run lasts until its
  longest outputs finish, so it is run through the step scheduler of section 05
  (``sim.load.simulate``, chunked prefill of MAX_BATCHED_TOKENS a step, the engine's
  ``max_num_seqs``, recompute preemption) on requests drawn with the row's mean lengths as vLLM's
  benchmark samples them (``sim.load.sharegpt_sample``); output tokens / the run's wall time. The
  KV cache is sized as the row's engine sizes it: TensorRT-LLM takes 0.9 of the memory left after
  the weights (``kv_cache_free_gpu_mem_fraction``), vLLM and SGLang 0.9 of the card
  (``sim.memory.kv_budget_bytes``).
- ``gemm_tflops`` / ``hbm_tbps``: the GPU's best-shape GEMM and STREAM-like rates the model assumes
  (``GPU.gemm_ceiling`` / ``hbm_ceiling``); serving kernels run at ``compute_eff`` / ``memory_eff``
  of them. The presets' ceilings are read from measured.csv's microbenchmark rows, so those rows
  match by construction: they are the model's inputs, not evidence for it.

Several GPUs are priced as tensor parallelism (Megatron layout, two all-reduces a layer). Rows
whose engine spread the experts whole (expert parallelism: "EP" in the engine column, tpo-05 and
tb1-01) are priced with the experts whole per GPU, the slowest GPU's expert reads setting each step
(``sim.models.expert_reads``); tb1-01's EP/TP mix is priced as EP. Data-parallel attention's own
KV layout (tpo-05) and an all-to-all in place of the all-reduce are not modelled (named in the
README's table). A row the model cannot express (an unknown GPU or model) is
``cannot: <reason>``, never a guess. ``sharegpt`` rows without lengths use the app's ShareGPT-like
means (161 prompt, 338 output tokens; illustrative).
"""

from __future__ import annotations

import csv
import io
import math
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from sim.cost import DEFAULT_ASSUMPTIONS, Assumptions, attention_sums, step_cost
from sim.hardware import GPUS
from sim.load import N_REQUESTS_RANGE, kv_unit_bytes, sharegpt_sample, simulate
from sim.memory import MAX_BATCHED_TOKENS, engine_max_seqs, kv_budget_bytes
from sim.models import ALL_MODELS, INT4_GROUP, Model
from sim.phases import ttft_curve

COLUMNS = ("id", "gpu", "gpus", "model", "weights", "kv", "engine", "kind", "batch", "concurrency",
           "qps", "requests", "workload", "prompt_tokens", "output_tokens", "value", "unit", "source",
           "notes")
KINDS = ("static_batch_tok_s", "ttft_ms", "tpot_ms", "offline_tok_s", "gemm_tflops", "hbm_tbps")
UNITS = {"static_batch_tok_s": "tok/s", "ttft_ms": "ms", "tpot_ms": "ms", "offline_tok_s": "tok/s",
         "gemm_tflops": "TFLOP/s", "hbm_tbps": "TB/s"}
#: ShareGPT-like means for rows that give no lengths (sim.paging's card workload; illustrative).
SHAREGPT_MEANS = (161, 338)
#: Most sequences an engine batches (TensorRT-LLM's default max_batch_size).
MAX_NUM_SEQS = 2048
MAX_FILE_BYTES = 1_000_000
MAX_ROWS = 5000


@dataclass(frozen=True)
class Row:
    """One measurement, parsed."""

    id: str
    gpu: str
    gpus: int
    model: str
    weights: str
    kv: str
    engine: str
    kind: str
    batch: int | None
    concurrency: int | None
    qps: float | None
    requests: int | None
    workload: str
    prompt_tokens: int | None
    output_tokens: int | None
    value: float
    unit: str
    notes: str = ""


@dataclass(frozen=True)
class Prediction:
    row: Row
    model_value: float | None  # in the row's unit; None when the model cannot express the row
    reason: str = ""  # why not, when model_value is None

    @property
    def error(self) -> float | None:
        """Signed relative error, (model - measured) / measured."""
        if self.model_value is None:
            return None
        return self.model_value / self.row.value - 1.0


class RowError(ValueError):
    """A row that cannot be read; the message names the row and the field."""


def _number(raw: str, field: str, rid: str) -> float | None:
    """The cell as a float (None when empty); anything else that is not a number names itself."""
    raw = raw.strip()
    if raw == "":
        return None
    try:
        return float(raw)
    except ValueError:
        raise RowError(f"row {rid}: {field} = {raw!r} is not a number") from None


def _int(raw: str, field: str, rid: str) -> int | None:
    value = _number(raw, field, rid)
    if value is None:
        return None
    if not math.isfinite(value) or value < 0 or value != int(value) or value > 1e9:
        raise RowError(f"row {rid}: {field} = {raw.strip()!r} must be a whole number >= 0")
    return int(value)


def _float(raw: str, field: str, rid: str, allow_inf: bool = False) -> float | None:
    value = _number(raw, field, rid)
    if value is not None and (math.isnan(value) or value < 0 or (math.isinf(value) and not allow_inf)):
        raise RowError(f"row {rid}: {field} = {raw.strip()!r} must be a finite number >= 0")
    return value


def parse_rows(text: str) -> list[Row]:
    """Rows of a measured.csv-style text. Strict: a missing column or an unreadable value raises
    ``RowError`` naming it. Nothing in the text is evaluated."""
    if len(text.encode("utf-8", "replace")) > MAX_FILE_BYTES:
        raise RowError(f"the file is larger than {MAX_FILE_BYTES:,} bytes")
    reader = csv.DictReader(io.StringIO(text))
    missing = [c for c in ("id", "gpu", "gpus", "model", "weights", "kv", "kind", "value")
               if c not in (reader.fieldnames or [])]
    if missing:
        raise RowError(f"missing column(s): {', '.join(missing)}")
    rows = []
    for n, raw in enumerate(reader, start=2):
        if n - 1 > MAX_ROWS:
            raise RowError(f"more than {MAX_ROWS} rows")
        get = {k: (raw.get(k) or "") for k in COLUMNS}
        rid = get["id"].strip() or f"line {n}"
        kind = get["kind"].strip()
        if kind not in KINDS:
            raise RowError(f"row {rid}: kind = {kind!r} is not one of {', '.join(KINDS)}")
        value = _float(get["value"], "value", rid)
        if value is None or value <= 0:
            raise RowError(f"row {rid}: value must be a number > 0")
        rows.append(Row(
            id=rid, gpu=get["gpu"].strip(), gpus=_int(get["gpus"], "gpus", rid) or 1,
            model=get["model"].strip(), weights=get["weights"].strip() or "bf16",
            kv=get["kv"].strip() or "bf16", engine=get["engine"].strip(), kind=kind,
            batch=_int(get["batch"], "batch", rid),
            concurrency=_int(get["concurrency"], "concurrency", rid),
            qps=_float(get["qps"], "qps", rid, allow_inf=True),
            requests=_int(get["requests"], "requests", rid),
            workload=get["workload"].strip() or "fixed",
            prompt_tokens=_int(get["prompt_tokens"], "prompt_tokens", rid),
            output_tokens=_int(get["output_tokens"], "output_tokens", rid),
            value=value, unit=get["unit"].strip(), notes=get["notes"].strip(),
        ))
    return rows


# ---- running a row ----


def _setup(row: Row) -> tuple[object, Model] | str:
    """(gpu, model) for a row, or the reason the model cannot express it."""
    if row.gpu not in GPUS:
        return f"GPU {row.gpu!r} is not a preset"
    if row.kind in ("gemm_tflops", "hbm_tbps"):
        return GPUS[row.gpu], None
    if row.model not in ALL_MODELS:
        return f"model {row.model!r} is not loadable (no config in sim/configs/)"
    model = ALL_MODELS[row.model]
    try:
        model = (model.with_precision(row.weights, row.kv, int4_group_for(row.engine))
                 .with_tp(row.gpus, uses_expert_parallelism(row)))
        GPUS[row.gpu].allreduce_bandwidth(row.gpus)
    except ValueError as exc:
        return str(exc)
    return GPUS[row.gpu], model


def int4_group_for(engine: str) -> int:
    """Weights per INT4 group in the row's engine: 32 in gpt-fast (MEASURED.md, the precision column:
    its README quantises with ``--groupsize 32``), AWQ / GPTQ's 128 elsewhere."""
    return 32 if "gpt-fast" in engine.lower() else INT4_GROUP


def uses_expert_parallelism(row: Row) -> bool:
    """The row's engine spread a mixture's experts whole over its GPUs ("EP" in the engine column;
    TensorRT-LLM's EP/TP mix is priced as EP, the model having no mixed layout)."""
    return row.gpus > 1 and re.search(r"\bEP\b", row.engine) is not None and \
        bool(ALL_MODELS[row.model].n_experts)


def row_setup(row: Row) -> tuple[object, Model] | str:
    """(gpu, model) the row's own columns name, at its precisions and GPU count, or why not."""
    return _setup(row)


def row_lengths(row: Row) -> tuple[int, int]:
    """The row's prompt and output tokens (ShareGPT rows without them: the dataset's means)."""
    p, o = row.prompt_tokens, row.output_tokens
    if p is None or o is None:
        if row.workload == "sharegpt":
            return SHAREGPT_MEANS
        raise RowError(f"row {row.id}: prompt_tokens and output_tokens are needed for a {row.kind} row")
    return p, o


def static_batch_time_s(gpu, model, batch: int, prompt: int, output: int,
                        assumptions: Assumptions = DEFAULT_ASSUMPTIONS) -> float:
    """Seconds for a static batch: one prefill of ``batch`` prompts (each samples its first token),
    then ``output - 1`` decode steps, the j-th on prompt + j - 1 cached tokens (its input token, the
    j-th sampled, is written in that step), as ``sim.batching`` counts them."""
    pre_p, pre_k = attention_sums(model, prompt, 0)
    pre = step_cost(gpu, model, batch * prompt, batch * pre_p, batch * pre_k, assumptions,
                    sampled_tokens=batch)
    c = prompt + np.arange(0, max(output - 1, 0))
    dec_p, dec_k = attention_sums(model, 1, c)
    dec = step_cost(gpu, model, np.full(c.size, float(batch)), batch * dec_p, batch * dec_k, assumptions)
    return float(pre.time_s) + float(dec.time_s.sum())


def prefill_time_s(gpu, model, prompt: int, assumptions: Assumptions = DEFAULT_ASSUMPTIONS) -> float:
    """One prompt's prefill on an idle server, in chunks of at most the engine's largest step on this
    GPU (page 00's TTFT curve, ``sim.phases.ttft_curve``, is the same computation)."""
    return float(ttft_curve(gpu, model, [prompt], assumptions).ttft_s[0])


def _decode_step_s(gpu, model, n: float, context: float, assumptions: Assumptions) -> float:
    pairs, kv = attention_sums(model, 1, context)
    return float(step_cost(gpu, model, n, n * pairs, n * kv, assumptions).time_s)


def _closed_loop(gpu, model, prompt: int, output: int, n: float, assumptions: Assumptions
                 ) -> tuple[float, float]:
    """(TPOT s, requests/s) of a closed loop of ``n`` requests in flight, in steady state."""
    t_pre = prefill_time_s(gpu, model, prompt, assumptions)
    # What a prefill adds to the step it rides: its time less the step's host time (its kernels' fixed
    # costs stay in: at most 0.2 points on the TPOT rows either way).
    extra = max(t_pre - assumptions.host_overhead_s, 0.0)
    step = _decode_step_s(gpu, model, max(n, 1.0), prompt + output / 2, assumptions)
    a = max(output - 1, 0)
    if a == 0:  # one token each: the prefills alone, one after another, set the rate
        return step, min(n / t_pre, 1.0 / extra) if extra > 0 else n / t_pre
    # tpot = step / (1 - lam * extra) with lam = n / (t_pre + a * tpot): a quadratic in tpot, whose
    # positive root has lam * extra < 1 (iterating it oscillated once prefills filled most steps).
    b = t_pre - extra * n - step * a
    tpot = (-b + math.sqrt(b * b + 4.0 * a * step * t_pre)) / (2.0 * a)
    return tpot, n / (t_pre + a * tpot)


def online_cap(gpu, model, prompt: int, output: int, concurrency: int | None = None) -> int:
    """Requests a server runs at once for these lengths: as many as its KV cache holds at full
    length, at most the engine's ``max_num_seqs``, and at most ``concurrency`` where the run capped
    it (a cap above what the server runs leaves the rest waiting)."""
    held = offline_batch(gpu, model, prompt, output, 10**9)
    held = held if isinstance(held, int) else engine_max_seqs(gpu)
    return min(int(concurrency), held) if concurrency else held


def online_max_qps(gpu, model, prompt: int, output: int, *, concurrency: int | None = None,
                   assumptions: Assumptions = DEFAULT_ASSUMPTIONS) -> float:
    """The highest request rate the server sustains at these lengths (requests/s): a closed loop at
    ``online_cap``. Above it the queue grows without bound and the running batch stays at the cap."""
    return _closed_loop(gpu, model, prompt, output, online_cap(gpu, model, prompt, output, concurrency),
                        assumptions)[1]


def online_tpot_s(gpu, model, prompt: int, output: int, *, qps: float | None = None,
                  concurrency: int | None = None, assumptions: Assumptions = DEFAULT_ASSUMPTIONS) -> float:
    """Mean time per output token in steady state (see the module docstring). A Poisson rate at or
    above what the server sustains (``online_max_qps``; with ``concurrency`` too, what that cap
    sustains) runs with its batch at the cap, as a closed loop there: the fixed point had no
    solution and ran off to 1e41 s (a reader's vLLM sweep at 30 req/s). A closed loop of more
    clients than the server runs at once (``online_cap``: its KV cache, its ``max_num_seqs``) decodes
    at that cap; the rest wait for a slot, which lengthens their TTFT, not the TPOT."""
    if qps is None:
        n = online_cap(gpu, model, prompt, output, concurrency or 1)
        return _closed_loop(gpu, model, prompt, output, float(n), assumptions)[0]
    cap = online_cap(gpu, model, prompt, output, concurrency)
    full_tpot, full_qps = _closed_loop(gpu, model, prompt, output, float(cap), assumptions)
    if qps >= full_qps:
        return full_tpot
    t_pre = prefill_time_s(gpu, model, prompt, assumptions)
    extra = max(t_pre - assumptions.host_overhead_s, 0.0)
    context = prompt + output / 2
    n = 1.0
    tpot = _decode_step_s(gpu, model, n, context, assumptions)
    for _ in range(50):
        n = min(max(1.0, qps * (t_pre + max(output - 1, 0) * tpot)), float(cap))
        # below the saturation rate qps * extra < 1 (the closed loop's own share is), so no floor: a
        # floor at 0.05 made TPOT jump at the saturation rate for long prompts and short outputs
        tpot = _decode_step_s(gpu, model, n, context, assumptions) / (1.0 - qps * extra)
    return tpot


def kv_policy_for(engine: str) -> str:
    """How the row's engine sizes its KV cache (see ``sim.memory.kv_budget_bytes``)."""
    return "free" if "tensorrt" in engine.lower() else "total"


def offline_batch(gpu, model, prompt: int, output: int, requests: int, kv_policy: str = "total",
                  max_seqs: int | None = None) -> int | str:
    """The batch an offline run decodes at: as many requests at full length as the KV cache holds
    (at most ``requests`` and the engine's cap: TensorRT-LLM's MAX_NUM_SEQS under its 'free' policy,
    vLLM's ``max_num_seqs`` for the GPU otherwise, as the ShareGPT path; ``max_seqs``, where the run
    set its own: trtllm-bench's ``--max_batch_size``), or why none fits."""
    budget = kv_budget_bytes(gpu, model, policy=kv_policy)
    # Sliding-window / chunked layers hold at most their window (vLLM's hybrid KV-cache manager).
    per_request = float(model.kv_bytes_per_sequence(prompt + output))
    cap = MAX_NUM_SEQS if kv_policy == "free" else engine_max_seqs(gpu)
    cap = min(cap, max_seqs) if max_seqs else cap
    if budget < model.kv_bytes_per_token:
        return "the weights and the engine's start-up reserve leave no room for a KV cache on this GPU"
    batch = min(cap, requests, int(budget // per_request))
    if batch < 1:
        return "the KV cache cannot hold one request at full length"
    return batch


def offline_sharegpt_run(gpu, model, prompt: int, output: int, requests: int, kv_policy: str = "total",
                         max_seqs: int | None = None):
    """``requests`` ShareGPT-like requests of the given mean lengths, all queued at t = 0, through the
    step scheduler (``sim.load.simulate``: chunked prefill of MAX_BATCHED_TOKENS a step, the engine's
    max_num_seqs: vLLM's for the GPU, MAX_NUM_SEQS for TensorRT-LLM's 'free' policy), priced with
    the default assumptions: the ``LoadRun``, or why not."""
    if not 1 <= requests <= N_REQUESTS_RANGE[1]:
        return f"a queued run of {requests!r} requests (the scheduler runs 1 to {N_REQUESTS_RANGE[1]:,})"
    budget = kv_budget_bytes(gpu, model, policy=kv_policy)
    if budget < model.kv_bytes_per_token:
        return "the weights and activations leave no room for the KV cache"
    try:
        stream = sharegpt_sample(requests, prompt, output)
    except ValueError as exc:
        return f"a ShareGPT sample as vLLM's benchmark draws it cannot have these lengths: {exc}"
    run = simulate(gpu, model, stream, "chunked", chunk_tokens=MAX_BATCHED_TOKENS, prefix_caching=False,
                   kv_tokens=int(budget // kv_unit_bytes(model)),
                   max_seqs=min(max_seqs or 10**6,
                                MAX_NUM_SEQS if kv_policy == "free" else engine_max_seqs(gpu)))
    if run.rejected.any():
        return f"the KV cache cannot hold {int(run.rejected.sum())} of the requests at full length"
    return run


@dataclass(frozen=True)
class QueuedSchedule:
    """What pricing a queued run again needs: its output tokens, each step's sums (T, P, K, S) as
    float32 (16 bytes a step), and its mean decode batch weighted by the steps' default time."""

    output_tokens: int
    sums: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]
    mean_batch: int


@lru_cache(maxsize=16)
def queued_schedule(gpu, model, prompt: int, output: int, requests: int,
                    kv_policy: str = "total", max_seqs: int | None = None) -> QueuedSchedule | str:
    """``offline_sharegpt_run``'s schedule, kept compact and cached. With every request there at
    t = 0 no arrival falls between steps, so who runs in which step is decided by tokens and memory
    alone and is the same under any assumptions: ``offline_tokens_per_s`` prices these steps again
    with the caller's (tested against a run under those assumptions). A reader's fit prices the same
    run for every trial."""
    run = offline_sharegpt_run(gpu, model, prompt, output, requests, kv_policy, max_seqs)
    if isinstance(run, str):
        return run
    w = run.step_time_s
    mean = float(np.sum(w * run.step_decode) / np.sum(w)) if w.sum() > 0 else 1.0
    sums = tuple(np.asarray(v, dtype=np.float32) for v in run.step_sums)
    for v in sums:
        v.setflags(write=False)
    return QueuedSchedule(run.output_tokens, sums, max(1, round(mean)))


def offline_run_batch(gpu, model, prompt: int, output: int, requests: int, kv_policy: str = "total",
                      workload: str = "fixed", max_seqs: int | None = None) -> int | str:
    """The batch an offline run decodes at, or why none: ``offline_batch`` for fixed lengths; for
    ShareGPT lengths, whose batch shrinks as the long outputs finish, the scheduler run's mean
    decode batch weighted by its steps' time."""
    if workload != "sharegpt":
        return offline_batch(gpu, model, prompt, output, requests, kv_policy, max_seqs)
    sched = queued_schedule(gpu, model, prompt, output, requests, kv_policy, max_seqs)
    return sched if isinstance(sched, str) else sched.mean_batch


def offline_tokens_per_s(gpu, model, prompt: int, output: int, requests: int,
                         assumptions: Assumptions = DEFAULT_ASSUMPTIONS, kv_policy: str = "total",
                         workload: str = "fixed", max_seqs: int | None = None) -> float | str:
    """Output tokens per second of ``requests`` requests queued at once (see the module docstring);
    ``max_seqs``: the run's own cap on sequences at once, where it set one."""
    if workload == "sharegpt":
        sched = queued_schedule(gpu, model, prompt, output, requests, kv_policy, max_seqs)
        if isinstance(sched, str):
            return sched
        t, p, k, s = sched.sums
        wall = float(step_cost(gpu, model, t, p, k, assumptions, sampled_tokens=s).time_s.sum())
        return sched.output_tokens / wall
    batch = offline_batch(gpu, model, prompt, output, requests, kv_policy, max_seqs)
    if isinstance(batch, str):
        return batch
    decode = _decode_step_s(gpu, model, float(batch), prompt + output / 2, assumptions)
    prefill_s = batch * _prefill_per_prompt_s(gpu, model, prompt, assumptions)
    return batch * output / (output * decode + prefill_s)


def _prefill_per_prompt_s(gpu, model, prompt: int, assumptions: Assumptions) -> float:
    """One prompt's share of an offline run's prefill steps, in seconds. Every step is full:
    MAX_BATCHED_TOKENS tokens, several prompts' whole prefills when they are shorter than that, or
    one chunk of a longer prompt, attending to its chunks before it. A step is priced on the sums
    of the sequences it holds (``step_cost``'s P and K): one prompt's chunks' pairs and KV tokens
    (c + q, each chunk's cached tokens read once and its own written), scaled to a full step."""
    chunk = MAX_BATCHED_TOKENS
    starts = np.arange(0, prompt, chunk, dtype=float)
    q = np.minimum(float(chunk), prompt - starts)
    pairs, kv = attention_sums(model, q, starts)
    per_step = chunk / prompt  # prompts' worth of tokens in a full step (under 1: a long prompt's chunk)
    step = step_cost(gpu, model, prompt * per_step, float(pairs.sum()) * per_step,
                     float(kv.sum()) * per_step, assumptions, sampled_tokens=per_step)
    return float(step.time_s) / per_step


def predict(row: Row, assumptions: Assumptions = DEFAULT_ASSUMPTIONS,
            setup: tuple[object, Model] | None = None) -> Prediction:
    """The model's value for ``row``, in the row's unit. ``setup`` = (gpu, model) prices the row on
    that GPU and model (already at the row's precision and GPU count) instead of the presets its
    ``gpu`` and ``model`` columns name: a reader's own benchmark, run on the setup in the sidebar."""
    if setup is None:
        setup = _setup(row)
    if isinstance(setup, str):
        return Prediction(row, None, setup)
    gpu, model = setup
    a = assumptions
    if row.kind == "gemm_tflops":
        if row.weights not in ("bf16", "fp8"):
            return Prediction(row, None, f"GEMM precision {row.weights!r}")
        # A microbenchmark is no serving step: the model's best-shape GEMM runs at the GPU's ceiling
        # (the preset GPUs' ceilings are these rows, so they match by construction; a reader's own
        # GEMM row checks the ceiling the model assumes for that GPU).
        eff = gpu.gemm_ceiling(row.weights) if a.measured_ceilings else 1.0
        return Prediction(row, gpu.peak_flops(row.weights) * eff / 1e12)
    if row.kind == "hbm_tbps":
        eff = gpu.hbm_ceiling() if a.measured_ceilings else 1.0
        return Prediction(row, gpu.hbm_bandwidth * eff / 1e12)
    try:
        p, o = row_lengths(row)
    except RowError as exc:
        return Prediction(row, None, str(exc))
    if row.workload != "sharegpt" and not model.reads(p + o):
        return Prediction(row, None, f"{p + o:,} tokens a request, more than the {model.max_positions:,} "
                                     f"positions {model.name} reads (an engine refuses such a request)")
    if row.kind == "static_batch_tok_s":
        b = row.batch or 1
        return Prediction(row, b * o / static_batch_time_s(gpu, model, b, p, o, a))
    if row.kind == "ttft_ms":
        return Prediction(row, 1e3 * prefill_time_s(gpu, model, p, a))
    if row.kind == "tpot_ms":
        if row.qps is None and row.concurrency is None:
            return Prediction(row, None, "an online row needs qps or concurrency")
        if row.qps is not None and math.isinf(row.qps):
            return Prediction(row, None, "qps = inf is an offline run, not an online one")
        if o < 2:
            return Prediction(row, None, "a time per output token needs at least 2 output tokens")
        return Prediction(row, 1e3 * online_tpot_s(gpu, model, p, o, qps=row.qps,
                                                   concurrency=row.concurrency, assumptions=a))
    if row.kind == "offline_tok_s":
        value = offline_tokens_per_s(gpu, model, p, o, row.requests or 1000, a, kv_policy_for(row.engine),
                                     row.workload, max_seqs=row.batch)
        if isinstance(value, str):
            return Prediction(row, None, value)
        return Prediction(row, value)
    return Prediction(row, None, f"kind {row.kind!r}")


def predict_all(rows: Iterable[Row], assumptions: Assumptions = DEFAULT_ASSUMPTIONS) -> list[Prediction]:
    return [predict(r, assumptions) for r in rows]


@dataclass(frozen=True)
class KindSummary:
    kind: str
    rows: int
    expressed: int
    median_abs_error: float
    p90_abs_error: float


def summarize(predictions: list[Prediction]) -> list[KindSummary]:
    out = []
    for kind in KINDS:
        preds = [p for p in predictions if p.row.kind == kind]
        if not preds:
            continue
        errs = np.abs([p.error for p in preds if p.error is not None])
        out.append(KindSummary(
            kind=kind, rows=len(preds), expressed=int(errs.size),
            median_abs_error=float(np.median(errs)) if errs.size else math.nan,
            p90_abs_error=float(np.percentile(errs, 90)) if errs.size else math.nan,
        ))
    return out


def _value(v: float, separators: bool = True) -> str:
    """A model value to 4 significant digits, never in exponent notation (11,800, not 1.18e+04);
    no thousands separators in the comma-separated table."""
    text = f"{v:.4g}"
    return (f"{v:,.0f}" if separators else f"{v:.0f}") if "e+" in text else text


def format_table(predictions: list[Prediction]) -> str:
    lines = ["id, kind, measured, model, signed error"]
    for p in predictions:
        r = p.row
        if p.model_value is None:
            lines.append(f"{r.id}, {r.kind}, {r.value:g} {r.unit}, cannot: {p.reason}")
        else:
            lines.append(f"{r.id}, {r.kind}, {r.value:g} {r.unit}, {_value(p.model_value, False)}, "
                         f"{p.error:+.1%}")
    lines.append("")
    lines.append("kind, rows, expressed, median |error|, p90 |error|")
    for s in summarize(predictions):
        lines.append(f"{s.kind}, {s.rows}, {s.expressed}, {s.median_abs_error:.1%}, {s.p90_abs_error:.1%}")
    return "\n".join(lines)


def format_markdown(predictions: list[Prediction]) -> str:
    """The table as Markdown (the README's copy): every row, then the summary by kind."""
    lines = ["| id | GPU | model | weights | engine | kind | measured | model | error |",
             "|---|---|---|---|---|---|---:|---:|---:|"]
    for p in predictions:
        r = p.row
        engine = r.engine.replace("|", "/")
        model = _value(p.model_value) if p.model_value is not None else f"cannot: {p.reason}"
        err = f"{p.error:+.1%}" if p.error is not None else ""
        lines.append(f"| {r.id} | {r.gpu} x{r.gpus} | {r.model or '-'} | {r.weights} | {engine} | "
                     f"{r.kind} | {r.value:g} {r.unit} | {model} | {err} |")
    lines += ["", "| kind | rows | expressed | median abs. error | p90 abs. error |",
              "|---|---:|---:|---:|---:|"]
    for s in summarize(predictions):
        lines.append(f"| {s.kind} | {s.rows} | {s.expressed} | {s.median_abs_error:.1%} | "
                     f"{s.p90_abs_error:.1%} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    markdown = "--markdown" in argv
    argv = [a for a in argv if a != "--markdown"]
    if len(argv) != 1:
        print("usage: python -m sim.truth [--markdown] FILE.csv", file=sys.stderr)
        return 2
    try:
        with open(argv[0], encoding="utf-8") as f:
            text = f.read(MAX_FILE_BYTES + 1)
        rows = parse_rows(text)
    except (OSError, UnicodeDecodeError, RowError) as exc:
        print(f"cannot read {argv[0]}: {exc}", file=sys.stderr)
        return 1
    predictions = predict_all(rows)
    print(format_markdown(predictions) if markdown else format_table(predictions))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
