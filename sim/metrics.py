"""Section 04: one set of serving metrics from any run of the other models.

The models of sections 00-03 each produce engine steps priced by ``sim.cost`` plus, where they model
requests, per-request latencies and per-step memory and queue state. ``run_metrics`` turns any such
run into the same metrics, so every scenario is measured with the same ruler:

- ``utilization_gpu``: NVML's utilization.gpu, "percent of time ... during which one or more kernels
  was executing": sum(t_gpu) / wall time (``sim.cost.kernel_busy_fraction``).
- ``mfu`` (what DCGM's PIPE_TENSOR_ACTIVE tracks): FLOPs / (peak FLOP/s * wall time).
- ``mbu`` (what DCGM's DRAM_ACTIVE tracks; Databricks' MBU): bytes / (peak bandwidth * wall time).
- goodput: useful tokens per second (tokens someone asked for), and DistServe's request goodput,
  requests per second that meet both the TTFT and the time-per-output-token target.
- latency percentiles, time-weighted KV-cache use and queue depth, preemptions.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from sim.cost import StepCost, kernel_busy_fraction


@dataclass(frozen=True)
class SLO:
    """Latency targets a request must meet to count towards request goodput (DistServe).

    Defaults: first token within 1 s, then a token every 50 ms or faster (20 tokens/s, faster than
    people read): common interactive-chat targets, editable on the page.
    """

    ttft_s: float = 1.0
    tpot_s: float = 0.050

    def __post_init__(self) -> None:
        for name in ("ttft_s", "tpot_s"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
                raise ValueError(f"{name} must be a finite number of seconds > 0, got {value!r}")


@dataclass(frozen=True)
class ServingMetrics:
    """What each dashboard metric would read over one run. NaN where a run does not model it."""

    wall_s: float
    utilization_gpu: float  # nvidia-smi utilization.gpu, 0..1
    mfu: float  # tensor activity, 0..1
    mbu: float  # DRAM activity, 0..1
    throughput_tok_s: float  # tokens the GPU processed per second (padding and recompute included)
    goodput_tok_s: float  # tokens someone asked for, per second
    goodput_share: float  # goodput_tok_s / throughput_tok_s
    goodput_rps: float  # requests per second meeting the SLO (DistServe goodput)
    slo_attainment: float  # share of requests meeting the SLO
    ttft_p50_s: float
    ttft_p99_s: float
    tpot_p50_s: float
    tpot_p99_s: float
    kv_cache_use: float  # time-weighted share of the KV cache holding token states
    queue_depth: float  # time-weighted mean number of requests waiting
    preemptions: int


def _percentile(values, q: float) -> float:
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    return float(np.percentile(v, q)) if v.size else math.nan


def _time_weighted_mean(values, weights_s: np.ndarray) -> float:
    if values is None:
        return math.nan
    v = np.broadcast_to(np.asarray(values, dtype=float), weights_s.shape)
    total = float(weights_s.sum())
    return float((v * weights_s).sum() / total) if total > 0 else math.nan


def run_metrics(
    cost: StepCost,
    *,
    useful_tokens: float,
    processed_tokens: float | None = None,
    idle_s: float = 0.0,
    ttft_s=None,
    tpot_s=None,
    kv_use=None,
    queue_depth=None,
    preemptions: int = 0,
    slo: SLO | None = None,
) -> ServingMetrics:
    """Metrics of one run.

    Args:
        cost: the run's steps, priced by ``sim.cost``.
        useful_tokens: prompt tokens prefilled plus output tokens generated for requests (no padding,
            no recomputation, no rejected drafts).
        processed_tokens: tokens the GPU processed, padding, recomputation and rejected drafts
            included; None means no waste (``useful_tokens``, goodput share 1).
        idle_s: wall time with no step running (engine idle between arrivals), seconds.
        ttft_s, tpot_s: per-request time to first token and mean time per output token, seconds.
        kv_use: per-step share of KV memory holding token states (0..1), or one number.
        queue_depth: per-step number of requests waiting, or one number.
        preemptions: requests evicted and recomputed during the run.
        slo: latency targets for request goodput (needs ttft_s and tpot_s).
    """
    if useful_tokens < 0 or idle_s < 0 or preemptions < 0:
        raise ValueError("useful_tokens, idle_s and preemptions must be >= 0")
    step_s = np.asarray(cost.time_s, dtype=float).ravel()
    wall = float(step_s.sum()) + idle_s
    processed = useful_tokens if processed_tokens is None else processed_tokens
    if processed < useful_tokens:
        raise ValueError(f"processed_tokens ({processed}) must be >= useful_tokens ({useful_tokens})")
    per_s = (lambda x: x / wall) if wall > 0 else (lambda x: 0.0)

    n_requests, met = 0, 0
    if ttft_s is not None and tpot_s is not None:
        ttft = np.asarray(ttft_s, dtype=float)
        tpot = np.asarray(tpot_s, dtype=float)
        n_requests = ttft.size
        if slo is not None:
            met = int(np.sum((ttft <= slo.ttft_s) & ~(tpot > slo.tpot_s)))
    return ServingMetrics(
        wall_s=wall,
        utilization_gpu=kernel_busy_fraction(cost, idle_s),
        mfu=per_s(float(np.sum(cost.flops))) / cost.peak_flops,
        mbu=per_s(float(np.sum(cost.bytes))) / cost.bandwidth,
        throughput_tok_s=per_s(processed),
        goodput_tok_s=per_s(useful_tokens),
        goodput_share=useful_tokens / processed if processed > 0 else 0.0,
        goodput_rps=per_s(met) if slo is not None and n_requests else math.nan,
        slo_attainment=met / n_requests if slo is not None and n_requests else math.nan,
        ttft_p50_s=_percentile(ttft_s, 50) if ttft_s is not None else math.nan,
        ttft_p99_s=_percentile(ttft_s, 99) if ttft_s is not None else math.nan,
        tpot_p50_s=_percentile(tpot_s, 50) if tpot_s is not None else math.nan,
        tpot_p99_s=_percentile(tpot_s, 99) if tpot_s is not None else math.nan,
        kv_cache_use=_time_weighted_mean(kv_use, step_s),
        queue_depth=_time_weighted_mean(queue_depth, step_s),
        preemptions=int(preemptions),
    )


def per_gpu_goodput(prefill_gpus: int, prefill_rps_per_gpu: float, decode_gpus: int,
                    decode_rps_per_gpu: float) -> float:
    """DistServe's per-GPU goodput of a disaggregated deployment, requests/s per GPU.

    The system serves as many requests as its slower stage allows:
    min(prefill_gpus * prefill rate, decode_gpus * decode rate) / (prefill_gpus + decode_gpus).
    """
    if prefill_gpus < 1 or decode_gpus < 1:
        raise ValueError("prefill_gpus and decode_gpus must be >= 1")
    if prefill_rps_per_gpu < 0 or decode_rps_per_gpu < 0:
        raise ValueError("request rates must be >= 0")
    system = min(prefill_gpus * prefill_rps_per_gpu, decode_gpus * decode_rps_per_gpu)
    return system / (prefill_gpus + decode_gpus)
