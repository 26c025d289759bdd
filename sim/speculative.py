"""Section 03: speculative decoding, priced by the roofline.

A cheap drafter proposes k tokens; the target model verifies all of them (plus one more position) in
one forward pass. Each draft token is accepted with probability alpha, independently (Leviathan et
al., ICML 2023, arXiv 2211.17192: alpha = E[min(p, q)], Cor. 3.6). A round commits the accepted
prefix plus one token from the target (the correction at the first rejection, or a bonus token when
all k were accepted), so the tokens per target pass follow a capped geometric law with mean (Eq. 1)

    E(alpha, k) = (1 - alpha^(k+1)) / (1 - alpha)          (k + 1 at alpha = 1)

The paper prices a round with a fixed draft-cost ratio c = t_draft / t_target and assumes the verify
pass costs one target step (Thm 3.8):  speedup = E / (k c + 1).  Here the round is priced by the
shared operator-level model (``sim.cost``) instead, for B sequences each holding ``context`` cached
tokens:

    t_round  = k * t_draft + t_verify
    t_verify = target step over v tokens per sequence, all sampled   (v = k + 1 for a chain; a
               tree verifies every node it drafted)
    t_draft  = one step of the drafter over w tokens per sequence    (w = 1 for a chain, the tree's
               width otherwise): its kernels and their launch costs, no host overhead (the engine
               runs a round's draft steps inside one scheduler iteration), or c * t_decode
    speedup  = E * t_decode / t_round                                (t_decode: plain decode step)

At batch 1 the verify pass reads the same weights as a decode step and costs about the same, so the
speedup approaches E / (k c + 1). As the batch grows the verify pass, carrying (k + 1) B tokens,
turns compute-bound long before plain decode does, and the speedup falls toward, then below, 1.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from sim.cost import (
    DEFAULT_ASSUMPTIONS,
    Assumptions,
    OperatorCost,
    StepCost,
    decode_step_cost,
    scale_steps,
    uniform_step_cost,
)
from sim.hardware import GPU
from sim.memory import memory_plan
from sim.models import BYTES_PER_ELEMENT, DRAFT_MODEL, MODELS, Model
from sim.validate import check_float, check_int

# ---- ranges (the page's widgets use the same bounds) ----
ALPHA_RANGE = (0.0, 1.0)  # per-token acceptance probability
K_RANGE = (1, 16)  # draft tokens proposed per round
BATCH_RANGE = (1, 1024)  # sequences decoding together
CONTEXT_RANGE = (0, 131072)  # tokens already in each sequence's KV cache
DRAFT_COST_RANGE = (0.0, 1.0)  # c: draft step time / target decode step time
ROUNDS_RANGE = (1, 200_000)  # Monte Carlo rounds

DEFAULT_ROUNDS = 4000  # enough for a standard error of ~0.02 tokens on E
DEFAULT_SEED = 3
#: Batch sizes of the speedup-against-load sweep: log-spaced integers over the whole BATCH_RANGE,
#: with every power of two (the page's batch choices) on the curve.
SWEEP_BATCHES = np.union1d(np.round(np.geomspace(*BATCH_RANGE, 64)),
                           2 ** np.arange(int(np.log2(BATCH_RANGE[1])) + 1)).astype(int)

DRAFTER_KINDS = ("model", "head", "ratio")


# ---- argument checks ----




# ---- the acceptance law ----


def expected_tokens(alpha, k):
    """E(alpha, k): expected tokens committed per target pass, (1 - alpha^(k+1)) / (1 - alpha).

    Broadcasts over arrays. Computed as -expm1((k+1) log alpha) / (1 - alpha) so it stays accurate
    next to alpha = 1, where the limit k + 1 is returned exactly; alpha = 0 gives 1.
    """
    a = np.asarray(alpha, dtype=float)
    kk = np.asarray(k, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        e = -np.expm1((kk + 1) * np.log(a)) / (1.0 - a)
    e = np.where(a >= 1.0, kk + 1, np.where(a <= 0.0, 1.0, e))
    return float(e) if e.ndim == 0 else e


def alpha_for_tokens(tau, k) -> float:
    """The acceptance rate alpha at which a chain of k drafts yields ``tau`` tokens per target pass:
    the inverse of ``expected_tokens`` in alpha (strictly increasing from 1 to k + 1), by bisection.

    Used to turn a published mean acceptance length (e.g. EAGLE-3 Table 1's tau) into the per-token
    alpha of an equivalent chain of length k.
    """
    k = check_int("k", k, *K_RANGE)
    if not (isinstance(tau, (int, float, np.floating)) and 1.0 <= tau <= k + 1):
        raise ValueError(f"tau must be a number in [1, k + 1] = [1, {k + 1}], got {tau!r}")
    lo, hi = 0.0, 1.0
    for _ in range(60):  # 2^-60: far below float resolution of the answer's use
        mid = 0.5 * (lo + hi)
        if expected_tokens(mid, k) < tau:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def accepted_law(alpha: float, k: int) -> np.ndarray:
    """P(accepted prefix = j) for j = 0..k: alpha^j (1 - alpha) below k, alpha^k at k (sums to 1)."""
    alpha = check_float("alpha", alpha, *ALPHA_RANGE)
    k = check_int("k", k, *K_RANGE)
    j = np.arange(k + 1)
    return np.where(j < k, alpha**j * (1.0 - alpha), alpha**k)


def leviathan_speedup(alpha, k, c):
    """Closed-form walltime improvement (Leviathan Thm 3.8): E(alpha, k) / (k c + 1), with c the draft
    step time over the target step time and the verify pass costing one target step."""
    return expected_tokens(alpha, k) / (np.asarray(k, dtype=float) * np.asarray(c, dtype=float) + 1.0)


def leviathan_ops_factor(alpha, k, c_hat):
    """Arithmetic operations per token relative to plain decoding (Leviathan Thm 3.11):
    (k c_hat + k + 1) / E(alpha, k), with c_hat the draft's ops per token over the target's."""
    kk = np.asarray(k, dtype=float)
    return (kk * np.asarray(c_hat, dtype=float) + kk + 1.0) / expected_tokens(alpha, k)


# ---- the Monte Carlo of rounds ----


@dataclass(frozen=True)
class Rounds:
    """Seeded Monte Carlo of speculative rounds.

    ``accepted`` is the length of the accepted prefix of each round (0..k); every round also commits
    one token from the target (the correction at the first rejection, or the bonus after k accepts).
    """

    alpha: float
    k: int
    seed: int
    accepted: np.ndarray  # (rounds,) int: accepted draft tokens per round

    @property
    def tokens(self) -> np.ndarray:
        """Tokens committed per round: the accepted prefix plus the target's one token."""
        return self.accepted + 1

    @property
    def mean_tokens(self) -> float:
        return float(self.tokens.mean())

    @property
    def histogram(self) -> np.ndarray:
        """(k + 1,) rounds whose accepted prefix had length 0..k."""
        return np.bincount(self.accepted, minlength=self.k + 1)

    @property
    def std_error(self) -> float:
        """Standard error of ``mean_tokens`` (0 for a single round)."""
        n = self.tokens.size
        return float(self.tokens.std(ddof=1) / math.sqrt(n)) if n > 1 else 0.0

    def status(self, rounds: int) -> np.ndarray:
        """(rounds, k) codes of the first ``rounds`` rounds' proposals: 1 accepted, 2 rejected (the
        first draft the target refused), 0 not reached (discarded after a rejection)."""
        a = self.accepted[:rounds, None]
        j = np.arange(self.k)[None, :]
        return np.where(j < a, 1, np.where(j == a, 2, 0))


def simulate_rounds(alpha: float, k: int, rounds: int = DEFAULT_ROUNDS, seed: int = DEFAULT_SEED) -> Rounds:
    """Draw ``rounds`` rounds: each draft token is accepted with probability alpha, the round stops at
    the first rejection. Vectorised: one (rounds, k) uniform draw."""
    alpha = check_float("alpha", alpha, *ALPHA_RANGE)
    k = check_int("k", k, *K_RANGE)
    rounds = check_int("rounds", rounds, *ROUNDS_RANGE)
    seed = check_int("seed", seed, 0, 2**32 - 1)
    ok = np.random.default_rng(seed).random((rounds, k)) < alpha
    # Length of the all-True prefix: index of the first False, or k when none.
    accepted = np.where(ok.all(axis=1), k, np.argmin(ok, axis=1))
    return Rounds(alpha=alpha, k=k, seed=seed, accepted=accepted.astype(int))


# ---- drafting methods ----


@dataclass(frozen=True)
class Method:
    """A way of drafting: what a draft step costs, and the (alpha, k) it typically runs at.

    Attributes:
        name: the option shown on the page.
        drafter: 'model' (a separate small LM, priced by the roofline), 'head' (one extra decoder
            layer plus an LM head on the target's features, priced by the roofline), or 'ratio'
            (a fixed fraction ``cost_ratio`` of a target decode step per draft token; with
            ``held_heads``, Medusa's heads, priced by the operator model instead: see round_cost).
        alpha: per-token acceptance rate.
        k: draft tokens per round.
        cost_ratio: for 'ratio': draft step time / target decode step time at the same batch.
        head_vocab: for 'head': the LM head's vocabulary (None: the target's).
        tau: the published mean acceptance length alpha was derived from (None: alpha is quoted).
        alpha_fitted: alpha is fitted to measured speedups (``fit_alpha``): an effective
            rate that also absorbs what the model leaves out of the engine's round, not the share
            of drafts a target keeps in the method's paper.
        source: where alpha (or tau) and the cost come from.
        tree_width: candidates a draft step proposes per sequence (1: a chain).
        verify_tokens: tokens the verify pass checks per sequence (None: k + 1, a chain).
    """

    name: str
    drafter: str
    alpha: float
    k: int
    source: str
    cost_ratio: float = 0.0
    head_vocab: int | None = None
    tau: float | None = None
    tree_width: int = 1
    verify_tokens: int | None = None
    held_heads: bool = False  # 'ratio' drafters only: heads held beside the target (Medusa), one a draft
    alpha_fitted: bool = False  # alpha fitted to measured gains: an effective rate, not a measured one

    def __post_init__(self) -> None:
        if self.drafter not in DRAFTER_KINDS:
            raise ValueError(f"drafter must be one of {DRAFTER_KINDS}, got {self.drafter!r}")
        check_float("alpha", self.alpha, *ALPHA_RANGE)
        check_int("k", self.k, *K_RANGE)
        check_float("cost_ratio", self.cost_ratio, *DRAFT_COST_RANGE)
        check_int("tree_width", self.tree_width, 1, 64)
        if self.verify_tokens is not None:
            check_int("verify_tokens", self.verify_tokens, self.k + 1, 1024)

    @property
    def candidates_per_depth(self) -> float:
        """Nodes a drafted tree offers per depth on average (1 for a chain)."""
        return 1.0 if self.verify_tokens is None else self.verify_tokens / self.k

    def depth_acceptance(self, alpha):
        """The chance that a depth of the draft is accepted: alpha for a chain; for a tree with v
        nodes over depth k, any of its ~v/k candidates there, each accepted with alpha:
        1 - (1 - alpha)^(v/k). (An approximation: EAGLE-2 keeps the likeliest nodes, so the real
        candidates are not independent draws; the fit of alpha absorbs that.)"""
        a = np.asarray(alpha, dtype=float)
        p = 1.0 - (1.0 - a) ** self.candidates_per_depth
        return float(p) if p.ndim == 0 else p

    def verified_per_seq(self, k):
        """Tokens the verify pass checks per sequence at draft length ``k``."""
        kk = np.asarray(k, dtype=float)
        if self.verify_tokens is None:
            return kk + 1
        # A tree's node count scales with its depth; at the preset depth it is verify_tokens.
        return np.maximum(kk + 1, np.round(self.verify_tokens * kk / self.k))


def _from_tau(name: str, tau: float, k: int, **kw) -> Method:
    return Method(name=name, alpha=round(alpha_for_tokens(tau, k), 2), k=k, tau=tau, **kw)


MANUAL = "Manual"
METHODS: dict[str, Method] = {
    m.name: m
    for m in (
        Method(
            "Draft model", "model", alpha=0.8, k=4,
            source="Leviathan et al. Table 3: drafts about 14-180x smaller than the target accept "
                   "0.5-0.9 of tokens (T5-XXL, 11B, with T5-base, 220M, 0.80; LaMDA 137B with 8B, 0.75; "
                   "greedy). The draft is Llama-3.2-1B, priced by the roofline at the "
                   "target's precisions; the preset α is the paper's, not measured for this pair.",
        ),
        _from_tau(
            "n-gram lookup", tau=1.80, k=5, drafter="ratio", cost_ratio=0.0,
            source="EAGLE-3 Table 1: prompt lookup (PLD) on Vicuna-13B commits τ = 1.80 tokens "
                   "per pass on average over 5 tasks (1.63 on MT-bench chat, 2.50 on CNN/DM "
                   "summaries). Drafting is a string match on the CPU: cost ~0.",
        ),
        _from_tau(
            "Medusa", tau=2.51, k=4, drafter="ratio", cost_ratio=0.02, held_heads=True,
            source="EAGLE-3 Table 1: Medusa on Vicuna-13B, τ = 2.51 (mean of 5 tasks). Cost: "
                   "one Medusa-1 head per draft token (a d x d residual block and an LM head of "
                   "the target's vocabulary), priced by the operator model as the target's own LM "
                   "head plus that block: ~0.02 of a target step on Vicuna's 32k vocabulary, ~0.06 "
                   "on Llama 3's 128k.",
        ),
        Method(
            "EAGLE", "head", alpha=0.27, k=3, alpha_fitted=True,
            source="SGLang's EAGLE as EAGLE-3 Table 3 ran it: a chain of 3 drafts on "
                   "LLaMA-3.1-8B, one H100. α fitted (least squares on log speedup, the same cost "
                   "model) to that table's 9 measured gains, batch 2-64. The draft head is one "
                   "decoder layer of the target plus its LM head, priced by the operator model.",
        ),
        Method(
            "EAGLE-3", "head", alpha=0.46, k=5, head_vocab=32000, tree_width=4, verify_tokens=8,
            alpha_fitted=True,
            source="SGLang's EAGLE-3 with its default tree (5 draft steps, top-4 candidates a "
                   "step, 8 tokens verified; SGLang docs). α fitted (least squares on log speedup) "
                   "jointly to EAGLE-3 Table 3 (a chain of 3, batch 2-64) and SGLang's measured "
                   "2.36x at batch 1 (Table 4: 373.25 vs 158.34 tok/s), LLaMA-3.1-8B on one H100. "
                   "The draft head is one decoder layer plus a 32k-token LM head. The paper's own "
                   "τ = 6.23 (Table 1, its larger tree in its own framework) is not this setting.",
        ),
        Method(
            MANUAL, "ratio", alpha=0.8, k=4, cost_ratio=0.05,
            source="Your own α, k and draft cost c. Leviathan et al.: c 'was always less than "
                   "0.05 and often negligibly close to 0' in their runs.",
        ),
    )
}
DEFAULT_METHOD = "Draft model"


def draft_model_for(target: Model) -> Model:
    """The draft LM paired with ``target``: Llama-3.2-1B at the target's weight and KV precisions,
    split across the target's GPUs."""
    return MODELS[DRAFT_MODEL].with_precision(target.weight_dtype, target.kv_dtype).with_tp(target.tp)


def draft_head_for(target: Model, vocab: int | None = None) -> Model:
    """An EAGLE-style draft head as a one-layer model of the target's shape whose tied embedding is
    the LM head it reads every step (``vocab`` rows; the target's vocabulary when None). Its MLP is
    dense, of the config's ``intermediate`` width, for a mixture-of-experts target too (the published
    EAGLE heads are dense decoder layers; as a whole MoE layer DeepSeek-V3's held 23 GiB). The small
    feature-fusion layer (2d x d in EAGLE, 3d x d in EAGLE-3) is left out."""
    return dataclasses.replace(target, name=f"draft head of {target.name}", n_layers=1,
                               vocab=vocab or target.vocab, tied_embeddings=True,
                               window_layers=int(target.window_layers == target.n_layers),
                               dense_layers=1)


@dataclass(frozen=True)
class HeldHeads:
    """Weights a drafter holds beside the target that are not a model of their own (Medusa's heads):
    what ``sim.memory.memory_plan`` reads of a drafter, no KV cache."""

    name: str
    params: float  # all of them, before any split over GPUs
    bytes_per_param: float
    tp: int = 1
    kv_bytes_per_token: float = 0.0
    window_share: float = 0.0

    @property
    def served_weight_bytes(self) -> float:
        """Bytes on each of the ``tp`` GPUs (split like the target's LM head)."""
        return self.params * self.bytes_per_param / self.tp

    def with_tp(self, tp: int) -> HeldHeads:
        return dataclasses.replace(self, tp=int(tp))


def drafter_held(target: Model, method: Method, k: int | None = None) -> Model | HeldHeads | None:
    """The drafter as the memory check counts it beside ``target`` (``sim.memory.memory_plan``), or
    None where nothing is held (n-gram lookup, a manual c).
    A draft LM whole. An EAGLE-style head: its decoder layer (and that layer's KV cache), plus its own
    LM head where it has a vocabulary of its own (EAGLE-3's); EAGLE reads the target's embedding and
    LM head, so a one-row vocabulary stands in for them. Medusa: one head per draft (``k``, default
    the method's), each a residual block (d x d) and its own LM head (d x V), BF16 as the target's LM
    head is held and read (``Model.lm_head_bytes``; the timing reads each head as that LM head:
    ``_medusa_head_step``; Medusa-1: ~10 % of a 7B model with 5 heads)."""
    if method.held_heads:
        heads = method.k if k is None else int(k)
        d, v = target.hidden, target.vocab
        return HeldHeads(f"{method.name} heads ({heads})", heads * (d * d + d * v),
                         BYTES_PER_ELEMENT["bf16"], target.tp)
    if method.drafter == "model":
        draft = draft_model_for(target)
        return dataclasses.replace(draft, name=f"draft model {draft.name}")
    if method.drafter == "head":
        head = draft_head_for(target, method.head_vocab or 1)
        return dataclasses.replace(head, name=f"{method.name} draft head")
    return None


def shares_vocab(target: Model, method: Method) -> bool:
    """Whether the draft LM can serve ``target``: draft and target must share a vocabulary (vLLM
    spec-decode blog). Heads and lookups work on the target's own tokens."""
    return method.drafter != "model" or draft_model_for(target).vocab == target.vocab


# ---- pricing a round with the shared cost model ----


@dataclass(frozen=True)
class RoundCost:
    """Step costs of a round; every array has the broadcast shape of the batch sizes and draft
    lengths asked for."""

    decode: StepCost  # plain decode step of the target (1 token per sequence)
    verify: StepCost  # the target's pass over k + 1 tokens per sequence
    draft: StepCost  # one step of the drafter (draft model, head, or c x a target decode step)
    k: np.ndarray

    @property
    def draft_step_s(self) -> np.ndarray:
        """One draft step, seconds."""
        return self.draft.time_s

    @property
    def draft_flops(self) -> np.ndarray:
        """FLOP of one draft step."""
        return self.draft.flops

    @property
    def round_s(self) -> np.ndarray:
        return self.k * self.draft_step_s + self.verify.time_s

    @property
    def cost_ratio(self) -> np.ndarray:
        """The paper's c: draft step time over the target's decode step time."""
        return self.draft_step_s / self.decode.time_s


def round_cost(gpu: GPU, target: Model, method: Method, batch, k, context_tokens,
               assumptions: Assumptions = DEFAULT_ASSUMPTIONS, cost_ratio: float | None = None) -> RoundCost:
    """Price the steps of one round for every (batch, k) pair: one broadcast call per cost function.

    ``cost_ratio`` overrides the method's c for a 'ratio' drafter (the page's manual control).
    Medusa's heads (``held_heads``) run on the target's last hidden state, one per draft token: each
    is priced as the target's LM head in the same decode step (its weights read, its math at this
    batch, its kernels) grown by the d x d residual block, (d^2 + dV) / dV.
    """
    b, kk = np.broadcast_arrays(np.asarray(batch, dtype=float), np.asarray(k, dtype=float))
    decode = decode_step_cost(gpu, target, b, context_tokens, assumptions)
    v = method.verified_per_seq(kk)
    verify = uniform_step_cost(gpu, target, b, v, context_tokens, assumptions, sampled_per_seq=v)
    if method.held_heads and cost_ratio is None:
        draft = _medusa_head_step(decode, 1.0 + target.hidden / target.vocab)
    elif method.drafter == "ratio":
        draft = scale_steps(decode, method.cost_ratio if cost_ratio is None else cost_ratio)
    else:
        drafter = (draft_model_for(target) if method.drafter == "model"
                   else draft_head_for(target, method.head_vocab))
        w = method.tree_width
        in_round = dataclasses.replace(assumptions, host_overhead_s=0.0, sequence_host_s=0.0)
        draft = uniform_step_cost(gpu, drafter, b, w, context_tokens, in_round, sampled_per_seq=w)
    return RoundCost(decode=decode, verify=verify, draft=draft, k=kk)


def _medusa_head_step(decode: StepCost, grow: float) -> StepCost:
    """One Medusa head at the decode step's batch: the step's own LM-head operator (its weight reads,
    its math, its kernels) grown by ``grow`` = (d^2 + dV) / dV for the head's residual block, every
    field from the operator's own, so its FLOPs and bytes are the head's, not a share of the step's."""
    head = decode.operators["lm_head"]
    z = np.zeros_like(np.asarray(head.time_s, dtype=float))
    op = OperatorCost(**{f.name: grow * np.asarray(getattr(head, f.name)) for f in dataclasses.fields(head)})
    return StepCost(
        time_s=op.time_s + op.launch_s, gpu_time_s=op.time_s + op.launch_s,
        compute_time_s=op.compute_time_s, weight_time_s=op.memory_time_s, kv_time_s=z,
        activation_time_s=z, launch_time_s=op.launch_s, host_time_s=z, comm_time_s=z,
        flops=op.flops, bytes=op.bytes, kv_bytes=z, peak_flops=decode.peak_flops,
        bandwidth=decode.bandwidth, breakdown={"lm_head": op},
    )


#: Why a verify pass costs more than a decode step, for the page to say (``verify_cost_reason``).
VERIFY_REASONS = ("experts", "gemm", "other")


def verify_cost_reason(gpu: GPU, target: Model, method: Method, batch: int, k: int, context_tokens: int,
                       assumptions: Assumptions = DEFAULT_ASSUMPTIONS) -> str:
    """What makes the verify pass dearer than a decode step at this setting, from the two steps'
    operators: 'experts' where its MLP moves over 20 % more bytes (a mixture: the drafted tokens reach
    experts one token does not), 'gemm' where a weight GEMM (QKV, output projection, MLP, LM head) is
    compute-bound in the verify pass but not in the decode step, else 'other' (attention over the
    drafted positions, sampling each, kernel costs)."""
    rc = round_cost(gpu, target, method, batch, k, context_tokens, assumptions)
    dec, ver = rc.decode.operators, rc.verify.operators
    if target.n_experts and float(np.ravel(ver["mlp"].bytes)[0]) > 1.2 * float(np.ravel(dec["mlp"].bytes)[0]):
        return "experts"
    gemms = ("qkv", "o_proj", "mlp", "lm_head")
    if any(not bool(np.ravel(ver[g].memory_bound)[0]) and bool(np.ravel(dec[g].memory_bound)[0])
           for g in gemms if g in ver):
        return "gemm"
    return "other"


def _speedup(method: Method, alpha, cost: RoundCost) -> np.ndarray:
    return expected_tokens(method.depth_acceptance(alpha), cost.k) * cost.decode.time_s / cost.round_s


# ---- the page's model ----


@dataclass(frozen=True)
class Speculation:
    """Speculative decoding at one setting, against plain decode at the same batch and context."""

    method: Method
    alpha: float
    k: int
    batch: int
    context_tokens: int
    expected_tokens: float  # E(p, k): tokens committed per target pass, per sequence
    depth_acceptance: float  # p: alpha for a chain, higher for a tree (Method.depth_acceptance)
    rounds: Rounds  # the Monte Carlo
    decode_step_s: float  # plain decode step
    verify_s: float  # the target's verify pass over k + 1 tokens per sequence
    draft_step_s: float  # one draft step
    round_s: float  # k draft steps + the verify pass
    verify_memory_bound: bool
    cost_ratio: float  # c = draft step / decode step (Leviathan's c at this batch)
    flops_ratio: float  # FLOP per committed token, speculative / plain (the paper's ops factor)
    k_grid: np.ndarray  # 1..K_max
    speedup_by_k: np.ndarray  # speedup at each k in k_grid, same alpha, batch and context

    @property
    def speedup(self) -> float:
        """Tokens per second with speculation over tokens per second of plain decode."""
        return self.expected_tokens * self.decode_step_s / self.round_s

    @property
    def verified_tokens(self) -> int:
        """Tokens the verify pass checks per sequence (k + 1 for a chain, the tree's nodes)."""
        return int(self.method.verified_per_seq(self.k))

    @property
    def verify_over_decode(self) -> float:
        """The verify pass over k + 1 tokens per sequence, in plain decode steps."""
        return self.verify_s / self.decode_step_s

    @property
    def time_per_token_s(self) -> float:
        """Mean time between committed tokens of one sequence."""
        return self.round_s / self.expected_tokens

    @property
    def tokens_per_s(self) -> float:
        """Tokens per second of the whole batch."""
        return self.batch * self.expected_tokens / self.round_s

    @property
    def plain_tokens_per_s(self) -> float:
        return self.batch / self.decode_step_s

    @property
    def closed_form_speedup(self) -> float:
        """Leviathan's E / (k c + 1) at this c: what the speedup would be if verifying k + 1 tokens
        cost exactly one decode step."""
        return float(leviathan_speedup(self.depth_acceptance, self.k, self.cost_ratio))

    @property
    def best_k(self) -> int:
        return int(self.k_grid[int(np.argmax(self.speedup_by_k))])

    @property
    def best_speedup(self) -> float:
        return float(np.max(self.speedup_by_k))


def speculate(
    gpu: GPU,
    target: Model,
    method: Method,
    alpha: float,
    k: int,
    batch: int,
    context_tokens: int,
    assumptions: Assumptions = DEFAULT_ASSUMPTIONS,
    cost_ratio: float | None = None,
    rounds: int = DEFAULT_ROUNDS,
    seed: int = DEFAULT_SEED,
) -> Speculation:
    """Speculative decoding of ``batch`` sequences at ``context_tokens`` cached tokens each, drafting
    ``k`` tokens per round with ``method`` at acceptance ``alpha``; the best k is searched over
    1..K_max in the same vectorised cost call."""
    alpha = check_float("alpha", alpha, *ALPHA_RANGE)
    k = check_int("k", k, *K_RANGE)
    batch = check_int("batch", batch, *BATCH_RANGE)
    context_tokens = check_int("context_tokens", context_tokens, *CONTEXT_RANGE)
    if cost_ratio is not None:
        cost_ratio = check_float("cost_ratio", cost_ratio, *DRAFT_COST_RANGE)
    k_grid = np.arange(K_RANGE[0], K_RANGE[1] + 1)
    cost = round_cost(gpu, target, method, batch, k_grid, context_tokens, assumptions, cost_ratio)
    speedups = _speedup(method, alpha, cost)
    i = k - K_RANGE[0]
    p = method.depth_acceptance(alpha)
    e = expected_tokens(p, k)
    target_flops = (k * float(cost.draft_flops[i]) + float(cost.verify.flops[i])) / e
    return Speculation(
        method=method, alpha=alpha, k=k, batch=batch, context_tokens=context_tokens,
        expected_tokens=e, rounds=simulate_rounds(p, k, rounds, seed), depth_acceptance=p,
        decode_step_s=float(cost.decode.time_s[i]), verify_s=float(cost.verify.time_s[i]),
        draft_step_s=float(cost.draft_step_s[i]), round_s=float(cost.round_s[i]),
        verify_memory_bound=bool(cost.verify.memory_bound[i]),
        cost_ratio=float(cost.cost_ratio[i]),
        flops_ratio=target_flops / float(cost.decode.flops[i]),
        k_grid=k_grid, speedup_by_k=speedups,
    )


@dataclass(frozen=True)
class BatchSweep:
    """Speedup against batch size at fixed alpha, k and context."""

    batches: np.ndarray  # (n,) sequences
    speedup: np.ndarray  # (n,)
    tokens_per_s: np.ndarray  # (n,) whole batch, speculative
    plain_tokens_per_s: np.ndarray  # (n,) whole batch, plain decode
    verify_memory_bound: np.ndarray  # (n,) bool
    decode_memory_bound: np.ndarray  # (n,) bool
    full_acceptance_speedup: np.ndarray  # (n,) the same at alpha = 1: an alpha-free bound for axes
    max_batch: int  # the largest batch whose KV cache fits on the card at this context (sim.memory)
    #: The smallest batch whose verify pass (batch x verified tokens a sequence) and whose plain
    #: decode step (batch tokens) run without a CUDA graph: steps of more than
    #: ``Assumptions.cuda_graph_max_tokens`` tokens launch each kernel (inf: graphs off).
    verify_eager_batch: float = math.inf
    decode_eager_batch: float = math.inf
    cost_ratio: np.ndarray | None = None  # (n,) c: a draft step over a decode step at each batch

    @property
    def fits(self) -> np.ndarray:
        """(n,) bool: the batch fits in the card's memory."""
        return self.batches <= self.max_batch

    @property
    def last_fitting(self) -> int:
        """Index of the largest swept batch that fits (0 if none does)."""
        idx = np.nonzero(self.fits)[0]
        return int(idx[-1]) if idx.size else 0

    @property
    def peak_index(self) -> int:
        """Index of the best speedup over the batches that fit."""
        return int(np.argmax(self.speedup[: self.last_fitting + 1]))

    @property
    def peak(self) -> tuple[float, int]:
        """(best speedup, its batch) over the batches that fit."""
        i = self.peak_index
        return float(self.speedup[i]), int(self.batches[i])

    @property
    def rise_before_peak(self) -> float:
        """How far the best speedup over the batches that fit is above batch 1's, as a share (0 where
        batch 1 is the best): where it is more than a few per cent for a dense target, the drafter's
        step is a falling share of the target's (``cost_ratio``) as the target's KV reads grow."""
        return self.peak[0] / float(self.speedup[0]) - 1.0

    @property
    def losing_ranges(self) -> tuple[tuple[int, int], ...]:
        """Runs of swept batches, among those that fit, where speculation does not pay (speedup <= 1),
        as (first, last) batch: a mixture can lose at small batches, win, and lose again."""
        n = self.last_fitting + 1
        lose = self.speedup[:n] <= 1.0
        edges = np.flatnonzero(np.diff(np.concatenate(([0], lose.astype(np.int8), [0]))))
        return tuple((int(self.batches[a]), int(self.batches[b - 1])) for a, b in zip(edges[::2], edges[1::2],
                                                                                        strict=True))

    @property
    def regained_past_graphs(self) -> tuple[int, float] | None:
        """(batch, speedup) where, among the batches that fit, the gain climbs back above 1 from a
        loss once plain decode runs without a CUDA graph (its steps now pay every kernel's launch,
        which the verify pass was paying already); None where that does not happen."""
        n = self.last_fitting + 1
        s, b = self.speedup[:n], self.batches[:n]
        back = np.flatnonzero((s[1:] > 1.0) & (s[:-1] <= 1.0) & (b[1:] >= self.decode_eager_batch)) + 1
        return (int(b[back[0]]), float(s[back[0]])) if back.size else None

    @property
    def break_even_batch(self) -> float:
        """The smallest swept batch at which speculation stops paying (speedup <= 1); inf if never."""
        below = np.nonzero(self.speedup <= 1.0)[0]
        return float(self.batches[below[0]]) if below.size else math.inf

    @property
    def verify_compute_bound_batch(self) -> float:
        """The smallest swept batch whose verify pass is compute-bound; inf if none."""
        idx = np.nonzero(~self.verify_memory_bound)[0]
        return float(self.batches[idx[0]]) if idx.size else math.inf


def decode_host_share(gpu: GPU, target: Model, batches, context_tokens: int,
                      assumptions: Assumptions = DEFAULT_ASSUMPTIONS) -> np.ndarray:
    """The host's share of a plain decode step at each batch (its per-step and per-sequence time over
    the step's): what a round, which pays the host once for all its tokens, saves over plain decode
    grows with it. Where it grows with the batch and the KV reads stay small, it is what makes a
    small model's gain rise with the batch (page 03's rise caption)."""
    steps = decode_step_cost(gpu, target, np.asarray(batches, dtype=float), context_tokens, assumptions)
    return steps.host_time_s / steps.time_s


def kv_outweighs_weights_batch(target: Model, context_tokens: int) -> float:
    """The batch, in sequences, from which a decode step reads more KV cache than weights on one GPU:
    the weight bytes one GPU holds over one sequence's KV bytes at ``context_tokens`` (windowed
    layers capped at their window). A drafter reads far less KV cache than its target (a small model,
    a head with one layer of cache, or none), so past that batch the target's step grows faster than
    the drafter's and speculation's gain can rise with the batch before the verify pass's math catches
    up (MagicDec, Sadhukhan et al. 2024, arXiv 2408.11049). Meant for a dense target: a mixture's
    decode step reads only the experts its tokens reach."""
    kv = float(target.kv_bytes_per_sequence(context_tokens))
    return target.weight_bytes / kv if kv > 0 else math.inf


def speedup_vs_batch(
    gpu: GPU,
    target: Model,
    method: Method,
    alpha: float,
    k: int,
    context_tokens: int,
    assumptions: Assumptions = DEFAULT_ASSUMPTIONS,
    cost_ratio: float | None = None,
    batches=SWEEP_BATCHES,
) -> BatchSweep:
    """Speedup at each batch size: one broadcast cost call over all of them."""
    alpha = check_float("alpha", alpha, *ALPHA_RANGE)
    k = check_int("k", k, *K_RANGE)
    context_tokens = check_int("context_tokens", context_tokens, *CONTEXT_RANGE)
    b = np.asarray(batches)
    if b.ndim != 1 or b.size == 0 or np.any(b < BATCH_RANGE[0]) or np.any(b > BATCH_RANGE[1]):
        raise ValueError(f"batches must be a non-empty 1-D array of sizes in {list(BATCH_RANGE)}")
    cost = round_cost(gpu, target, method, b, k, context_tokens, assumptions, cost_ratio)
    speedup = _speedup(method, alpha, cost)
    return BatchSweep(
        batches=b, speedup=speedup,
        tokens_per_s=b * expected_tokens(method.depth_acceptance(alpha), k) / cost.round_s,
        plain_tokens_per_s=b / cost.decode.time_s,
        verify_memory_bound=cost.verify.memory_bound, decode_memory_bound=cost.decode.memory_bound,
        full_acceptance_speedup=_speedup(method, 1.0, cost),
        max_batch=memory_plan(gpu, target, 1, context_tokens + int(method.verified_per_seq(k)),
                              drafter=drafter_held(target, method, k)).max_batch,
        **_eager_batches(method, k, assumptions),
        cost_ratio=np.asarray(cost.cost_ratio, dtype=float),
    )


def _eager_batches(method: Method, k: int, assumptions: Assumptions) -> dict[str, float]:
    """The smallest batches whose verify pass and plain decode step exceed the largest CUDA graph."""
    if not assumptions.cuda_graphs:
        return {}
    limit = assumptions.cuda_graph_max_tokens
    return {"verify_eager_batch": float(limit // int(method.verified_per_seq(k)) + 1),
            "decode_eager_batch": float(limit + 1)}


@dataclass(frozen=True)
class AlphaSweep:
    """Speedup over a grid of acceptance rates (columns) for several draft lengths (rows)."""

    alphas: np.ndarray  # (n,)
    ks: np.ndarray  # (m,)
    speedup: np.ndarray  # (m, n)
    ceiling: np.ndarray  # (n,) 1 / (1 - p), p the chance a depth is kept (alpha for a chain), inf at 1


def speedup_vs_alpha(
    gpu: GPU,
    target: Model,
    method: Method,
    ks,
    batch: int,
    context_tokens: int,
    assumptions: Assumptions = DEFAULT_ASSUMPTIONS,
    cost_ratio: float | None = None,
    alphas=None,
) -> AlphaSweep:
    """Speedup against alpha for each k in ``ks`` (one cost call; E broadcast over the grid)."""
    batch = check_int("batch", batch, *BATCH_RANGE)
    context_tokens = check_int("context_tokens", context_tokens, *CONTEXT_RANGE)
    ks = np.asarray(ks, dtype=int)
    if ks.ndim != 1 or ks.size == 0 or np.any(ks < K_RANGE[0]) or np.any(ks > K_RANGE[1]):
        raise ValueError(f"ks must be a non-empty 1-D array of draft lengths in {list(K_RANGE)}")
    a = np.linspace(0.0, 1.0, 101) if alphas is None else np.asarray(alphas, dtype=float)
    if a.ndim != 1 or a.size == 0 or not np.all((a >= ALPHA_RANGE[0]) & (a <= ALPHA_RANGE[1])):
        raise ValueError(f"alphas must be a non-empty 1-D array of rates in {list(ALPHA_RANGE)}")
    cost = round_cost(gpu, target, method, batch, ks, context_tokens, assumptions, cost_ratio)
    p = np.asarray(method.depth_acceptance(a), dtype=float)
    speedup = expected_tokens(p[None, :], ks[:, None]) * (cost.decode.time_s / cost.round_s)[:, None]
    # A free draft and verify at any k: E -> 1 / (1 - p), with p a depth's acceptance (a tree's is above
    # alpha, so its ceiling is too).
    with np.errstate(divide="ignore"):
        ceiling = np.where(p < 1, 1.0 / np.maximum(1.0 - p, 0.0), np.inf)
    return AlphaSweep(alphas=a, ks=ks, speedup=speedup, ceiling=ceiling)


#: Measured throughput gain against batch size (EAGLE-3 Table 3: SGLang v0.4.4, one H100,
#: LLaMA-3.1-8B, chain length 3, MT-bench). REFERENCE.md section 3.7.
MEASURED_BATCH_GAIN = {
    "batches": (2, 4, 8, 16, 24, 32, 48, 56, 64),
    "EAGLE": (1.40, 1.38, 1.23, 1.02, 0.93, 0.94, 0.88, 0.99, 0.99),
    "EAGLE-3": (1.81, 1.82, 1.62, 1.48, 1.39, 1.32, 1.38, 1.34, 1.38),
}
MEASURED_SETUP = ("H100 SXM", "Llama-3.1-8B")


#: SGLang's measured batch-1 gains (EAGLE-3 Table 4 / SGLang docs: 158.34 tok/s without speculation,
#: 244.10 with EAGLE-2, 373.25 with EAGLE-3), in the default tree setting of the EAGLE-3 preset.
MEASURED_BATCH1_GAIN = {"EAGLE-3": 373.25 / 158.34}
#: Context the measured rounds run at: MT-bench turns (short prompts, a few hundred output tokens).
MEASURED_CONTEXT_TOKENS = 512
#: The setting of the Table 3 sweep: a chain of 3 drafts.
MEASURED_CHAIN = 3


def modelled_batch_gain(gpu: GPU, target: Model, assumptions: Assumptions = DEFAULT_ASSUMPTIONS
                        ) -> dict[str, np.ndarray]:
    """The model's speedup at each of MEASURED_BATCH_GAIN's points, for each measured method at its
    preset alpha and in the measured setting (a chain of MEASURED_CHAIN drafts at
    MEASURED_CONTEXT_TOKENS): what the page sets beside each measured point, with the error."""
    b = np.asarray(MEASURED_BATCH_GAIN["batches"], dtype=float)
    out = {}
    for name in ("EAGLE", "EAGLE-3"):
        method = METHODS[name]
        chain = dataclasses.replace(method, k=MEASURED_CHAIN, tree_width=1, verify_tokens=None)
        cost = round_cost(gpu, target, chain, b, chain.k, MEASURED_CONTEXT_TOKENS, assumptions)
        out[name] = np.asarray(_speedup(chain, method.alpha, cost), dtype=float)
    return out


def fit_alpha(gpu: GPU, target: Model, method: Method, assumptions: Assumptions = DEFAULT_ASSUMPTIONS
              ) -> float:
    """The acceptance rate that best reproduces ``method``'s measured gains (least squares on log
    speedup): its Table 3 points as a chain of MEASURED_CHAIN drafts and, where measured, its batch-1
    gain in the preset's own setting. One alpha for all of them: the drafter's per-token acceptance."""
    chain = dataclasses.replace(method, k=MEASURED_CHAIN, tree_width=1, verify_tokens=None)
    b = np.asarray(MEASURED_BATCH_GAIN["batches"], dtype=float)
    measured = [np.asarray(MEASURED_BATCH_GAIN[method.name], dtype=float)]
    chain_cost = round_cost(gpu, target, chain, b, chain.k, MEASURED_CONTEXT_TOKENS, assumptions)
    one = MEASURED_BATCH1_GAIN.get(method.name)
    own_cost = round_cost(gpu, target, method, 1, method.k, MEASURED_CONTEXT_TOKENS, assumptions)
    if one is not None:
        measured.append(np.array([one]))
    y = np.log(np.concatenate(measured))

    def loss(alpha: float) -> float:
        model = [_speedup(chain, alpha, chain_cost)]
        if one is not None:
            model.append(np.atleast_1d(_speedup(method, alpha, own_cost)))
        return float(np.sum((np.log(np.concatenate(model)) - y) ** 2))

    grid = np.linspace(0.01, 0.99, 99)
    best = float(grid[int(np.argmin([loss(a) for a in grid]))])
    fine = np.linspace(max(0.0, best - 0.01), min(1.0, best + 0.01), 41)
    return float(fine[int(np.argmin([loss(a) for a in fine]))])
