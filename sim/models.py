"""Decoder-only transformers, from their ``config.json`` (``sim/configs/``), and what they cost in bytes.

Parameter counts are computed from the config (REFERENCE.md section 2, MEASURED.md sections 1 and 2):
    attention = d*H*hd + 2*d*KV*hd + H*hd*d   (+ q/k/v biases for Qwen2, q/k norms for Qwen3)
    MLA       = d*q_lora + q_lora + q_lora*H*(nope+rope) + d*(kv_lora+rope) + kv_lora
                + kv_lora*H*(nope+v) + H*v*d                      (DeepSeek's latent attention)
    MLP       = 3*d*ff                         (SwiGLU: gate, up, down; GPT-J: 2*d*ff + biases)
    MoE layer = E*3*d*f + shared + router d*E  (routed experts of width f, shared experts)
    total     = L*(attention + norms) + dense layers' MLPs + MoE layers' MLPs + embedding
                + untied lm_head + final norm
and match the official totals, which cross-checks the configs. The KV cache holds one key and one
value vector per layer, KV head and token, or for MLA one latent and one RoPE key a layer:
    kv_bytes_per_token = 2 * L * n_kv_heads * head_dim * bytes        (MHA / GQA)
                       = L * (kv_lora_rank + qk_rope_head_dim) * bytes   (MLA, BF16)
                       = L * (kv_lora_rank + 4 * kv_lora_rank / 128 + 2 * qk_rope_head_dim)
                                                                         (MLA, FP8: vLLM / FlashMLA)
Sliding-window and chunked layers (Mistral, gpt-oss, Llama 4) hold at most ``window`` tokens:
``kv_bytes_per_sequence`` counts that, and the memory check (``sim.memory``) and the cost model's
attention (``sim.cost.attention_sums``) use it; ``kv_bytes_per_token`` counts every layer at one
token (the rate below the window).

Precisions are as stored: quantised checkpoints (FP8, INT8, INT4, NVFP4, MXFP4) quantise the
decoder's linear layers; the embedding table and the LM head stay BF16, as ModelOpt FP8, AWQ and
GPTQ checkpoints ship them. Some checkpoints quantise only the routed experts (gpt-oss: MXFP4
experts; attention, router, embeddings and head BF16): ``quant_scope = "experts"``. Bytes per
weight, scales included:
    INT4 weight-only: 4 bits + one BF16 scale and one BF16 zero point per group of 128 weights
    (AWQ / GPTQ's default) = 4.25 bits; ``Model.int4_group`` sets the group (gpt-fast's int4: 32,
    5 bits)
    NVFP4: 4 bits + one FP8 (E4M3) scale per 16 weights = 4.5 bits (a per-tensor FP32 scale aside)
    MXFP4: 4 bits + one E8M0 (8-bit) scale per 32 weights = 4.25 bits
FP4 formats run FP4 tensor math where the GPU has FP4 units (B200) and are weight-only elsewhere
(dequantised to BF16 in the GEMM); INT8 and INT4 are weight-only. ``weight_bytes`` is the checkpoint
as shipped; ``served_weight_bytes`` what the engine holds and reads, which differs where it repacks:
vLLM pads MXFP4 experts to its kernels' tiles (``expert_storage_factor``).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from functools import cached_property, lru_cache

import numpy as np

#: Bytes per stored element for each weight / KV-cache precision, group scales included.
INT4_GROUP = 128  # weights per quantisation group (AWQ / GPTQ default)
NVFP4_BLOCK = 16  # weights per FP8 scale (NVIDIA ModelOpt NVFP4)
MXFP4_BLOCK = 32  # weights per E8M0 scale (OCP Microscaling MXFP4; gpt-oss checkpoints)
BYTES_PER_ELEMENT: dict[str, float] = {
    "bf16": 2.0, "fp8": 1.0, "int8": 1.0, "int4": 0.5 + 2 * 2.0 / INT4_GROUP,
    "nvfp4": 0.5 + 1.0 / NVFP4_BLOCK, "mxfp4": 0.5 + 1.0 / MXFP4_BLOCK,
}


def weight_bytes_per_element(dtype: str, int4_group: int = INT4_GROUP) -> float:
    """Bytes a stored weight takes at ``dtype``, scales included: INT4 with one BF16 scale and one
    BF16 zero point per ``int4_group`` weights; every other precision as ``BYTES_PER_ELEMENT``."""
    if dtype == "int4":
        return 0.5 + 2 * 2.0 / int4_group
    return BYTES_PER_ELEMENT[dtype]


WEIGHT_DTYPES = ("bf16", "fp8", "int8", "int4", "nvfp4", "mxfp4")
FP4_DTYPES = ("nvfp4", "mxfp4")
KV_DTYPES = ("bf16", "fp8")
#: Latent values per FP32 scale in an FP8 MLA cache (vLLM / FlashMLA: 4 scales for DeepSeek's 512).
MLA_FP8_SCALE_GROUP = 128
QUANT_SCOPES = ("decoder", "experts")
#: Bytes per activation element (BF16 activations between kernels).
ACTIVATION_BYTES = 2.0
#: vLLM stores MXFP4 experts padded to its mixture-of-experts kernels' tiles: the Marlin kernel that
#: GPUs without FP4 math run needs n % 256 == 0 and k % 128 == 0, so the hidden size is padded to a
#: multiple of 256 and each GPU's expert width to a multiple of 128
#: (vllm/model_executor/layers/quantization/mxfp4.py; its other MXFP4 kernels pad as much or more).
#: For gpt-oss (2880 x 2880 on one GPU: 3072 x 2944) that is 9.0 % more expert bytes, the 5.2 GiB
#: between gpt-oss-120b's 60.8 GiB checkpoint and the 66.0 GiB vLLM logs as "Model loading took" on
#: one H100 (vllm-project/vllm#23278).
MXFP4_PAD_HIDDEN, MXFP4_PAD_WIDTH = 256, 128


#: The steepest routing skew offered (the Zipf exponent s of ``routing_shares``).
MAX_ROUTING_SKEW = 2.0


@lru_cache(maxsize=256)
def routing_shares(n_experts: int, experts_per_token: int, skew: float) -> np.ndarray:
    """pi_e, the chance that one token routes to expert e (its inclusion probability), the most
    popular expert first; the shares sum to k. skew = 0: k / E each (uniform routing). skew s > 0:
    proportional to rank^-s (Zipf), an expert's share capped at 1 (no token takes an expert twice)
    and the excess spread over the rest in proportion."""
    e, k = int(n_experts), float(experts_per_token)
    w = np.arange(1, e + 1, dtype=float) ** -float(skew)
    pi, free = np.zeros(e), np.ones(e, dtype=bool)
    while free.any():
        share = (k - pi[~free].sum()) * w / w[free].sum()
        over = free & (share >= 1.0)
        if not over.any():
            pi[free] = share[free]
            break
        pi[over], free = 1.0, free & ~over
    pi.setflags(write=False)
    return pi


@lru_cache(maxsize=256)
def _skewed_touched_table(n_experts: int, experts_per_token: int, skew: float):
    """(log T grid, touched experts at each): sum_e 1 - (1 - pi_e)^T from T = 1e-3 to where even the
    least popular expert is all but surely touched: every whole count to 256 and 2,048 log-spaced
    points (linear interpolation in log T is within 1e-5 of the sum between them; tested)."""
    pi = routing_shares(n_experts, experts_per_token, skew)
    log_miss = np.log1p(-np.minimum(pi, 1.0 - 1e-16))
    t_full = min(1e12, math.log(1e-9) / float(log_miss.max()))
    # Whole token counts up to 256 exactly (a batch-1 step touches exactly k), log-spaced beyond.
    t = np.unique(np.r_[np.geomspace(1e-3, max(t_full, 2.0), 2048), np.arange(1.0, 257.0)])
    touched = np.sum(-np.expm1(t[:, None] * log_miss[None, :]), axis=1)
    return np.log(t), touched


def skewed_touched(n_experts: int, experts_per_token: int, skew: float, tokens):
    """Distinct experts ``tokens`` tokens touch under skewed routing: sum_e 1 - (1 - pi_e)^T, exact
    for any router with those inclusion probabilities and independent tokens (equal to
    E (1 - (1 - k/E)^T) at skew 0), read off a table (``_skewed_touched_table``; below 1e-3 tokens
    linear to 0). Broadcasts over ``tokens``; 0 tokens touch none; a float for a scalar."""
    log_t, table = _skewed_touched_table(int(n_experts), int(experts_per_token), float(skew))
    t = np.asarray(tokens, dtype=float)
    safe = np.maximum(t, 1e-3)
    touched = np.interp(np.log(safe), log_t, table) * np.minimum(t / safe, 1.0)
    touched = np.where(t > 0, touched, 0.0)
    return float(touched) if touched.ndim == 0 else touched


@lru_cache(maxsize=64)
def _skewed_slowest_gpu(n_experts: int, experts_per_token: int, groups: int, skew: float):
    """(T grid, the busiest GPU's expected touched experts at skew s / the same at skew 0), both
    under independent experts: expert r (by popularity) on GPU r mod n, each GPU's count a
    Poisson-binomial over its experts' chances 1 - (1 - pi_e)^T, E[max] = sum_j 1 - prod_g F_g(j).
    ``expert_reads`` multiplies the exact uniform count by this ratio, so skew 0 is the exact one."""
    e, n = int(n_experts), int(groups)
    assert e % n == 0, "whole experts need E divisible by the GPU count (Model checks it)"
    per = e // n
    pis = [routing_shares(e, experts_per_token, skew), routing_shares(e, experts_per_token, 0.0)]
    # Tokens until even the least popular expert is all but surely touched, log-spaced.
    t_full = min(1e7, math.log(1e-6) / math.log1p(-min(float(pis[0].min()), 1 - 1e-16)))
    t = np.unique(np.r_[0.0, 1.0, np.geomspace(1.0, max(t_full, 2.0), 256)])
    out = []
    for pi in pis:
        q = -np.expm1(t[:, None] * np.log1p(-np.minimum(pi, 1 - 1e-16))[None, :])  # (T, E)
        cdf_prod = np.ones((t.size, per + 1))
        for g in range(n):
            pmf = np.zeros((t.size, per + 1))
            pmf[:, 0] = 1.0
            for col in range(g, e, n):
                qe = q[:, col:col + 1]
                pmf = pmf * (1 - qe) + np.concatenate([np.zeros((t.size, 1)), pmf[:, :-1]], axis=1) * qe
            cdf_prod *= np.cumsum(pmf, axis=1)
        out.append(np.sum(1.0 - np.minimum(cdf_prod[:, :per], 1.0), axis=1))
    ratio = np.divide(out[0], out[1], out=np.ones_like(out[0]), where=out[1] > 0)
    return t, ratio


@lru_cache(maxsize=64)
def _skewed_reads_grid(n_experts: int, experts_per_token: int, groups: int, skew: float):
    """(T grid, the slowest GPU's expert reads under skew) for ``expert_reads``: the exact uniform
    count times the skew ratio of ``_skewed_slowest_gpu``, capped at the experts a GPU holds and at
    the k T experts T tokens can touch, then made non-decreasing in T (more tokens never read fewer
    experts; the ratio's independence approximation alone read 1.12 experts at T = 1, k = 1, and less
    at T = 3 than at T = 2), and at most the uniform count (still non-decreasing: both are)."""
    e, k, n = float(n_experts), float(experts_per_token), int(groups)
    grid, ratio = _skewed_slowest_gpu(n_experts, experts_per_token, groups, skew)
    p = -np.expm1(grid * np.log1p(-k / e)) if k < e else np.where(grid > 0, 1.0, 0.0)
    uniform = n * np.interp(e * p, *_slowest_gpu_experts(n_experts, n))
    reads = np.minimum(uniform * ratio, n * np.minimum(np.ceil(e / n), k * grid))
    # Never above uniform routing's count: the popular experts sit one per GPU first, so skew spreads
    # the busiest GPU's load no worse than uniform routing does (the ratio's approximation had read
    # 8.85 against uniform's 8.50 and a Monte Carlo's 8.11 for Llama-4-Scout at skew 2 on 8 GPUs, T = 2).
    return grid, np.minimum(np.maximum.accumulate(reads), uniform)


def expert_reads(n_experts: float, experts_per_token: float, tokens, groups: int = 1,
                 skew: float = 0.0):
    """Expert reads of one MoE layer for a step of ``tokens`` tokens, each routed to k of E experts
    uniformly, in units of one expert's per-GPU share. Broadcasts over ``tokens``.

    groups = 1 (each expert split by width over the GPUs, tensor parallelism): every GPU reads its
    share of every touched expert, D = E (1 - (1 - k/E)^T) shares, D the distinct experts touched.

    groups = n (expert parallelism: each GPU holds E / n experts whole): the step waits for the
    slowest GPU, which reads M whole experts (n shares each), M the most touched experts any one
    GPU holds. By symmetry the D touched experts are a uniform D-subset of the E, so
    P(M <= j | D = d) = [x^d] (sum_{i <= j} C(E/n, i) x^i)^n / C(E, d) (counted exactly), and
        reads = n * E[M | D = E (1 - (1 - k/E)^T)]   (interpolated between integer d),
    M given D taken at D's expected value (a little high where D varies: within 2.4 % of a Monte
    Carlo at E = 8, within 1 % from E = 32).
    With many tokens every expert is touched (reads -> E, as under TP); at batch 1 the k experts
    land unevenly (tested against a Monte Carlo of the routing).

    ``skew`` s > 0 (``routing_shares``): D is the skewed count ``skewed_touched``; under expert
    parallelism the uniform result above is scaled by the busiest GPU's count under skew over its
    count at s = 0, both with the experts taken as independent (``_skewed_slowest_gpu``; popular
    experts placed round-robin, one per GPU first). Tested against a Monte Carlo."""
    e, k, n = float(n_experts), float(experts_per_token), int(groups)
    scalar = isinstance(tokens, (int, float))
    t = np.asarray(tokens, dtype=float)
    p = -np.expm1(t * np.log1p(-k / e)) if k < e else np.where(t > 0, 1.0, 0.0)
    if skew > 0:
        if n <= 1:
            return skewed_touched(int(e), int(k), float(skew), tokens)
        grid, on_grid = _skewed_reads_grid(int(e), int(k), n, float(skew))
        reads = np.interp(t, grid, on_grid)
        return float(reads) if scalar else reads
    if n <= 1:
        return e * p
    table = _slowest_gpu_experts(int(e), n)
    if scalar:  # a scheduler's scalar clock: one value a step
        return n * float(np.interp(e * float(p), *table))
    return n * np.interp(e * p, *table)


def kv_bytes_held(context_tokens, kv_bytes_per_token: float, window_tokens: int, window_share: float):
    """KV bytes one sequence of ``context_tokens`` holds: every layer up to the window, then only
    the full-attention layers, a share 1 - ``window_share`` of them (broadcasts):
        bytes = kv_bytes_per_token * (c - window_share * max(c - W, 0))"""
    c = np.asarray(context_tokens, dtype=float)
    if not window_share:
        return c * kv_bytes_per_token
    return (c - window_share * np.maximum(c - window_tokens, 0.0)) * kv_bytes_per_token


#: Up to this many experts the slowest GPU's count is exact (C(E, d) stays inside a float).
EXACT_EXPERTS_MAX = 512


@lru_cache(maxsize=64)
def _slowest_gpu_experts(n_experts: int, groups: int) -> tuple[np.ndarray, np.ndarray]:
    """(d, E[M | D = d]) for d = 0..E: the most of d uniformly chosen experts (of E, in ``groups``
    groups of E / groups) that one group holds, counted exactly by polynomial powers."""
    e, n = n_experts, groups
    per = e // n
    d = np.arange(e + 1, dtype=float)
    if e > EXACT_EXPERTS_MAX:
        # Past a few hundred experts the exact count is too large for floats: each group's count
        # taken as Binomial(E / n, d / E), independent, and never below the pigeonhole d / n.
        j = np.arange(per + 1, dtype=float)
        log_c = math.lgamma(per + 1) - np.array([math.lgamma(x + 1) + math.lgamma(per - x + 1) for x in j])
        q = np.clip(d / e, 1e-300, 1.0 - 1e-16)[:, None]
        cdf = np.minimum(np.cumsum(np.exp(log_c + j * np.log(q) + (per - j) * np.log1p(-q)), axis=1), 1.0)
        expected = np.sum(1.0 - cdf[:, :per] ** n, axis=1)
        return d, np.maximum(expected, np.ceil(d / n))  # the busiest GPU holds at least d / n
    comb = np.array([math.comb(per, i) for i in range(per + 1)], dtype=float)
    total = np.array([math.comb(e, d) for d in range(e + 1)], dtype=float)
    expected = np.zeros(e + 1)
    for j in range(per):  # E[M] = sum_j P(M > j)
        poly = np.ones(1)
        for _ in range(n):
            poly = np.convolve(poly, comb[:j + 1])[:e + 1]
        ways = np.zeros(e + 1)
        ways[:poly.size] = poly
        expected += 1.0 - np.minimum(ways / total, 1.0)
    return d, expected


@dataclass(frozen=True)
class Model:
    """A decoder: dense, mixture-of-experts, MHA/GQA or MLA. Shapes are the config's; precisions are
    serving choices.

    Attributes:
        name: display name.
        n_layers, hidden, n_heads, n_kv_heads, head_dim, intermediate, vocab: from config.json
            (``intermediate`` is the width of a dense MLP; a mixture's experts use ``moe_intermediate``
            where the config gives one).
        tied_embeddings: lm_head shares the embedding matrix (no extra parameters).
        qkv_bias: q/k/v projections carry a bias (Qwen2, gpt-oss).
        o_bias: the output projection carries a bias (gpt-oss).
        qk_norm: per-head RMSNorm on q and k (Qwen3): 2 * head_dim parameters a layer.
        gated_mlp: SwiGLU (3 matrices). False: a plain 2-matrix MLP with biases (GPT-J's GELU MLP).
        parallel_block: attention and MLP read the same normed input (GPT-J): one norm a layer, and
            the output projection carries no bias.
        lm_head_bias: the LM head carries a bias (GPT-J).
        sliding_window: attention window in tokens of the windowed layers, or None.
        window_layers: layers that attend over at most ``sliding_window`` tokens (sliding window or
            Llama 4's chunked attention); the others attend over the whole context.
        weight_dtype: one of WEIGHT_DTYPES.
        kv_dtype: 'bf16' or 'fp8'.
        quant_scope: 'decoder' (every decoder linear layer stored in ``weight_dtype``) or 'experts'
            (only the routed experts' weight matrices; the rest BF16, as gpt-oss ships).
        shipped_dtype: the weight precision the published checkpoint stores (its config's
            ``quantization_config``): 'bf16', 'fp8' (DeepSeek-V3) or 'mxfp4' (gpt-oss).
        source: where the config comes from.
        n_experts: routed experts in each MoE layer (0: a dense model).
        experts_per_token: experts each token is routed to (top-k).
        moe_intermediate: width of one routed expert (0: ``intermediate``, as Mixtral's config).
        shared_intermediate: total width of the shared experts every token runs (DeepSeek, Llama 4).
        dense_layers: leading layers with a dense MLP of width ``intermediate`` (DeepSeek's
            ``first_k_dense_replace``); the rest are MoE layers.
        expert_bias, router_bias: the experts' and router's linear layers carry biases (gpt-oss).
        attn_sinks: one learned sink logit per head and layer (gpt-oss).
        q_lora_rank, kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim, v_head_dim: multi-head latent
            attention (DeepSeek-V2/V3); ``kv_lora_rank`` 0 means ordinary attention.
        tp: GPUs the replica is split across (Megatron tensor parallelism: heads, MLP and expert width
            and vocabulary split; a KV head is replicated where there are fewer KV heads than GPUs;
            MLA's latent and its down-projections are replicated on every GPU, as engines do).
            ``weight_bytes`` and ``kv_bytes_per_token`` are per GPU.
        routing_skew: how unevenly a mixture's router spreads tokens over its experts: 0 uniform
            (the named default), s > 0 the r-th most popular expert's share proportional to r^-s
            (``routing_shares``). Fewer distinct experts are touched a step, so fewer bytes read.
        expert_parallel: a mixture's routed experts are spread whole over the ``tp`` GPUs (E / tp
            each: expert parallelism, attention and the rest still tensor-parallel) instead of each
            expert split by width. The same bytes per GPU; the slowest GPU's expert reads set a
            step (``expert_reads``). The all-reduce after the MLP stays: each GPU sums its experts'
            outputs for every token, as engines combine them under TP attention.
        max_positions: the longest sequence, prompt and output together, in tokens, the model reads
            (its config's ``max_position_embeddings``; GPT-J's ``n_positions``): an engine serves it at
            most that long by default (vLLM's ``max_model_len``) and refuses a longer request. None:
            the config does not say.
    """

    name: str
    n_layers: int
    hidden: int
    n_heads: int
    n_kv_heads: int
    head_dim: int
    intermediate: int
    vocab: int
    tied_embeddings: bool
    source: str
    qkv_bias: bool = False
    qk_norm: bool = False
    gated_mlp: bool = True
    parallel_block: bool = False
    lm_head_bias: bool = False
    sliding_window: int | None = None
    weight_dtype: str = "bf16"
    kv_dtype: str = "bf16"
    n_experts: int = 0
    experts_per_token: int = 0
    tp: int = 1
    o_bias: bool = False
    window_layers: int = 0
    quant_scope: str = "decoder"
    moe_intermediate: int = 0
    shared_intermediate: int = 0
    dense_layers: int = 0
    expert_bias: bool = False
    router_bias: bool = False
    attn_sinks: bool = False
    q_lora_rank: int = 0
    kv_lora_rank: int = 0
    qk_nope_head_dim: int = 0
    qk_rope_head_dim: int = 0
    v_head_dim: int = 0
    shipped_dtype: str = "bf16"
    expert_parallel: bool = False
    routing_skew: float = 0.0
    int4_group: int = INT4_GROUP
    max_positions: int | None = None

    def __post_init__(self) -> None:
        if self.weight_dtype not in WEIGHT_DTYPES:
            raise ValueError(f"weight_dtype must be one of {WEIGHT_DTYPES}, got {self.weight_dtype!r}")
        if self.kv_dtype not in KV_DTYPES:
            raise ValueError(f"kv_dtype must be one of {KV_DTYPES}, got {self.kv_dtype!r}")
        if self.shipped_dtype not in WEIGHT_DTYPES:
            raise ValueError(f"shipped_dtype must be one of {WEIGHT_DTYPES}, got {self.shipped_dtype!r}")
        if self.quant_scope not in QUANT_SCOPES:
            raise ValueError(f"quant_scope must be one of {QUANT_SCOPES}, got {self.quant_scope!r}")
        for field in ("n_layers", "hidden", "n_heads", "n_kv_heads", "head_dim", "intermediate", "vocab"):
            value = getattr(self, field)
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise ValueError(f"{field} must be a positive integer, got {value!r}")
        for field in ("moe_intermediate", "shared_intermediate", "dense_layers", "window_layers",
                      "q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim",
                      "v_head_dim", "n_experts", "experts_per_token"):
            value = getattr(self, field)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(f"{field} must be an integer >= 0, got {value!r}")
        if self.n_experts and not (1 <= self.experts_per_token <= self.n_experts):
            raise ValueError(f"experts_per_token must be in 1..{self.n_experts}, "
                             f"got {self.experts_per_token!r}")
        if self.max_positions is not None and (not isinstance(self.max_positions, int)
                                               or isinstance(self.max_positions, bool)
                                               or self.max_positions <= 0):
            raise ValueError(f"max_positions must be a positive integer or None, got {self.max_positions!r}")
        if self.dense_layers > self.n_layers or self.window_layers > self.n_layers:
            raise ValueError("dense_layers and window_layers cannot exceed n_layers")
        if self.window_layers and not (isinstance(self.sliding_window, int) and self.sliding_window > 0):
            raise ValueError("window_layers needs a positive sliding_window")
        if self.kv_lora_rank and not (self.qk_rope_head_dim and self.qk_nope_head_dim and self.v_head_dim):
            raise ValueError("an MLA model needs qk_nope_head_dim, qk_rope_head_dim and v_head_dim")
        if not isinstance(self.tp, int) or self.tp < 1:
            raise ValueError(f"tp must be a positive integer, got {self.tp!r}")
        if not (isinstance(self.int4_group, int) and not isinstance(self.int4_group, bool)
                and self.int4_group >= 8):
            raise ValueError(f"int4_group must be an integer >= 8, got {self.int4_group!r}")
        if not (isinstance(self.routing_skew, (int, float)) and not isinstance(self.routing_skew, bool)
                and 0.0 <= self.routing_skew <= MAX_ROUTING_SKEW):
            raise ValueError(f"routing_skew must be in 0..{MAX_ROUTING_SKEW:g}, got {self.routing_skew!r}")
        if self.expert_parallel and not self.n_experts:
            raise ValueError(f"{self.name} has no experts to spread over GPUs (expert parallelism)")
        if self.expert_parallel and self.n_experts % self.tp:
            raise ValueError(f"{self.name}'s {self.n_experts} experts cannot be spread whole over "
                             f"{self.tp} GPUs: the count must divide by {self.tp}")
        widths = [self.n_heads]
        if self.dense_layers or not self.n_experts:
            widths.append(self.intermediate)
        if self.n_experts and not self.expert_parallel:
            widths.append(self.expert_width)
        if self.shared_intermediate:
            widths.append(self.shared_intermediate)
        if any(w % self.tp for w in widths):
            raise ValueError(f"{self.name} cannot be split across {self.tp} GPUs: its {self.n_heads} "
                             f"heads and MLP widths ({', '.join(map(str, widths[1:]))}) must divide by "
                             f"{self.tp}")

    # ---- shapes ----

    def reads(self, tokens: int) -> bool:
        """Whether a sequence of ``tokens`` tokens (prompt and output together) is within the model's
        positions (``max_positions``; always, where the config does not say)."""
        return self.max_positions is None or int(tokens) <= self.max_positions

    @property
    def is_mla(self) -> bool:
        return self.kv_lora_rank > 0

    @property
    def qk_dim(self) -> int:
        """Width of one head's query and key (MLA: nope + rope)."""
        return self.qk_nope_head_dim + self.qk_rope_head_dim if self.is_mla else self.head_dim

    @property
    def v_dim(self) -> int:
        """Width of one head's value."""
        return self.v_head_dim if self.is_mla else self.head_dim

    @property
    def expert_width(self) -> int:
        """Width of one routed expert's MLP."""
        return self.moe_intermediate or self.intermediate

    @property
    def moe_layers(self) -> int:
        """Layers whose MLP is a mixture (all but the leading dense ones; 0 for a dense model)."""
        return self.n_layers - self.dense_layers if self.n_experts else 0

    @property
    def mlp_layers(self) -> int:
        """Layers with a dense MLP."""
        return self.n_layers - self.moe_layers

    # ---- one GPU's share under tensor parallelism ----

    @property
    def heads_per_gpu(self) -> int:
        return self.n_heads // self.tp

    @property
    def kv_heads_per_gpu(self) -> int:
        """KV heads one GPU holds: a share, or one replicated head when there are fewer than GPUs."""
        return max(1, self.n_kv_heads // self.tp)

    @property
    def intermediate_per_gpu(self) -> int:
        return self.intermediate // self.tp

    @property
    def vocab_per_gpu(self) -> float:
        """Rows of the embedding and LM head one GPU holds (vocabulary-parallel)."""
        return self.vocab / self.tp

    # ---- parameter counts, per operator ----

    def _qkv_params(self, heads: int, kv_heads: int) -> tuple[int, int]:
        """(split, replicated) parameters of one layer's q/k/v projections for ``heads`` query heads
        and ``kv_heads`` KV heads (biases and sinks included). MLA: the down-projections to the q
        and KV latents and their norms are replicated, the up-projections split by head."""
        d = self.hidden
        sinks = heads if self.attn_sinks else 0
        if self.is_mla:
            nope, rope, v = self.qk_nope_head_dim, self.qk_rope_head_dim, self.v_head_dim
            if self.q_lora_rank:
                q_rep = d * self.q_lora_rank + self.q_lora_rank
                q_split = self.q_lora_rank * heads * (nope + rope)
            else:
                q_rep, q_split = 0, d * heads * (nope + rope)
            kv_rep = d * (self.kv_lora_rank + rope) + self.kv_lora_rank
            kv_split = self.kv_lora_rank * heads * (nope + v)
            return q_split + kv_split + sinks, q_rep + kv_rep
        width = (heads + 2 * kv_heads) * self.head_dim
        n = d * width + (width if self.qkv_bias else 0)
        return n + sinks, 0

    @property
    def qkv_params(self) -> int:
        """Parameters of one layer's q, k, v projections (biases included)."""
        split, rep = self._qkv_params(self.n_heads, self.n_kv_heads)
        return split + rep

    @property
    def o_params(self) -> int:
        """Parameters of one layer's output projection."""
        return self.n_heads * self.v_dim * self.hidden + (self.hidden if self.o_bias else 0)

    @property
    def mlp_matrices(self) -> int:
        """Weight matrices of the MLP: 3 for SwiGLU (gate, up, down), 2 for a plain MLP."""
        return 3 if self.gated_mlp else 2

    def _mlp_params(self, width: int, bias: bool) -> int:
        n = self.mlp_matrices * self.hidden * width
        return n + ((self.mlp_matrices - 1) * width + self.hidden if bias else 0)

    @property
    def dense_mlp_params(self) -> int:
        """Parameters of one dense MLP of width ``intermediate`` (biases for a plain MLP)."""
        return self._mlp_params(self.intermediate, not self.gated_mlp)

    @property
    def expert_params(self) -> int:
        """Parameters of one routed expert (of one MLP for a dense model)."""
        if not self.n_experts:
            return self.dense_mlp_params
        return self._mlp_params(self.expert_width, self.expert_bias or not self.gated_mlp)

    @property
    def shared_params(self) -> int:
        """Parameters of one MoE layer's shared experts."""
        return self._mlp_params(self.shared_intermediate, False) if self.shared_intermediate else 0

    @property
    def router_params(self) -> int:
        return self.hidden * self.n_experts + (self.n_experts if self.router_bias else 0)

    @property
    def moe_layer_mlp_params(self) -> int:
        """Parameters of one MoE layer's MLP: every expert, the shared experts and the router."""
        return self.n_experts * self.expert_params + self.shared_params + self.router_params

    @property
    def mlp_params(self) -> int:
        """MLP parameters of one layer, averaged over the layers (exact for a model whose layers are
        all alike: one MLP, or every expert of a mixture plus its router)."""
        total = self.mlp_layers * self.dense_mlp_params + self.moe_layers * self.moe_layer_mlp_params
        return total // self.n_layers if total % self.n_layers == 0 else total / self.n_layers

    @property
    def active_mlp_params(self) -> int:
        """MLP parameters one token uses in a MoE layer (k experts, shared experts, the router);
        all of a dense MLP."""
        if self.n_experts:
            return self.experts_per_token * self.expert_params + self.shared_params + self.router_params
        return self.dense_mlp_params

    def experts_touched(self, tokens):
        """Distinct experts a step of ``tokens`` tokens reads in each layer: under uniform routing
        E (1 - (1 - k/E)^T) (MEASURED.md 2.3), under ``routing_skew`` s > 0 the skewed count
        (``skewed_touched``); 1 for a dense MLP. Broadcasts."""
        t = np.asarray(tokens, dtype=float)
        if not self.n_experts:
            return np.ones_like(t)
        if self.routing_skew:
            return np.asarray(skewed_touched(self.n_experts, self.experts_per_token, self.routing_skew, t))
        e, k = float(self.n_experts), float(self.experts_per_token)
        return e * -np.expm1(t * np.log1p(-k / e)) if k < e else np.full_like(t, e)

    def tokens_to_touch(self, share: float = 0.95) -> int:
        """The fewest tokens a step needs for its routing to touch ``share`` of the experts (1 for a
        dense model): (log(1 - share) / log(1 - k/E)) rounded up under uniform routing, found by
        bisection under skew (where the least popular experts take many more)."""
        if not self.n_experts or self.experts_per_token >= self.n_experts:
            return 1
        share = min(float(share), 0.999)  # every expert surely touched takes unboundedly many tokens
        target = share * self.n_experts
        if not self.routing_skew:
            k, e = self.experts_per_token, self.n_experts
            return max(1, math.ceil(math.log1p(-share) / math.log1p(-k / e)))
        lo, hi = 1, 2
        while float(self.experts_touched(hi)) < target and hi < 10**9:
            lo, hi = hi, hi * 2
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if float(self.experts_touched(mid)) < target else (lo, mid)
        return hi if float(self.experts_touched(lo)) < target else lo

    @property
    def norm_params(self) -> int:
        """Norm parameters of one layer: RMSNorm weights (2 a layer), LayerNorm weight + bias for a
        parallel block (1 a layer), q/k norms."""
        n = 2 * self.hidden  # two RMSNorm weights, or one LayerNorm's weight and bias (GPT-J)
        if self.qk_norm:
            n += 2 * self.head_dim
        return n

    @property
    def attention_params(self) -> int:
        """One layer's attention: q/k/v (or MLA) and output projections."""
        return self.qkv_params + self.o_params

    @property
    def layer_params(self) -> int:
        return self.attention_params + self.mlp_params + self.norm_params

    @property
    def embedding_params(self) -> int:
        return self.vocab * self.hidden

    @property
    def lm_head_params(self) -> int:
        """The LM head's own parameters (0 when tied to the embedding), bias included."""
        if self.tied_embeddings:
            return 0
        return self.vocab * self.hidden + (self.vocab if self.lm_head_bias else 0)

    @property
    def final_norm_params(self) -> int:
        return 2 * self.hidden if self.parallel_block else self.hidden

    @property
    def _mlp_total(self) -> int:
        return self.mlp_layers * self.dense_mlp_params + self.moe_layers * self.moe_layer_mlp_params

    @cached_property
    def n_params(self) -> int:
        """Total parameter count (embedding and lm_head included; no multi-token-prediction module)."""
        return self.decoder_params + self.embedding_params + self.lm_head_params + self.final_norm_params

    @cached_property
    def active_params(self) -> int:
        """Parameters one token runs through, the input embedding excluded (the convention of the
        official "active" figures: DeepSeek-V3's 37B less its 0.9 B embedding, gpt-oss's 5.1 B)."""
        mlp = self.mlp_layers * self.dense_mlp_params + self.moe_layers * self.active_mlp_params
        return (self.n_layers * (self.attention_params + self.norm_params) + mlp
                + (self.embedding_params if self.tied_embeddings else self.lm_head_params)
                + self.final_norm_params)

    @property
    def decoder_params(self) -> int:
        """Parameters of the decoder layers: what a quantised checkpoint stores in ``weight_dtype``
        (all of them for ``quant_scope='decoder'``)."""
        return self.n_layers * (self.attention_params + self.norm_params) + self._mlp_total

    @property
    def routed_expert_params(self) -> int:
        """Parameters of every routed expert of every layer (biases included)."""
        return self.moe_layers * self.n_experts * self.expert_params

    @property
    def routed_expert_bias_params(self) -> int:
        """The routed experts' biases (gpt-oss): checkpoints keep them BF16 beside the quantised
        weight matrices."""
        if not (self.n_experts and self.expert_bias):
            return 0
        return self.moe_layers * self.n_experts * ((self.mlp_matrices - 1) * self.expert_width + self.hidden)

    # ---- bytes ----

    @property
    def weight_bytes_per_element(self) -> float:
        """Bytes a quantised (``weight_dtype``) weight takes, scales included."""
        return weight_bytes_per_element(self.weight_dtype, self.int4_group)

    @property
    def dense_bytes_per_element(self) -> float:
        """Bytes a weight of the non-expert decoder layers (attention, dense MLPs, shared experts,
        router, norms) takes: ``weight_dtype``, or BF16 where only the experts are quantised."""
        return self.weight_bytes_per_element if self.quant_scope == "decoder" else BYTES_PER_ELEMENT["bf16"]

    @property
    def attention_params_per_gpu(self) -> float:
        """One layer's attention parameters on one GPU: q and the output projection split by head,
        k and v split by KV head (replicated below one a GPU), MLA's down-projections replicated."""
        split, rep = self._qkv_params(self.heads_per_gpu, self.kv_heads_per_gpu)
        o = self.heads_per_gpu * self.v_dim * self.hidden + (self.hidden if self.o_bias else 0) / self.tp
        return split + rep + o

    @property
    def layer_params_per_gpu(self) -> float:
        """One layer's parameters on one GPU (MLPs averaged over the layers): attention as
        ``attention_params_per_gpu``, MLP split, norms replicated."""
        return self.attention_params_per_gpu + self.mlp_params / self.tp + self.norm_params

    @property
    def weight_bytes(self) -> float:
        """Bytes of weights one GPU holds, as stored: decoder layers in ``weight_dtype`` (only the
        routed experts for ``quant_scope='experts'``, the rest BF16); embedding, LM head and final
        norm in BF16 (all weights when ``tp`` is 1)."""
        rest = self.n_params - self.decoder_params
        biases = self.routed_expert_bias_params
        experts = self.routed_expert_params - biases
        if self.tp == 1:
            other = self.decoder_params - experts - biases
        else:
            other = self.n_layers * self.layer_params_per_gpu - (experts + biases) / self.tp
            experts, biases, rest = experts / self.tp, biases / self.tp, rest / self.tp
        bf16 = BYTES_PER_ELEMENT["bf16"]
        return (experts * self.weight_bytes_per_element + other * self.dense_bytes_per_element
                + (biases + rest) * bf16)

    @property
    def expert_storage_factor(self) -> float:
        """Bytes the engine stores, and reads, for a routed expert's weight matrices over the
        checkpoint's: MXFP4 experts padded to vLLM's kernel tiles (MXFP4_PAD_HIDDEN, MXFP4_PAD_WIDTH,
        on each GPU's share of the width); 1 for every other precision and for dense models."""
        if self.weight_dtype != "mxfp4" or not self.n_experts:
            return 1.0
        width = self.expert_width if self.expert_parallel else self.expert_width // self.tp
        padded = (-(-self.hidden // MXFP4_PAD_HIDDEN) * MXFP4_PAD_HIDDEN
                  * -(-width // MXFP4_PAD_WIDTH) * MXFP4_PAD_WIDTH)
        return padded / (self.hidden * width)

    @property
    def served_weight_bytes(self) -> float:
        """Bytes of weights one GPU holds in the engine's layout: ``weight_bytes`` with the routed
        experts' matrices at ``expert_storage_factor`` (what the memory check counts)."""
        if self.expert_storage_factor == 1.0:
            return self.weight_bytes
        experts = self.routed_expert_params - self.routed_expert_bias_params
        return (self.weight_bytes + (self.expert_storage_factor - 1.0) * experts / self.tp
                * self.weight_bytes_per_element)

    @property
    def lm_head_bytes(self) -> float:
        """Bytes one LM-head pass reads on one GPU: its share of the head (the embedding table when
        tied), BF16."""
        return self.vocab_per_gpu * self.hidden * BYTES_PER_ELEMENT["bf16"]

    @property
    def kv_bytes_per_token_layer(self) -> float:
        """KV-cache bytes one token occupies in one layer on one GPU: K and V of its KV heads, or
        MLA's latent and RoPE key (replicated on every GPU). An FP8 MLA cache is vLLM's / FlashMLA's
        layout: the latent in FP8 with one FP32 scale per 128 values, the RoPE key kept in BF16
        (DeepSeek-V3: 512 + 16 + 128 = 656 B, MEASURED.md 2.3)."""
        b = BYTES_PER_ELEMENT[self.kv_dtype]
        if self.is_mla:
            if self.kv_dtype == "fp8":
                return (self.kv_lora_rank * b + 4 * math.ceil(self.kv_lora_rank / MLA_FP8_SCALE_GROUP)
                        + self.qk_rope_head_dim * BYTES_PER_ELEMENT["bf16"])
            return (self.kv_lora_rank + self.qk_rope_head_dim) * b
        return 2 * self.kv_heads_per_gpu * self.head_dim * b

    @property
    def kv_bytes_per_token(self) -> float:
        """KV-cache bytes one token occupies on one GPU in every layer: 2 (K and V) * layers *
        kv_heads (per GPU) * head_dim * bytes, or layers * (kv_lora_rank + qk_rope_head_dim) * bytes
        for MLA (FP8 MLA: the latent in FP8 with its scales, the RoPE key in BF16,
        ``kv_bytes_per_token_layer``). Every layer counts: past the window a windowed layer holds no more
        (``kv_bytes_per_sequence``)."""
        return self.n_layers * self.kv_bytes_per_token_layer

    @property
    def kv_bytes_per_token_beyond_window(self) -> float:
        """KV bytes each further token adds once the context is longer than the window: the
        full-attention layers only."""
        return (self.n_layers - self.window_layers) * self.kv_bytes_per_token_layer

    @property
    def window_share(self) -> float:
        """Share of the layers that are windowed (sliding window or chunked attention; 0: none)."""
        return self.window_layers / self.n_layers if self.window_layers else 0.0

    def kv_bytes_per_sequence(self, context_tokens):
        """KV bytes one sequence of ``context_tokens`` holds on one GPU, the windowed layers capped
        at the window (MEASURED.md 2.3: gpt-oss, Llama 4). Broadcasts."""
        return kv_bytes_held(context_tokens, self.kv_bytes_per_token, self.sliding_window or 0,
                             self.window_share)

    @property
    def compute_precision(self) -> str:
        """Tensor-core precision of the weight GEMMs: FP8 weights run FP8 math, NVFP4/MXFP4 FP4 math
        (where the GPU has no FP4 units, ``GPU.peak_flops`` gives the BF16 rate: weight-only); BF16,
        INT8 and INT4 (weight-only, dequantised on the fly) run BF16 math."""
        if self.weight_dtype in FP4_DTYPES:
            return "fp4"
        return "fp8" if self.weight_dtype == "fp8" else "bf16"

    def with_precision(self, weight_dtype: str = "bf16", kv_dtype: str = "bf16",
                       int4_group: int = INT4_GROUP) -> Model:
        """The same model served at another weight / KV-cache precision (``int4_group``: weights per
        INT4 quantisation group, read only at ``weight_dtype="int4"``)."""
        return dataclasses.replace(self, weight_dtype=weight_dtype, kv_dtype=kv_dtype, int4_group=int4_group)

    def with_tp(self, tp: int, expert_parallel: bool = False) -> Model:
        """The same model split across ``tp`` GPUs, a mixture's experts split by width or, with
        ``expert_parallel``, spread whole (raises ValueError if its shapes do not divide)."""
        return dataclasses.replace(self, tp=tp, expert_parallel=bool(expert_parallel) and tp > 1)

    @property
    def expert_groups(self) -> int:
        """GPUs the routed experts are spread over whole (1: none, or each split by width)."""
        return self.tp if self.expert_parallel else 1

    def expert_reads(self, tokens):
        """Expert reads of a step of ``tokens`` tokens in each MoE layer, in per-GPU expert shares
        (the slowest GPU's, ``expert_reads``; ``experts_touched`` under tensor parallelism)."""
        if not self.n_experts:
            return np.ones_like(np.asarray(tokens, dtype=float))
        return expert_reads(self.n_experts, self.experts_per_token, tokens, self.expert_groups,
                            self.routing_skew)


# The presets are the config.json files in sim/configs/ (sim.configs reads them; sources in
# sim/configs/SOURCES.md). Imported here, after Model, because sim.configs builds Models.
from sim import configs as _configs  # noqa: E402

#: The models the sidebar offers.
SIDEBAR_MODELS = ("Llama-3.1-8B", "Llama-3.1-70B", "Mistral-7B", "Qwen2.5-7B", "Qwen2.5-72B", "Llama-3.2-1B",
                  "Mixtral-8x7B", "Qwen3-30B-A3B", "Qwen3-235B-A22B", "DeepSeek-V3", "gpt-oss-20b",
                  "gpt-oss-120b", "Llama-4-Scout")
MODELS: dict[str, Model] = {name: _configs.load_preset(name) for name in SIDEBAR_MODELS}

#: Dense models the measured rows name (MEASURED.md section 1), loadable but not in the sidebar.
MEASURED_MODELS: dict[str, Model] = {
    name: _configs.load_preset(name)
    for name in ("Llama-2-7B", "Llama-2-70B", "GPT-J-6B", "Qwen3-8B", "Llama-3.1-405B")
}

ALL_MODELS: dict[str, Model] = {**MODELS, **MEASURED_MODELS}

DEFAULT_MODEL = "Llama-3.1-8B"
#: The draft model the speculative-decoding page pairs with the Llama targets (shared vocabulary).
DRAFT_MODEL = "Llama-3.2-1B"
