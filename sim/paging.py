"""Section 02: a KV-cache pool of fixed-size pages under two allocation policies, step by step.

The pool holds ``n_pages`` pages of ``page_tokens`` token slots. A backlog of requests (all queued at
step 0, as in the Anyscale throughput test, REFERENCE.md 3.3) is served first come, first served.
Every step each resident request gains one token; a request arrives with its prompt already in the
cache (its prefill happens in the step it is admitted, which also yields its first output token).

- **reserved** (Orca-style, "reserve for the max"): on admission a request takes
  ceil((prompt + max_output) / page_tokens) *contiguous* pages, first fit, and holds them until it
  finishes. The unused tail of the reservation is wasted, and free runs too short for the next
  reservation strand memory (external fragmentation).
- **paged** (vLLM's PagedAttention): a request takes pages for the tokens it holds, one more page
  only when its last one fills, anywhere in the pool (a page table maps it to its pages). When a
  page is needed and none is free, the most recently admitted request is preempted (vLLM's
  recompute policy): it loses its pages and goes back to the head of the queue, keeping the tokens
  it generated (they are recomputed as part of its prompt when it is readmitted).

Every page of the pool is in exactly one state per step; the ledger (in token slots) sums them:
    token states        tokens actually cached
    reserved still empty pages a sequence holds beyond its last filled one (reserved policy)
    last-page slack     the empty slots of each sequence's partly filled last page
    free runs too short free pages in runs shorter than the next waiting request's reservation
    free                the rest
and adds up to n_pages * page_tokens every step.

``card_fit`` carries the two policies to a real card: the KV budget of a GPU after the weights, how
many requests of a ShareGPT-like workload each policy keeps resident in it, and what decode
throughput those batch sizes give through the shared cost model.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass

import numpy as np

from sim.cost import DEFAULT_ASSUMPTIONS, Assumptions, StepCost, compute_bound_batch, decode_step_cost
from sim.hardware import GPU
from sim.memory import DEFAULT_UTILIZATION, UTILIZATION_RANGE, engine_max_seqs, kv_budget_bytes
from sim.models import Model
from sim.validate import check_choice, check_int

POLICIES = ("reserved", "paged")

# Argument ranges (the page's widgets use the same bounds).
N_PAGES_RANGE = (8, 16384)
PAGE_TOKENS_RANGE = (1, 256)
MAX_OUTPUT_RANGE = (1, 32768)
N_STEPS_RANGE = (1, 20000)
N_REQUESTS_RANGE = (1, 100_000)
MEMORY_UTILIZATION_RANGE = UTILIZATION_RANGE  # sim.memory's: one range for vLLM's gpu_memory_utilization

# Defaults of the 64-page toy pool on the page.
DEFAULT_N_PAGES = 64
DEFAULT_PAGE_TOKENS = 16  # vLLM's default block size (REFERENCE.md 3.2, section 7.2)
DEFAULT_MAX_OUTPUT = 256
DEFAULT_N_STEPS = 240
DEFAULT_N_REQUESTS = 400  # more than either policy can finish in DEFAULT_N_STEPS: the queue never empties
#: The toy pool's memory, token slots: 64 pages of 16 tokens. Another page size cuts the same memory
#: into more or fewer pages (``pool_pages``), as an engine's block size does with a card's KV cache.
POOL_TOKENS = DEFAULT_N_PAGES * DEFAULT_PAGE_TOKENS


def pool_pages(page_tokens: int) -> int:
    """Pages of ``page_tokens`` tokens in the toy pool's fixed memory (POOL_TOKENS): 64 at 16-token
    pages, 128 at 8, 16 at 64."""
    page_tokens = check_int("page_tokens", page_tokens, *PAGE_TOKENS_RANGE)
    return max(N_PAGES_RANGE[0], POOL_TOKENS // page_tokens)
DEFAULT_SEED = 0

#: Share of GPU memory the engine may use, vLLM's ``gpu_memory_utilization`` default: weights, the
#: start-up reserve (activations, sampler warm-up, CUDA context) and the KV cache all come out of it;
#: the rest is left to the driver and other processes (``sim.memory``, whose constant this is).
DEFAULT_MEMORY_UTILIZATION = DEFAULT_UTILIZATION

# Page states (codes of ``PagingRun.state``).
FREE, FULL, PARTIAL, RESERVED_EMPTY, STRANDED = 0, 1, 2, 3, 4
#: Ledger columns, in order; the page states that feed them are STRANDED and FREE for the last two.
LEDGER = ("token states", "reserved still empty", "last-page slack", "free runs too short", "free")


@dataclass(frozen=True)
class Workload:
    """A named distribution of request lengths, in tokens.

    Prompts are lognormal with mean ``prompt_mean`` and shape ``prompt_sigma``, at least 1 and at most
    ``prompt_max``. Outputs are exponential with mean ``output_mean`` (before the cap), rounded up to
    whole tokens and capped at the run's ``max_output``: a request stops at its own length or at the
    cap, whichever comes first.
    """

    name: str
    prompt_mean: float
    prompt_sigma: float
    prompt_max: int
    output_mean: float
    source: str


WORKLOADS: dict[str, Workload] = {
    w.name: w
    for w in (
        Workload("toy chat", prompt_mean=40, prompt_sigma=0.6, prompt_max=128, output_mean=48,
                 source="scaled to a 1,024-token toy pool: short prompts, exponential (long-tailed) "
                        "outputs like the Anyscale benchmark's (REFERENCE.md 3.3)"),
        Workload("sharegpt", prompt_mean=161, prompt_sigma=1.0, prompt_max=4096, output_mean=338,
                 source="ShareGPT-like: means of 161 prompt and 338 output tokens, as the vLLM paper's "
                        "ShareGPT histograms show them (Kwon et al. 2023, Fig. 11); unverified: read "
                        "from memory of the figure, not from REFERENCE.md, so an illustrative workload"),
    )
}
DEFAULT_WORKLOAD = "toy chat"
CARD_WORKLOAD = "sharegpt"
CARD_N_REQUESTS = 20_000  # requests averaged over for the real-card estimate




# --- Paging arithmetic (REFERENCE.md V16) -------------------------------------------------------------

def pages_needed(tokens, page_tokens: int) -> np.ndarray:
    """Pages a sequence of ``tokens`` tokens occupies: ceil(tokens / page_tokens)."""
    t = np.asarray(tokens, dtype=np.int64)
    return -(-t // page_tokens)


def last_page_slack(tokens, page_tokens: int) -> np.ndarray:
    """Empty slots in a sequence's last page: pages * page_tokens - tokens (at most page_tokens - 1)."""
    t = np.asarray(tokens, dtype=np.int64)
    return pages_needed(t, page_tokens) * page_tokens - t


# --- The request stream --------------------------------------------------------------------------------

def request_stream(
    workload: str, n_requests: int, max_output: int, seed: int,
) -> tuple[np.ndarray, np.ndarray]:
    """(prompt tokens, output tokens) of ``n_requests`` requests, deterministic for ``seed``.

    The draws do not depend on ``max_output``: raising the cap lengthens only the requests it cut.
    """
    check_choice("workload", workload, WORKLOADS)
    n_requests = check_int("n_requests", n_requests, *N_REQUESTS_RANGE)
    max_output = check_int("max_output", max_output, *MAX_OUTPUT_RANGE)
    w = WORKLOADS[workload]
    rng = np.random.default_rng(seed)
    mu = math.log(w.prompt_mean) - w.prompt_sigma**2 / 2  # lognormal with mean prompt_mean
    prompt = np.clip(np.ceil(rng.lognormal(mu, w.prompt_sigma, n_requests)), 1, w.prompt_max)
    output = np.clip(np.ceil(rng.exponential(w.output_mean, n_requests)), 1, max_output)
    return prompt.astype(np.int64), output.astype(np.int64)


# --- The pool simulation -------------------------------------------------------------------------------

@dataclass(frozen=True)
class PagingRun:
    """One policy on one request stream: the pool, the queue and the ledger at every step.

    Per-step arrays have ``n_steps`` rows; per-page arrays ``n_pages`` columns; per-request arrays one
    entry per request of the stream. A step's snapshot is taken after its tokens are written and
    before the requests that finished in it release their pages. Run averages leave out the first
    quarter of the steps: at step 0 the paged policy admits every prompt that fits, then sheds
    requests (preempting them) as they grow.
    """

    policy: str
    workload: str
    n_pages: int
    page_tokens: int
    max_output: int
    prompt_tokens: np.ndarray  # (requests,) tokens
    output_tokens: np.ndarray  # (requests,) tokens the request generates (capped at max_output)
    rejected: np.ndarray  # (requests,) bool: needs more pages than the pool has, never admitted
    admit_step: np.ndarray  # (requests,) step of first admission, -1 if never
    finish_step: np.ndarray  # (requests,) step of the last token, -1 if not within the run
    owner: np.ndarray  # (steps, pages) request holding the page, -1 free
    block: np.ndarray  # (steps, pages) the page's position in its owner's sequence (0 = first)
    fill: np.ndarray  # (steps, pages) tokens cached in the page
    state: np.ndarray  # (steps, pages) FREE, FULL, PARTIAL, RESERVED_EMPTY or STRANDED
    resident: np.ndarray  # (steps,) requests holding pages
    waiting: np.ndarray  # (steps,) requests queued (rejected ones excluded)
    preempted: np.ndarray  # (steps,) preemptions in the step
    finished: np.ndarray  # (steps,) requests that finished in the step
    head_need_pages: np.ndarray  # (steps,) pages the head of the queue needs to be admitted (0: empty)
    ledger: np.ndarray  # (steps, len(LEDGER)) token slots in each ledger category
    warmup_steps: int  # steps left out of the run averages (the start-up burst settling)

    @property
    def n_steps(self) -> int:
        return int(self.resident.shape[0])

    @property
    def pool_tokens(self) -> int:
        """Token slots in the pool."""
        return self.n_pages * self.page_tokens

    @property
    def ledger_share(self) -> np.ndarray:
        """(steps, categories) share of the pool in each ledger category."""
        return self.ledger / self.pool_tokens

    @property
    def token_share(self) -> np.ndarray:
        """(steps,) share of the pool's slots holding token states."""
        return self.ledger[:, 0] / self.pool_tokens

    @property
    def mean_resident(self) -> float:
        """Requests resident, averaged over the steps after the warm-up."""
        return float(self.resident[self.warmup_steps:].mean())

    @property
    def mean_ledger_share(self) -> np.ndarray:
        """(categories,) share of the pool in each ledger category, averaged after the warm-up."""
        return self.ledger_share[self.warmup_steps:].mean(axis=0)

    @property
    def mean_token_share(self) -> float:
        return float(self.mean_ledger_share[0])

    @property
    def total_preemptions(self) -> int:
        return int(self.preempted.sum())

    @property
    def total_finished(self) -> int:
        return int(self.finished.sum())

    @property
    def generated_tokens(self) -> int:
        """Output tokens produced over the run (one per resident request per step)."""
        return int(self.resident.sum())


def _free_runs(free: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Start index and length of each maximal run of True in a 1-D bool array."""
    edges = np.diff(np.concatenate(([0], free.view(np.int8), [0])))
    starts = np.flatnonzero(edges == 1)
    return starts, np.flatnonzero(edges == -1) - starts


def simulate(
    policy: str,
    *,
    n_pages: int = DEFAULT_N_PAGES,
    page_tokens: int = DEFAULT_PAGE_TOKENS,
    max_output: int = DEFAULT_MAX_OUTPUT,
    workload: str = DEFAULT_WORKLOAD,
    n_steps: int = DEFAULT_N_STEPS,
    n_requests: int = DEFAULT_N_REQUESTS,
    seed: int = DEFAULT_SEED,
) -> PagingRun:
    """Run ``policy`` ('reserved' or 'paged') on the seeded request stream for ``n_steps`` steps."""
    check_choice("policy", policy, POLICIES)
    n_pages = check_int("n_pages", n_pages, *N_PAGES_RANGE)
    page_tokens = check_int("page_tokens", page_tokens, *PAGE_TOKENS_RANGE)
    max_output = check_int("max_output", max_output, *MAX_OUTPUT_RANGE)
    n_steps = check_int("n_steps", n_steps, *N_STEPS_RANGE)
    prompt_arr, out_arr = request_stream(workload, n_requests, max_output, seed)
    reserved = policy == "reserved"
    P = page_tokens

    # Pages a request needs to be admitted at all: its whole reservation, or (paged) its final size.
    whole = pages_needed(prompt_arr + (max_output if reserved else out_arr), P)
    rejected = whole > n_pages
    # Python ints for the per-request scalars the loop touches (much faster than numpy scalars).
    prompt, out, reserve = prompt_arr.tolist(), out_arr.tolist(), whole.tolist()
    gen = [0] * n_requests  # tokens generated so far (kept across a preemption)
    tokens = prompt_arr.copy()  # prompt + gen, as an array for the per-page snapshot
    held = [0] * n_requests  # pages held
    table: dict[int, list[int]] = {}  # page table: request -> its pages, in sequence order
    admit = np.full(n_requests, -1, dtype=np.int64)
    finish = np.full(n_requests, -1, dtype=np.int64)

    owner = np.full(n_pages, -1, dtype=np.int64)
    block = np.zeros(n_pages, dtype=np.int64)
    free_count = n_pages
    queue = deque(i for i in range(n_requests) if not rejected[i])
    resident: list[int] = []  # in admission order: the last one is preempted first

    owner_h = np.empty((n_steps, n_pages), dtype=np.int64)
    block_h = np.empty((n_steps, n_pages), dtype=np.int64)
    tokens_h = np.empty((n_steps, n_pages), dtype=np.int64)
    resident_h = np.empty(n_steps, dtype=np.int64)
    waiting_h = np.empty(n_steps, dtype=np.int64)
    preempt_h = np.zeros(n_steps, dtype=np.int64)
    finished_h = np.zeros(n_steps, dtype=np.int64)
    head_need_h = np.zeros(n_steps, dtype=np.int64)

    def give(r: int, pages) -> None:
        nonlocal free_count
        pages = list(pages)
        start = held[r]
        owner[pages] = r
        block[pages] = np.arange(start, start + len(pages))
        table.setdefault(r, []).extend(pages)
        held[r] += len(pages)
        free_count -= len(pages)

    def release(r: int) -> None:
        nonlocal free_count
        owner[table.pop(r)] = -1
        free_count += held[r]
        held[r] = 0

    for s in range(n_steps):
        # 1. Admit from the head of the queue, first come first served, until the head does not fit.
        while queue:
            r = queue[0]
            need = reserve[r] if reserved else -(-(prompt[r] + gen[r] + 1) // P)
            if need > free_count:
                break
            if reserved:  # first fit: the lowest-addressed free run long enough
                starts, lengths = _free_runs(owner < 0)
                fits = np.flatnonzero(lengths >= need)
                if fits.size == 0:
                    break
                pages = range(int(starts[fits[0]]), int(starts[fits[0]]) + need)
            else:  # any free pages: the page table hides where they are
                pages = np.flatnonzero(owner < 0)[:need].tolist()
            queue.popleft()
            give(r, pages)
            resident.append(r)
            if admit[r] < 0:
                admit[r] = s

        # 2. Paged: a sequence whose last page is full takes one more, preempting if none is free.
        if not reserved:
            for r in [r for r in resident if prompt[r] + gen[r] + 1 > held[r] * P]:
                if held[r] == 0:  # preempted earlier in this loop
                    continue
                while free_count == 0:
                    victim = resident.pop()
                    release(victim)
                    queue.appendleft(victim)
                    preempt_h[s] += 1
                    if victim == r:
                        break
                if held[r]:
                    give(r, [int(np.argmax(owner < 0))])

        # 3. Every resident sequence writes one token; snapshot the pool.
        for r in resident:
            gen[r] += 1
        tokens[resident] += 1
        owner_h[s] = owner
        block_h[s] = block
        tokens_h[s] = tokens[owner]  # garbage where owner == -1, masked below
        resident_h[s] = len(resident)
        waiting_h[s] = len(queue)
        if queue:
            head = queue[0]
            head_need_h[s] = reserve[head] if reserved else -(-(prompt[head] + gen[head] + 1) // P)

        # 4. Requests that wrote their last token leave and free their pages.
        done = [r for r in resident if gen[r] >= out[r]]
        for r in done:
            release(r)
            finish[r] = s
        if done:
            resident = [r for r in resident if held[r]]
            finished_h[s] = len(done)

    owned = owner_h >= 0
    fill = np.where(owned, np.clip(tokens_h - block_h * P, 0, P), 0)
    state = np.select(
        [owned & (fill == P), owned & (fill > 0), owned],
        [FULL, PARTIAL, RESERVED_EMPTY],
        default=FREE,
    )
    if reserved:
        # The admission loop stops only when the queue is empty or first fit failed for its head. When
        # the free pages would hold the head's reservation in total, they are free but scattered in
        # runs too short to use: stranded (external fragmentation). When they would not, the pool is
        # simply full, and they count as free.
        free_total = (state == FREE).sum(axis=1)
        fragmented = (waiting_h > 0) & (free_total >= head_need_h)
        state = np.where((state == FREE) & fragmented[:, None], STRANDED, state)
    state = state.astype(np.int8)
    counts = np.stack([(state == k).sum(axis=1) for k in (RESERVED_EMPTY, STRANDED, FREE)], axis=1)
    ledger = np.column_stack([
        fill.sum(axis=1),
        counts[:, 0] * P,
        np.where(state == PARTIAL, P - fill, 0).sum(axis=1),
        counts[:, 1] * P,
        counts[:, 2] * P,
    ])
    return PagingRun(
        policy=policy, workload=workload, n_pages=n_pages, page_tokens=P, max_output=max_output,
        prompt_tokens=prompt_arr, output_tokens=out_arr, rejected=rejected, admit_step=admit,
        finish_step=finish, owner=np.where(owned, owner_h, -1), block=np.where(owned, block_h, 0),
        fill=fill, state=state, resident=resident_h, waiting=waiting_h, preempted=preempt_h,
        finished=finished_h, head_need_pages=head_need_h, ledger=ledger, warmup_steps=n_steps // 4,
    )


@dataclass(frozen=True)
class Comparison:
    """Both policies on the same request stream."""

    reserved: PagingRun
    paged: PagingRun

    def run(self, policy: str) -> PagingRun:
        return self.reserved if check_choice("policy", policy, POLICIES) == "reserved" else self.paged


def compare(**kwargs) -> Comparison:
    """``simulate`` both policies with the same arguments (so the same request stream)."""
    return Comparison(simulate("reserved", **kwargs), simulate("paged", **kwargs))


# --- On a real card ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class CardFit:
    """The two policies on a real GPU's KV budget, in steady state under a full queue.

    Requests resident = KV budget / the token slots a resident request holds on average over its
    life (time-weighted, i.e. what a snapshot of the batch sees):
        reserved: ceil((prompt + max_output) / page) * page, for its whole life
        paged:    ceil((prompt + t) / page) * page at its t-th output token
    Throughput is the batch the engine runs / decode step time at the mean context a resident request
    holds; the engine runs at most its ``max_num_seqs`` (``sim.memory.engine_max_seqs``, as page 05's
    scheduler), so where more fit than that, the rest wait in memory and add nothing.
    """

    gpu_name: str
    model_name: str
    memory_utilization: float
    memory_bytes: float  # GPU memory the engine may use, bytes
    weight_bytes: float
    kv_budget_bytes: float  # memory_bytes - weights - start-up reserve (may be <= 0: does not fit)
    kv_bytes_per_token: float
    page_tokens: int
    max_output: int
    slots_per_request: dict[str, float]  # policy -> token slots held by a resident request (time mean)
    context_tokens: float  # tokens cached per resident request (time mean), the decode context
    batch: dict[str, int]  # policy -> requests resident in the budget
    step_s: dict[str, float]  # policy -> decode step time at that batch, seconds
    tokens_per_s: dict[str, float]  # policy -> decode throughput, tokens/s
    curve_batch: np.ndarray  # batch sizes of the throughput curve
    curve_tokens_per_s: np.ndarray  # decode throughput at each, tokens/s
    compute_bound_batch: float  # decode batch where math catches up with memory (inf: never)
    max_seqs: int = 10**9  # requests the engine runs at once (vLLM's max_num_seqs for the GPU)
    #: decode throughput with every request that fits paged decoding at once (no max_num_seqs cap),
    #: tokens/s: what raising the cap would buy
    uncapped_paged_tokens_per_s: float = math.nan
    #: the longest prompt with its ``max_output`` tokens, what an engine must admit (vLLM checks
    #: prompt + max_tokens against its max_model_len), tokens
    longest_request_tokens: int = 0
    #: requests of the workload left out: longer than the model reads (see ``card_fit``)
    dropped_requests: int = 0

    @property
    def run_batch(self) -> dict[str, int]:
        """policy -> requests decoding at once: those that fit, at most ``max_seqs``."""
        return {k: min(v, self.max_seqs) for k, v in self.batch.items()}

    @property
    def capped(self) -> bool:
        """More requests fit under paging than the engine runs at once."""
        return self.batch["paged"] > self.max_seqs

    @property
    def fits(self) -> bool:
        """Whether the weights and the engine's start-up reserve leave any room for a KV cache."""
        return self.kv_budget_bytes > 0

    @property
    def reserve_bytes(self) -> float:
        """The engine's start-up reserve (``sim.memory.activation_bytes``), bytes."""
        return self.memory_bytes - self.weight_bytes - self.kv_budget_bytes

    @property
    def kv_budget_tokens(self) -> int:
        """Whole tokens of KV cache the budget holds (floored, as page 05's scheduler counts them)."""
        return max(int(self.kv_budget_bytes // self.kv_bytes_per_token), 0)

    @property
    def batch_gain(self) -> float:
        return self.batch["paged"] / self.batch["reserved"] if self.batch["reserved"] else math.inf

    @property
    def throughput_gain(self) -> float:
        r = self.tokens_per_s["reserved"]
        return self.tokens_per_s["paged"] / r if r > 0 else math.inf


def _sum_ceil(x: np.ndarray, page: int) -> np.ndarray:
    """sum_{n=1..x} ceil(n / page), for integer arrays x >= 0."""
    q, r = np.divmod(x, page)
    return page * q * (q + 1) // 2 + r * (q + 1)


def card_fit(
    gpu: GPU,
    model: Model,
    page_tokens: int = DEFAULT_PAGE_TOKENS,
    max_output: int = 2048,
    assumptions: Assumptions = DEFAULT_ASSUMPTIONS,
    memory_utilization: float = DEFAULT_MEMORY_UTILIZATION,
    workload: str = CARD_WORKLOAD,
    n_requests: int = CARD_N_REQUESTS,
    seed: int = DEFAULT_SEED,
) -> CardFit:
    """How many requests of ``workload`` each policy keeps resident on ``gpu`` serving ``model``,
    and the decode throughput (from ``sim.cost``) at those batch sizes.

    External fragmentation is ignored here (it only lowers the reserved batch further). The batch that
    decodes is what fits, capped at the engine's ``max_num_seqs`` (``CardFit.run_batch``). Requests
    whose prompt and ``max_output`` tokens run past the model's positions (``Model.max_positions``) are
    left out, as an engine refuses them and vLLM's benchmarks drop such samples
    (``CardFit.dropped_requests``); where none is left, ``longest_request_tokens`` is the shortest
    one's, past the limit, and the page says so.
    """
    page_tokens = check_int("page_tokens", page_tokens, *PAGE_TOKENS_RANGE)
    if not (isinstance(memory_utilization, (int, float)) and
            MEMORY_UTILIZATION_RANGE[0] <= memory_utilization <= MEMORY_UTILIZATION_RANGE[1]):
        raise ValueError(f"memory_utilization must be in [{MEMORY_UTILIZATION_RANGE[0]}, "
                         f"{MEMORY_UTILIZATION_RANGE[1]}], got {memory_utilization!r}")
    p, o = request_stream(workload, n_requests, max_output, seed)
    keep = np.ones(p.size, dtype=bool) if model.reads(int(p.max()) + max_output) else (
        p + max_output <= model.max_positions)
    longest = int(p[keep].max() if keep.any() else p.min()) + int(max_output)
    dropped = int(p.size - keep.sum())
    if keep.any():
        p, o = p[keep], o[keep]
    life = o.sum()  # request-steps: each request is resident for o steps
    reserved_slots = float((o * pages_needed(p + max_output, page_tokens)).sum() * page_tokens / life)
    paged_slots = float((_sum_ceil(p + o, page_tokens) - _sum_ceil(p, page_tokens)).sum()
                        * page_tokens / life)
    context = float((o * p + o * (o + 1) // 2).sum() / life)

    memory = gpu.hbm_bytes * memory_utilization
    budget = kv_budget_bytes(gpu, model, memory_utilization)  # after weights and activations
    budget_tokens = max(budget, 0.0) // model.kv_bytes_per_token  # whole tokens, as kv_budget_tokens
    slots = {"reserved": reserved_slots, "paged": paged_slots}
    batch = {k: int(budget_tokens // v) for k, v in slots.items()}

    max_seqs = engine_max_seqs(gpu)
    run = {k: min(v, max_seqs) for k, v in batch.items()}
    top = max(batch["paged"], 1)
    curve = np.unique(np.geomspace(1, 2 * top, 64).round().astype(np.int64))
    # One cost call: the curve, then the two operating points.
    points = np.concatenate([curve, [run["reserved"], run["paged"], batch["paged"]]])
    cost: StepCost = decode_step_cost(gpu, model, points, context, assumptions)
    n = curve.size
    rate = np.divide(points, cost.time_s, out=np.zeros(n + 3), where=cost.time_s > 0)
    return CardFit(
        gpu_name=gpu.name, model_name=model.name, memory_utilization=float(memory_utilization),
        memory_bytes=memory, weight_bytes=model.served_weight_bytes, kv_budget_bytes=budget,
        kv_bytes_per_token=model.kv_bytes_per_token, page_tokens=page_tokens, max_output=max_output,
        slots_per_request=slots, context_tokens=context, batch=batch,
        step_s={"reserved": float(cost.time_s[n]), "paged": float(cost.time_s[n + 1])},
        tokens_per_s={"reserved": float(rate[n]), "paged": float(rate[n + 1])},
        curve_batch=curve, curve_tokens_per_s=rate[:n],
        compute_bound_batch=compute_bound_batch(gpu, model, context, assumptions),
        max_seqs=max_seqs, uncapped_paged_tokens_per_s=float(rate[n + 2]),
        longest_request_tokens=longest, dropped_requests=dropped,
    )
