"""Section 01: static vs continuous (iteration-level) batching of the same requests on the same B slots.

A run is modelled in three stages:

1. **Schedule, in step units.** Every step of the engine runs the model once over the slots that hold
   a sequence. A request with a p-token prompt and L output tokens needs one prefill step (q = p new
   tokens, nothing cached; it emits the first output token) and L - 1 decode steps (q = 1 on
   c = p + j - 1 cached tokens at its j-th decode step).
   - *Static*: FCFS batches of up to B requests. A batch prefills together, padded to its longest
     prompt (q0 = P_max for every member), then decodes until its longest output is done; members
     that finished keep their slot and keep computing (padding); the next batch starts after.
   - *Continuous* (Orca's iteration-level scheduling): after every step finished sequences leave and
     queued requests take the free slots (lowest slot first); their prefill runs in that same step.
2. **Per-step aggregates** (T new tokens, P attention pairs, K KV tokens touched) from the schedule,
   with difference arrays, and **one** ``sim.cost.step_cost`` call to price every step.
3. **Wall time**: a cumulative sum of step times plus idle gaps (engine empty, waiting for the next
   arrival), from which latency and the two gauges follow.

Under Poisson arrivals admission depends on the wall clock, so the schedule is built by a loop over
*events* (a finish or an arrival), each pricing its run of steps with ``step_cost``; the finished
schedule is then priced again in one call, which is what the result reports.

What the two gauges mean:
    utilization.gpu = sum(t_gpu) / wall, idle gaps included  (``kernel_busy_fraction``: nvidia-smi)
    useful work     = sum_s useful_s / (B * steps - unused_s) (share of the capacity there was demand
                                                               for that went to requested tokens)
Every step can advance B sequences by a token: that is the token capacity, B * steps slot-steps.
useful_s counts the slots at step s that advance a request's own tokens (a padded prefill counts
p / P_max of its slot); the rest is padding (computed, unwanted) or an empty slot. An empty slot is
*wasted* while a request waits in the queue (static batching cannot let it in) and merely *unused*
while nobody waits (no demand): a lightly loaded server leaves most of its capacity unused, which is
not a failure, so useful work leaves the unused capacity out. ``requested_share`` is the plain share of
the whole capacity; for static batching of a backlog with exponential output lengths it is 1 / H_B
(REFERENCE.md V17). Time with no step to run (waiting for arrivals) lowers utilization.gpu and
tokens/s; it has no steps, so it is in neither share.

"Goodput" is kept for DistServe's meaning (``sim.metrics``): output tokens (or requests) per second of
the requests that meet the latency targets.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass

import numpy as np

from sim.cost import (
    DEFAULT_ASSUMPTIONS,
    Assumptions,
    StepCost,
    attention_sums,
    attention_sums_scalar,
    kernel_busy_fraction,
    step_cost,
    step_time_coefficients,
)
from sim.hardware import GPU
from sim.models import Model
from sim.validate import check_choice, check_float, check_int

SLOTS_RANGE = (1, 1024)  # concurrent sequences (batch slots)
N_REQUESTS_RANGE = (1, 20_000)
RATE_RANGE = (0.01, 10_000.0)  # Poisson arrival rate, requests per second
PROMPT_TOKENS_RANGE = (1, 131_072)
OUTPUT_TOKENS_RANGE = (1, 32_768)
SEED_RANGE = (0, 2**32 - 1)
POLICIES = ("static", "continuous")
LOADS = ("burst", "poisson")  # all requests queued at t = 0, or Poisson arrivals at a rate
DEFAULT_SEED = 0


# ---------------------------------------------------------------------------------------------------
# Workloads
# ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Lengths:
    """A named distribution of token counts, drawn as integers in [low, high].

    kind:
        "fixed": always ``mean``.
        "uniform": integers uniform on [low, high].
        "exponential": ceil of an exponential of mean ``mean`` truncated to <= high (samples above the
            cap are discarded, as in Anyscale's benchmark; drawn exactly by the inverse CDF).
        "lognormal": median ``mean``, log-space spread ``sigma``, rounded and clipped to [low, high].
    """

    kind: str
    mean: float
    low: int
    high: int
    sigma: float = 0.0

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        if self.kind == "fixed":
            return np.full(n, int(self.mean), dtype=np.int64)
        if self.kind == "uniform":
            return rng.integers(self.low, self.high + 1, size=n, dtype=np.int64)
        if self.kind == "exponential":
            u = rng.random(n)
            x = -self.mean * np.log1p(-u * -np.expm1(-self.high / self.mean))
            return np.clip(np.ceil(x), self.low, self.high).astype(np.int64)
        if self.kind == "lognormal":
            x = self.mean * np.exp(self.sigma * rng.standard_normal(n))
            return np.clip(np.rint(x), self.low, self.high).astype(np.int64)
        raise ValueError(f"unknown length distribution {self.kind!r}")

    def describe(self) -> str:
        if self.kind == "fixed":
            return f"{int(self.mean):,}"
        if self.kind == "uniform":
            return f"uniform {self.low:,}–{self.high:,}"
        if self.kind == "exponential":
            return f"exponential, mean {self.mean:g}, ≤ {self.high:,}"
        return f"log-normal, median {self.mean:g}, σ {self.sigma:g}, {self.low:,}–{self.high:,}"


@dataclass(frozen=True)
class Workload:
    key: str
    label: str  # short: the page shows it, and a bound widget puts it in the URL
    prompt: Lengths
    output: Lengths
    source: str


_ANYSCALE_OUT = Lengths("exponential", 128, 1, 1536)
WORKLOADS: dict[str, Workload] = {
    w.key: w
    for w in (
        Workload("anyscale", "Anyscale benchmark",
                 Lengths("fixed", 512, 512, 512), _ANYSCALE_OUT,
                 "Anyscale continuous-batching benchmark, throughput test (REFERENCE.md §3.3)"),
        Workload("anyscale_latency", "Anyscale latency test",
                 Lengths("uniform", 256, 1, 512), _ANYSCALE_OUT,
                 "Anyscale continuous-batching benchmark, latency test (REFERENCE.md §3.3)"),
        Workload("chat", "Chat-like",
                 Lengths("lognormal", 200, 8, 4096, sigma=1.0), Lengths("lognormal", 150, 1, 2048, sigma=1.0),
                 "illustrative (long tails in both, like ShareGPT conversations); not a measured trace"),
        Workload("fixed", "Equal lengths (control)",
                 Lengths("fixed", 512, 512, 512), Lengths("fixed", 128, 128, 128),
                 "control case: with identical lengths static batching wastes nothing on padding"),
    )
}
DEFAULT_WORKLOAD = "anyscale"


@dataclass(frozen=True)
class Requests:
    """The requests of a run, in arrival (= FCFS) order."""

    prompt_tokens: np.ndarray  # int64, tokens
    output_tokens: np.ndarray  # int64, tokens (the first comes out of the prefill step)
    arrival_s: np.ndarray  # float, seconds, non-decreasing; all 0 for a burst

    @property
    def n(self) -> int:
        return int(self.prompt_tokens.size)


def make_requests(prompt_tokens, output_tokens, arrival_s=None) -> Requests:
    """Validated ``Requests`` from arrays (arrivals default to a burst at t = 0)."""
    p = np.asarray(prompt_tokens)
    o = np.asarray(output_tokens)
    if p.ndim != 1 or o.shape != p.shape or not N_REQUESTS_RANGE[0] <= p.size <= N_REQUESTS_RANGE[1]:
        raise ValueError(f"prompt_tokens and output_tokens must be 1-D arrays of the same length in "
                         f"{list(N_REQUESTS_RANGE)}, got shapes {p.shape} and {o.shape}")
    for name, arr, (lo, hi) in (("prompt_tokens", p, PROMPT_TOKENS_RANGE),
                                ("output_tokens", o, OUTPUT_TOKENS_RANGE)):
        if not np.issubdtype(arr.dtype, np.integer) or arr.min() < lo or arr.max() > hi:
            raise ValueError(f"{name} must be integers in [{lo}, {hi}]")
    a = np.zeros(p.size) if arrival_s is None else np.asarray(arrival_s, dtype=float)
    if a.shape != p.shape or not np.all(np.isfinite(a)) or a.min() < 0 or np.any(np.diff(a) < 0):
        raise ValueError("arrival_s must be finite seconds >= 0, non-decreasing, one per request")
    return Requests(p.astype(np.int64), o.astype(np.int64), a)


def sample_requests(workload: str, n_requests: int, load: str = "burst", rate_per_s: float = 1.0,
                    seed: int = DEFAULT_SEED) -> Requests:
    """Draw ``n_requests`` from a workload preset. Prompts, outputs and arrivals use separate seeded
    streams, so the same seed gives the same lengths whatever the load mode or rate. Poisson arrivals
    start at t = 0 with exponential gaps of mean 1 / rate."""
    w = check_choice("workload", workload, tuple(WORKLOADS))
    n = check_int("n_requests", n_requests, *N_REQUESTS_RANGE)
    load = check_choice("load", load, LOADS)
    seed = check_int("seed", seed, *SEED_RANGE)
    rate = check_float("rate_per_s", rate_per_s, *RATE_RANGE)
    wl = WORKLOADS[w]
    prompt = wl.prompt.sample(np.random.default_rng([seed, 0]), n)
    output = wl.output.sample(np.random.default_rng([seed, 1]), n)
    if load == "burst":
        arrival = np.zeros(n)
    else:
        gaps = np.random.default_rng([seed, 2]).exponential(1.0 / rate, n)
        arrival = np.concatenate(([0.0], np.cumsum(gaps[1:])))
    return Requests(prompt, output, arrival)


# ---------------------------------------------------------------------------------------------------
# Results
# ---------------------------------------------------------------------------------------------------


def queue_keeps_up(ttft_s, slack_s: float) -> bool:
    """Whether a run's queue stays bounded: the median TTFT of the last quarter of its requests (in
    arrival order) is at most twice that of the first half, plus ``slack_s`` seconds. One test for
    every scheduler (page 01's runs with a second of slack, ``BatchingRun.keeps_up``; page 05's with
    5 % of the TTFT target, ``sim.load.LoadRun.steady``). A short run above what the GPU sustains can
    still meet a percentile target before its backlog builds; this says it would not last."""
    t = np.asarray(ttft_s, dtype=float)
    q = t.size // 4
    if q < 2:
        return True
    return float(np.median(t[3 * q:])) <= 2 * float(np.median(t[: 2 * q])) + slack_s


@dataclass(frozen=True, repr=False)
class BatchingRun:
    """One policy run on one set of requests. Per-request arrays are in request (FCFS) order; per-step
    arrays have one entry per engine step. A request occupies its slot from ``start_step`` to
    ``release_step``; it produces its own tokens up to ``end_step`` and pads after that (static)."""

    policy: str
    slots: int
    requests: Requests
    # per request
    slot: np.ndarray
    start_step: np.ndarray  # its prefill step
    end_step: np.ndarray  # the step that emits its last token
    release_step: np.ndarray  # the last step it holds its slot (static: the batch's last step)
    prefill_tokens: np.ndarray  # q of its prefill step (static: the batch's longest prompt)
    first_token_s: np.ndarray  # wall time its prefill step ends (first token out)
    finish_s: np.ndarray  # wall time its last token is out
    release_s: np.ndarray  # wall time it gives back its slot
    # per step
    cost: StepCost
    step_start_s: np.ndarray  # wall time the step starts
    idle_before_s: np.ndarray  # idle gap (no step running, nothing to run) just before the step
    useful_slots: np.ndarray  # slots advancing a real request's own tokens (fractional in a padded prefill)
    padding_slots: np.ndarray  # slots computing padding
    # over the run
    wall_s: float  # from t = 0 to the end of the last step
    idle_s: float  # engine idle (no step to run) in total
    utilization_gpu: float  # nvidia-smi utilization.gpu: share of wall time with a kernel running
    requested_share: float  # share of the token capacity (B per step) spent on requested tokens (V17)
    padding_share: float  # share of the capacity computing padding (finished members, padded prompts)
    idle_share: float  # share of the capacity in empty slots (idle_waiting_share + unused_share)
    idle_waiting_share: float = 0.0  # empty slots while requests were waiting to get in: wasted
    unused_share: float = 0.0  # empty slots while nobody was waiting: no demand for them
    #: per step, tokens the computing sequences hold or write (sum of c + q, every layer counted,
    #: windows aside): the memory check's count (``sim.metrics.batching_fits``)
    kv_tokens: np.ndarray | None = None

    @property
    def useful_work(self) -> float:
        """Share of the capacity there was demand for (all of it, less the slots left empty while nobody
        waited) that went to requested tokens: the rest is padding and slots left empty while requests
        waited. 1 for a server that does all the work it is asked for, however lightly loaded."""
        wanted = 1.0 - self.unused_share
        return min(1.0, self.requested_share / wanted) if wanted > 0 else 1.0

    def __repr__(self) -> str:
        return (f"BatchingRun({self.policy}, slots={self.slots}, requests={self.requests.n}, "
                f"steps={self.n_steps}, wall={self.wall_s:.4g} s)")

    @property
    def n_steps(self) -> int:
        return int(self.cost.time_s.size)

    @property
    def host_share(self) -> float:
        """Share of the wall time the GPU waits for the host between steps (no kernel running)."""
        return float(self.cost.host_time_s.sum()) / self.wall_s if self.wall_s > 0 else 0.0

    @property
    def idle_wall_share(self) -> float:
        """Share of the wall time the engine has no step to run (waiting for arrivals)."""
        return self.idle_s / self.wall_s if self.wall_s > 0 else 0.0

    @property
    def mean_step_s(self) -> float:
        """A step's mean GPU time (its kernels, not the host's time around them), seconds."""
        return float(self.cost.gpu_time_s.sum()) / self.n_steps if self.n_steps else 0.0

    @property
    def output_tokens(self) -> int:
        return int(self.requests.output_tokens.sum())

    @property
    def generated_tokens(self) -> int:
        """Tokens the engine emitted, padding included (one per computing slot per step)."""
        return int(np.sum(self.release_step - self.start_step + 1))

    @property
    def output_tokens_per_s(self) -> float:
        """Output tokens of real requests per wall second: what users receive."""
        return self.output_tokens / self.wall_s

    @property
    def generated_tokens_per_s(self) -> float:
        """Tokens emitted per wall second counting padding: what batch x steps / time reports."""
        return self.generated_tokens / self.wall_s

    @property
    def requests_per_s(self) -> float:
        return self.requests.n / self.wall_s

    @property
    def ttft_s(self) -> np.ndarray:
        """Time to first token of each request: arrival to the end of its prefill step."""
        return self.first_token_s - self.requests.arrival_s

    @property
    def tpot_s(self) -> np.ndarray:
        """Mean time per output token after the first, per request (NaN for 1-token outputs)."""
        extra = self.requests.output_tokens - 1
        out = np.full(extra.shape, np.nan)
        np.divide(self.finish_s - self.first_token_s, extra, out=out, where=extra > 0)
        return out

    @property
    def keeps_up(self) -> bool:
        """Whether the queue stays bounded over the run (``queue_keeps_up`` with a second of slack).
        Under a burst every request arrives at once and the queue is the backlog itself: it reads False
        unless the backlog clears within about a second or fits in the slots at once."""
        return queue_keeps_up(self.ttft_s[np.argsort(self.requests.arrival_s, kind="stable")], 1.0)

    @property
    def ttft_p50_s(self) -> float:
        return _percentile(self.ttft_s, 50)

    @property
    def ttft_p99_s(self) -> float:
        return _percentile(self.ttft_s, 99)

    @property
    def tpot_p50_s(self) -> float:
        return _percentile(self.tpot_s, 50)

    @property
    def tpot_p99_s(self) -> float:
        return _percentile(self.tpot_s, 99)

    def idle_segments(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(slot, start_s, end_s) of every stretch during which a slot holds no request, over
        [0, wall_s]."""
        order = np.lexsort((self.start_step, self.slot))
        slot = self.slot[order]
        begin = self.step_start_s[self.start_step[order]]
        end = self.release_s[order]
        first = np.r_[True, slot[1:] != slot[:-1]]  # first occupancy of each slot
        gap_start = np.where(first, 0.0, np.r_[0.0, end[:-1]])
        last = np.r_[slot[1:] != slot[:-1], True]
        used = np.unique(slot)
        unused = np.setdiff1d(np.arange(self.slots), used)
        s = np.concatenate((slot, slot[last], unused))
        a = np.concatenate((gap_start, end[last], np.zeros(unused.size)))
        b = np.concatenate((begin, np.full(int(last.sum()), self.wall_s), np.full(unused.size, self.wall_s)))
        keep = b - a > 1e-12 * max(self.wall_s, 1.0)
        return s[keep], a[keep], b[keep]


def _percentile(values: np.ndarray, q: float) -> float:
    finite = values[np.isfinite(values)]
    return float(np.percentile(finite, q)) if finite.size else math.nan


@dataclass(frozen=True)
class Comparison:
    static: BatchingRun
    continuous: BatchingRun

    def run(self, policy: str) -> BatchingRun:
        return self.continuous if policy == "continuous" else self.static

    def behind(self) -> tuple[str, ...]:
        """The modes whose queue grows through the run (``BatchingRun.keeps_up``). Continuous batching
        falling behind takes static with it where static finishes no sooner: on the same arrivals and
        slots static batching serves no more than continuous (its slots pad or idle where continuous
        refills them), so it cannot clear a backlog continuous cannot; its own TTFT trend can miss the
        growth, its waits being long from the start (a batch waits for the one before)."""
        static = not self.static.keeps_up or (not self.continuous.keeps_up
                                              and self.static.wall_s >= self.continuous.wall_s)
        return tuple(p for p, late in (("static", static), ("continuous", not self.continuous.keeps_up))
                     if late)


# ---------------------------------------------------------------------------------------------------
# Validation
# ---------------------------------------------------------------------------------------------------





# ---------------------------------------------------------------------------------------------------
# Schedules (step units)
# ---------------------------------------------------------------------------------------------------


def _static_batch_bounds(model: Model, req: Requests, slots: int, price
                         ) -> tuple[np.ndarray, dict[int, float]]:
    """First request of every static batch, and idle gaps keyed by the step they precede.

    Burst: consecutive groups of B. Poisson: when the engine is free it takes every arrived request,
    up to B (it waits for the next arrival if there is none), and runs that batch to its end.
    """
    n = req.n
    if not np.any(req.arrival_s > 0):
        return np.arange(0, n, slots), {}
    arrival, prompt, output = req.arrival_s, req.prompt_tokens, req.output_tokens
    bounds, gaps = [], {}
    k, step, t = 0, 0, 0.0
    while k < n:
        if arrival[k] > t:
            gaps[step] = gaps.get(step, 0.0) + float(arrival[k] - t)
            t = float(arrival[k])
        end = min(k + slots, int(np.searchsorted(arrival, t, side="right")))
        size, p_max, l_max = end - k, int(prompt[k:end].max()), int(output[k:end].max())
        t += float(price(*_static_batch_aggregates(model, size, p_max, l_max)).sum())
        bounds.append(k)
        step += l_max
        k = end
    return np.array(bounds, dtype=np.int64), gaps


def _static_batch_aggregates(model: Model, size: int, p_max: int, l_max: int):
    """T, P, K, S of each step of one static batch: a padded prefill, then l_max - 1 decode steps
    (every member samples once a step, its first token at the prefill; windowed layers capped,
    ``sim.cost.attention_sums``)."""
    c = p_max - 1 + np.arange(l_max, dtype=float)  # c cached of every member at decode step j
    new = np.full(l_max, float(size))
    new[0] = size * p_max
    pairs, kv = attention_sums(model, 1, c)
    pre_pairs, pre_kv = attention_sums(model, p_max, 0)
    pairs, kv = size * pairs, size * kv
    pairs[0], kv[0] = size * float(pre_pairs), size * float(pre_kv)
    return new, pairs, kv, np.full(l_max, float(size))


def _static_schedule(model: Model, req: Requests, slots: int, price):
    bounds, gaps = _static_batch_bounds(model, req, slots, price)
    n = req.n
    batch = np.repeat(np.arange(bounds.size), np.diff(np.r_[bounds, n]))
    slot = np.arange(n) - bounds[batch]
    p_max = np.maximum.reduceat(req.prompt_tokens, bounds)
    l_max = np.maximum.reduceat(req.output_tokens, bounds)
    batch_start = np.r_[0, np.cumsum(l_max)[:-1]]
    start = batch_start[batch]
    return slot, start, start + req.output_tokens - 1, (batch_start + l_max - 1)[batch], p_max[batch], gaps


def _continuous_burst(req: Requests, slots: int):
    """Iteration-level scheduling with every request queued at t = 0: request r takes the slot that
    frees first (lowest slot on ties), at the step after its previous holder's last token."""
    n = req.n
    start = np.empty(n, dtype=np.int64)
    slot = np.empty(n, dtype=np.int64)
    heap = [(0, s) for s in range(slots)]
    for r, length in enumerate(req.output_tokens.tolist()):
        free_at, s = heapq.heappop(heap)
        start[r], slot[r] = free_at, s
        heapq.heappush(heap, (free_at + length, s))
    return slot, start


class _SegmentClock:
    """Wall-clock arithmetic for the Poisson scheduler's runs of steps, with the shared cost model's
    own coefficients (``sim.cost.step_time_coefficients``). The clock only decides admissions; the
    finished schedule is priced again in one ``step_cost`` call."""

    def __init__(self, gpu: GPU, model: Model, assumptions: Assumptions) -> None:
        self.coef = step_time_coefficients(gpu, model, assumptions)
        self.price = self.coef.scalar_pricer()  # one step of plain floats: step_time_s's arithmetic
        self.model = model

    def run_steps(self, t0: float, first: tuple[float, float, float], n_seq: int, kv, deadline: float
                  ) -> tuple[int, float]:
        """``run`` with the decode steps' KV tokens given (``kv``: the 2nd, 3rd, ... steps' K, which
        is also their P): a model whose windowed layers stop growing at their window."""
        c = self.coef
        ns = float(n_seq)
        clock = t0 + float(self.price(*first, ns))
        m = len(kv) + 1
        if m <= 1 or clock >= deadline:
            return 1, clock
        ends = clock + np.cumsum(c.decode_steps_s(ns, kv))
        j = min(m - 1, int(np.searchsorted(ends, deadline, side="left")) + 1)
        return j + 1, float(ends[j - 1])

    def run(self, t0: float, first: tuple[float, float, float], n_seq: int, kv0: float, m: int,
            deadline: float) -> tuple[int, float]:
        """Advance the clock from ``t0`` over at most ``m`` steps: the first with (T, P, K) = ``first``,
        then decode steps of ``n_seq`` sequences whose KV tokens start at ``kv0 + n_seq`` and grow by
        ``n_seq`` a step. Stops after the first step that ends at or after ``deadline``.
        Returns (steps run, clock at the end of the last of them)."""
        c = self.coef
        ns = float(n_seq)  # every sequence samples once a step (a joining prompt its first token)
        clock = t0 + float(self.price(*first, ns))
        if m <= 1 or clock >= deadline:
            return 1, clock
        if m <= 32 and ns <= c.graph_max_tokens and not c.overlap_host:
            # Short runs: scalar arithmetic beats numpy's call overhead.
            terms, fixed = c.decode_terms(ns)
            lo, hi = kv0 + n_seq, kv0 + n_seq * (m - 1)
            # Each operator's bound at both ends of the run: where none changes, the step time is
            # linear in kv over the whole run, A + B kv, and the loop is one multiply-add a step.
            # (One pass over the operators; ``sum`` of the chosen terms, as before: from Python 3.12
            # its float sum is compensated, so a loop of += would differ in the last bits.)
            chosen_a, chosen_b = [], []
            linear = True
            for a, b, g, d in terms:
                compute_bound = a + b * lo >= g + d * lo
                if compute_bound != (a + b * hi >= g + d * hi):
                    linear = False
                    break
                chosen_a.append(a if compute_bound else g)
                chosen_b.append(b if compute_bound else d)
            j = 1
            if linear:
                lin_a, lin_b = fixed + sum(chosen_a), sum(chosen_b)
                while clock < deadline and j < m:
                    clock += lin_a + lin_b * (kv0 + n_seq * j)
                    j += 1
                return j, clock
            while clock < deadline and j < m:
                kv = kv0 + n_seq * j
                clock += fixed + sum(max(a + b * kv, g + d * kv) for a, b, g, d in terms)
                j += 1
            return j, clock
        ends = clock + np.cumsum(c.decode_run_s(ns, kv0 + ns, m - 1))
        j = min(m - 1, int(np.searchsorted(ends, deadline, side="left")) + 1)
        return j + 1, float(ends[j - 1])


def _continuous_poisson(req: Requests, slots: int, clock: _SegmentClock):
    """Iteration-level scheduling under arrivals. Between events (a request finishes; a request
    arrives while a slot is free) the batch composition is fixed, so the clock advances over that run
    of steps in one go; a request is admitted at the first step that starts at or after its arrival."""
    n = req.n
    prompt, output, arrival = req.prompt_tokens.tolist(), req.output_tokens.tolist(), req.arrival_s.tolist()
    prompt_arr = np.asarray(prompt, dtype=float)
    start = np.empty(n, dtype=np.int64)
    slot = np.empty(n, dtype=np.int64)
    free = list(range(slots))
    running: list[tuple[int, int, int]] = []  # (end step, slot, request)
    gaps: dict[int, float] = {}
    step, t, k = 0, 0.0, 0
    n_dec, c1_sum = 0, 0  # sequences already decoding at ``step`` and the sum of their (c + 1)
    model = clock.model
    f_win = model.window_share
    w_win = float(model.sliding_window or 0)
    while k < n or running:
        n_new = p_new = 0
        pairs_new = 0.0
        while free and k < n and arrival[k] <= t:
            s = heapq.heappop(free)
            start[k], slot[k] = step, s
            heapq.heappush(running, (step + output[k] - 1, s, k))
            n_new += 1
            p_new += prompt[k]
            pairs_new += attention_sums_scalar(model, prompt[k], 0)[0]
            k += 1
        if not running:  # nothing to run: the engine idles until the next arrival
            gaps[step] = gaps.get(step, 0.0) + arrival[k] - t
            t = arrival[k]
            continue
        n_all = n_dec + n_new
        deadline = arrival[k] if free and k < n else math.inf  # only an arrival into a free slot matters
        m = running[0][0] - step + 1
        if f_win:
            # Windowed layers: each sequence's K there is min(c + 1, W), c + 1 = prompt + step - start
            # (the prefill step's new ones excluded), so the steps' sums are no longer linear.
            ids = np.array([r for _, _, r in running], dtype=np.int64)
            since = step - start[ids]  # 0 for the ones prefilled in this step
            v = prompt_arr[ids] + since  # c + 1 now (a new one: its prompt), + j at the j-th step on
            dec_now = (1 - f_win) * c1_sum + f_win * float(np.minimum(v[since > 0], w_win).sum())
            first = (float(n_dec + p_new), dec_now + pairs_new, dec_now + p_new)
            j = np.arange(1, m, dtype=float)  # the decode steps after the first
            vs = np.sort(v)
            below = np.searchsorted(vs, w_win - j, side="left")  # still under the window at step j
            head = np.concatenate([[0.0], np.cumsum(vs)])[below]
            grown = head + j * below + w_win * (vs.size - below)  # sum of min(v + j, W)
            kv = (1 - f_win) * (c1_sum + p_new + n_all * j) + f_win * grown
            length, t = clock.run_steps(t, first, n_all, kv, deadline)
        else:
            length, t = clock.run(t, (float(n_dec + p_new), c1_sum + pairs_new, float(c1_sum + p_new)),
                                  n_all, float(c1_sum + p_new), m, deadline)
        step += length
        c1_sum += p_new + n_all * length
        n_dec = n_all
        while running and running[0][0] < step:
            _, s, r = heapq.heappop(running)
            heapq.heappush(free, s)
            n_dec -= 1
            c1_sum -= prompt[r] + step - int(start[r])
    return slot, start, gaps


# ---------------------------------------------------------------------------------------------------
# Pricing and assembly
# ---------------------------------------------------------------------------------------------------


def _decode_sums(start, release, offset, n_steps: int, cap: float | None = None) -> np.ndarray:
    """Per step, the sum over decoding sequences of min(c + 1, cap) (no cap: c + 1), where a
    sequence decodes at steps start + 1 .. release with c + 1 = offset + step."""
    size = n_steps + 1
    first, stop = start + 1, release + 1
    # c + 1 reaches the cap at step cap - offset; from there on the sequence adds cap
    grow_end = stop if cap is None else np.clip(np.ceil(cap - offset).astype(np.int64), first, stop)
    grow = np.bincount(first, minlength=size) - np.bincount(grow_end, minlength=size)
    grow_off = np.bincount(first, offset, size) - np.bincount(grow_end, offset, size)
    total = np.cumsum(grow_off)[:n_steps] + np.arange(n_steps) * np.cumsum(grow)[:n_steps]
    if cap is not None:
        capped = np.bincount(grow_end, minlength=size) - np.bincount(stop, minlength=size)
        total = total + cap * np.cumsum(capped)[:n_steps]
    return total


def _step_aggregates(model: Model, req: Requests, start, end, release, prefill_tokens):
    """Per-step T (new tokens), P (attention pairs), K (KV tokens touched), S (sequences sampling:
    every one computing, a joining prompt its first token), useful and padding slots.

    Each request computes a prefill of q0 = ``prefill_tokens`` at ``start`` and one decode token per
    step up to ``release`` (c + 1 = q0 + step - start); it is useful up to ``end``. A model's
    windowed layers see at most W keys (``sim.cost.attention_sums``): a decoding sequence adds
    (1 - f) (c + 1) + f min(c + 1, W) pairs and as many KV tokens, f the share of windowed layers.
    """
    n_steps = int(release.max()) + 1
    q0 = prefill_tokens.astype(float)
    pre_new = np.bincount(start, q0, n_steps)
    pre_p, pre_k = attention_sums(model, q0, 0.0)
    pre_pairs = np.bincount(start, pre_p, n_steps)
    pre_kv = np.bincount(start, pre_k, n_steps)
    size = n_steps + 1
    dec = np.bincount(start + 1, minlength=size) - np.bincount(release + 1, minlength=size)
    offset = q0 - start  # c + 1 = offset + step while decoding
    n_dec = np.cumsum(dec)[:n_steps].astype(float)
    c1 = _decode_sums(start, release, offset, n_steps)
    dec_pairs = c1
    if model.window_layers:
        f, w = model.window_share, float(model.sliding_window)
        dec_pairs = (1 - f) * c1 + f * _decode_sums(start, release, offset, n_steps, w)
    dec_kv = dec_pairs  # a decode step: P = K = c + 1 (min(c + 1, W) on a windowed layer)
    new = pre_new + n_dec
    useful_dec = np.cumsum(np.bincount(start + 1, minlength=size) - np.bincount(end + 1, minlength=size))
    useful = np.bincount(start, req.prompt_tokens / q0, n_steps) + useful_dec[:n_steps]
    computing = np.bincount(start, minlength=n_steps) + n_dec
    return (new, pre_pairs + dec_pairs, pre_kv + dec_kv, computing, useful, computing - useful,
            pre_new + c1)


def _assemble(policy, gpu, model, assumptions, req, slots, slot, start, end, release, prefill, gaps):
    new, pairs, kv, sampled, useful, padding, tokens = _step_aggregates(model, req, start, end, release,
                                                                        prefill)
    cost = step_cost(gpu, model, new, pairs, kv, assumptions, sampled_tokens=sampled)
    idle_before = np.zeros(new.size)
    if gaps:
        idle_before[list(gaps)] = list(gaps.values())
    step_end = np.cumsum(cost.time_s + idle_before)
    step_start = step_end - cost.time_s
    wall, idle = float(step_end[-1]), float(idle_before.sum())
    padding = np.maximum(padding, 0.0)
    capacity = slots * new.size  # slot-steps: B tokens a step
    requested_share = float(useful.sum()) / capacity
    padding_share = float(padding.sum()) / capacity
    # Empty slots at each step, and how many requests had arrived by the step's start but were not yet
    # admitted (admitted = prefill at or before this step): the empty slots they could have used.
    n = new.size
    empty = np.maximum(slots - useful - padding, 0.0)
    arrived = np.searchsorted(req.arrival_s, step_start, side="right")
    admitted = np.cumsum(np.bincount(start, minlength=n))
    waiting = np.maximum(arrived - admitted, 0)
    idle_waiting = np.minimum(empty, waiting)
    idle_share = max(0.0, 1.0 - requested_share - padding_share)
    idle_waiting_share = min(float(idle_waiting.sum()) / capacity, idle_share)
    return BatchingRun(
        policy=policy, slots=slots, requests=req, slot=slot, start_step=start, end_step=end,
        release_step=release, prefill_tokens=prefill, first_token_s=step_end[start],
        finish_s=step_end[end], release_s=step_end[release], cost=cost, step_start_s=step_start,
        idle_before_s=idle_before, useful_slots=useful, padding_slots=padding, wall_s=wall, idle_s=idle,
        utilization_gpu=kernel_busy_fraction(cost, idle), requested_share=requested_share,
        padding_share=padding_share, idle_share=idle_share, idle_waiting_share=idle_waiting_share,
        unused_share=idle_share - idle_waiting_share, kv_tokens=tokens,
    )


def simulate(gpu: GPU, model: Model, requests: Requests, slots: int, policy: str,
             assumptions: Assumptions = DEFAULT_ASSUMPTIONS) -> BatchingRun:
    """Run ``requests`` through B = ``slots`` slots under ``policy`` ('static' or 'continuous')."""
    slots = check_int("slots", slots, *SLOTS_RANGE)
    policy = check_choice("policy", policy, POLICIES)
    if not isinstance(requests, Requests):
        raise ValueError("requests must be a Requests (see make_requests / sample_requests)")

    def price(new, pairs, kv, sampled):
        return step_cost(gpu, model, new, pairs, kv, assumptions, sampled_tokens=sampled).time_s

    if policy == "static":
        slot, start, end, release, prefill, gaps = _static_schedule(model, requests, slots, price)
    else:
        if np.any(requests.arrival_s > 0):
            slot, start, gaps = _continuous_poisson(requests, slots, _SegmentClock(gpu, model, assumptions))
        else:
            (slot, start), gaps = _continuous_burst(requests, slots), {}
        end = start + requests.output_tokens - 1
        release, prefill = end, requests.prompt_tokens
    return _assemble(policy, gpu, model, assumptions, requests, slots, slot, start, end, release,
                     prefill, gaps)


def compare(gpu: GPU, model: Model, *, slots: int, workload: str = DEFAULT_WORKLOAD,
            n_requests: int = 500, load: str = "burst", rate_per_s: float = 1.0,
            seed: int = DEFAULT_SEED, assumptions: Assumptions = DEFAULT_ASSUMPTIONS) -> Comparison:
    """Both policies on the same sampled requests and the same slots: the page's one sim call."""
    req = sample_requests(workload, n_requests, load, rate_per_s, seed)
    return Comparison(simulate(gpu, model, req, slots, "static", assumptions),
                      simulate(gpu, model, req, slots, "continuous", assumptions))


def expected_static_slot_efficiency(slots: int) -> float:
    """1 / H_B: E[L] / E[max of B i.i.d. exponential L], static batching's slot efficiency (V17)."""
    slots = check_int("slots", slots, *SLOTS_RANGE)
    return 1.0 / float(np.sum(1.0 / np.arange(1, slots + 1)))
