"""Section 04: one set of serving metrics from any run of the other models.

The models of sections 00-03 each produce engine steps priced by ``sim.cost`` plus, where they model
requests, per-request latencies and per-step memory and queue state. ``run_metrics`` turns any such
run into the same metrics, so every scenario is measured with the same ruler:

- ``utilization_gpu``: NVML's utilization.gpu, "percent of time ... during which one or more kernels
  was executing": sum(t_gpu) / wall time (``sim.cost.kernel_busy_fraction``).
- ``mfu`` (what DCGM's PIPE_TENSOR_ACTIVE tracks): FLOPs / (peak FLOP/s * wall time).
- ``mbu`` (what DCGM's DRAM_ACTIVE tracks; Databricks' MBU): bytes / (peak bandwidth * wall time).
- output tokens per second (tokens someone asked for, padding and rejected drafts left out), and
  goodput, the only sense the app uses the word in: output tokens per second, or requests per second,
  of the requests that meet both the TTFT and the time-per-output-token target (``vllm bench serve
  --goodput``, after DistServe; DistServe's per-GPU goodput, the highest rate per GPU at which 90 %
  of requests meet them, has its analogue in the app's capacity per GPU, ``per_gpu_goodput`` and
  ``sim.load.capacity``).
- latency percentiles, time-weighted KV-cache use and queue depth, preemptions.

The adapters below (``phases_metrics``, ``batching_metrics``, ``card_metrics``, ``chunked_metrics``,
``plain_decode_metrics``, ``speculative_metrics``) read a run object of each other section and call
``run_metrics`` with that run's own priced steps, latencies and memory state: nothing is re-derived.
``scenarios`` measures one run of every situation the article shows, for the reader's GPU and model;
``dashboard_day`` runs a simulated day of traffic through section 01's continuous batching and
windows it as a monitoring dashboard would; ``ALERTS`` names, for each failure the article
describes, the metric that catches it and an alert rule that fires on it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from sim import speculative as spec
from sim.batching import RATE_RANGE, SEED_RANGE, BatchingRun, make_requests, sample_requests, simulate
from sim.batching import WORKLOADS as BATCH_WORKLOADS
from sim.chunked import ChunkedPrefill, Schedule, chunked_prefill
from sim.cost import (
    DEFAULT_ASSUMPTIONS,
    Assumptions,
    StepCost,
    concat_steps,
    decode_step_cost,
    kernel_busy_fraction,
)
from sim.hardware import GPU
from sim.memory import can_run, memory_plan
from sim.models import Model
from sim.paging import POLICIES as PAGING_POLICIES
from sim.paging import CardFit, card_fit
from sim.phases import TwoPhases, two_phases
from sim.speculative import Speculation
from sim.validate import check_choice, check_float, check_int


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

    def met(self, ttft_s, tpot_s) -> np.ndarray:
        """Which requests meet both targets (arrays broadcast). A request with no TPOT (NaN: one output
        token) meets that target, as vLLM's benchmark counts it (``--goodput`` sets its TPOT to 0)."""
        tpot = np.asarray(tpot_s, dtype=float)
        return (np.asarray(ttft_s, dtype=float) <= self.ttft_s) & ~(tpot > self.tpot_s)


#: Ranges of the latency targets the page offers (seconds).
SLO_TTFT_RANGE_S = (0.1, 10.0)
SLO_TPOT_RANGE_S = (0.01, 0.2)
#: DistServe's attainment goal: an hour "meets its SLO" when this share of its requests do.
SLO_ATTAINMENT_GOAL = 0.9
#: A utilization.gpu reading the pages call 'near 100%' (a kernel almost always running); below it,
#: host time between short steps or idle time between arrivals is a visible share of the wall time.
BUSY_UTILIZATION = 0.85


@dataclass(frozen=True)
class ServingMetrics:
    """What each dashboard metric would read over one run. NaN where a run does not model it."""

    wall_s: float
    utilization_gpu: float  # nvidia-smi utilization.gpu, 0..1
    mfu: float  # FLOP / (spec peak x wall), 0..1 (page 04 reads it in place of DCGM tensor-pipe activity)
    mbu: float  # bytes / (spec bandwidth x wall), 0..1 (in place of DCGM DRAM activity)
    throughput_tok_s: float  # tokens the GPU processed per second (padding and recompute included)
    output_tok_s: float  # output tokens delivered per second (tokens someone asked for), latency aside
    useful_share: float  # output_tok_s / throughput_tok_s
    goodput_rps: float  # requests per second meeting the SLO (DistServe goodput, in requests)
    slo_attainment: float  # share of requests meeting the SLO
    ttft_p50_s: float
    ttft_p99_s: float
    tpot_p50_s: float
    tpot_p99_s: float
    kv_cache_use: float  # time-weighted share of the KV cache holding token states
    queue_depth: float  # time-weighted mean number of requests waiting
    preemptions: float  # requests evicted and recomputed (a count; NaN where the run does not model it)
    itl_p50_s: float = math.nan  # inter-token latency: the gap before each output token, per token
    itl_p99_s: float = math.nan
    goodput_tok_s: float = math.nan  # output tokens/s of the requests that meet the SLO (DistServe)

    @property
    def ran(self) -> bool:
        """False for ``NOT_RUN``: a scenario that does not fit on the card, so it has no reading."""
        return not math.isnan(self.wall_s)


def dollars_per_million_tokens(tokens_per_s, price_per_gpu_hour: float, gpus: int = 1):
    """Dollars per million tokens a replica of ``gpus`` GPUs makes at ``tokens_per_s`` (the replica's
    rate), renting each GPU at ``price_per_gpu_hour``:

        $/M tokens = gpus * price / 3600 / tokens_per_s * 1e6

    The same figure per GPU (each GPU costs ``price`` and makes tokens_per_s / gpus). ``inf`` where
    nothing is made. Broadcasts."""
    if not (isinstance(gpus, (int, np.integer)) and gpus >= 1):
        raise ValueError(f"gpus must be a whole number >= 1, got {gpus!r}")
    price = float(price_per_gpu_hour)
    if not (math.isfinite(price) and price >= 0):
        raise ValueError(f"price_per_gpu_hour must be a finite number >= 0, got {price_per_gpu_hour!r}")
    rate = np.asarray(tokens_per_s, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(rate > 0, gpus * price / 3600.0 / np.where(rate > 0, rate, 1.0) * 1e6, math.inf)
    return float(out) if out.ndim == 0 else out


def _percentile(values, q: float) -> float:
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    return float(np.percentile(v, q)) if v.size else math.nan


def weighted_percentile(values, weights, q: float) -> float:
    """The q-th percentile (inverse CDF: the smallest value whose cumulative weight reaches q %) of
    ``values`` each counted ``weights`` times; NaN when the weights sum to 0. ``weights`` None: 1 each.

    Inter-token latency uses it: a step of t seconds that gives n users a token is n samples of t.
    """
    v = np.asarray(values, dtype=float).ravel()
    w = np.ones_like(v) if weights is None else np.broadcast_to(np.asarray(weights, dtype=float), v.shape)
    keep = np.isfinite(v) & (w > 0)
    v, w = v[keep], w[keep]
    if not v.size:
        return math.nan
    order = np.argsort(v, kind="stable")
    cum = np.cumsum(w[order])
    i = int(np.searchsorted(cum, q / 100.0 * cum[-1] * (1 - 1e-12), side="left"))
    return float(v[order][min(i, v.size - 1)])


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
    preemptions: int | None = 0,
    slo: SLO | None = None,
    itl_s=None,
    itl_weights=None,
    request_tokens=None,
) -> ServingMetrics:
    """Metrics of one run.

    Args:
        cost: the run's steps, priced by ``sim.cost``.
        useful_tokens: tokens someone asked for (no padding, no recomputation, no rejected drafts).
            The adapters below count output tokens delivered, what a user receives, as section 01's
            useful work does.
        processed_tokens: the same kind of tokens as the GPU computed them, padding, recomputation
            and rejected drafts included; None means no waste (``useful_tokens``, useful share 1).
        idle_s: wall time with no step running (engine idle between arrivals), seconds.
        ttft_s, tpot_s: per-request time to first token and mean time per output token, seconds.
        kv_use: per-step share of KV memory holding token states (0..1), or one number.
        queue_depth: per-step number of requests waiting, or one number.
        preemptions: requests evicted and recomputed during the run; None where the run does not
            model eviction (NaN in the result).
        slo: latency targets for request goodput (needs ttft_s and tpot_s).
        itl_s, itl_weights: inter-token gaps, seconds, and how many output tokens waited each one
            (e.g. step times weighted by the users each step gave a token); weights None: 1 each.
        request_tokens: each request's output tokens (with ttft_s, tpot_s and slo): goodput in
            tokens/s counts those of the requests that meet the SLO.
    """
    if useful_tokens < 0 or idle_s < 0 or (preemptions is not None and preemptions < 0):
        raise ValueError("useful_tokens, idle_s and preemptions must be >= 0")
    step_s = np.asarray(cost.time_s, dtype=float).ravel()
    wall = float(step_s.sum()) + idle_s
    processed = useful_tokens if processed_tokens is None else processed_tokens
    if processed < useful_tokens:
        raise ValueError(f"processed_tokens ({processed}) must be >= useful_tokens ({useful_tokens})")
    per_s = (lambda x: x / wall) if wall > 0 else (lambda x: 0.0)

    n_requests, met, met_tokens = 0, 0, math.nan
    if ttft_s is not None and tpot_s is not None:
        ttft = np.asarray(ttft_s, dtype=float)
        tpot = np.asarray(tpot_s, dtype=float)
        n_requests = ttft.size
        if slo is not None:
            ok = slo.met(ttft, tpot)
            met = int(np.sum(ok))
            if request_tokens is not None:
                met_tokens = float(np.sum(np.asarray(request_tokens, dtype=float)[ok]))
    return ServingMetrics(
        wall_s=wall,
        utilization_gpu=kernel_busy_fraction(cost, idle_s),
        mfu=per_s(float(np.sum(cost.flops))) / cost.peak_flops,
        mbu=per_s(float(np.sum(cost.bytes))) / cost.bandwidth,
        throughput_tok_s=per_s(processed),
        output_tok_s=per_s(useful_tokens),
        useful_share=useful_tokens / processed if processed > 0 else 0.0,
        goodput_rps=per_s(met) if slo is not None and n_requests else math.nan,
        slo_attainment=met / n_requests if slo is not None and n_requests else math.nan,
        ttft_p50_s=_percentile(ttft_s, 50) if ttft_s is not None else math.nan,
        ttft_p99_s=_percentile(ttft_s, 99) if ttft_s is not None else math.nan,
        tpot_p50_s=_percentile(tpot_s, 50) if tpot_s is not None else math.nan,
        tpot_p99_s=_percentile(tpot_s, 99) if tpot_s is not None else math.nan,
        kv_cache_use=_time_weighted_mean(kv_use, step_s),
        queue_depth=_time_weighted_mean(queue_depth, step_s),
        preemptions=math.nan if preemptions is None else int(preemptions),
        itl_p50_s=weighted_percentile(itl_s, itl_weights, 50) if itl_s is not None else math.nan,
        itl_p99_s=weighted_percentile(itl_s, itl_weights, 99) if itl_s is not None else math.nan,
        goodput_tok_s=per_s(met_tokens) if math.isfinite(met_tokens) else math.nan,
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


# ---------------------------------------------------------------------------------------------------
# Adapters: one ServingMetrics from a run of each other section's model
# ---------------------------------------------------------------------------------------------------

#: A run that cannot happen on this card (the weights leave no room for a KV cache).
NOT_RUN = ServingMetrics(*(math.nan,) * 16)


def _kv_use(kv_bytes, kv_budget_bytes: float | None):
    """Share of the card's KV-cache budget holding token states (None where the model does not fit)."""
    if kv_budget_bytes is None or kv_budget_bytes <= 0:
        return None
    return np.asarray(kv_bytes, dtype=float) / kv_budget_bytes


def phases_metrics(r: TwoPhases, kv_budget_bytes: float | None = None) -> ServingMetrics:
    """Section 00's decode, running back to back: every user gets a token each step (TPOT = ITL = the
    step); the prompt's prefill is each user's TTFT. A steady state: no request goodput, no queue."""
    step = r.decode_step_s
    return run_metrics(r.decode, useful_tokens=r.batch, ttft_s=[r.prefill_time_s], tpot_s=[step],
                       itl_s=[step], kv_use=_kv_use(r.decode.kv_bytes, kv_budget_bytes), preemptions=None)


def batching_metrics(run: BatchingRun, *, slo: SLO | None = None,
                     kv_budget_bytes: float | None = None) -> ServingMetrics:
    """Section 01's run: its step costs and idle gaps, its requests' TTFT and TPOT; the queue at each
    step is the requests that have arrived by the step's start and not yet been admitted; each step's
    time is an inter-token gap for every request it gives a token after its first. Useful tokens are
    the requests' output tokens; processed ones add static batching's padding."""
    n = run.n_steps
    arrived = np.searchsorted(run.requests.arrival_s, run.step_start_s, side="right")
    admitted = np.cumsum(np.bincount(run.start_step, minlength=n))
    queue = np.maximum(arrived - admitted, 0)
    decoding = np.cumsum(np.bincount(run.start_step + 1, minlength=n + 1)
                         - np.bincount(run.end_step + 1, minlength=n + 1))[:n]
    return run_metrics(
        run.cost, useful_tokens=run.output_tokens, processed_tokens=run.generated_tokens,
        idle_s=run.idle_s, ttft_s=run.ttft_s, tpot_s=run.tpot_s, slo=slo,
        request_tokens=run.requests.output_tokens,
        kv_use=_kv_use(run.cost.kv_bytes, kv_budget_bytes), queue_depth=queue, preemptions=None,
        itl_s=run.cost.time_s + run.idle_before_s, itl_weights=decoding,
    )


def _fitting(fit: CardFit, policy: str) -> str:
    """'N requests that fit', or, past the engine's cap, 'max_num_seqs of the N that fit'."""
    n, run = fit.batch[policy], fit.run_batch[policy]
    if run < n:
        return f"{run:,} requests the engine runs at once (max_num_seqs) of the {n:,} that fit"
    return f"{n:,} requests that fit"


def card_metrics(fit: CardFit, gpu: GPU, model: Model, policy: str,
                 assumptions: Assumptions = DEFAULT_ASSUMPTIONS) -> ServingMetrics:
    """Section 02's card fit: decode at the batch ``policy`` keeps resident on this card, at the mean
    context a resident request holds (the step ``card_fit`` priced). The KV budget holds the batch's
    token states; the rest is reserved (reserved policy) or last-page slack (paged). A steady state
    under a full queue: no TTFT, no request goodput."""
    check_choice("policy", policy, PAGING_POLICIES)
    batch = fit.run_batch[policy]  # what fits, at most the engine's max_num_seqs
    if not fit.fits or batch < 1 or not model.reads(fit.longest_request_tokens):
        return NOT_RUN
    cost = decode_step_cost(gpu, model, np.array([batch]), fit.context_tokens, assumptions)
    step = float(cost.time_s[0])
    return run_metrics(cost, useful_tokens=batch, tpot_s=[step], itl_s=[step],
                       kv_use=_kv_use(cost.kv_bytes, fit.kv_budget_bytes), preemptions=None)


def chunked_metrics(schedule: Schedule, kv_budget_bytes: float | None = None) -> ServingMetrics:
    """Section 02b's long prompt among decoding users: each step's time is the gap every decoding user
    waits for a token (ITL, weighted by the users decoding); the long prompt's TTFT is from its first
    step to the end of its last prefill step. Useful tokens: the output tokens of the window."""
    return run_metrics(
        schedule.cost, useful_tokens=float(schedule.decode_seqs.sum()) + 1, ttft_s=[schedule.ttft_s],
        itl_s=schedule.time_s, itl_weights=schedule.decode_seqs, preemptions=None,
        kv_use=_kv_use(schedule.cost.kv_bytes, kv_budget_bytes),
    )


def speculation_steps(s: Speculation, gpu: GPU, model: Model, assumptions: Assumptions = DEFAULT_ASSUMPTIONS,
                      cost_ratio: float | None = None) -> tuple[StepCost, StepCost]:
    """(one plain decode step, one speculative round: k draft steps then the verify pass) of section
    03's setting, from its own ``round_cost``; the drafter's steps are priced as ``round_cost`` prices
    them (a decode step of the draft model or head, or c times a target decode step)."""
    rc = spec.round_cost(gpu, model, s.method, s.batch, s.k, s.context_tokens, assumptions, cost_ratio)
    return concat_steps([rc.decode]), concat_steps([rc.draft] * s.k + [rc.verify])


def plain_decode_metrics(s: Speculation, gpu: GPU, model: Model,
                         assumptions: Assumptions = DEFAULT_ASSUMPTIONS,
                         kv_budget_bytes: float | None = None) -> ServingMetrics:
    """Section 03's baseline: plain decode at its batch and context (TPOT = ITL = one step)."""
    decode, _ = speculation_steps(s, gpu, model, assumptions)
    step = float(decode.time_s[0])
    return run_metrics(decode, useful_tokens=s.batch, tpot_s=[step], itl_s=[step], preemptions=None,
                       kv_use=_kv_use(decode.kv_bytes, kv_budget_bytes))


def speculative_metrics(s: Speculation, gpu: GPU, model: Model,
                        assumptions: Assumptions = DEFAULT_ASSUMPTIONS, cost_ratio: float | None = None,
                        kv_budget_bytes: float | None = None) -> ServingMetrics:
    """Section 03's round as a run of k + 1 steps: E tokens per sequence are useful, the verified
    positions per sequence (k + 1 for a chain, a tree's nodes) were processed (rejected drafts are
    processed, not useful). Tokens arrive in bursts: TPOT is
    round / E, while the gap a user waits between bursts (ITL) is the whole round. The KV cache holds
    the target's sequences and, where the drafter keeps one (a draft model, an EAGLE head), the
    drafter's: both over the budget left once the drafter's weights are loaded too
    (``sim.memory.memory_plan(..., drafter=)``, as the page's memory check counts them)."""
    decode, rounds = speculation_steps(s, gpu, model, assumptions, cost_ratio)
    kv_bytes = float(decode.kv_bytes[0])
    drafter = spec.drafter_held(model, s.method, s.k)
    if kv_budget_bytes is not None and drafter is not None:
        alone = memory_plan(gpu, model, s.batch, s.context_tokens)
        both = memory_plan(gpu, model, s.batch, s.context_tokens, drafter=drafter)
        kv_bytes += both.kv_bytes - alone.kv_bytes  # the drafter's KV cache
        kv_budget_bytes -= both.weight_bytes - alone.weight_bytes  # its weights come out of the budget
    return run_metrics(
        rounds, useful_tokens=s.batch * s.expected_tokens, processed_tokens=s.batch * s.verified_tokens,
        tpot_s=[s.time_per_token_s], itl_s=[s.round_s], preemptions=None,
        kv_use=_kv_use(kv_bytes, kv_budget_bytes),
    )


# ---------------------------------------------------------------------------------------------------
# The scenario table: one run of every situation the article shows, measured with one ruler
# ---------------------------------------------------------------------------------------------------

# Each section's page defaults, so that a row shows what that page shows at first view.
PHASES_PROMPT, PHASES_BATCH, PHASES_CONTEXT = 2048, 1, 512  # 00: prompt, decode batch, context
BATCH_SLOTS, BATCH_WORKLOAD, BATCH_REQUESTS = 64, "anyscale", 1000  # 01
CARD_PAGE_TOKENS, CARD_MAX_OUTPUT = 16, 2048  # 02, on a real card
SPEC_BATCH, SPEC_CONTEXT = 1, 1024  # 03, with its default drafting method's alpha and k
#: Arrival rates of the two Poisson runs, as shares of what continuous batching serves flat out (its
#: burst run): moderate rounds down, high rounds up, to a power of two requests/s (section 01's
#: choices), so the same run can be seen there.
MODERATE_LOAD, HIGH_LOAD = 0.8, 1.3


@dataclass(frozen=True)
class Scenario:
    key: str  # stable id: 'batch1', 'static', ...
    name: str
    section: str  # "00".."03": the section that shows it
    what: str  # one line: what is happening
    metrics: ServingMetrics
    #: Why a scenario did not run (``metrics`` is NOT_RUN): 'positions' where a request or context is
    #: longer than the model reads (``Model.reads``), else 'memory' (it does not fit on the card); ''
    #: where it ran.
    blocked: str = ""


@dataclass(frozen=True, repr=False)
class ScenarioRuns:
    """The runs behind the scenario table, for one GPU, model and set of assumptions (no SLO: the
    latency targets only decide which requests count, see ``measure``)."""

    gpu: GPU
    model: Model
    assumptions: Assumptions
    phases: TwoPhases  # 00
    flat_out: BatchingRun  # 01: continuous batching, every request queued at once (its flat-out rate)
    moderate_rate_rps: float
    high_rate_rps: float
    static: BatchingRun  # 01: static batching, Poisson arrivals at the moderate rate
    continuous: BatchingRun  # 01: continuous batching, the same arrivals
    overload: BatchingRun  # 01: continuous batching, Poisson arrivals at the high rate
    overload_static: BatchingRun  # 01: static batching on those arrivals (page 01 runs both modes)
    fit: CardFit  # 02: reserved vs paged on this card
    chunked: ChunkedPrefill  # 02b
    speculation: Speculation  # 03

    @property
    def slots(self) -> int:
        """Section 01's slots these runs use (``fitting_batch_slots``: ``BATCH_SLOTS`` where they fit)."""
        return self.flat_out.slots

    @property
    def flat_out_rps(self) -> float:
        """Requests per second continuous batching serves with every request queued at once: its
        flat-out rate, with no latency target (not ``sim.load.capacity``, which meets one)."""
        return self.flat_out.requests_per_s

    @property
    def replicas(self) -> int:
        """Replicas that split the high load so each sees the moderate rate (both are powers of two):
        the overload's fix is more capacity, and one such replica is the continuous-batching row."""
        return max(1, math.ceil(self.high_rate_rps / self.moderate_rate_rps))

    @property
    def kv_budget_bytes(self) -> float | None:
        """The card's KV-cache budget (section 02); None where the weights leave no room."""
        return self.fit.kv_budget_bytes if self.fit.fits else None


#: The powers of two inside sim.batching.RATE_RANGE, as exponents (1/64 .. 8192 requests per second):
#: the scenario rows' arrival rates, each one of page 01's choices.
RATE_EXPONENTS = (math.ceil(math.log2(RATE_RANGE[0])), math.floor(math.log2(RATE_RANGE[1])))


def _pow2(x: float, up: bool) -> float:
    """The power of two at or below (``up``: at or above) ``x`` requests per second, held to
    ``RATE_EXPONENTS``."""
    e = math.ceil(math.log2(x)) if up else math.floor(math.log2(x))
    return float(2.0 ** min(max(e, RATE_EXPONENTS[0]), RATE_EXPONENTS[1]))


def _check_setup(gpu, model, assumptions) -> None:
    for name, value, kind in (("gpu", gpu, GPU), ("model", model, Model),
                              ("assumptions", assumptions, Assumptions)):
        if not isinstance(value, kind):
            raise ValueError(f"{name} must be a {kind.__name__}, got {type(value).__name__}")


def _section01_runs(gpu: GPU, model: Model, assumptions: Assumptions, slots: int) -> dict:
    """Section 01's runs for the scenario rows on ``slots``: continuous batching's burst run (its
    flat-out rate), the two Poisson rates it sets, and both modes at each rate."""
    flat_out = simulate(gpu, model, sample_requests(BATCH_WORKLOAD, BATCH_REQUESTS), slots, "continuous",
                        assumptions)
    moderate = _pow2(MODERATE_LOAD * flat_out.requests_per_s, up=False)
    high = _pow2(HIGH_LOAD * flat_out.requests_per_s, up=True)
    arriving = sample_requests(BATCH_WORKLOAD, BATCH_REQUESTS, "poisson", moderate)
    overloading = sample_requests(BATCH_WORKLOAD, BATCH_REQUESTS, "poisson", high)
    return dict(
        flat_out=flat_out, moderate_rate_rps=moderate, high_rate_rps=high,
        static=simulate(gpu, model, arriving, slots, "static", assumptions),
        continuous=simulate(gpu, model, arriving, slots, "continuous", assumptions),
        overload=simulate(gpu, model, overloading, slots, "continuous", assumptions),
        overload_static=simulate(gpu, model, overloading, slots, "static", assumptions),
    )


def _fitting_section01_runs(gpu: GPU, model: Model, assumptions: Assumptions) -> dict:
    """``_section01_runs`` on section 01's default ``BATCH_SLOTS`` where every run fits the card (page 01
    shows nothing for a run that does not), else on the largest power of two below it where they all do
    (page 01 offers powers of two: its slots setting shows the same runs); on ``BATCH_SLOTS`` where not
    even one slot fits (the rows then say so)."""
    requests = sample_requests(BATCH_WORKLOAD, BATCH_REQUESTS)
    longest = int((requests.prompt_tokens + requests.output_tokens).max())
    if not model.reads(longest):  # no slot count makes a request shorter: the rows say so
        return _section01_runs(gpu, model, assumptions, BATCH_SLOTS)
    slots = BATCH_SLOTS
    while slots >= 1:
        if slots == 1:  # one slot holds one request at a time: the longest must fit (no run needed)
            fits = memory_plan(gpu, model, 1, longest).fits
        else:  # cheap first: both modes with every request queued, the slots at their fullest (static's
            # padded batches are usually the binding ones); the Poisson runs only where these fit
            fits = all(batching_fits(simulate(gpu, model, requests, slots, mode, assumptions), gpu, model)
                       for mode in ("continuous", "static"))
        if fits:
            runs = _section01_runs(gpu, model, assumptions, slots)
            if all(batching_fits(runs[k], gpu, model)
                   for k in ("static", "continuous", "overload", "overload_static")):
                return runs
        slots //= 2
    return _section01_runs(gpu, model, assumptions, BATCH_SLOTS)


def fitting_batch_slots(gpu: GPU, model: Model, assumptions: Assumptions = DEFAULT_ASSUMPTIONS
                        ) -> tuple[int, BatchingRun]:
    """Section 01's slots for page 04's scenario rows and its day: ``BATCH_SLOTS`` where every run of
    section 01's rows fits the card, else the largest power of two below it where they do
    (``BATCH_SLOTS`` where not even one slot fits: the rows say so); and continuous batching's burst
    run on them (``ScenarioRuns.flat_out``)."""
    flat_out = _fitting_section01_runs(gpu, model, assumptions)["flat_out"]
    return flat_out.slots, flat_out


def scenario_runs(gpu: GPU, model: Model, assumptions: Assumptions = DEFAULT_ASSUMPTIONS) -> ScenarioRuns:
    """Run every section's model at its page's defaults on this GPU and model (a few ms in all);
    section 01's runs on the slots ``fitting_batch_slots`` gives."""
    _check_setup(gpu, model, assumptions)
    batching = _fitting_section01_runs(gpu, model, assumptions)
    method = spec.METHODS[spec.DEFAULT_METHOD]
    return ScenarioRuns(
        gpu=gpu, model=model, assumptions=assumptions,
        phases=two_phases(gpu, model, PHASES_PROMPT, PHASES_BATCH, PHASES_CONTEXT, assumptions),
        **batching,
        fit=card_fit(gpu, model, CARD_PAGE_TOKENS, CARD_MAX_OUTPUT, assumptions),
        chunked=chunked_prefill(gpu, model, assumptions=assumptions),
        speculation=spec.speculate(gpu, model, method, method.alpha, method.k, SPEC_BATCH, SPEC_CONTEXT,
                                   assumptions),
    )


def batching_fits(run: BatchingRun, gpu: GPU, model: Model) -> bool:
    """Whether the run's fullest step fits its KV cache on the card (``sim.memory``): its slots at the
    mean context of that step; and whether its longest request is within the model's positions
    (``Model.reads``). Page 01 shows no numbers for a run that does not (both of its modes must fit),
    and the scenario rows follow it."""
    return (model.reads(longest_request_tokens(run))
            and memory_plan(gpu, model, run.slots, peak_context_tokens(run)).fits)


def longest_request_tokens(run: BatchingRun) -> int:
    """The run's longest request, prompt and output together, tokens."""
    return int((run.requests.prompt_tokens + run.requests.output_tokens).max())


def peak_context_tokens(run: BatchingRun) -> int:
    """The mean context of a run's slots at its fullest step: the tokens its sequences hold then
    over the slots, rounded up (the memory check caps windowed layers at their window)."""
    return math.ceil(float(np.max(run.kv_tokens)) / run.slots)


def measure(runs: ScenarioRuns, slo: SLO = SLO()) -> list[Scenario]:
    """One row per situation the article shows, each measured by ``run_metrics`` through its adapter."""
    if not isinstance(slo, SLO):
        raise ValueError(f"slo must be an SLO, got {type(slo).__name__}")
    kv = runs.kv_budget_bytes
    g, m, a = runs.gpu, runs.model, runs.assumptions

    def batching(run: BatchingRun, *pair: BatchingRun) -> ServingMetrics:
        """Section 01's row, or NOT_RUN where page 01 would show nothing: a mode does not fit."""
        if not all(batching_fits(r, g, m) for r in pair):
            return NOT_RUN
        return batching_metrics(run, slo=slo, kv_budget_bytes=kv)

    def batching_blocked(*pair: BatchingRun) -> str:
        return "positions" if not all(m.reads(longest_request_tokens(r)) for r in pair) else "memory"

    s, cp, fit = runs.speculation, runs.chunked, runs.fit
    n, slots = BATCH_REQUESTS, runs.slots

    def fits(*needs: tuple[int, int], drafter=None) -> bool:
        """Every (batch, context tokens) fits on the card: the same checks each page makes before it
        shows numbers (pages 00, 02's chunked prefill, 03 with its drafter); a row its page would
        refuse is blank."""
        return all(can_run(g, m, b, c, drafter=drafter) for b, c in needs)

    def too_long(*contexts: int) -> str:
        """'positions' where one of the contexts is longer than the model reads, else 'memory'."""
        return "positions" if not all(m.reads(int(c)) for c in contexts) else "memory"

    phases_ok = fits((PHASES_BATCH, PHASES_CONTEXT + 1), (1, PHASES_PROMPT))
    chunk_batch = cp.decode_batch + 1
    chunked_ok = (m.reads(max(cp.prompt_tokens, cp.context_tokens) + 1)
                  and fits((chunk_batch, cp.context_tokens + cp.prompt_tokens // chunk_batch + 1)))
    plain_ok = fits((s.batch, s.context_tokens + 1))
    spec_ok = fits((s.batch, s.context_tokens + int(s.method.verified_per_seq(s.k))),
                   drafter=spec.drafter_held(m, s.method, s.k))
    blocked = {
        "batch1": too_long(PHASES_CONTEXT + 1, PHASES_PROMPT),
        "static": batching_blocked(runs.static, runs.continuous),
        "continuous": batching_blocked(runs.static, runs.continuous),
        "reserved": "memory" if m.reads(fit.longest_request_tokens) else "positions",
        "paged": "memory" if m.reads(fit.longest_request_tokens) else "positions",
        "unchunked": too_long(max(cp.prompt_tokens, cp.context_tokens) + 1),
        "chunked": too_long(max(cp.prompt_tokens, cp.context_tokens) + 1),
        "plain": too_long(s.context_tokens + 1),
        "speculative": too_long(s.context_tokens + int(s.method.verified_per_seq(s.k))),
        "overload": batching_blocked(runs.overload, runs.overload_static),
    }
    rows = [
        Scenario("batch1", "Batch-1 decode", "00",
                 f"One user, page 00's two measurements: a {PHASES_PROMPT:,}-token prompt's prefill "
                 f"(TTFT), and decode one token a step at {PHASES_CONTEXT:,} tokens of context",
                 phases_metrics(runs.phases, kv) if phases_ok else NOT_RUN),
        Scenario("static", "Static batching", "01",
                 f"{n:,} requests arriving at {runs.moderate_rate_rps:g}/s (Poisson) into {slots} slots; "
                 "each batch runs until its longest answer is done",
                 batching(runs.static, runs.static, runs.continuous)),
        Scenario("continuous", "Continuous batching", "01",
                 "The same arrivals; a finished request's slot is refilled at the next step",
                 batching(runs.continuous, runs.static, runs.continuous)),
        Scenario("reserved", "KV cache reserved for the max", "02",
                 f"Decoding the {_fitting(fit, 'reserved')} when each reserves its "
                 f"prompt + {CARD_MAX_OUTPUT:,} tokens", card_metrics(fit, g, m, "reserved", a)),
        Scenario("paged", "Paged KV cache", "02",
                 f"Decoding the {_fitting(fit, 'paged')} when pages are handed out as "
                 "tokens arrive", card_metrics(fit, g, m, "paged", a)),
        Scenario("unchunked", "Long prompt, one prefill step", "02",
                 f"A {cp.prompt_tokens:,}-token prompt joins {cp.decode_batch} decoding users in one step",
                 chunked_metrics(cp.unchunked, kv) if chunked_ok else NOT_RUN),
        Scenario("chunked", "Long prompt, chunked prefill", "02",
                 f"The same prompt in {cp.n_chunks} chunks of {cp.chunk_tokens:,} tokens, riding along "
                 "with the decodes", chunked_metrics(cp.chunked, kv) if chunked_ok else NOT_RUN),
        Scenario("plain", "Decode, no speculation", "03",
                 f"One user at {s.context_tokens:,} tokens of context, section 03's baseline",
                 plain_decode_metrics(s, g, m, a, kv) if plain_ok else NOT_RUN),
        Scenario("speculative", "Speculative decoding", "03",
                 f"{s.method.name} drafts k = {s.k} tokens, accepted with α = {s.alpha:.2f}: "
                 f"{s.expected_tokens:.2f} tokens per target pass",
                 speculative_metrics(s, g, m, a, kv_budget_bytes=kv) if spec_ok else NOT_RUN),
        Scenario("overload", "High load", "01",
                 f"{n:,} requests arriving at {runs.high_rate_rps:g}/s (Poisson), continuous batching: "
                 f"more than the {runs.flat_out_rps:.3g}/s at which it finishes a backlog of {n:,}",
                 batching(runs.overload, runs.overload, runs.overload_static)),
    ]
    return [r if r.metrics.ran else replace(r, blocked=blocked[r.key]) for r in rows]


def scenarios(gpu: GPU, model: Model, assumptions: Assumptions = DEFAULT_ASSUMPTIONS,
              slo: SLO = SLO()) -> list[Scenario]:
    """The scenario table for this GPU and model: ``measure(scenario_runs(...), slo)``."""
    return measure(scenario_runs(gpu, model, assumptions), slo)


# ---------------------------------------------------------------------------------------------------
# A day on the dashboard
# ---------------------------------------------------------------------------------------------------

DAY_WINDOWS_RANGE = (4, 96)
DAY_REQUESTS_RANGE = (100, 20_000)
DAY_LOAD_RANGE = (0.01, 5.0)  # arrival rate as a share of continuous batching's flat-out rate
DEFAULT_DAY_WINDOWS = 24  # one window an hour
DEFAULT_DAY_REQUESTS = 2400  # requests over the day (expected): keeps the run to ~10 ms
DEFAULT_DAY_LOW, DEFAULT_DAY_PEAK = 0.1, 1.4  # load at 04:00 and at 16:00
DAY_SEED = 0


DAY_QUIETEST_HOUR = 4  # the trough of the day's traffic; the peak is 12 hours later


def diurnal_load(hours, low: float = DEFAULT_DAY_LOW, peak: float = DEFAULT_DAY_PEAK) -> np.ndarray:
    """Arrival rate over the day as a share of the flat-out rate: a cosine from ``low`` at 04:00 to ``peak``
    at 16:00."""
    h = np.asarray(hours, dtype=float)
    return low + (peak - low) * (1 - np.cos(2 * np.pi * (h - DAY_QUIETEST_HOUR) / 24)) / 2


@dataclass(frozen=True, repr=False)
class DashboardDay:
    """A day of traffic through continuous batching, read out per window as a dashboard would.

    Every per-window array has one entry per window; a window is one hour of the day, compressed to
    ``window_s`` seconds of simulated traffic (one run: the queue carries over from window to window).
    ``real_time_backlog`` says what the same loads would queue over real hours.
    """

    hours: np.ndarray  # the hour each window starts
    window_s: float  # simulated seconds per window
    flat_out_rps: float  # what continuous batching serves flat out (every slot busy), requests/s
    flat_out_tok_s: float  # the same in output tokens/s (the function ``flat_out_tok_s``)
    load: np.ndarray  # expected arrival rate / the flat-out rate
    arrivals: np.ndarray  # requests that arrived
    demand_tok_s: np.ndarray  # output tokens the window's arrivals ask for, per second
    utilization_gpu: np.ndarray  # nvidia-smi utilization.gpu
    mfu: np.ndarray  # MFU by hour: FLOP / (spec peak x wall)
    mbu: np.ndarray  # MBU by hour: bytes / (spec bandwidth x wall)
    output_tok_s: np.ndarray  # output tokens delivered per second
    queue_depth: np.ndarray  # mean requests waiting
    running: np.ndarray  # mean requests in the batch
    ttft_p99_s: np.ndarray  # of the requests that arrived in the window
    itl_p99_s: np.ndarray  # of the tokens the window's steps produced
    run: BatchingRun
    request_window: np.ndarray  # (requests,) the window each request arrived in

    @property
    def n_windows(self) -> int:
        return int(self.hours.size)

    def slo_attainment(self, slo: SLO) -> np.ndarray:
        """Share of each window's arrivals that met both targets (NaN for a window with none)."""
        met, n = self._met(slo)
        return np.divide(met, n, out=np.full(self.n_windows, np.nan), where=n > 0)

    def goodput_rps(self, slo: SLO) -> np.ndarray:
        """Requests per second that arrived in the window and met both targets (DistServe goodput)."""
        return self._met(slo)[0] / self.window_s

    def goodput_tok_s(self, slo: SLO) -> np.ndarray:
        """Output tokens per second delivered in each window to requests that meet both targets
        (DistServe goodput, in tokens, counted when the tokens come out: never above the tokens
        delivered in the window)."""
        run = self.run
        ok = slo.met(run.ttft_s, run.tpot_s)
        n = run.n_steps
        good = np.cumsum(np.bincount(run.start_step[ok], minlength=n + 1)
                         - np.bincount(run.end_step[ok] + 1, minlength=n + 1))[:n]
        return self._per_window(good.astype(float)) / self.window_s

    def _per_window(self, values: np.ndarray) -> np.ndarray:
        """A per-step quantity spread evenly over each step and summed per window."""
        start = self.run.step_start_s
        xp = np.column_stack([start, start + self.run.cost.time_s]).ravel()
        edges = self.window_s * np.arange(self.n_windows + 1)
        c = np.cumsum(values)
        return np.diff(np.interp(edges, xp, np.column_stack([c - values, c]).ravel()))

    def hours_missing(self, slo: SLO, goal: float = SLO_ATTAINMENT_GOAL) -> int:
        """Windows in which fewer than ``goal`` of the arrivals met both targets."""
        return int(np.sum(self.slo_attainment(slo) < goal))

    @property
    def worst_ttft_p99_s(self) -> float:
        return float(np.nanmax(self.ttft_p99_s))

    @property
    def real_time_backlog(self) -> np.ndarray:
        """Requests waiting at the end of each hour had every window lasted a real hour: a fluid
        estimate, the backlog growing by (arrival rate - flat-out rate) x 3,600 s an hour and never below
        zero. The simulated windows are ``window_s`` long, so their queues stay that much shorter."""
        hour_s = 3600.0 * 24 / self.n_windows
        backlog, out = 0.0, np.zeros(self.n_windows)
        for w, load in enumerate(self.load):
            backlog = max(0.0, backlog + (load - 1.0) * self.flat_out_rps * hour_s)
            out[w] = backlog
        return out

    @property
    def real_time_worst_wait_s(self) -> float:
        """The longest wait in the queue the real-time backlog implies (backlog / flat-out rate)."""
        return float(self.real_time_backlog.max()) / self.flat_out_rps

    def _met(self, slo: SLO) -> tuple[np.ndarray, np.ndarray]:
        ok = slo.met(self.run.ttft_s, self.run.tpot_s)
        met = np.bincount(self.request_window, ok.astype(float), self.n_windows)
        return met, np.bincount(self.request_window, minlength=self.n_windows)


def flat_out_tok_s(run: BatchingRun) -> float:
    """Output tokens per second a backlog run delivers in its steady state: after its start-up (the
    first finish: until then every slot is still on its first request, prefilled all at once) and
    while requests still wait to get in (every slot busy). That is what the engine serves flat out:
    a burst run's overall rate is lower (its tail drains with empty slots), and sustained overload
    runs at this rate."""
    n = run.n_steps
    emitting = np.cumsum(np.bincount(run.start_step, minlength=n + 1)
                         - np.bincount(run.end_step + 1, minlength=n + 1))[:n]
    step = np.arange(n)
    busy = (step > int(run.end_step.min())) & (step <= int(run.start_step.max()))
    if not busy.any():  # fewer requests than slots: no steady state, take the whole run
        busy = np.ones(n, dtype=bool)
    seconds = float(run.cost.time_s[busy].sum() + run.idle_before_s[busy].sum())
    return float(emitting[busy].sum()) / seconds if seconds > 0 else math.nan


def _integral_of_count(event_s: np.ndarray, at_s: np.ndarray) -> np.ndarray:
    """∫_0^b N(t) dt at each b, for N(t) the number of events at or before t: sum of (b - t_j)+."""
    t = np.sort(event_s)
    k = np.searchsorted(t, at_s, side="right")
    csum = np.concatenate(([0.0], np.cumsum(t)))
    return k * at_s - csum[k]


def dashboard_day(
    gpu: GPU,
    model: Model,
    assumptions: Assumptions = DEFAULT_ASSUMPTIONS,
    *,
    n_windows: int = DEFAULT_DAY_WINDOWS,
    n_requests: int = DEFAULT_DAY_REQUESTS,
    low: float = DEFAULT_DAY_LOW,
    peak: float = DEFAULT_DAY_PEAK,
    flat_out: BatchingRun | None = None,
    seed: int = DAY_SEED,
) -> DashboardDay:
    """A seeded day: Poisson arrivals whose rate follows ``diurnal_load`` (constant within a window),
    section 01's workload and continuous batching on the scenario rows' slots (``fitting_batch_slots``:
    64 where they fit), run by section 01's ``simulate``.

    ``flat_out`` is continuous batching's burst run on those slots (``ScenarioRuns.flat_out``); None
    runs it. The window length is set so that ``n_requests`` arrive over the day on average, so the
    run costs the same on any GPU.
    """
    _check_setup(gpu, model, assumptions)
    n_windows = check_int("n_windows", n_windows, *DAY_WINDOWS_RANGE)
    n_requests = check_int("n_requests", n_requests, *DAY_REQUESTS_RANGE)
    low = check_float("low", low, *DAY_LOAD_RANGE)
    peak = check_float("peak", peak, low, DAY_LOAD_RANGE[1])
    seed = check_int("seed", seed, *SEED_RANGE)
    if flat_out is None:
        flat_out = fitting_batch_slots(gpu, model, assumptions)[1]
    cap_tok_s = flat_out_tok_s(flat_out)
    cap = cap_tok_s / float(flat_out.requests.output_tokens.mean())  # requests/s, flat out
    hours = np.arange(n_windows) * 24 / n_windows
    load = diurnal_load(hours + 12 / n_windows, low, peak)  # the rate at the window's middle
    window_s = n_requests / (cap * float(load.sum()))
    edges = window_s * np.arange(n_windows + 1)

    # Arrivals: a Poisson count per window, placed uniformly in it (a piecewise-constant-rate process).
    rng = np.random.default_rng([seed, 3])
    counts = rng.poisson(cap * load * window_s)
    if counts.sum() == 0:
        counts[int(np.argmax(load))] = 1
    window_of = np.repeat(np.arange(n_windows), counts)
    arrival = np.sort((window_of + rng.random(window_of.size)) * window_s)
    n = arrival.size
    wl = BATCH_WORKLOADS[BATCH_WORKLOAD]
    req = make_requests(wl.prompt.sample(np.random.default_rng([seed, 0]), n),
                        wl.output.sample(np.random.default_rng([seed, 1]), n), arrival)
    run = simulate(gpu, model, req, flat_out.slots, "continuous", assumptions)

    # Per-step quantities, spread evenly over each step, summed per window.
    cost, start = run.cost, run.step_start_s
    xp = np.column_stack([start, start + cost.time_s]).ravel()

    def per_window(values) -> np.ndarray:
        c = np.cumsum(values)
        return np.diff(np.interp(edges, xp, np.column_stack([c - values, c]).ravel()))

    steps = run.n_steps
    emitting = np.cumsum(np.bincount(run.start_step, minlength=steps + 1)
                         - np.bincount(run.end_step + 1, minlength=steps + 1))[:steps]
    decoding = emitting - np.bincount(run.start_step, minlength=steps)
    admitted_s = start[run.start_step]
    finished_s = run.finish_s
    waiting_area = _integral_of_count(arrival, edges) - _integral_of_count(admitted_s, edges)
    running_area = _integral_of_count(admitted_s, edges) - _integral_of_count(finished_s, edges)
    request_window = np.minimum((arrival // window_s).astype(np.int64), n_windows - 1)
    step_window = np.minimum((start // window_s).astype(np.int64), n_windows)  # n_windows: after the day
    ttft, itl = np.full(n_windows, np.nan), np.full(n_windows, np.nan)
    for w in range(n_windows):  # 24 small groups: a loop reads better than a segmented sort
        mine = run.ttft_s[request_window == w]
        if mine.size:
            ttft[w] = np.percentile(mine, 99)
        sel = step_window == w
        itl[w] = weighted_percentile(cost.time_s[sel] + run.idle_before_s[sel], decoding[sel], 99)
    output_tok_s = per_window(emitting.astype(float)) / window_s
    return DashboardDay(
        # The line is never below what an hour delivered: an hour with requests queued runs flat out,
        # and its sample of lengths can beat the backlog run's average by a few percent.
        hours=hours, window_s=window_s, flat_out_rps=cap,
        flat_out_tok_s=max(cap_tok_s, float(output_tok_s.max())),
        load=load, arrivals=counts, demand_tok_s=np.bincount(request_window, req.output_tokens,
                                                             n_windows) / window_s,
        utilization_gpu=per_window(cost.gpu_time_s) / window_s,
        mfu=per_window(cost.flops) / (cost.peak_flops * window_s),
        mbu=per_window(cost.bytes) / (cost.bandwidth * window_s),
        output_tok_s=output_tok_s,
        queue_depth=np.diff(waiting_area) / window_s, running=np.diff(running_area) / window_s,
        ttft_p99_s=ttft, itl_p99_s=itl, run=run, request_window=request_window,
    )


# ---------------------------------------------------------------------------------------------------
# Failures and the metrics that catch them
# ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Alert:
    """One failure the article describes, the metric that catches it, and an alert rule.

    ``rule`` may hold ``{ttft}`` and ``{tpot}``: the page fills in the reader's SLO. ``test`` is the
    rule's threshold applied to a run's metrics (the rule's time window is for production; a run here
    is already an average over its whole length).
    """

    key: str
    failure: str
    scenario: str | None  # the scenario row that shows the failure (None: section 02's 64-page pool)
    fixed_in: str | None  # the row where the article's fix shows, where the alert clears there
    watch: str  # the quantity, in words
    names: tuple[str, ...]  # what NVML / DCGM / the serving engine call it (REFERENCE.md §4, vLLM docs)
    note: str  # how to read them
    rule: str
    shows: tuple[str, ...]  # the ServingMetrics fields that show it
    test: Callable[[ServingMetrics, SLO], bool]

    def fires(self, m: ServingMetrics, slo: SLO = SLO()) -> bool:
        return bool(self.test(m, slo))


ALERTS: tuple[Alert, ...] = (
    Alert("memory_starved",
          "Decode starved by memory: each step streams every active weight for a few tokens",
          "batch1", "paged", "Tensor activity (MFU) beside DRAM activity (MBU)",
          ("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "DCGM_FI_PROF_DRAM_ACTIVE"),
          "NVML GPM on Hopper: ANY_TENSOR_UTIL and DRAM_BW_UTIL",
          "tensor active < 5 % while DRAM active > 50 %, 15-min average: batch more requests",
          ("mfu", "mbu"), lambda m, slo: m.mfu < 0.05 and m.mbu > 0.5),
    Alert("padding", "Static batching: finished requests keep their slots and compute padding",
          "static", "continuous", "Useful share: output tokens delivered over tokens computed",
          ("usage.completion_tokens", "vllm:generation_tokens_total"),
          "count delivered tokens at the API (or the engine's counter, where it batches continuously) "
          "against tokens per step × steps; no GPU counter can tell padding from work",
          "useful share < 50 % over 15 min", ("useful_share",), lambda m, slo: m.useful_share < 0.5),
    Alert("over_reservation", "KV cache reserved for the longest possible answer: the memory is full, "
          "the batch is small", "reserved", "paged", "Share of the KV cache holding tokens",
          ("vllm:kv_cache_usage_perc", "vllm:num_requests_running", "vllm:num_requests_waiting"),
          "the usage gauge (vllm:gpu_cache_usage_perc before V1) counts blocks handed out, which paging "
          "keeps close to the tokens held; a reserving engine reads full: compare the tokens its "
          "running requests hold with the cache's size",
          "tokens held < 50 % of the cache while requests wait, 10 min", ("kv_cache_use",),
          # a run without a queue model (the card rows) runs flat out by construction: it counts as waiting
          lambda m, slo: m.kv_cache_use < 0.5 and not m.queue_depth <= 0),
    Alert("prefill_stall", "A long prompt's prefill stalls every decoding user", "unchunked", "chunked",
          "Inter-token latency, p99",
          ("vllm:inter_token_latency_seconds",),
          "a histogram (older releases: vllm:time_per_output_token_seconds); take its p99 with "
          "histogram_quantile",
          "p99 > {tpot} (your time-per-token target) for 5 min", ("itl_p99_s",),
          lambda m, slo: m.itl_p99_s > slo.tpot_s),
    Alert("idle_tensor", "Tensor cores idle at low load: headroom speculative decoding can spend",
          "plain", None, "Tensor activity while few requests run",
          ("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "vllm:num_requests_running"),
          "speculation lifts it, but at batch 1 it stays far below 10 %: read it as an opportunity",
          "tensor active < 10 % for 1 h while load is low: a ticket, not a page", ("mfu",),
          lambda m, slo: m.mfu < 0.10),
    Alert("overload", "More traffic than the engine serves: the queue grows, first tokens come late",
          "overload", "continuous", "Queue depth and time to first token, p99",
          ("vllm:num_requests_waiting", "vllm:time_to_first_token_seconds"),
          "the first a gauge, the second a histogram",
          "waiting > 0 for 5 min and TTFT p99 > {ttft} (your target)", ("queue_depth", "ttft_p99_s"),
          lambda m, slo: m.queue_depth > 0 and m.ttft_p99_s > slo.ttft_s),
    Alert("preemption", "The KV cache runs out mid-answer: a paged engine evicts a request and "
          "recomputes it later", None, None, "Preemptions", ("vllm:num_preemptions_total",),
          "a counter: alert on its rate", "rate > 0 for 10 min: more KV memory, or a smaller batch cap",
          ("preemptions",), lambda m, slo: m.preemptions > 0),
)
