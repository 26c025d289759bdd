"""Section 05: one GPU under load. A Poisson stream of requests, a step-level scheduler that interleaves
prefill and decode, the capacity under latency targets, prefix caching and disaggregated serving.

**Stream** (``make_stream``): Poisson arrivals at ``rate_per_s`` requests/s, prompt and output lengths
fixed or ShareGPT-like (lognormal, long-tailed), all from one seed. The arrival gaps are drawn at rate
1 and divided by the rate, so streams at different rates hold the same requests in the same order.

**Scheduler** (``simulate``): an event loop over engine steps. Policies:

- ``prefill-first`` (vLLM's classic default, chunking off): whenever a waiting prompt can be admitted,
  the next step is a prefill of the admitted prompts (up to ``MAX_BATCHED_TOKENS`` new tokens) and
  the decode batch waits for it: the running users' next token is late by the whole prefill.
- ``decode-first`` (request-level batching, FasterTransformer-style): new prompts are admitted only
  when the running batch has finished; decodes are never interrupted.
- ``chunked`` (Sarathi-Serve, vLLM's chunked prefill): every step has a budget of ``chunk_tokens``
  new tokens; the running decodes go first (one token each), prompt chunks fill the rest, first come
  first served.

Each step is priced by the shared cost model (``sim.cost.step_time_coefficients``): one scalar call
for a prefill or mixed step; a run of decode-only steps between two events (an arrival that can be
admitted, a request finishing, the KV cache filling) is priced in closed form, because at a fixed
batch a decode step's time is piecewise linear in its KV tokens (each operator's max of two lines).
The finished schedule is priced again in one vectorised ``sim.cost.step_cost`` call for FLOPs, bytes
and the time with a kernel running (what ``nvidia-smi`` would read); the two agree (a test says so).

**Memory** (``sim.memory.kv_budget_bytes``): a request is admitted only if its prompt's KV fits (after
evicting unused cached prefixes); a step's decode tokens must fit too, or the most recently admitted
running request is preempted and later recomputed (prompt + tokens generated so far), vLLM's
recompute preemption, counted. A request whose prompt + output cannot fit at all is rejected. At most
``max_seqs`` requests run at once (vLLM's ``max_num_seqs`` for the GPU, ``sim.memory.engine_max_seqs``).
Windowed layers (gpt-oss, Llama 4) hold at most their window: the cache is counted in tokens of the
full-attention layers (``kv_unit_bytes``), and each admitted request also holds its windowed layers'
share, min(W, prompt + output) of their tokens, from admission to release (``window_hold_tokens``:
exact once a request's context passes the window, as vLLM's hybrid allocator frees blocks that fall
out of it; above it while a context is shorter). A model whose every layer is windowed (Mistral)
counts every token (an upper bound past its window).

**Prefix caching**: a share of requests start with one of ``n_prefixes`` shared prefixes of
``prefix_tokens`` tokens (a system prompt). With caching on, a prefix's KV stays in the KV cache
after its requests finish, evictable least recently used when memory is needed; a request whose
prefix is cached prefills only the rest of its prompt (attending over the cached prefix).

**Latency**: TTFT = arrival to the end of the step that computes the prompt's last token (the
first token). Inter-token gaps (TBT) are the time between a user's consecutive tokens; one step
that gives n users a token after the same wait is n samples. Goodput as vLLM's benchmark counts it,
via ``sim.metrics.run_metrics``: requests/s meeting a TTFT and a time-per-output-token target.
``utilization_gpu`` is NVML's definition, as everywhere in the app.

Units: seconds (``_s``), tokens (``_tokens``), requests/s (``_per_s``/``rps``), bytes.
"""

from __future__ import annotations

import heapq
import math
from collections import OrderedDict, deque
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import NamedTuple

import numpy as np

from sim.batching import queue_keeps_up
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
from sim.hardware import GB, GPU
from sim.memory import MAX_BATCHED_TOKENS, engine_max_seqs, kv_budget_bytes
from sim.metrics import SLO, ServingMetrics, per_gpu_goodput, run_metrics
from sim.models import Model
from sim.validate import check_choice, check_float, check_int

POLICIES = ("prefill-first", "decode-first", "chunked")
LENGTHS = ("sharegpt", "fixed")
N_REQUESTS_RANGE = (1, 20_000)
RATE_RANGE = (0.01, 10_000.0)  # requests per second
CHUNK_TOKENS_RANGE = (16, 16_384)
PROMPT_TOKENS_RANGE = (1, 32_768)
OUTPUT_TOKENS_RANGE = (1, 8_192)
PREFIX_TOKENS_RANGE = (0, 16_384)
N_PREFIXES_RANGE = (1, 10_000)
SEED_RANGE = (0, 2**32 - 1)

DEFAULT_CHUNK_TOKENS = 512  # Sarathi-Serve's token budget under its strict SLO (REFERENCE.md 3.4)
#: Tokens a prefill step carries in ``saturation_rate``'s estimate (one scale for every policy).
SATURATION_CHUNK_TOKENS = 2048
DEFAULT_SEED = 0

#: ShareGPT-like lengths: lognormal, long-tailed. Medians and spreads are chosen to look like chat
#: traffic with a tail of long documents (not fitted to the dataset): prompt median 600 tokens,
#: 1 % above ~6,000; output median 180, capped.
SHAREGPT_PROMPT = (600.0, 1.0, 16, 16_384)  # median tokens, sigma of ln, min, max
SHAREGPT_OUTPUT = (180.0, 0.8, 4, 2_048)
#: vLLM's benchmark keeps a ShareGPT conversation only if its prompt and output have at least 4 tokens,
#: the prompt at most 1,024 and both together at most 2,048 (vllm/benchmarks/datasets.py,
#: ``is_valid_sequence``).
SHAREGPT_FILTER = (4, 1_024, 2_048)
#: How far a ShareGPT sample's means may miss the ones asked for (relative).
SHAREGPT_MEAN_TOLERANCE = 0.01


@dataclass(frozen=True)
class Targets:
    """Latency targets for capacity: the ``percentile`` of TTFT and of the time between tokens.

    ``tbt`` 'token': the percentile over every inter-token gap (Sarathi-Serve's P99 TBT);
    'request': over each request's mean time per output token (DistServe's TPOT)."""

    ttft_s: float = 2.0
    tbt_s: float = 0.100
    percentile: float = 99.0
    tbt: str = "token"

    def __post_init__(self) -> None:
        check_float("ttft_s", self.ttft_s, 1e-4, 3600.0)
        check_float("tbt_s", self.tbt_s, 1e-4, 60.0)
        check_float("percentile", self.percentile, 1.0, 100.0)
        check_choice("tbt", self.tbt, ("token", "request"))

    @property
    def slo(self) -> SLO:
        """The same targets as section 04's SLO (per-request goodput)."""
        return SLO(ttft_s=self.ttft_s, tpot_s=self.tbt_s)

    @property
    def steady_slack_s(self) -> float:
        """The slack a run's queue check gets (``LoadRun.steady``): 5 % of the TTFT target, seconds."""
        return 0.05 * self.ttft_s


#: Two target pairs (relaxed chat; strict interactive), editable on the page.
TARGET_PRESETS = {"relaxed": Targets(2.0, 0.100), "strict": Targets(0.450, 0.040)}


@dataclass(frozen=True)
class Stream:
    """A request stream: arrivals sorted, lengths in tokens, prefixes (-1: none)."""

    arrival_s: np.ndarray
    prompt_tokens: np.ndarray  # whole prompt, shared prefix included
    output_tokens: np.ndarray
    prefix_id: np.ndarray  # which shared prefix the prompt starts with, -1 none
    prefix_tokens: int = 0  # tokens of every shared prefix

    @property
    def n(self) -> int:
        return int(self.arrival_s.size)

    def at_rate(self, rate_per_s: float, base_rate_per_s: float) -> Stream:
        """The same requests arriving ``rate_per_s / base_rate_per_s`` times faster."""
        return Stream(self.arrival_s * (base_rate_per_s / rate_per_s), self.prompt_tokens,
                      self.output_tokens, self.prefix_id, self.prefix_tokens)


@lru_cache(maxsize=1)
def _normal_quantiles() -> np.ndarray:
    """Standard normal quantiles at 2**16 evenly spaced probabilities: the order statistics of a fixed
    draw (numpy has no inverse normal CDF; this is within ~1 % of it except at the very ends)."""
    return np.sort(np.random.default_rng(12345).standard_normal(2**16))


def _lognormal(rng, spec, n):
    """``n`` lognormal lengths, stratified: one draw from each of ``n`` equal-probability slices of the
    distribution, in random order. A stream of 300 requests and one of 2,000 then carry nearly the same
    mean work (plain draws differ by several per cent at sigma 1), so the capacity searched on the
    shorter stream describes the page's headline run too."""
    median, sigma, lo, hi = spec
    u = (np.arange(n) + rng.random(n)) / n
    z = _normal_quantiles()[np.minimum((u * 2**16).astype(np.int64), 2**16 - 1)]
    z = rng.permutation(z)
    return np.clip(np.rint(median * np.exp(sigma * z)), lo, hi).astype(np.int64)


def make_stream(n_requests: int, rate_per_s: float, *, lengths: str = "sharegpt", prompt_tokens: int = 512,
                output_tokens: int = 128, seed: int = DEFAULT_SEED, prefix_share: float = 0.0,
                prefix_tokens: int = 0, n_prefixes: int = 1, max_tokens: int | None = None) -> Stream:
    """``n_requests`` Poisson arrivals at ``rate_per_s``; lengths 'fixed' (``prompt_tokens``,
    ``output_tokens``) or 'sharegpt' (lognormal, ``SHAREGPT_PROMPT``/``SHAREGPT_OUTPUT``). A share
    ``prefix_share`` of requests start with one of ``n_prefixes`` prefixes (uniformly) of
    ``prefix_tokens`` tokens, added in front of their own prompt.

    ``max_tokens`` (the model's positions): 'sharegpt' requests longer than that, prompt, prefix and
    output together, are drawn again, as vLLM's benchmark skips a sample longer than the model's
    context and draws the next one, so the stream keeps ``n_requests`` from the lengths a model of that
    context can serve (a request still too long after 64 redraws is kept: the page's check refuses
    it). Where no request is longer, the stream is the same as without it."""
    n = check_int("n_requests", n_requests, *N_REQUESTS_RANGE)
    rate = check_float("rate_per_s", rate_per_s, *RATE_RANGE)
    check_choice("lengths", lengths, LENGTHS)
    check_int("prompt_tokens", prompt_tokens, *PROMPT_TOKENS_RANGE)
    check_int("output_tokens", output_tokens, *OUTPUT_TOKENS_RANGE)
    check_int("seed", seed, *SEED_RANGE)
    share = check_float("prefix_share", prefix_share, 0.0, 1.0)
    ptok = check_int("prefix_tokens", prefix_tokens, *PREFIX_TOKENS_RANGE)
    npre = check_int("n_prefixes", n_prefixes, *N_PREFIXES_RANGE)
    rng = np.random.default_rng(seed)
    arrival = np.cumsum(rng.exponential(1.0, n)) / rate
    if lengths == "fixed":
        prompt = np.full(n, prompt_tokens, dtype=np.int64)
        out = np.full(n, output_tokens, dtype=np.int64)
    else:
        prompt = _lognormal(rng, SHAREGPT_PROMPT, n)
        out = _lognormal(rng, SHAREGPT_OUTPUT, n)
    has = rng.random(n) < share if ptok > 0 else np.zeros(n, dtype=bool)
    pid = np.where(has, rng.integers(0, npre, n), -1)
    prompt = prompt + np.where(has, ptok, 0)
    if max_tokens is not None and lengths == "sharegpt":
        limit = check_int("max_tokens", max_tokens, 1, 2**31)
        for _ in range(64):
            long = np.nonzero(prompt + out > limit)[0]
            if not long.size:
                break
            prompt[long] = _lognormal(rng, SHAREGPT_PROMPT, long.size) + np.where(has[long], ptok, 0)
            out[long] = _lognormal(rng, SHAREGPT_OUTPUT, long.size)
    return Stream(arrival, prompt, out, pid.astype(np.int64), ptok)


def sharegpt_sample(n_requests: int, prompt_mean: float, output_mean: float, *,
                    seed: int = DEFAULT_SEED) -> Stream:
    """``n_requests`` ShareGPT-like requests with the given mean prompt and output lengths, as vLLM's
    benchmark samples them: the lognormal shapes of ``SHAREGPT_PROMPT`` / ``SHAREGPT_OUTPUT`` (their
    spreads and long tails), scaled until the means match after ``SHAREGPT_FILTER``'s limits are
    applied (prompt <= 1,024, prompt + output <= 2,048), all arriving at t = 0. A benchmark run of
    such requests lasts until its longest outputs finish, which is why its throughput is not the
    mean request's (``sim.truth``'s offline ShareGPT rows)."""
    n = check_int("n_requests", n_requests, *N_REQUESTS_RANGE)
    lo, max_prompt, max_total = SHAREGPT_FILTER
    check_float("prompt_mean", prompt_mean, lo, max_prompt)
    check_float("output_mean", output_mean, lo, max_total - lo)
    rng = np.random.default_rng(check_int("seed", seed, *SEED_RANGE))
    base_p = _lognormal(rng, (*SHAREGPT_PROMPT[:2], 1, 10**9), n).astype(float)
    base_o = _lognormal(rng, (*SHAREGPT_OUTPUT[:2], 1, 10**9), n).astype(float)
    a, b = prompt_mean / base_p.mean(), output_mean / base_o.mean()
    for _ in range(60):  # a fixed point: clipping lowers the means, so the scales grow to match
        prompt = np.clip(np.rint(base_p * a), lo, max_prompt)
        out = np.clip(np.rint(base_o * b), lo, max_total - prompt)
        a *= prompt_mean / prompt.mean()
        b *= output_mean / out.mean()
    for name, got, want in (("prompt", prompt.mean(), prompt_mean), ("output", out.mean(), output_mean)):
        if abs(got / want - 1.0) > SHAREGPT_MEAN_TOLERANCE:
            raise ValueError(f"a mean {name} of {want:g} tokens is out of reach within the benchmark's "
                             f"limits (the closest is {got:,.0f})")
    return Stream(np.zeros(n), prompt.astype(np.int64), out.astype(np.int64), np.full(n, -1, dtype=np.int64))


# ---------------------------------------------------------------------------------------------------
# The run
# ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LoadRun:
    """One run of the scheduler. Per request arrays have the stream's order; per step arrays the
    steps' order. Steps are only those the engine ran (idle time between them is ``idle_s``)."""

    policy: str
    stream: Stream
    kv_budget_tokens: int
    chunk_tokens: int
    ttft_s: np.ndarray  # arrival to first token, s (inf: rejected)
    finish_s: np.ndarray  # time of the last token, s (inf: rejected)
    first_token_s: np.ndarray  # time of the first token, s
    prefill_tokens: np.ndarray  # per request, prompt tokens actually computed (recompute included)
    cache_hit: np.ndarray  # bool: the request's prefix was cached when it was (first) admitted
    rejected: np.ndarray  # bool: prompt + output can never fit the KV cache
    preemptions: int
    step_end_s: np.ndarray  # per step, clock at its end
    step_time_s: np.ndarray  # per step, wall time (the scheduler's clock), s
    step_decode: np.ndarray  # per step, sequences decoding (1 token each)
    step_prefill_tokens: np.ndarray  # per step, prompt (chunk) tokens
    step_kv_tokens: np.ndarray  # per step, KV tokens held after the step (cached prefixes included)
    step_queue: np.ndarray  # per step, requests waiting when it starts
    step_sums: tuple  # (T, P, K, S) per step, the cost model's inputs
    gap_s: np.ndarray  # inter-token gaps, s ...
    gap_weight: np.ndarray  # ... and how many tokens waited each
    spans: np.ndarray  # (rid, first decode step index, end) decode stretches, in decode-step indices
    idle_s: float
    pricing: tuple = field(repr=False)  # (gpu, model, assumptions) the steps are priced with

    # -- per request
    @property
    def e2e_s(self) -> np.ndarray:
        return self.finish_s - self.stream.arrival_s

    @cached_property
    def tpot_s(self) -> np.ndarray:
        """Per request mean time per output token after the first, s (NaN for 1-token outputs)."""
        out = self.stream.output_tokens.astype(float)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(out > 1, (self.finish_s - self.first_token_s) / np.maximum(out - 1, 1), np.nan)

    def token_times_s(self, rid: int) -> np.ndarray:
        """Times of request ``rid``'s output tokens, s (first token included)."""
        dec_end = self.step_end_s[self.step_decode > 0]
        mine = self.spans[self.spans[:, 0] == rid]
        firsts = self._prefill_ends.get(rid, [])
        parts = [np.asarray(firsts, dtype=float)] + [dec_end[a:b] for _, a, b in mine]
        return np.sort(np.concatenate(parts)) if parts else np.zeros(0)

    _prefill_ends: dict = field(default_factory=dict, repr=False)

    @cached_property
    def cost(self) -> StepCost:
        """The steps priced in one vectorised ``sim.cost.step_cost`` call (on first use: the capacity
        search never needs FLOPs and bytes)."""
        gpu, model, assumptions = self.pricing
        T, P, K, S = self.step_sums
        return step_cost(gpu, model, T, P, K, assumptions, sampled_tokens=S)

    # -- aggregates
    def ttft_pct(self, q: float) -> float:
        v = self.ttft_s
        return float(np.percentile(v, q)) if v.size else math.nan

    @cached_property
    def _gaps_sorted(self) -> tuple[np.ndarray, np.ndarray]:
        order = np.argsort(self.gap_s, kind="stable")
        return self.gap_s[order], np.cumsum(self.gap_weight[order])

    def tbt_pct(self, q: float) -> float:
        """The q-th percentile of the gaps between tokens, per token (``sim.metrics.weighted_percentile``'s
        inverse-CDF definition, on gaps sorted once)."""
        v, cum = self._gaps_sorted
        if not v.size or cum[-1] <= 0:
            return math.nan
        i = int(np.searchsorted(cum, q / 100.0 * cum[-1] * (1 - 1e-12), side="left"))
        return float(v[min(i, v.size - 1)])

    @property
    def wall_s(self) -> float:
        return float(self.step_time_s.sum()) + self.idle_s

    @property
    def output_tokens(self) -> int:
        return int(self.stream.output_tokens[~self.rejected].sum())

    def metrics(self, targets: Targets = Targets()) -> ServingMetrics:
        """Section 04's metrics of this run (goodput with ``targets`` as the SLO), kept per targets."""
        memo = self.__dict__.setdefault("_metrics_memo", {})
        if targets not in memo:
            if len(memo) > 16:
                memo.clear()
            memo[targets] = self._metrics(targets)
        return memo[targets]

    def _metrics(self, targets: Targets) -> ServingMetrics:
        t = self.stream.output_tokens
        processed = float(self.prefill_tokens.sum() + (t[~self.rejected] - 1).sum())
        return run_metrics(
            self.cost, useful_tokens=float(self.output_tokens),
            processed_tokens=max(processed, self.output_tokens),
            idle_s=self.idle_s, ttft_s=self.ttft_s, tpot_s=np.nan_to_num(self.tpot_s, nan=0.0),
            kv_use=self.step_kv_tokens / max(self.kv_budget_tokens, 1), queue_depth=self.step_queue,
            preemptions=self.preemptions, slo=targets.slo, itl_s=self.gap_s, itl_weights=self.gap_weight,
            request_tokens=t)

    @property
    def utilization_gpu(self) -> float:
        """nvidia-smi's utilization.gpu over the run (sim.cost.kernel_busy_fraction, its steps and
        the idle time between them)."""
        return kernel_busy_fraction(self.cost, self.idle_s)

    @property
    def hit_rate(self) -> float:
        with_prefix = self.stream.prefix_id >= 0
        return float(self.cache_hit[with_prefix].mean()) if with_prefix.any() else math.nan

    def steady(self, slack_s: float = 0.0) -> bool:
        """The queue does not grow over the run (``sim.batching.queue_keeps_up``; the stream's requests
        are in arrival order)."""
        return queue_keeps_up(self.ttft_s, slack_s)

    def meets(self, targets: Targets) -> bool:
        """Both percentile targets met, nothing rejected, and the queue steady (``steady``, with 5 % of
        the TTFT target as slack)."""
        if self.rejected.any():
            return False
        q = targets.percentile
        tbt = (self.tbt_pct(q) if targets.tbt == "token"
               else float(np.nanpercentile(self.tpot_s, q)) if np.isfinite(self.tpot_s).any() else 0.0)
        return (self.ttft_pct(q) <= targets.ttft_s and not tbt > targets.tbt_s
                and self.steady(targets.steady_slack_s))


def kv_unit_bytes(model: Model) -> float:
    """Bytes of one token of the scheduler's KV count on one GPU: a token in the full-attention layers
    for a model with some windowed layers, a token in every layer otherwise."""
    f = model.window_share
    return (1.0 - f) * model.kv_bytes_per_token if 0.0 < f < 1.0 else model.kv_bytes_per_token


def window_hold_tokens(model: Model, total_tokens) -> np.ndarray:
    """What a request's windowed layers hold, in ``kv_unit_bytes`` tokens, for a request that will
    reach ``total_tokens`` of context: f / (1 - f) x min(W, total) (0 without windowed layers, and for
    a model whose every layer is windowed, whose every token is counted instead)."""
    t = np.asarray(total_tokens, dtype=np.int64)
    f = model.window_share
    if not 0.0 < f < 1.0:
        return np.zeros_like(t)
    return np.ceil(f / (1.0 - f) * np.minimum(t, int(model.sliding_window))).astype(np.int64)


def kv_budget_tokens(gpu: GPU, model: Model) -> int:
    """KV-cache tokens one GPU holds (``sim.memory.kv_budget_bytes`` / ``kv_unit_bytes``)."""
    return max(int(kv_budget_bytes(gpu, model) // kv_unit_bytes(model)), 0)


class _Cache:
    """Cached prefixes: prefix id -> [tokens, users, ready]; unused ones in LRU order."""

    def __init__(self):
        self.entries: dict[int, list] = {}
        self.lru: OrderedDict[int, None] = OrderedDict()
        self.tokens = 0
        self.evictable = 0

    def evict(self, need: int) -> int:
        """Evict unused prefixes, least recently used first, until ``need`` tokens are freed (or none
        is left): the tokens freed."""
        freed = 0
        while need > freed and self.lru:
            pid, _ = self.lru.popitem(last=False)
            tok = self.entries.pop(pid)[0]
            self.tokens -= tok
            self.evictable -= tok
            freed += tok
        return freed

    def use(self, pid: int) -> None:
        e = self.entries[pid]
        if e[1] == 0:
            self.lru.pop(pid, None)
            self.evictable -= e[0]
        e[1] += 1

    def release(self, pid: int) -> None:
        e = self.entries[pid]
        e[1] -= 1
        if e[1] == 0:
            self.lru[pid] = None
            self.evictable += e[0]


def simulate(gpu: GPU, model: Model, stream: Stream, policy: str = "chunked", *,
             chunk_tokens: int = DEFAULT_CHUNK_TOKENS, prefix_caching: bool = True,
             assumptions: Assumptions = DEFAULT_ASSUMPTIONS, kv_tokens: int | None = None,
             mode: str = "colocated", transfer_s: np.ndarray | None = None,
             max_seqs: int | None = None) -> LoadRun:
    """Run ``stream`` through one GPU's scheduler under ``policy``.

    ``kv_tokens``: the KV-cache size in ``kv_unit_bytes`` tokens (default: what the card holds after
    the weights). ``max_seqs``: requests running at once (default: the engine's for the GPU,
    ``sim.memory.engine_max_seqs``; under chunked prefill also at most ``chunk_tokens``).
    ``mode`` 'colocated' (prefill and decode here), 'prefill' (a prefill-only GPU: each request
    leaves after its first token), 'decode' (a decode-only GPU: requests arrive with their prompt's
    KV, their first token made elsewhere ``transfer_s`` before arrival).
    """
    check_choice("policy", policy, POLICIES)
    check_choice("mode", mode, ("colocated", "prefill", "decode"))
    chunk = check_int("chunk_tokens", chunk_tokens, *CHUNK_TOKENS_RANGE)
    coef = step_time_coefficients(gpu, model, assumptions)
    price = coef.scalar_pricer()
    budget = kv_budget_tokens(gpu, model) if kv_tokens is None else int(kv_tokens)
    n = stream.n
    arr = stream.arrival_s.tolist()
    plen = stream.prompt_tokens.tolist()
    olen = stream.output_tokens.tolist() if mode != "prefill" else [1] * n
    pid = stream.prefix_id.tolist() if prefix_caching and mode == "colocated" else [-1] * n
    ptok = int(stream.prefix_tokens)
    pu = ptok + int(window_hold_tokens(model, ptok))  # a cached prefix's KV, windowed layers included
    xfer = [0.0] * n if transfer_s is None else np.broadcast_to(transfer_s, (n,)).tolist()
    seqs = engine_max_seqs(gpu) if max_seqs is None else check_int("max_seqs", max_seqs, 1, 10**6)
    max_seqs = min(seqs, chunk) if policy == "chunked" else seqs
    step_budget = chunk if policy == "chunked" else MAX_BATCHED_TOKENS
    linear = (not coef.overlap_host)

    inf = math.inf
    ttft = [inf] * n
    first_tok = [inf] * n
    finish = [inf] * n
    last_tok = [0.0] * n
    gen = [0] * n  # tokens produced so far
    need = [0] * n  # tokens to prefill in the current attempt
    done = [0] * n  # of which computed
    ctx0 = [0] * n  # tokens cached before the prefill (a prefix hit)
    priv = [0] * n  # private KV tokens held
    hold = [-1] * n  # prefix id whose cache entry the request uses
    computed = [0] * n
    hit = [False] * n
    seen = [False] * n
    # Each admitted request's windowed layers (see the module docstring), held until it is released.
    total = np.add(plen, olen, dtype=np.int64)
    wext = window_hold_tokens(model, total).tolist()
    # A request that holds a cached prefix (a hit, or the one that computes it) holds the prefix's
    # entry, windowed layers included (pu), and its own windowed layers over the rest of its context:
    # at least what it would hold alone (min(a + b, W) <= min(a, W) + min(b, W)).
    prefixed = [p >= 0 and ptok > 0 for p in pid]
    wown = window_hold_tokens(model, np.maximum(total - ptok, 0)).tolist()
    rejected = [plen[r] + olen[r] + ((wown[r] + pu - ptok) if prefixed[r] else wext[r]) > budget
                for r in range(n)]
    prefill_ends: dict[int, list] = {}

    cache = _Cache()
    used = 0  # KV tokens held: private + cached prefixes
    waiting: deque[int] = deque()
    prefilling: list[int] = []
    decoders: dict[int, int] = {}  # rid -> admission order
    order = 0
    g_join = [0] * n
    epoch = [0] * n
    heap: list = []
    spans: list = []
    cohorts: list = []  # (last token time, count) of decoders that have not decoded since joining
    main_last = 0.0  # last token time of the other decoders
    main_n = 0
    kv_dec = 0  # sum over decoders of (cached tokens + 1): the next decode step's K
    # Windowed layers (a share f of them, window W): a decoder's K there is min(c + 1, W). kvw_dec
    # sums that; n_in decoders are still inside the window; crossings holds (G at which one reaches
    # W, rid, epoch). A decode step's K for the cost model is (1 - f) kv_dec + f kvw_dec.
    f_win = model.window_share
    w_win = int(model.sliding_window or 0)
    kvw_dec = 0
    n_in = 0
    crossings: list = []
    G = 0  # decode steps so far
    now = 0.0
    idle = 0.0
    nxt = 0
    preempt = 0
    # Blocks of steps: (k, n_dec, kv0, A, B, T_pref, P_pref, S_pref, used_after_first, queue)
    blocks: list = []
    gaps_v: list = []
    gaps_w: list = []

    def admit_ok(r: int) -> bool:
        """Admit ``r`` if its prompt's KV fits with one step's decode tokens to spare (a watermark:
        the running decodes' next token always fits), evicting unused cached prefixes."""
        nonlocal used
        p = pid[r]
        e = cache.entries.get(p) if p >= 0 else None
        if e is not None and e[2]:  # a cache hit: the prefix's KV (its entry, pu) is there
            want = plen[r] + gen[r] - ptok
            mem = want + wown[r]  # its own tokens and its windowed layers' share of them
            if mem + len(decoders) > budget - used + cache.evictable - (e[0] if e[1] == 0 else 0):
                return False
            cache.use(p)
            hold[r] = p
            used -= cache.evict(used + mem + len(decoders) - budget)
            ctx0[r], priv[r] = ptok, mem
        else:
            want = plen[r] + gen[r]
            new_entry = p >= 0 and e is None and ptok > 0  # computes the prefix and leaves it cached
            mem = want - ptok + wown[r] + pu if new_entry else want + wext[r]
            if mem + len(decoders) > budget - used + cache.evictable:
                return False
            used -= cache.evict(used + mem + len(decoders) - budget)
            ctx0[r], priv[r] = 0, mem
            if new_entry:
                cache.entries[p] = [pu, 1, False]
                cache.tokens += pu
                hold[r] = p
                priv[r] = mem - pu
        if not seen[r]:
            hit[r] = ctx0[r] > 0
            seen[r] = True
        need[r] = want
        done[r] = 0
        used += mem
        return True

    def release(r: int) -> None:
        nonlocal used
        used -= priv[r]
        priv[r] = 0
        if hold[r] >= 0:
            cache.release(hold[r])
            hold[r] = -1

    def join_decode(r: int, t: float) -> None:
        nonlocal kv_dec, order, kvw_dec, n_in
        if gen[r] >= olen[r] or mode == "prefill":
            finish[r] = t
            release(r)
            return
        decoders[r] = order
        order += 1
        g_join[r] = G
        epoch[r] += 1
        heapq.heappush(heap, (G + olen[r] - gen[r], r, epoch[r]))
        kv_dec += plen[r] + gen[r]
        if f_win:
            x = plen[r] + gen[r]
            kvw_dec += min(x, w_win)
            if x < w_win:
                n_in += 1
                heapq.heappush(crossings, (G + w_win - x, r, epoch[r]))
        cohorts.append((t, 1))

    def emit_first(r: int, t: float) -> None:
        """The step computing r's last prompt token ends at t: r's next token."""
        if gen[r] == 0:
            ttft[r] = t - arr[r]
            first_tok[r] = t
        else:
            gaps_v.append(t - last_tok[r])
            gaps_w.append(1)
        gen[r] += 1
        last_tok[r] = t
        prefill_ends.setdefault(r, []).append(t)
        hold_r = hold[r]
        if hold_r >= 0 and not cache.entries[hold_r][2]:
            cache.entries[hold_r][2] = True
        join_decode(r, t)

    def leave_decode(r: int, finished: bool) -> None:
        nonlocal kv_dec, main_n, kvw_dec, n_in
        del decoders[r]
        steps = G - g_join[r]
        spans.append((r, g_join[r], G))
        gen[r] += steps
        priv[r] += steps  # each decode step wrote one KV token
        kv_dec -= plen[r] + gen[r]
        if f_win:
            x = plen[r] + gen[r]
            kvw_dec -= min(x, w_win)
            if x < w_win:  # still inside: its crossing entry goes stale (epoch or membership)
                n_in -= 1
        if finished:  # called right after the step that made its last token
            main_n -= 1  # it decoded in that step: one of the main group
            finish[r] = now
            last_tok[r] = now
            release(r)

    def pop_finished() -> None:
        while heap and heap[0][0] <= G:
            _, r, ep = heapq.heappop(heap)
            if ep == epoch[r] and r in decoders:
                leave_decode(r, True)

    def pop_crossings() -> None:
        """Decoders whose K on the windowed layers reached W at this step count W from now on."""
        nonlocal n_in
        while crossings and crossings[0][0] <= G:
            _, r, ep = heapq.heappop(crossings)
            if ep == epoch[r] and r in decoders:
                n_in -= 1

    def preempt_one() -> None:
        """Evict the most recently admitted decoder; it is queued first, to be recomputed."""
        nonlocal preempt, main_n
        victim = max(decoders, key=decoders.get)
        decoded = g_join[victim] < G  # it decoded since it joined: one of the main group
        last = main_last if decoded else last_tok[victim]
        if decoded:
            main_n -= 1
        else:
            for i, (t, c) in enumerate(cohorts):
                if t == last_tok[victim]:
                    cohorts[i] = (t, c - 1)
                    break
        leave_decode(victim, False)
        last_tok[victim] = last
        epoch[victim] += 1
        release(victim)
        waiting.appendleft(victim)
        preempt += 1

    def make_room() -> None:
        """Room for the running decodes' next tokens: unused cached prefixes go first (least recently
        used, as vLLM frees blocks no request holds), then the most recently admitted decoder is
        preempted, until the tokens fit."""
        nonlocal used
        if decoders and used + len(decoders) > budget:
            used -= cache.evict(used + len(decoders) - budget)
        while decoders and used + len(decoders) > budget:
            preempt_one()

    def arrivals_until(t: float) -> None:
        nonlocal nxt
        while nxt < n and arr[nxt] <= t:
            if rejected[nxt]:
                nxt += 1
                continue
            waiting.append(nxt)
            nxt += 1

    def admit(limit_tokens: int) -> None:
        """Move waiting requests into prefilling while seqs, memory and ``limit_tokens`` allow."""
        tokens = sum(need[r] - done[r] for r in prefilling)
        while waiting and len(decoders) + len(prefilling) < max_seqs:
            r = waiting[0]
            if policy != "chunked" and prefilling and tokens + plen[r] + gen[r] > limit_tokens:
                break
            if policy == "chunked" and tokens >= limit_tokens:
                break
            if not admit_ok(r):
                break
            waiting.popleft()
            if mode == "decode":
                if gen[r] == 0:  # the prompt's KV arrives over the link; the first token was made elsewhere
                    first_tok[r] = arr[r] - xfer[r]
                    ttft[r] = now - first_tok[r]  # the wait for a decode slot, transfer included
                    last_tok[r] = first_tok[r]
                    gen[r] = 1
                    prefill_ends.setdefault(r, []).append(first_tok[r])
                # a preempted request resumes where it stopped (its KV made again off this GPU)
                join_decode(r, last_tok[r])
                continue
            prefilling.append(r)
            tokens += need[r]

    def decode_gaps(end: float) -> None:
        """The decoders of a step ending at ``end``: one gap each since their last token."""
        nonlocal main_last, main_n, cohorts
        if main_n:
            gaps_v.append(end - main_last)
            gaps_w.append(main_n)
        for t, c in cohorts:
            gaps_v.append(end - t)
            gaps_w.append(c)
        cohorts = []
        main_n = len(decoders)
        main_last = end

    while True:
        arrivals_until(now)
        pop_finished()
        if policy == "decode-first":
            if not decoders and not prefilling:
                admit(10**12)
        elif policy == "prefill-first":
            admit(step_budget)
        if not decoders and not prefilling:
            if policy == "chunked":
                admit(step_budget)
            if not decoders and not prefilling:
                if waiting:  # nothing runs yet the head does not fit: impossible (too large: rejected)
                    raise RuntimeError(f"scheduler stalled: {used} of {budget} KV tokens held")
                while nxt < n and rejected[nxt]:  # a rejected request never reaches the engine
                    nxt += 1
                if nxt >= n:
                    break
                idle += max(arr[nxt] - now, 0.0)
                now = max(arr[nxt], now)
                continue
        # ---- a prefill or mixed step
        run_prefill = bool(prefilling)
        if policy == "chunked":
            # decodes first: make room for their tokens, evicting unused cached prefixes and then
            # preempting if the cache is still full
            make_room()
            admit(step_budget - len(decoders))
        if run_prefill or (policy == "chunked" and prefilling):
            nd = len(decoders) if policy == "chunked" else 0
            left = step_budget - nd
            T = P = K = 0.0
            S = 0
            finishing = []
            for r in prefilling:
                if policy == "chunked" and left <= 0:
                    break
                rem = need[r] - done[r]
                q = min(rem, left) if policy == "chunked" else rem
                c = ctx0[r] + done[r]
                T += q
                if f_win:
                    p_q, k_q = attention_sums_scalar(model, q, c)
                    P += p_q
                    K += k_q
                else:
                    P += q * (c + (q + 1) / 2)
                    K += c + q
                left -= q
                done[r] += q
                computed[r] += q
                if done[r] >= need[r]:
                    finishing.append(r)
                    S += 1
                if policy != "chunked" and step_budget <= T:
                    break
            Td = nd
            Kd = ((1.0 - f_win) * kv_dec + f_win * kvw_dec if f_win else kv_dec) if nd else 0
            in_before = n_in
            t_step = price(T + Td, P + Kd, K + Kd, S + Td)
            end = now + t_step
            if nd:
                used += nd
                G += 1
                decode_gaps(end)
            blocks.append((1, nd, float(Kd), t_step, 0.0, T, P, K, S, used, len(waiting), None, now, 0.0))
            now = end
            prefilling = [r for r in prefilling if done[r] < need[r]]
            for r in finishing:
                emit_first(r, end)
            if nd:
                kv_dec += nd
                if f_win:
                    kvw_dec += in_before
                    pop_crossings()
            continue
        # ---- a run of decode-only steps
        if not decoders:
            continue
        make_room()
        if not decoders:
            continue
        nd = len(decoders)
        k_max = heap[0][0] - G if heap else 1
        k_max = min(k_max, (budget - used) // nd)
        stop_at = math.inf
        if policy != "decode-first" and not waiting and nxt < n and nd + len(prefilling) < max_seqs:
            stop_at = arr[nxt]
        if f_win:
            while crossings and not (crossings[0][2] == epoch[crossings[0][1]]
                                     and crossings[0][1] in decoders):
                heapq.heappop(crossings)  # stale: that decoder left
            if crossings:  # no decoder crosses the window inside the block: K stays linear in it
                k_max = min(k_max, crossings[0][0] - G)
            kv0 = (1.0 - f_win) * kv_dec + f_win * kvw_dec
            slope = (1.0 - f_win) * nd + f_win * n_in
        else:
            kv0, slope = float(kv_dec), float(nd)
        k, a_lin, b_lin, times = _decode_block(coef, nd, kv0, k_max, stop_at - now, linear, slope)
        if times is None:
            ends = now + k * a_lin + b_lin * (k * kv0 + slope * k * (k - 1) / 2)
            first_end = now + a_lin + b_lin * kv0
        else:
            ends = now + float(times.sum())
            first_end = now + float(times[0])
        G += k
        decode_gaps(first_end)  # the block's later steps: nd gaps each, added when assembled
        blocks.append((k, nd, kv0, a_lin, b_lin, 0.0, 0.0, 0.0, 0, used + nd, len(waiting), times, now,
                       slope))
        used += nd * k
        kv_dec += nd * k
        if f_win:
            kvw_dec += n_in * k
            pop_crossings()
        main_last = ends
        now = ends

    return _assemble(gpu, model, assumptions, policy, stream, budget, chunk, blocks, gaps_v, gaps_w,
                     ttft, finish, first_tok, computed, hit, rejected, preempt, spans, idle, prefill_ends)


def _decode_block(coef, nd: int, kv0: float, k_max: int, until_s: float, linear: bool,
                  slope: float | None = None):
    """Steps of a decode-only run of ``nd`` sequences from KV tokens ``kv0`` (growing ``slope`` a
    step: ``nd``, less where windowed layers have stopped growing): at most ``k_max``, stopping after
    the first that ends at or past ``until_s`` from now. Returns (k, A, B, None) where step j takes
    A + B (kv0 + slope j), or (k, 0, 0, times) on the array path."""
    k_max = max(int(k_max), 1)
    slope = float(nd) if slope is None else float(slope)
    if linear and nd <= coef.graph_max_tokens:
        terms, fixed = coef.decode_terms(float(nd))
        lo = kv0
        a_lin, b_lin = fixed, 0.0
        for a, b, g, d in terms:
            comp = a + b * lo >= g + d * lo
            a_lin += a if comp else g
            b_lin += b if comp else d
            if b != d and slope > 0:
                x = (g - a) / (b - d)  # where the operator's bound changes
                if x > lo:
                    k_max = min(k_max, max(int((x - lo) // slope) + 1, 1))
        k = k_max
        if math.isfinite(until_s):
            # cumulative C(k) = k A + B (k kv0 + slope k (k - 1) / 2) >= until_s
            qa, qb = b_lin * slope / 2, a_lin + b_lin * kv0 - b_lin * slope / 2
            if until_s <= 0:
                kk = 1
            elif qa > 0:
                kk = math.ceil((-qb + math.sqrt(qb * qb + 4 * qa * until_s)) / (2 * qa))
            else:
                kk = math.ceil(until_s / qb)
            kk = max(kk, 1)

            def cum(m):
                return m * a_lin + b_lin * (m * kv0 + slope * m * (m - 1) / 2)
            while kk > 1 and cum(kk - 1) >= until_s:
                kk -= 1
            while cum(kk) < until_s:
                kk += 1
            k = min(k, kk)
        return k, a_lin, b_lin, None
    m = min(k_max, 4096)
    times = coef.decode_run_s(float(nd), kv0, m, slope)
    if math.isfinite(until_s):
        ends = np.cumsum(times)
        m = min(m, int(np.searchsorted(ends, until_s, side="left")) + 1)
    return m, 0.0, 0.0, times[:m]


def _assemble(gpu, model, assumptions, policy, stream, budget, chunk, blocks, gaps_v, gaps_w, ttft, finish,
              first_tok, computed, hit, rejected, preempt, spans, idle, prefill_ends) -> LoadRun:
    nb = len(blocks)
    k = np.array([b[0] for b in blocks], dtype=np.int64) if nb else np.zeros(0, dtype=np.int64)
    col = (lambda i: np.array([b[i] for b in blocks], dtype=float)) if nb else (lambda i: np.zeros(0))
    nd, kv0, a_lin, b_lin = col(1), col(2), col(3), col(4)
    tp, pp, kp, sp, used, queue = col(5), col(6), col(7), col(8), col(9), col(10)
    total = int(k.sum())
    idx = np.repeat(np.arange(nb), k)
    j = np.arange(total) - np.repeat(np.cumsum(k) - k, k)
    ndr = nd[idx]
    kvd = kv0[idx] + col(13)[idx] * j  # each block's K grows by its slope a step
    times = a_lin[idx] + b_lin[idx] * kvd
    first = np.cumsum(k) - k
    for bi, b in enumerate(blocks):  # the array-path blocks carry their own times
        if b[11] is not None:
            times[first[bi]:first[bi] + b[0]] = b[11]
    T = ndr + tp[idx]
    P = kvd * (ndr > 0) + pp[idx]
    K = kvd * (ndr > 0) + kp[idx]
    S = ndr + sp[idx]
    kv_after = used[idx] + ndr * j
    cum = np.cumsum(times)
    start = col(12)
    end = start[idx] + cum - (cum[first] - times[first])[idx] if total else cum  # the clock, idle included
    # later steps of decode blocks: nd gaps of that step's time each
    later = (j > 0) & (ndr > 0)
    gv = np.concatenate([np.asarray(gaps_v, dtype=float), times[later]])
    gw = np.concatenate([np.asarray(gaps_w, dtype=float), ndr[later]])
    sp_arr = np.array(spans, dtype=np.int64).reshape(-1, 3)
    run = LoadRun(
        policy=policy, stream=stream, kv_budget_tokens=budget, chunk_tokens=chunk,
        ttft_s=np.array(ttft), finish_s=np.array(finish), first_token_s=np.array(first_tok),
        prefill_tokens=np.array(computed, dtype=np.int64), cache_hit=np.array(hit, dtype=bool),
        rejected=np.array(rejected, dtype=bool), preemptions=preempt, step_end_s=end, step_time_s=times,
        step_decode=ndr.astype(np.int64), step_prefill_tokens=tp[idx], step_kv_tokens=kv_after,
        step_queue=queue[idx], step_sums=(T, P, K, S), gap_s=gv, gap_weight=gw, spans=sp_arr,
        idle_s=idle, pricing=(gpu, model, assumptions), _prefill_ends=prefill_ends,
    )
    return run


# ---------------------------------------------------------------------------------------------------
# Capacity under targets, and the latency-vs-load curve
# ---------------------------------------------------------------------------------------------------

#: Bisection steps of the capacity search (a bracket of 64x narrowed to about 3 %).
CAPACITY_ITERATIONS = 7
#: The bracket: [saturation / 16, 4 x saturation] (``saturation_rate``), the same for every target.
BRACKET = (1 / 16, 4.0)


def saturation_rate(gpu: GPU, model: Model, stream: Stream, assumptions: Assumptions = DEFAULT_ASSUMPTIONS,
                    mode: str = "colocated") -> float:
    """Requests/s the GPU could finish if it were never idle and latency did not matter, for the
    stream's mean lengths: 1 / (mean prompt x prefill seconds a token + mean output x decode seconds
    a token at the largest batch the KV cache holds). A target-free scale for the capacity search."""
    coef = step_time_coefficients(gpu, model, assumptions)
    price = coef.scalar_pricer()
    p = float(stream.prompt_tokens.mean())
    o = float(stream.output_tokens.mean())
    chunk = float(SATURATION_CHUNK_TOKENS)
    pre_p, pre_k = (float(v) for v in attention_sums(model, chunk, 0.0))
    per_prefill_token = price(chunk, pre_p, pre_k, 1) / chunk
    budget = max(kv_budget_tokens(gpu, model), 1)
    ctx = p + o / 2
    held = max(int(ctx) + int(window_hold_tokens(model, p + o)), 1)
    batch = float(max(1, min(engine_max_seqs(gpu), budget // held)))
    dec_p, dec_k = (float(v) for v in attention_sums(model, 1, ctx))
    per_decode_token = price(batch, batch * dec_p, batch * dec_k, batch) / batch
    if mode == "prefill":
        return 1.0 / (p * per_prefill_token)
    if mode == "decode":
        return 1.0 / (max(o - 1, 1) * per_decode_token)
    return 1.0 / (p * per_prefill_token + max(o - 1, 0) * per_decode_token)


def throughput_bound(gpu: GPU, model: Model, stream: Stream, mode: str,
                     assumptions: Assumptions = DEFAULT_ASSUMPTIONS) -> float:
    """Requests/s a prefill-only (``mode='prefill'``) or decode-only GPU cannot exceed, for the
    stream's mean lengths: its steps at their cheapest per token, busy all the time. Prefill: steps of
    whole mean prompts filling the scheduler's largest step (MAX_BATCHED_TOKENS, the prefill-first
    budget); decode: the largest batch the KV cache and the engine's ``max_num_seqs`` hold
    (``saturation_rate``'s). Unlike ``saturation_rate``'s scale, an upper bound: a role's capacity
    search stops here."""
    check_choice("mode", mode, ("prefill", "decode"))
    if mode == "decode":
        return saturation_rate(gpu, model, stream, assumptions, "decode")
    price = step_time_coefficients(gpu, model, assumptions).scalar_pricer()
    p = max(float(stream.prompt_tokens.mean()), 1.0)
    q = max(math.floor(MAX_BATCHED_TOKENS / p), 1)  # mean prompts a step
    pre_p, pre_k = (float(v) for v in attention_sums(model, p, 0.0))
    return q / price(q * p, q * pre_p, q * pre_k, q)


@dataclass(frozen=True)
class Capacity:
    """The highest tested rate whose run meets the targets (0 if even the lowest does not)."""

    rate_per_s: float
    bracket: tuple[float, float]  # requests/s searched between
    tested: tuple[tuple[float, bool], ...]  # (rate, met) in the order tried
    at_ceiling: bool  # met at the top of the bracket: capacity is at least this

    @property
    def runs(self) -> int:
        return len(self.tested)


def capacity(gpu: GPU, model: Model, stream: Stream, policy: str, targets: Targets, *,
             chunk_tokens: int = DEFAULT_CHUNK_TOKENS, prefix_caching: bool = True,
             assumptions: Assumptions = DEFAULT_ASSUMPTIONS, mode: str = "colocated",
             transfer_s=None, iterations: int = CAPACITY_ITERATIONS, saturation_per_s: float | None = None,
             ceiling: float = BRACKET[1]) -> Capacity:
    """Bisection (geometric) over arrival rates for the highest whose run of ``stream`` (its requests
    re-timed to each rate, the same seed) meets ``targets``.

    The bracket depends on the setup and the stream, never on the targets, and each run is
    deterministic; so if a looser target is met wherever a tighter one is, its capacity is at least
    as high (the two searches agree until the first rate where only the looser one is met, and from
    there the looser one searches above it). Where even the floor misses, one bracket below it is
    searched the same way (still independent of the targets). At most ``iterations + 3`` runs.

    ``ceiling``: the top of the bracket, a multiple of the saturation rate. The default, 4, leaves room
    for prefix-cache hits, which skip work the estimate counts; without a cache, 1: the GPU cannot
    finish more than its throughput bound, and a short run above it can still meet its targets (a
    decode-only GPU's batch grows for the whole of a 600-request run without anyone waiting for a
    slot), so such a run must not count.
    """
    check_int("iterations", iterations, 1, 40)
    check_float("ceiling", ceiling, 0.05, 64.0)
    sat = saturation_per_s or saturation_rate(gpu, model, stream, assumptions, mode)
    lo, hi = sat * min(BRACKET[0], ceiling / 2), sat * ceiling
    base = 1.0 / float(stream.arrival_s[-1] / stream.n) if stream.n else 1.0  # the stream's own rate
    tested = []

    def ok(rate):
        run = simulate(gpu, model, stream.at_rate(rate, base), policy, chunk_tokens=chunk_tokens,
                       prefix_caching=prefix_caching, assumptions=assumptions, mode=mode,
                       transfer_s=transfer_s)
        met = run.meets(targets)
        tested.append((rate, met))
        return met

    if ok(hi):
        return Capacity(hi, (lo, hi), tuple(tested), True)
    if not ok(lo):
        # Missed at the floor too: one more bracket below it (a slow role's queue builds even at a
        # sixteenth of its saturation estimate, while the colocated search, which starts from its
        # sweep, can go lower; a 0 here beside a colocated rate above 0 was the floor, not the GPU).
        lo, hi = lo * BRACKET[0], lo
        if not ok(lo):
            return Capacity(0.0, (lo, sat * ceiling), tuple(tested), False)
    bracket = (lo, hi)
    for _ in range(iterations):
        mid = math.sqrt(lo * hi)
        if ok(mid):
            lo = mid
        else:
            hi = mid
    return Capacity(lo, bracket, tuple(tested), False)


#: After ``sustained_capacity``'s fine steps all miss: the shares of the last rate tried, in turn.
COARSE_STEPS = (0.5, 0.2, 0.05)
#: Geometric bisections that narrow a capacity found at a coarse step.
COARSE_BISECTIONS = 3
#: ``sustained_capacity``'s fine step (a share of the rate, down; its inverse, up) and how many it takes.
CONFIRM_STEP, CONFIRM_TRIES = 0.93, 6


def sustained_capacity(gpu: GPU, model: Model, cap: Capacity, stream: Stream, policy: str, targets: Targets,
                       *, chunk_tokens: int = DEFAULT_CHUNK_TOKENS, prefix_caching: bool = True,
                       assumptions: Assumptions = DEFAULT_ASSUMPTIONS, step: float = CONFIRM_STEP,
                       tries: int = CONFIRM_TRIES, mode: str = "colocated", transfer_s=None,
                       ceiling_per_s: float = math.inf) -> Capacity:
    """``cap`` (found on short runs) confirmed on ``stream``, a longer run of the same lengths: a short
    run just above what the GPU sustains meets its targets before its backlog builds, so a capacity read
    from it can sit above a rate at which the longer run's queue grows; and a short run's p99, over
    fewer requests, can miss where the longer run meets, so it can sit below one the longer run holds
    (page 05's headline run met 41 req/s where the short runs had found 35).

    The rates the longer run is tried at lie on one grid, ``ceiling_per_s`` x ``step``^k (the top of
    the rates the search spanned, a role's throughput bound; without a ceiling, from ``cap``'s rate),
    whatever the targets: ``cap`` only picks where the search starts, at the grid's rate at or just
    below it. Where that rate meets the targets, the search climbs the grid while the longer run still
    meets them (at most ``tries`` steps, never past the ceiling); a climb that meets at the ceiling or
    at every step is flagged ``at_ceiling`` (a lower bound: a role's "at most"), and one that stops at a
    miss is narrowed by ``COARSE_BISECTIONS`` geometric bisections against it. Otherwise it steps down
    the grid until a rate meets (at most ``tries`` runs), then coarser steps (x ``COARSE_STEPS`` of the
    last rate tried: a longer run's rarer long prompts can miss a p99 target at any load); the first
    that meets is narrowed the same way against the rate above it that missed. Where none meets the
    capacity is 0: no rate tried holds the targets, so none is shown as one. A capacity of 0 stays 0,
    and one already at the ceiling is kept where the longer run meets it.

    Each rate's run is the same under any targets, and a looser pair meets wherever a tighter one does,
    so on one grid a looser pair's capacity is not below a tighter one's (tested): climbing from each
    pair's own short-run figure, and narrowing only after a climb, had given 83.8 req/s for the relaxed
    pair and 84.7 for the strict one (Llama-3.2-1B on an H100, chunked). ``mode`` and ``transfer_s``
    (for ``stream``'s requests): a prefill-only or decode-only GPU's run, as in ``simulate``."""
    check_int("tries", tries, 1, 40)
    check_float("step", step, 0.5, 0.99)
    if cap.rate_per_s <= 0:
        return cap
    base = stream.n / float(stream.arrival_s[-1])
    tested = list(cap.tested)

    def meets(rate: float) -> bool:
        run = simulate(gpu, model, stream.at_rate(rate, base), policy, chunk_tokens=chunk_tokens,
                       prefix_caching=prefix_caching, assumptions=assumptions, mode=mode,
                       transfer_s=transfer_s)
        tested.append((rate, run.meets(targets)))
        return tested[-1][1]

    def narrow(held: float, missed: float) -> float:
        """Geometric bisections between a rate that met and the rate above it that missed."""
        for _ in range(COARSE_BISECTIONS):
            mid = math.sqrt(held * missed)
            held, missed = (mid, missed) if meets(mid) else (held, mid)
        return held

    if cap.at_ceiling:  # the short runs met the top rate already: a lower bound, kept where it holds
        if meets(cap.rate_per_s):
            return Capacity(cap.rate_per_s, cap.bracket, tuple(tested), True)
        fine = [float(r) for r in cap.rate_per_s * step ** np.arange(1, tries)]
        missed = cap.rate_per_s
    else:
        # The rates tried sit on one grid, ceiling x step^k, whatever the targets: the short runs'
        # figure only picks where on it the search starts. With each rate's run the same under any
        # targets (a looser pair meets wherever a tighter one does), a looser pair's capacity is then
        # never below a tighter one's (two presets had read 83.8 and 84.7 req/s the wrong way round).
        anchor = ceiling_per_s if math.isfinite(ceiling_per_s) else cap.rate_per_s
        k = math.ceil(math.log(cap.rate_per_s / anchor) / math.log(step) - 1e-9)
        k = max(k, 0) if math.isfinite(ceiling_per_s) else k
        start = anchor * step ** k  # the grid's rate at or just below the short runs' figure
        if meets(start):
            held = start
            for i in range(tries + 1):  # the longer run holds it: how much above?
                if i == tries or (k == 0 and math.isfinite(ceiling_per_s)):  # every step met, or at
                    # the ceiling: a lower bound
                    return Capacity(held, cap.bracket, tuple(tested), True)
                k -= 1
                up = anchor * step ** k
                if not meets(up):
                    return Capacity(narrow(held, up), cap.bracket, tuple(tested), False)
                held = up
        fine = [float(anchor * step ** (k + i)) for i in range(1, tries)]
        missed = start
    for rate in fine:
        if meets(rate):  # the first confirmed, narrowed against the grid's rate above it that missed
            return Capacity(narrow(rate, missed), cap.bracket, tuple(tested), False)
        missed = rate
    for f in COARSE_STEPS:
        rate = fine[-1] * f if fine else missed * f
        if meets(rate):
            return Capacity(narrow(rate, missed), cap.bracket, tuple(tested), False)
        missed = rate
    return Capacity(0.0, cap.bracket, tuple(tested), False)


@dataclass(frozen=True)
class Sweep:
    """One policy's runs of the same requests at each arrival rate: latency against load, and (given
    targets) goodput and SLO attainment, via each run's ``metrics``."""

    policy: str
    rate_per_s: np.ndarray
    runs: tuple = field(repr=False)

    def _each(self, f) -> np.ndarray:
        return np.array([f(r) for r in self.runs], dtype=float)

    @cached_property
    def ttft_p50_s(self) -> np.ndarray:
        return self._each(lambda r: r.ttft_pct(50))

    @cached_property
    def ttft_p99_s(self) -> np.ndarray:
        return self._each(lambda r: r.ttft_pct(99))

    @cached_property
    def tbt_p50_s(self) -> np.ndarray:
        return self._each(lambda r: r.tbt_pct(50))

    @cached_property
    def tbt_p99_s(self) -> np.ndarray:
        return self._each(lambda r: r.tbt_pct(99))

    @cached_property
    def utilization_gpu(self) -> np.ndarray:
        return self._each(lambda r: r.utilization_gpu)

    def _metrics(self, targets: Targets) -> list:
        memo = self.__dict__.setdefault("_memo", {})  # a few target pairs a session: keep them
        if targets not in memo:
            if len(memo) > 16:
                memo.clear()
            memo[targets] = [r.metrics(targets) for r in self.runs]
        return memo[targets]

    def goodput_rps(self, targets: Targets) -> np.ndarray:
        """DistServe goodput with the targets as the SLO (sim.metrics)."""
        return np.array([m.goodput_rps for m in self._metrics(targets)])

    def attainment(self, targets: Targets) -> np.ndarray:
        """Share of requests meeting both targets (sim.metrics' SLO attainment)."""
        return np.array([m.slo_attainment for m in self._metrics(targets)])

    def met(self, targets: Targets) -> np.ndarray:
        """Both percentile targets met, at each rate."""
        return np.array([r.meets(targets) for r in self.runs], dtype=bool)

    @cached_property
    def knee_bracket(self) -> tuple[float, float]:
        """(last rate below the knee, the knee): the first rate where p99 TTFT is more than twice its
        value at the lightest load (queueing, not the work itself, sets the latency from there). The
        sweep's rates are a grid, so the knee lies between the two; (NaN, NaN) if it never happens."""
        above = np.nonzero(self.ttft_p99_s > 2 * self.ttft_p99_s[0])[0]  # never the first rate
        if not above.size:
            return (math.nan, math.nan)
        i = int(above[0])
        return (float(self.rate_per_s[i - 1]), float(self.rate_per_s[i]))

    @property
    def knee_per_s(self) -> float:
        """The knee's rate (``knee_bracket``'s upper end; NaN if there is none)."""
        return self.knee_bracket[1]


def sweep(gpu: GPU, model: Model, stream: Stream, policy: str, rates, *,
          chunk_tokens: int = DEFAULT_CHUNK_TOKENS, prefix_caching: bool = True,
          assumptions: Assumptions = DEFAULT_ASSUMPTIONS) -> Sweep:
    """``stream`` re-timed to each of ``rates`` (requests/s) and run under ``policy``."""
    rates = np.asarray(rates, dtype=float)
    base = stream.n / float(stream.arrival_s[-1])
    runs = tuple(simulate(gpu, model, stream.at_rate(float(rate), base), policy, chunk_tokens=chunk_tokens,
                          prefix_caching=prefix_caching, assumptions=assumptions) for rate in rates)
    return Sweep(policy, rates, runs)


# ---------------------------------------------------------------------------------------------------
# Prefix caching
# ---------------------------------------------------------------------------------------------------


def ideal_hit_rate(stream: Stream) -> float:
    """Hit rate with a cache that never evicts: every prefix misses once, at its first request."""
    pid = stream.prefix_id[stream.prefix_id >= 0]
    return 1.0 - np.unique(pid).size / pid.size if pid.size else math.nan


def cache_room_prefixes(gpu: GPU, model: Model, prefix_tokens: int) -> float:
    """Prefixes of ``prefix_tokens`` tokens the whole KV cache could hold if nothing else ran (an upper
    bound: running requests' KV shares the same memory), windowed layers counted at their window."""
    if not prefix_tokens:
        return math.inf
    return kv_budget_tokens(gpu, model) / (prefix_tokens + int(window_hold_tokens(model, prefix_tokens)))


# ---------------------------------------------------------------------------------------------------
# Disaggregated prefill and decode (DistServe)
# ---------------------------------------------------------------------------------------------------

#: Per-direction peer bandwidth of each preset's scale-up link, bytes/s (MEASURED.md section 3.1), the
#: link a KV cache moves over from a prefill GPU to a decode GPU in the same node.
LINK_SPEC_BYTES_PER_S = {
    "A100 80GB SXM": 300 * GB, "H100 SXM": 450 * GB, "H200 SXM": 450 * GB, "B200": 900 * GB,
    "MI300X": 64 * GB,  # one 64 GB/s xGMI link between a pair
    "L40S": 31.5 * GB, "L4": 31.5 * GB,  # PCIe Gen4 x16, per direction
}
#: What a copy achieves of the spec: nvbandwidth's NVLink pair copy on 8 x H200, 396.40 of 450 GB/s
#: (MEASURED.md 3.1); PCIe host copies reach about the same share (55.4 of 63).
LINK_EFFICIENCY = 396.40 / 450
#: A GPU not in the table (Custom): PCIe Gen4 x16.
FALLBACK_LINK_BYTES_PER_S = 31.5 * GB


def link_bytes_per_s(gpu: GPU) -> float:
    """Achieved bytes/s of a KV-cache copy from one GPU to a peer."""
    return LINK_SPEC_BYTES_PER_S.get(gpu.name, FALLBACK_LINK_BYTES_PER_S) * LINK_EFFICIENCY


def kv_transfer_s(gpu: GPU, model: Model, prompt_tokens) -> np.ndarray:
    """Seconds to move a prompt's KV cache to the decode GPU over the peer link (what the prompt
    holds: windowed layers only their window)."""
    return np.asarray(model.kv_bytes_per_sequence(prompt_tokens), dtype=float) / link_bytes_per_s(gpu)


@dataclass(frozen=True)
class Disaggregation:
    """Per-GPU capacities (requests/s) of each role and the P:D splits of ``n_gpus`` instances (each
    ``gpus_per_instance`` GPUs: tensor parallelism)."""

    colocated_per_gpu: float  # per GPU of an instance doing both (the colocated policy), meeting both targets
    prefill_per_gpu: float  # a prefill-only GPU meeting the TTFT target
    decode_per_gpu: float  # a decode-only GPU meeting the TBT target (KV transfer in the first gap)
    n_gpus: int
    splits: tuple[tuple[int, int, float], ...]  # (P, D, goodput per GPU) for P + D = n_gpus
    transfer_s_mean: float
    link_bytes_per_s: float
    gpus_per_instance: int = 1  # ``n_gpus`` and the splits count instances of this many GPUs each
    decode_at_bound: bool = False  # the decode-only GPU met its target at its throughput bound
    prefill_at_bound: bool = False  # the prefill-only GPU met its target at its throughput bound

    @property
    def best(self) -> tuple[int, int, float]:
        return max(self.splits, key=lambda s: s[2])

    def per_gpu(self, prefill_gpus: int, decode_gpus: int) -> float:
        """DistServe's per-GPU goodput of P prefill + D decode GPUs (sim.metrics.per_gpu_goodput)."""
        return per_gpu_goodput(prefill_gpus, self.prefill_per_gpu, decode_gpus, self.decode_per_gpu)

    @property
    def gain(self) -> float:
        """The best split's per-GPU goodput over colocated's."""
        c = self.colocated_per_gpu
        return self.best[2] / c if c > 0 else math.inf


class Roles(NamedTuple):
    """A prefill-only and a decode-only GPU's capacities (requests/s), the mean KV transfer (s), and
    whether each role's is its throughput bound (``throughput_bound``: met at the top of its search,
    so the true capacity is at most this)."""

    prefill_per_s: float
    decode_per_s: float
    transfer_s: float
    decode_at_bound: bool = False
    prefill_at_bound: bool = False


def role_capacities(gpu: GPU, model: Model, stream: Stream, targets: Targets, *,
                    assumptions: Assumptions = DEFAULT_ASSUMPTIONS, iterations: int = CAPACITY_ITERATIONS,
                    confirm: Stream | None = None) -> Roles:
    """(prefill-only GPU, decode-only GPU) capacities in requests/s, the mean KV transfer, s, and
    whether each role's capacity is its throughput bound (``Roles``).

    Each role is searched for its own target, as DistServe places them: the prefill GPU for TTFT
    (TBT target relaxed), the decode GPU for TBT. The decode GPU's requests arrive with their KV, the
    first token made ``kv_transfer_s`` earlier on the prefill GPU; the time from that first token to a
    decode slot (the transfer and any queue) is held to the TTFT target too, so that a decode GPU
    whose queue grows without bound does not count as meeting its targets. Neither role has a prefix
    cache, so each search stops at the role's throughput bound (``throughput_bound``, ``capacity``'s
    ``ceiling`` of 1): a decode-only GPU with room for every request never makes one wait for a slot,
    and a 600-request run far above what it can finish met its targets (117 req/s against a bound of
    46 on an H100 serving Llama-3.1-8B chat).

    ``confirm``: a longer stream of the same lengths on which each role's capacity is then confirmed
    (``sustained_capacity``), as page 05 confirms the colocated capacity it is compared with: a
    split's figure from short runs against a colocated one from long runs favoured the split.
    """
    only_ttft = Targets(targets.ttft_s, 60.0, targets.percentile, targets.tbt)
    only_tbt = targets
    pre = capacity(gpu, model, stream, "prefill-first", only_ttft, prefix_caching=False,
                   assumptions=assumptions, mode="prefill", iterations=iterations, ceiling=1.0,
                   saturation_per_s=throughput_bound(gpu, model, stream, "prefill", assumptions))
    xfer = kv_transfer_s(gpu, model, stream.prompt_tokens)
    dec = capacity(gpu, model, stream, "prefill-first", only_tbt, prefix_caching=False,
                   assumptions=assumptions, mode="decode", transfer_s=xfer, iterations=iterations,
                   ceiling=1.0, saturation_per_s=throughput_bound(gpu, model, stream, "decode", assumptions))
    if confirm is not None:
        xfer = kv_transfer_s(gpu, model, confirm.prompt_tokens)
        pre = sustained_capacity(gpu, model, pre, confirm, "prefill-first", only_ttft, prefix_caching=False,
                                 assumptions=assumptions, mode="prefill",
                                 ceiling_per_s=throughput_bound(gpu, model, stream, "prefill", assumptions))
        dec = sustained_capacity(gpu, model, dec, confirm, "prefill-first", only_tbt, prefix_caching=False,
                                 assumptions=assumptions, mode="decode", transfer_s=xfer,
                                 ceiling_per_s=throughput_bound(gpu, model, stream, "decode", assumptions))
    return Roles(pre.rate_per_s, dec.rate_per_s, float(xfer.mean()), dec.at_ceiling, pre.at_ceiling)


def disaggregation(gpu: GPU, model: Model, stream: Stream, targets: Targets, *, n_gpus: int = 4,
                   colocated_policy: str = "prefill-first", chunk_tokens: int = DEFAULT_CHUNK_TOKENS,
                   assumptions: Assumptions = DEFAULT_ASSUMPTIONS, iterations: int = CAPACITY_ITERATIONS,
                   colocated_per_instance: float | None = None,
                   roles: tuple[float, float, float] | None = None
                   ) -> Disaggregation:
    """Capacities of the three roles from the model's own runs (``role_capacities``; colocated: one
    instance doing both under ``colocated_policy``, meeting both targets), and every split of ``n_gpus``
    instances. An instance is ``model.tp`` GPUs (tensor parallelism): the runs give each role's rate
    per instance, and every rate returned is per GPU, that rate / ``model.tp`` (DistServe's metric;
    with 4 GPUs an instance, per instance read as per GPU overstated it 4x). ``colocated_per_instance`` and
    ``roles`` pass in searches already run, per instance as the runs give them."""
    check_int("n_gpus", n_gpus, 2, 64)
    if colocated_per_instance is None:
        colocated_per_instance = capacity(gpu, model, stream, colocated_policy, targets,
                                          chunk_tokens=chunk_tokens, prefix_caching=False,
                                          assumptions=assumptions, iterations=iterations).rate_per_s
    roles = Roles(*(roles or role_capacities(gpu, model, stream, targets, assumptions=assumptions,
                                             iterations=iterations)))
    pre, dec, xfer = roles.prefill_per_s, roles.decode_per_s, roles.transfer_s
    tp = model.tp
    colocated_per_gpu, pre, dec = colocated_per_instance / tp, pre / tp, dec / tp
    splits = tuple((p, n_gpus - p, per_gpu_goodput(p, pre, n_gpus - p, dec)) for p in range(1, n_gpus))
    return Disaggregation(colocated_per_gpu, pre, dec, n_gpus, splits, xfer, link_bytes_per_s(gpu), tp,
                          roles.decode_at_bound, roles.prefill_at_bound)


#: DistServe's Fig. 1 example (REFERENCE.md 3.5, V20): a 13B model (OPT-13B) on one A100 80GB, 512-token
#: prompts, 64 output tokens, P90 TTFT 0.4 s and P90 TPOT 0.04 s.
DISTSERVE_MODEL = Model("OPT-13B", 40, 5120, 40, 40, 128, 20480, 50272, True, gated_mlp=False,
                        source="facebook/opt-13b config.json: 40 layers, hidden 5120, 40 heads, FFN 20480, "
                               "vocabulary 50272, tied embeddings, ReLU MLP")
DISTSERVE_GPU = "A100 80GB SXM"
DISTSERVE_TARGETS = Targets(0.4, 0.04, 90.0, "request")
DISTSERVE_PROMPT, DISTSERVE_OUTPUT = 512, 64
#: Requests a DistServe search runs (as page 05's searches).
DISTSERVE_REQUESTS = 600
#: DistServe's engine in the example, its kernels slower than the roofline's defaults: the two
#: efficiencies ``scripts/calibrate_distserve.py`` fits so that the model's prefill-only and
#: decode-only GPUs hold the paper's 5.6 and 10 req/s (host time at the default). The colocated
#: rate is then the model's own prediction.
DISTSERVE_ENGINE = Assumptions(compute_eff=0.449, memory_eff=0.607)
#: The same two rates matched with host time instead of slow decode kernels (the other reading).
DISTSERVE_ENGINE_HOST = Assumptions(compute_eff=0.478, host_overhead_s=11.8e-3)


def distserve_stream() -> Stream:
    """DistServe's example requests: fixed 512-token prompts and 64 output tokens, seed 0."""
    return make_stream(DISTSERVE_REQUESTS, 1.0, lengths="fixed", prompt_tokens=DISTSERVE_PROMPT,
                       output_tokens=DISTSERVE_OUTPUT, seed=0)


def distserve_example(assumptions: Assumptions = DEFAULT_ASSUMPTIONS, iterations: int = 8) -> Disaggregation:
    """REFERENCE V20: DistServe's example (OPT-13B, A100 80GB, 512 in / 64 out, P90 TTFT 0.4 s and
    P90 TPOT 40 ms, 3 GPUs) through the model's own runs, at ``assumptions``."""
    from sim.hardware import GPUS

    return disaggregation(GPUS[DISTSERVE_GPU], DISTSERVE_MODEL, distserve_stream(), DISTSERVE_TARGETS,
                          n_gpus=3, iterations=iterations, assumptions=assumptions)


#: Bisection steps inside a sweep's bracket (neighbouring sweep rates differ by 1.2-2x: ~3 %).
SWEEP_CAPACITY_ITERATIONS = 4


def capacity_in_sweep(gpu: GPU, model: Model, sw: Sweep, targets: Targets, *,
                      chunk_tokens: int = DEFAULT_CHUNK_TOKENS, prefix_caching: bool = True,
                      assumptions: Assumptions = DEFAULT_ASSUMPTIONS,
                      iterations: int = SWEEP_CAPACITY_ITERATIONS) -> Capacity:
    """``capacity`` with a sweep's runs as the first tests: the bracket is the last sweep rate met
    before the first one missed and that one, then a geometric bisection between them (the sweep's
    stream and settings must be those passed here). Monotone in the targets too: a looser target's
    bracket is the same one (then the same bisection, as in ``capacity``) or lies wholly above."""
    check_int("iterations", iterations, 1, 40)
    return capacity_from_tests(gpu, model, sw.runs[0].stream, sw.policy, sw.rate_per_s, sw.met(targets),
                               targets, chunk_tokens=chunk_tokens, prefix_caching=prefix_caching,
                               assumptions=assumptions, iterations=iterations)


def capacity_from_tests(gpu: GPU, model: Model, stream: Stream, policy: str, rates, met, targets: Targets, *,
                        chunk_tokens: int = DEFAULT_CHUNK_TOKENS, prefix_caching: bool = True,
                        assumptions: Assumptions = DEFAULT_ASSUMPTIONS,
                        iterations: int = SWEEP_CAPACITY_ITERATIONS) -> Capacity:
    """``capacity_in_sweep`` from what the sweep found, without its runs: ``stream`` (its requests, at
    any rate), ``policy``, the rates tried (requests/s, rising) and whether each ``met`` the targets.
    What a worker process is sent (``ui.workers``): a few arrays, not the sweep's runs."""
    check_int("iterations", iterations, 1, 40)
    rates, met = np.asarray(rates, dtype=float), np.asarray(met, dtype=bool)
    tested = [(float(r), bool(m)) for r, m in zip(rates, met, strict=True)]
    miss = np.nonzero(~met)[0]
    if not miss.size:
        return Capacity(float(rates[-1]), (float(rates[0]), float(rates[-1])), tuple(tested), True)
    i = int(miss[0])
    base = stream.n / float(stream.arrival_s[-1])

    def ok(rate):
        run = simulate(gpu, model, stream.at_rate(rate, base), policy, chunk_tokens=chunk_tokens,
                       prefix_caching=prefix_caching, assumptions=assumptions)
        m = run.meets(targets)
        tested.append((rate, m))
        return m

    hi = float(rates[i])
    if i == 0:
        lo = hi * BRACKET[0]
        if not ok(lo):
            return Capacity(0.0, (lo, hi), tuple(tested), False)
    else:
        lo = float(rates[i - 1])
    bracket = (lo, hi)
    for _ in range(iterations):
        mid = math.sqrt(lo * hi)
        if ok(mid):
            lo = mid
        else:
            hi = mid
    return Capacity(lo, bracket, tuple(tested), False)
