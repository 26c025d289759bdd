"""The shared roofline step-time model: what one engine step costs on a GPU, vectorised over steps.

One step runs the model once over a batch. Sequence i brings q_i new tokens (a prompt or prompt chunk
in prefill, 1 in decode, k+1 when verifying k draft tokens) and has c_i tokens already cached. Per
step, with T = sum q_i new tokens and P = sum q_i * (c_i + (q_i + 1) / 2) causal attention pairs:

    FLOPs  = 2 * N_params * T + 4 * L * H * d_head * P
    bytes  = W + kv_bytes_per_token * sum(c_i + q_i)      (all weights once; the cached KV; the new KV)
    t_gpu  = max(FLOPs / (peak_flops * compute_eff), bytes / (bandwidth * memory_eff))
    t_step = t_gpu + host_overhead                         (launch/scheduling time, no kernel running)

The roofline gives a floor: real kernels add launch gaps, tile quantisation and attention overheads
that ``compute_eff``, ``memory_eff`` and ``host_overhead_s`` stand in for. The defaults are calibrated
on the one measured point in REFERENCE.md section 5: Llama-3.1-8B, batch 1, H100, 6.32 ms per token
against a 4.79 ms floor.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from sim.hardware import GPU, GPUS
from sim.models import MODELS, Model


@dataclass(frozen=True)
class Assumptions:
    """The named, editable efficiencies that turn a roofline floor into an estimate.

    Attributes:
        compute_eff: achieved / peak tensor FLOP/s on large matmuls. 0.6: H100's best measured BF16
            GEMM reaches 80 % (ml-engineering MAMF) and large prefills run at MFU 0.4-0.7.
        memory_eff: achieved / peak HBM bandwidth. 0.8: STREAM-like tests reach 87-95 % on H100, DCGM
            calls ~80 % DRAM activity the practical ceiling, end-to-end decode reaches 57-76 %.
        host_overhead_s: seconds per step with no kernel running (launches, scheduling, sampling).
            300 us puts Llama-3.1-8B batch-1 decode on H100 at 6.30 ms against 6.32 ms measured.
    """

    compute_eff: float = 0.6
    memory_eff: float = 0.8
    host_overhead_s: float = 300e-6

    def __post_init__(self) -> None:
        for name in ("compute_eff", "memory_eff"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and 0 < value <= 1):
                raise ValueError(f"{name} must be in (0, 1], got {value!r}")
        if not (isinstance(self.host_overhead_s, (int, float)) and 0 <= self.host_overhead_s < 1
                and math.isfinite(self.host_overhead_s)):
            raise ValueError(f"host_overhead_s must be in [0, 1) seconds, got {self.host_overhead_s!r}")


DEFAULT_ASSUMPTIONS = Assumptions()

#: The measured point the defaults are calibrated on (REFERENCE.md section 5): Llama-3.1-8B (BF16),
#: batch 1, short context, H100 SXM, SGLang v0.4.4: 158.34 tokens/s (EAGLE-3 paper, Table 4).
CALIBRATION_GPU, CALIBRATION_MODEL = "H100 SXM", "Llama-3.1-8B"
CALIBRATION_MEASURED_S = 1 / 158.34
CALIBRATION_CONTEXT_TOKENS = 128  # "short context": MT-bench prompts


@dataclass(frozen=True)
class StepCost:
    """Per-step cost arrays (all the same shape as the inputs).

    Steps with no new tokens are steps the engine does not run: every field is 0 there.
    """

    time_s: np.ndarray  # wall time of the step: t_gpu + host overhead, seconds
    gpu_time_s: np.ndarray  # time with a kernel running, seconds
    compute_time_s: np.ndarray  # FLOPs / (peak * compute_eff), seconds
    weight_time_s: np.ndarray  # weight bytes / (bandwidth * memory_eff), seconds
    kv_time_s: np.ndarray  # KV bytes / (bandwidth * memory_eff), seconds
    flops: np.ndarray  # FLOP
    bytes: np.ndarray  # bytes moved to or from HBM
    kv_bytes: np.ndarray  # the KV-cache part of ``bytes``
    peak_flops: float  # FLOP/s the MFU is measured against
    bandwidth: float  # bytes/s the MBU is measured against

    @property
    def memory_time_s(self) -> np.ndarray:
        return self.weight_time_s + self.kv_time_s

    @property
    def memory_bound(self) -> np.ndarray:
        """True where moving bytes takes longer than the math."""
        return self.memory_time_s >= self.compute_time_s

    @property
    def intensity(self) -> np.ndarray:
        """Arithmetic intensity, FLOP per byte."""
        return _safe_div(self.flops, self.bytes)

    @property
    def mfu(self) -> np.ndarray:
        """Model FLOP utilisation: achieved FLOP/s over the spec peak, over the whole step."""
        return _safe_div(self.flops, self.peak_flops * self.time_s)

    @property
    def mbu(self) -> np.ndarray:
        """Memory bandwidth utilisation: achieved bytes/s over the spec bandwidth."""
        return _safe_div(self.bytes, self.bandwidth * self.time_s)


_ARRAY_FIELDS = ("time_s", "gpu_time_s", "compute_time_s", "weight_time_s", "kv_time_s", "flops", "bytes",
                 "kv_bytes")


def scale_steps(cost: StepCost, factor: float) -> StepCost:
    """Steps costing ``factor`` times ``cost`` in every respect (time, FLOPs, bytes): a drafter priced
    as a fixed share of a target step, say."""
    return StepCost(**{f: factor * np.asarray(getattr(cost, f)) for f in _ARRAY_FIELDS},
                    peak_flops=cost.peak_flops, bandwidth=cost.bandwidth)


def concat_steps(costs: list[StepCost]) -> StepCost:
    """Several runs of steps as one run, in order (MFU and MBU against the first one's peaks)."""
    return StepCost(**{f: np.concatenate([np.ravel(getattr(c, f)) for c in costs]) for f in _ARRAY_FIELDS},
                    peak_flops=costs[0].peak_flops, bandwidth=costs[0].bandwidth)


def _safe_div(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    num, den = np.broadcast_arrays(np.asarray(num, dtype=float), np.asarray(den, dtype=float))
    out = np.zeros(num.shape)
    np.divide(num, den, out=out, where=den > 0)
    return out


def attention_pairs(new_tokens, cached_tokens) -> np.ndarray:
    """Causal (query, key) pairs for q new tokens on top of c cached ones: q * (c + (q + 1) / 2)."""
    q = np.asarray(new_tokens, dtype=float)
    return q * (np.asarray(cached_tokens, dtype=float) + (q + 1) / 2)


@dataclass(frozen=True)
class StepTimeCoefficients:
    """The step-time model as numbers: for a step that runs,
    t_step = max(s_per_token * T + s_per_pair * P, weight_s + s_per_kv_token * K) + host_s,
    with T new tokens, P attention pairs and K KV tokens read or written (see ``step_cost``).

    For schedulers that must advance a clock step by step (admission under arrivals) and want
    scalar arithmetic; ``step_cost`` is defined through these same numbers.
    """

    s_per_token: float  # 2 * N_params / (peak * compute_eff), seconds per new token
    s_per_pair: float  # 4 * L * H * d_head / (peak * compute_eff), seconds per attention pair
    weight_s: float  # weight_bytes / (bandwidth * memory_eff), seconds
    s_per_kv_token: float  # kv_bytes_per_token / (bandwidth * memory_eff), seconds
    host_s: float  # host overhead per step, seconds

    def step_time_s(self, new_tokens, attn_pairs, kv_tokens):
        """t_step for steps that run (new_tokens > 0); broadcasts like numpy."""
        compute = self.s_per_token * new_tokens + self.s_per_pair * attn_pairs
        memory = self.weight_s + self.s_per_kv_token * kv_tokens
        return np.maximum(compute, memory) + self.host_s


def step_time_coefficients(gpu: GPU, model: Model, assumptions: Assumptions = DEFAULT_ASSUMPTIONS
                           ) -> StepTimeCoefficients:
    flops_rate = gpu.peak_flops(model.compute_precision) * assumptions.compute_eff
    byte_rate = gpu.hbm_bandwidth * assumptions.memory_eff
    return StepTimeCoefficients(
        s_per_token=2.0 * model.n_params / flops_rate,
        s_per_pair=4.0 * model.n_layers * model.n_heads * model.head_dim / flops_rate,
        weight_s=model.weight_bytes / byte_rate,
        s_per_kv_token=model.kv_bytes_per_token / byte_rate,
        host_s=assumptions.host_overhead_s,
    )


def step_cost(
    gpu: GPU,
    model: Model,
    new_tokens,
    attn_pairs,
    kv_tokens,
    assumptions: Assumptions = DEFAULT_ASSUMPTIONS,
) -> StepCost:
    """Price engine steps from their per-step aggregates (arrays broadcast together).

    Args:
        new_tokens: T, tokens processed in the step (sum of q_i over the batch).
        attn_pairs: P, causal attention pairs in the step (sum of q_i * (c_i + (q_i + 1) / 2)).
        kv_tokens: tokens whose KV the step reads or writes (sum of c_i + q_i).
    """
    t, p, k = np.broadcast_arrays(
        np.asarray(new_tokens, dtype=float), np.asarray(attn_pairs, dtype=float),
        np.asarray(kv_tokens, dtype=float),
    )
    if np.any(t < 0) or np.any(p < 0) or np.any(k < 0):
        raise ValueError("new_tokens, attn_pairs and kv_tokens must be >= 0")
    runs = t > 0
    coef = step_time_coefficients(gpu, model, assumptions)
    flops = np.where(runs, 2.0 * model.n_params * t + 4.0 * model.n_layers * model.n_heads
                     * model.head_dim * p, 0.0)
    weight_bytes = np.where(runs, model.weight_bytes, 0.0)
    kv_bytes = np.where(runs, model.kv_bytes_per_token * k, 0.0)
    compute_time = np.where(runs, coef.s_per_token * t + coef.s_per_pair * p, 0.0)
    weight_time = np.where(runs, coef.weight_s, 0.0)
    kv_time = np.where(runs, coef.s_per_kv_token * k, 0.0)
    gpu_time = np.maximum(compute_time, weight_time + kv_time)
    time = np.where(runs, gpu_time + coef.host_s, 0.0)
    peak, bandwidth = gpu.peak_flops(model.compute_precision), gpu.hbm_bandwidth
    return StepCost(
        time_s=time, gpu_time_s=gpu_time, compute_time_s=compute_time, weight_time_s=weight_time,
        kv_time_s=kv_time, flops=flops, bytes=weight_bytes + kv_bytes, kv_bytes=kv_bytes,
        peak_flops=peak, bandwidth=bandwidth,
    )


def batch_step_cost(gpu, model, new_tokens, cached_tokens, assumptions=DEFAULT_ASSUMPTIONS) -> StepCost:
    """Price steps given per-sequence arrays of shape (steps, slots): q new tokens and c cached tokens
    of each sequence at each step (q = 0: the slot takes no part in that step)."""
    q = np.asarray(new_tokens, dtype=float)
    c = np.asarray(cached_tokens, dtype=float)
    active = q > 0
    return step_cost(
        gpu, model,
        new_tokens=q.sum(axis=-1),
        attn_pairs=np.where(active, attention_pairs(q, c), 0.0).sum(axis=-1),
        kv_tokens=np.where(active, c + q, 0.0).sum(axis=-1),
        assumptions=assumptions,
    )


def uniform_step_cost(
    gpu, model, batch, new_tokens_per_seq, cached_tokens, assumptions=DEFAULT_ASSUMPTIONS,
) -> StepCost:
    """Steps where each of ``batch`` sequences brings the same q new tokens on c cached tokens.

    Decode is q = 1; a prefill of a p-token prompt is q = p, c = 0; verifying k drafts is q = k + 1.
    All arguments broadcast, so a sweep over batch sizes or contexts is one call.
    """
    b = np.asarray(batch, dtype=float)
    q = np.asarray(new_tokens_per_seq, dtype=float)
    c = np.asarray(cached_tokens, dtype=float)
    if np.any(b < 0) or np.any(q < 0) or np.any(c < 0):
        raise ValueError("batch, new_tokens_per_seq and cached_tokens must be >= 0")
    return step_cost(gpu, model, b * q, b * attention_pairs(q, c), b * (c + q), assumptions)


def decode_step_cost(gpu, model, batch, context_tokens, assumptions=DEFAULT_ASSUMPTIONS) -> StepCost:
    """One decode step: ``batch`` sequences each add 1 token on ``context_tokens`` cached tokens."""
    return uniform_step_cost(gpu, model, batch, 1, context_tokens, assumptions)


def prefill_cost(gpu, model, prompt_tokens, batch=1, assumptions=DEFAULT_ASSUMPTIONS) -> StepCost:
    """One prefill pass over ``batch`` prompts of ``prompt_tokens`` tokens each (nothing cached)."""
    return uniform_step_cost(gpu, model, batch, prompt_tokens, 0, assumptions)


def compute_bound_batch(gpu, model, context_tokens, assumptions=DEFAULT_ASSUMPTIONS) -> float:
    """The decode batch size at which math time catches up with memory time (``inf`` if never).

    Decode at batch B and context c: FLOPs = B * a with a = 2N + 4*L*H*hd*(c + 1); bytes = W + B * k
    with k = kv_bytes_per_token * (c + 1). Setting FLOPs / F = bytes / M (F, M the effective peaks):
        B = (W / M) / (a / F - k / M)
    If a / F <= k / M every extra sequence adds more memory time than math time (long contexts with
    GQA: attention does ~H/KV FLOP per KV byte), and decode never turns compute-bound.
    """
    flops_rate = gpu.peak_flops(model.compute_precision) * assumptions.compute_eff
    byte_rate = gpu.hbm_bandwidth * assumptions.memory_eff
    c1 = float(context_tokens) + 1
    a = 2.0 * model.n_params + 4.0 * model.n_layers * model.n_heads * model.head_dim * c1
    k = model.kv_bytes_per_token * c1
    margin = a / flops_rate - k / byte_rate
    if margin <= 0:
        return math.inf
    return (model.weight_bytes / byte_rate) / margin


def kernel_busy_fraction(cost: StepCost, idle_s: float = 0.0) -> float:
    """``nvidia-smi`` utilization.gpu over a run: the share of wall time with a kernel executing.

    NVML defines it as the "percent of time over the past sample period during which one or more
    kernels was executing". Here that is sum(t_gpu) / (sum(t_step) + idle time): it says nothing of
    how much of the chip a kernel used, so any stepping engine reads near 1.
    """
    if idle_s < 0:
        raise ValueError(f"idle_s must be >= 0 seconds, got {idle_s!r}")
    wall = float(np.sum(cost.time_s)) + idle_s
    return float(np.sum(cost.gpu_time_s)) / wall if wall > 0 else 0.0


def calibration_step_s(assumptions: Assumptions = DEFAULT_ASSUMPTIONS) -> float:
    """The model's decode step, in seconds, at the calibration point (compare CALIBRATION_MEASURED_S)."""
    step = decode_step_cost(GPUS[CALIBRATION_GPU], MODELS[CALIBRATION_MODEL], 1, CALIBRATION_CONTEXT_TOKENS,
                            assumptions)
    return float(step.time_s)
