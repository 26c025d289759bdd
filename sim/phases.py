"""Section 00: one prefill pass and one decode step side by side on the roofline."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from sim.cost import (
    DEFAULT_ASSUMPTIONS,
    Assumptions,
    StepCost,
    achieved_rates,
    attention_sums,
    compute_bound_batch,
    decode_step_cost,
    kernel_busy_fraction,
    prefill_cost,
    step_cost,
)
from sim.hardware import GPU
from sim.models import Model
from sim.validate import check_int

PROMPT_TOKENS_RANGE = (1, 131072)
#: The prompt lengths of page 00's TTFT curve: 32 to 32,768 tokens, two points an octave.
TTFT_PROMPT_TOKENS = tuple(round(2 ** (e / 2)) for e in range(10, 31))
BATCH_RANGE = (1, 4096)
CONTEXT_TOKENS_RANGE = (0, 131072)


@dataclass(frozen=True)
class TwoPhases:
    """Prefill of one prompt vs one decode step of a batch, on one GPU and model.

    ``prefill`` and ``decode`` hold 1-element arrays (see ``StepCost``).
    """

    prefill: StepCost
    decode: StepCost
    prompt_tokens: int
    batch: int
    context_tokens: int
    ridge_point: float  # FLOP/byte at the spec peaks
    compute_bound_batch: float  # decode batch size where math catches up with memory (inf: never)
    knee_point: float = math.nan  # FLOP/byte where the achievable roofline flattens (its GEMM rate /
    #                               its bandwidth): a whole step right of it is compute-bound

    @property
    def knee_apart(self) -> int:
        """-1 where the achievable knee lies left of the spec ridge by more than 10 %, +1 right of it
        (efficiencies a reader set), 0 where the two are within 10 % (one line says it)."""
        ratio = self.knee_point / self.ridge_point
        if not math.isfinite(ratio) or abs(math.log(ratio)) <= math.log(1.1):
            return 0
        return -1 if self.knee_point < self.ridge_point else 1

    @property
    def prefill_time_s(self) -> float:
        return float(self.prefill.time_s[0])

    @property
    def decode_step_s(self) -> float:
        return float(self.decode.time_s[0])

    @property
    def decode_tokens_per_s(self) -> float:
        """Tokens per second the whole batch produces in decode (one per sequence per step)."""
        return self.batch / self.decode_step_s

    def operator_shares(self, phase: str) -> dict[str, float]:
        """Share of the ``phase`` ('prefill' or 'decode') step each operator takes, kernel costs
        included, and the host's share ('host')."""
        cost = self.prefill if phase == "prefill" else self.decode
        step = float(cost.time_s[0])
        shares = {n: float(o.time_s[0] + o.launch_s[0]) / step for n, o in cost.operators.items()}
        return shares | {"host": float(cost.host_time_s[0]) / step}

    @property
    def decode_utilization_gpu(self) -> float:
        """What ``nvidia-smi`` reads while decode runs back-to-back."""
        return kernel_busy_fraction(self.decode)



def two_phases(
    gpu: GPU,
    model: Model,
    prompt_tokens: int,
    batch: int,
    context_tokens: int,
    assumptions: Assumptions = DEFAULT_ASSUMPTIONS,
) -> TwoPhases:
    """Prefill of a ``prompt_tokens`` prompt, and a decode step of ``batch`` sequences each holding
    ``context_tokens`` cached tokens."""
    prompt_tokens = check_int("prompt_tokens", prompt_tokens, *PROMPT_TOKENS_RANGE)
    batch = check_int("batch", batch, *BATCH_RANGE)
    context_tokens = check_int("context_tokens", context_tokens, *CONTEXT_TOKENS_RANGE)
    return TwoPhases(
        prefill=prefill_cost(gpu, model, np.array([prompt_tokens]), 1, assumptions),
        decode=decode_step_cost(gpu, model, np.array([batch]), context_tokens, assumptions),
        prompt_tokens=prompt_tokens,
        batch=batch,
        context_tokens=context_tokens,
        ridge_point=gpu.ridge_point(model.compute_precision),
        compute_bound_batch=compute_bound_batch(gpu, model, context_tokens, assumptions),
        knee_point=achievable_knee(gpu, model, assumptions),
    )


def achievable_knee(gpu: GPU, model: Model, assumptions: Assumptions = DEFAULT_ASSUMPTIONS) -> float:
    """FLOP/byte where ``roofline``'s effective line flattens: the achieved GEMM rate over the achieved
    bandwidth. Below the spec ridge wherever compute_eff x the GEMM ceiling < memory_eff x the STREAM
    ceiling (H100 BF16: 196 against 295 at the defaults), so a step can be compute-bound left of the
    spec ridge."""
    rates = achieved_rates(gpu, model, assumptions)
    return rates.gemm_flops / rates.bandwidth


def roofline(gpu: GPU, model: Model, intensity, assumptions: Assumptions = DEFAULT_ASSUMPTIONS):
    """Attainable FLOP/s at each arithmetic intensity (FLOP/byte): the spec roofline
    min(peak, I * bandwidth), and the effective one with the efficiencies applied."""
    i = np.asarray(intensity, dtype=float)
    peak = gpu.peak_flops(model.compute_precision)
    spec = np.minimum(peak, i * gpu.hbm_bandwidth)
    rates = achieved_rates(gpu, model, assumptions)
    effective = np.minimum(rates.gemm_flops, i * rates.bandwidth)
    return spec, effective


@dataclass(frozen=True)
class TTFTCurve:
    """Time to first token against prompt length for one request on an idle server."""

    prompt_tokens: np.ndarray  # prompt lengths, tokens
    ttft_s: np.ndarray  # seconds: the prompt's prefill, in chunks of at most ``chunk_tokens``
    chunk_tokens: int  # the engine's largest step (vLLM's max_num_batched_tokens)
    max_prompt_tokens: int  # the longest prompt whose KV fits beside the weights (0: the weights do not)

    def ttft_at(self, prompt_tokens: int) -> float:
        """TTFT of one of the curve's prompt lengths, seconds."""
        i = np.flatnonzero(self.prompt_tokens == prompt_tokens)
        if not i.size:
            raise ValueError(f"{prompt_tokens} tokens is not a prompt length of this curve")
        return float(self.ttft_s[i[0]])


def ttft_curve(gpu: GPU, model: Model, prompt_tokens, assumptions: Assumptions = DEFAULT_ASSUMPTIONS
               ) -> TTFTCurve:
    """TTFT of one prompt of each length in ``prompt_tokens`` on an idle server: its prefill, cut into
    chunks of at most the engine's largest step on this GPU (``sim.memory.engine_max_batched_tokens``:
    8,192 tokens, 2,048 on an A100 and on cards under 70 GiB), each chunk attending to the chunks
    before it, the last sampling the first token. ``sim.truth.prefill_time_s``, which prices the
    measured TTFT rows, is this for one prompt; all prompts' chunks are priced in one vectorised call."""
    from sim.memory import engine_max_batched_tokens, memory_plan

    prompts = np.asarray(prompt_tokens, dtype=np.int64).ravel()
    if prompts.size == 0 or np.any(prompts < 1):
        raise ValueError("prompt_tokens must be positive token counts")
    chunk = engine_max_batched_tokens(gpu)
    n_chunks = -(-prompts // chunk)
    owner = np.repeat(np.arange(prompts.size), n_chunks)
    first = np.cumsum(n_chunks) - n_chunks
    index = np.arange(owner.size) - first[owner]
    starts = (index * chunk).astype(float)
    q = np.minimum(chunk, prompts[owner] - starts)
    last = (index == n_chunks[owner] - 1).astype(float)
    pairs, kv = attention_sums(model, q, starts)
    cost = step_cost(gpu, model, q, pairs, kv, assumptions, sampled_tokens=last)
    ttft = np.bincount(owner, weights=cost.time_s, minlength=prompts.size)
    plan = memory_plan(gpu, model, 1, 1)
    return TTFTCurve(prompts, ttft, chunk, plan.max_context_tokens if plan.weights_fit else 0)
