"""From the pure roofline floor to the model's estimate, one named assumption at a time.

A roofline floor prices a step at the spec sheet's peaks with math and memory perfectly overlapped.
The model's estimate adds its assumptions in the order it applies them; each stage below is the
same step priced with one more of them, so the differences add up exactly to estimate - floor:

    floor        max(all FLOP / peak, weight and activation bytes / bandwidth)   (spec, one overlap)
    + sustained bandwidth   bytes at the GPU's STREAM figure x memory_eff
    + compute efficiency    FLOP at the GPU's best measured GEMM x compute_eff
    + operators in turn     each operator its own max(math, memory), summed: no overlap between them
    + kernel and host costs per-kernel fixed cost, CPU launches without a graph, host time a step
    + KV-cache reads        the cached tokens' keys and values, read by attention
    + communication (TP)    the two all-reduces a layer over the interconnect (0 on one GPU)

Every stage before the last leaves the all-reduces out; the last adds them.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from sim.cost import DEFAULT_ASSUMPTIONS, ROOFLINE_FLOOR, Assumptions, attention_sums, step_cost
from sim.hardware import GPU
from sim.models import Model

STAGES = ("roofline floor", "sustained bandwidth", "compute efficiency", "operators in turn",
          "kernel and host costs", "KV-cache reads", "communication (TP)")


@dataclass(frozen=True)
class Gap:
    """The step's time after each stage (seconds), in STAGES order; the last is the estimate."""

    times_s: tuple[float, ...]

    @property
    def floor_s(self) -> float:
        return self.times_s[0]

    @property
    def estimate_s(self) -> float:
        return self.times_s[-1]

    @property
    def steps_s(self) -> dict[str, float]:
        """What each assumption adds, seconds (sums to estimate - floor)."""
        return {name: self.times_s[i] - self.times_s[i - 1] for i, name in enumerate(STAGES) if i}

    def shares(self) -> dict[str, float]:
        """Each assumption's share of the gap between the floor and the estimate."""
        gap = self.estimate_s - self.floor_s
        return {k: (v / gap if gap > 0 else 0.0) for k, v in self.steps_s.items()}


def explain_step(gpu: GPU, model: Model, new_tokens: float, attn_pairs: float, kv_tokens: float,
                 sampled_tokens: float, assumptions: Assumptions = DEFAULT_ASSUMPTIONS) -> Gap:
    """The stages for one step with these sums (see ``sim.cost.step_cost``); ``kv_tokens`` counts
    the cached tokens read plus the new ones written, as there."""
    a = assumptions
    new_kv = float(new_tokens)  # the step's own KV writes stay in every stage; the cache reads come last
    # Shares of the spec peaks (ROOFLINE_FLOOR has measured_ceilings off): bandwidth first, then both,
    # each at the ceilings the caller's assumptions use.
    stream = gpu.hbm_ceiling() if a.measured_ceilings else 1.0
    spec_bw = dataclasses.replace(ROOFLINE_FLOOR, memory_eff=stream * a.memory_eff)
    both = dataclasses.replace(ROOFLINE_FLOOR, compute_eff=a.compute_eff, memory_eff=a.memory_eff,
                               measured_ceilings=a.measured_ceilings)
    fixed = dataclasses.replace(a)

    def price(assume: Assumptions, kv: float):
        return step_cost(gpu, model, new_tokens, attn_pairs, kv, assume, sampled_tokens=sampled_tokens)

    def one_overlap(assume: Assumptions) -> float:
        c = price(assume, new_kv)
        return float(np.maximum(c.compute_time_s, c.memory_time_s))

    def no_comm(c, total) -> float:
        return float(total - c.comm_time_s)

    in_turn = price(both, new_kv)
    own_kv, every_kv = price(fixed, new_kv), price(fixed, float(kv_tokens))
    times = (
        one_overlap(ROOFLINE_FLOOR),
        one_overlap(spec_bw),
        one_overlap(both),
        no_comm(in_turn, in_turn.gpu_time_s),
        no_comm(own_kv, own_kv.time_s),
        no_comm(every_kv, every_kv.time_s),
        float(every_kv.time_s),
    )
    return Gap(times_s=times)


def explain_decode(gpu: GPU, model: Model, batch: int, context_tokens: int,
                   assumptions: Assumptions = DEFAULT_ASSUMPTIONS) -> Gap:
    """The stages of one decode step: ``batch`` sequences, one new token each on ``context_tokens``."""
    b, c = float(batch), float(context_tokens)
    pairs, kv = attention_sums(model, 1, c)
    return explain_step(gpu, model, b, b * float(pairs), b * float(kv), b, assumptions)


def explain_prefill(gpu: GPU, model: Model, prompt_tokens: int,
                    assumptions: Assumptions = DEFAULT_ASSUMPTIONS) -> Gap:
    """The stages of one prefill of ``prompt_tokens`` tokens (nothing cached; it samples once)."""
    p = float(prompt_tokens)
    pairs, kv = attention_sums(model, p, 0.0)
    return explain_step(gpu, model, p, float(pairs), float(kv), 1.0, assumptions)
