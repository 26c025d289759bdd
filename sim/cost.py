"""The shared step-time model: an operator-level roofline of one engine step, vectorised over steps.

One step runs the model once over a batch. Sequence i brings q_i new tokens (a prompt or prompt chunk
in prefill, 1 in decode, the drafted positions when verifying) and has c_i tokens already cached. A
step is described by four sums over its sequences:

    T = sum q_i                          new tokens
    P = sum q_i * (c_i + (q_i + 1) / 2)  causal attention (query, key) pairs
    K = sum (c_i + q_i)                  tokens whose KV the step reads (cached) or writes (new)
                                         (windowed layers attend over at most W keys and read at
                                         most W cached tokens: the layer averages of
                                         ``attention_sums``)
    S = positions that sample            the last token of a prompt (in its last chunk), every
                                         decode token, every verified position

Each operator runs as its own kernels, one after another; within one, math and memory overlap:

    roof   = layers_op * max(FLOP_op / (gemm_best * compute_eff), bytes_op / (stream * memory_eff))
    t_op   = roof + kernels_op * t_graph                         (a step replayed as a CUDA graph)
           = max(roof + kernels_op * t_graph, kernels_op * t_launch)   (launched one by one)
    t_gpu  = sum_op t_op
    t_step = t_gpu + host_overhead          (max(t_gpu, host_overhead) where the host overlaps)

with the operators (d hidden, H/KV heads, hd head dim, ff MLP width, V vocab, w bytes a weight,
a = 2 bytes an activation, kv = KV bytes a token a layer):

    embed      (once)      gather T rows of the table: T * d * (2 + a) bytes, no FLOP
    qkv        (L layers)  2*T*d*(H+2KV)*hd FLOP;  d*(H+2KV)*hd*w + T*(d+(H+2KV)*hd)*a bytes
    attention  (L layers)  4*H*hd*P FLOP;          K*kv + 2*T*H*hd*a bytes (KV read and written)
    o_proj     (L layers)  2*T*H*hd*d FLOP;        H*hd*d*w + T*(H*hd+d)*a bytes
    mlp        (L layers)  2*T*m*d*ff FLOP;        m*d*ff*w + T*(2d+(m-1)*ff+ff)*a bytes (m matrices)
    lm_head    (once)      2*S*d*V FLOP;           V*d*2 (BF16 head, read if S > 0) + S*(d+2V)*a bytes
    allreduce  (L layers)  two a layer on n > 1 GPUs, each 2(n-1)*alpha + 2(n-1)/n * T*d*a / busbw
                           (the textbook ring's latency and bandwidth terms, MEASURED.md 3.3)

GEMMs run at the tensor-core rate of the weights' precision (FP8 weights: FP8 math); attention and
the BF16 LM head at the BF16 rate, as are the router, shared experts and dense layers of a mixture
quantised only in its experts (gpt-oss). ``t_graph`` is the fixed cost of one kernel on the GPU;
``t_launch`` the CPU's time to launch one kernel when a step is not a CUDA graph (graphs cover steps of up to
``cuda_graph_max_tokens`` tokens, as vLLM captures them), which only shows when the kernels are
shorter than their launches. Either counts as kernel time
(a kernel's ramp-up and tail, and gaps of microseconds that a sampled
``nvidia-smi`` reading does not resolve). Host work (scheduling, sampling, bookkeeping) runs between
steps with no kernel running: the measured engines show it (fitting them with the host work hidden
under the kernels, as SGLang's overlap scheduler and vLLM V1's asynchronous scheduling aim to, is
worse: ``overlap_host=True`` models that).

``gemm_best`` is the GPU's best measured dense GEMM at the weights' precision and ``stream`` its
STREAM-like bandwidth (``GPU.gemm_ceiling`` / ``hbm_ceiling`` x the spec peaks: the microbenchmark
rows of measured.csv, a typical share where a GPU has none). The efficiencies are shares of those,
the same for every GPU: a serving step's kernels reach ``compute_eff`` of what the GPU's best GEMM
does and ``memory_eff`` of what a STREAM copy does. Their defaults are fitted to the measured rows
by ``scripts/calibrate.py`` (least squares on log time; README, "The model").
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from functools import cached_property, lru_cache, partial

import numpy as np

from sim.hardware import GPU, GPUS
from sim.models import ACTIVATION_BYTES, BYTES_PER_ELEMENT, MODELS, Model, expert_reads


@dataclass(frozen=True)
class Assumptions:
    """The named, editable numbers that turn a roofline floor into an estimate.

    Defaults are fitted by ``scripts/calibrate.py`` to the measured rows of measured.csv.

    Attributes:
        compute_eff: a serving step's compute-bound kernels' FLOP/s as a share of the GPU's best
            measured GEMM at that precision (``GPU.gemm_ceiling``: 47-87 % of the spec peak,
            measured.csv mle-01..05, az-03), so the one share holds for every GPU and precision.
        memory_eff: a memory-bound kernel's bytes/s as a share of the GPU's STREAM-like bandwidth
            (``GPU.hbm_ceiling``: 77-89 % of the spec figure, az-04..07).
        host_overhead_s: CPU seconds per step: the engine's scheduling, sampling and bookkeeping.
        sequence_host_s: CPU seconds per step for each sequence that samples in it: the per-request
            share of that work (building each sequence's inputs, its sampling bookkeeping), which
            grows with the batch. Fitted as a cost that grows with the batch; that it is the host's,
            and that a verify pass pays it once a sequence (a scheduler's per-request work is per
            step), are assumptions.
        overlap_host: the host work of a step runs while the GPU runs the previous one (SGLang's
            overlap scheduler, vLLM V1's asynchronous scheduling); False: it runs between steps.
        allreduce_hop_s: the latency alpha of one hop of a tensor-parallel all-reduce, seconds: an
            all-reduce over n GPUs takes 2(n-1) alpha besides its bandwidth term and the fixed
            ``graph_kernel_s`` every kernel pays (the textbook ring, MEASURED.md 3.3; NCCL's own
            tuning model has the same form, a base plus a latency a hop). A fitted dependence on n:
            engines' one-shot kernels have no ring, but their latency grows with the peers they
            wait on. nccl-tests' small messages on 8 GPUs take 25-45 us in all (MEASURED.md 3.2).
        kernel_launch_s: CPU seconds to launch one kernel when a step runs without a CUDA graph;
            a run of kernels takes at least that many launches' time (launch-bound when they are
            short, hidden under them when they are long).
        graph_kernel_s: fixed GPU seconds per kernel (ramp-up, tail, the gap to the next), paid with
            or without a CUDA graph.
        cuda_graphs: decode-sized steps run as CUDA graphs (vLLM, SGLang and TensorRT-LLM defaults).
        cuda_graph_max_tokens: the largest step, in new tokens, that runs as a graph (vLLM's default
            largest capture size is 512).
        measured_ceilings: the efficiencies are shares of each GPU's microbenchmarks (off: shares of
            the spec peaks, as the pure roofline floor prices them).
    """

    compute_eff: float = 0.639
    memory_eff: float = 0.865
    host_overhead_s: float = 0.5e-3
    kernel_launch_s: float = 20e-6
    graph_kernel_s: float = 3.0e-6
    cuda_graphs: bool = True
    cuda_graph_max_tokens: int = 512
    measured_ceilings: bool = True
    overlap_host: bool = False
    allreduce_hop_s: float = 1.6e-6
    sequence_host_s: float = 4.3e-6

    def __post_init__(self) -> None:
        for name in ("compute_eff", "memory_eff"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and 0 < value <= 1):
                raise ValueError(f"{name} must be in (0, 1], got {value!r}")
        for name in ("host_overhead_s", "kernel_launch_s", "graph_kernel_s", "allreduce_hop_s",
                     "sequence_host_s"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and 0 <= value < 1):
                raise ValueError(f"{name} must be in [0, 1) seconds, got {value!r}")
        if not (isinstance(self.cuda_graph_max_tokens, int) and self.cuda_graph_max_tokens >= 0):
            raise ValueError(f"cuda_graph_max_tokens must be an integer >= 0, got "
                             f"{self.cuda_graph_max_tokens!r}")


DEFAULT_ASSUMPTIONS = Assumptions()
#: A pure roofline: spec peaks, no launch or host time (the floor the estimate stands on).
ROOFLINE_FLOOR = Assumptions(compute_eff=1.0, memory_eff=1.0, host_overhead_s=0.0, kernel_launch_s=0.0,
                             graph_kernel_s=0.0, sequence_host_s=0.0, measured_ceilings=False)

#: The measured point the sidebar quotes (REFERENCE.md section 5, measured.csv eag-01):
#: Llama-3.1-8B (BF16), batch 1, short context, H100 SXM, SGLang v0.4.4: 158.34 tokens/s.
CALIBRATION_GPU, CALIBRATION_MODEL = "H100 SXM", "Llama-3.1-8B"
CALIBRATION_MEASURED_S = 1 / 158.34
CALIBRATION_CONTEXT_TOKENS = 128  # "short context": MT-bench prompts

#: The operators of a step, in the order a forward pass runs them ("allreduce" only under tensor
#: parallelism: two a layer, after the output projection and after the MLP).
OPERATORS = ("embed", "qkv", "attention", "o_proj", "mlp", "allreduce", "lm_head")


@dataclass(frozen=True)
class Operator:
    """One operator of the forward pass as linear functions of the step's sums X = (T, P, K, S).

    Per run: FLOP = flops . X; bytes = weight_bytes (when it runs) + bytes . X. A step runs it
    ``runs`` times (once per layer for per-layer operators)."""

    name: str
    runs: int
    kernels: int  # kernels one run launches
    flops: tuple[float, float, float, float]
    bytes: tuple[float, float, float, float]
    weight_bytes: float
    on_samples: bool  # runs only when the step samples (S > 0): the LM head
    #: GEMMs at the weights' precision; False: at the BF16 rate (attention, the LM head)
    tensor_precision: bool
    comm: bool = False  # a collective over the interconnect (tensor parallelism), priced apart
    experts: tuple[int, int] = (0, 0)  # (E, k) of a mixture-of-experts MLP; (0, 0) otherwise
    expert_bytes: float = 0.0  # one expert's weight bytes on one GPU: read once per expert touched
    #: FLOP . X priced at the BF16 rate although the operator's own rate is the weights' (a mixture
    #: quantised only in its experts: its router, shared experts and dense layers stay BF16).
    bf16_flops: tuple[float, float, float, float] = (0, 0, 0, 0)


@lru_cache(maxsize=256)
def operators(model: Model) -> tuple[Operator, ...]:
    """The operators of ``model``'s forward pass (see the module docstring for the formulas).

    Per-layer operators run once a layer with the layer-average shape: a model with leading dense
    layers (DeepSeek-V3's 3 of 61) gets an MLP whose per-run FLOP and bytes are the average over
    the layers, so the step's totals are exact. MLA's attention runs its latent projections as
    part of ``qkv`` and reads the latent cache (``kv_bytes_per_token``); its attention math is
    priced per head as 2 (qk_dim + v_dim) FLOP a (query, key) pair (the un-absorbed form)."""
    # One GPU's share (the whole model when tp = 1): heads, KV heads, MLP width and vocabulary split.
    d, h, kvh, ff, v = (model.hidden, model.heads_per_gpu, model.kv_heads_per_gpu,
                        model.intermediate_per_gpu, model.vocab_per_gpu)
    qk, vd = model.qk_dim, model.v_dim
    w, a = model.weight_bytes_per_element, ACTIVATION_BYTES
    wd = model.dense_bytes_per_element  # attention, dense MLPs, shared experts, router
    quantized_dense = model.quant_scope == "decoder"
    kv_layer = model.kv_bytes_per_token / model.n_layers
    if model.is_mla:
        qkv_out = (model.q_lora_rank + model.kv_lora_rank + model.qk_rope_head_dim
                   + h * qk + h * (model.qk_nope_head_dim + vd))
    else:
        qkv_out = (h + 2 * kvh) * model.head_dim
    o_params = h * vd * d
    qkv_params = model.attention_params_per_gpu - o_params
    m = model.mlp_matrices
    L = model.n_layers
    comm = ((Operator("allreduce", L, 2, (0, 0, 0, 0), (0, 0, 0, 0), 0.0, False, True, comm=True),)
            if model.tp > 1 else ())
    if model.n_experts:
        # A mixture: each token runs k experts, the shared experts and the router; a step reads
        # the weights of the experts its tokens touch, E (1 - (1 - k/E)^T) a layer
        # (Model.experts_touched). Leading dense layers are averaged in (fractions of L). Under
        # expert parallelism a GPU holds E / n experts whole and runs the tokens routed to them: on
        # average a 1/n share of the expert math (priced at that mean), and the slowest GPU's reads
        # set the step (``_touched`` with the GPU count).
        e, kk = model.n_experts, model.experts_per_token
        fe = model.expert_width / model.tp if model.expert_parallel else model.expert_width // model.tp
        fs = model.shared_intermediate // model.tp
        moe, dense = model.moe_layers / L, model.mlp_layers / L
        expert_flops = moe * 2 * kk * m * d * fe
        dense_flops = moe * 2 * (m * d * fs + d * e) + dense * 2 * m * d * ff  # shared, router, dense layers
        act = (moe * (2 * d + kk * m * fe + (m * fs if fs else 0)) + dense * (2 * d + m * ff)) * a
        fixed = (moe * (model.router_params + model.shared_params / model.tp)
                 + dense * model.dense_mlp_params / model.tp) * wd
        mlp = Operator("mlp", L, m + 3 + (m if fs else 0),
                       (expert_flops + (dense_flops if quantized_dense else 0.0), 0, 0, 0), (act, 0, 0, 0),
                       fixed, False, True, experts=(e, kk),
                       expert_bytes=moe * model.expert_params / model.tp * w * model.expert_storage_factor,
                       bf16_flops=(0.0 if quantized_dense else dense_flops, 0, 0, 0))
    else:
        mlp = Operator("mlp", L, m + 1, (2 * m * d * ff, 0, 0, 0), ((2 * d + (m - 1) * ff + ff) * a, 0, 0, 0),
                       model.mlp_params / model.tp * w, False, True)
    return (
        Operator("embed", 1, 1, (0, 0, 0, 0), (d * (BYTES_PER_ELEMENT["bf16"] + a), 0, 0, 0), 0.0,
                 False, True),
        Operator("qkv", L, 2 + (2 if model.is_mla else 0),
                 (2 * (qkv_params if model.is_mla else d * qkv_out), 0, 0, 0),
                 ((d + qkv_out) * a, 0, 0, 0), qkv_params * wd, False, quantized_dense),
        Operator("attention", L, 2, (0, 2 * h * (qk + vd), 0, 0), (h * (qk + vd) * a, 0, kv_layer, 0), 0.0,
                 False, False),
        Operator("o_proj", L, 1, (2 * h * vd * d, 0, 0, 0), ((h * vd + d) * a, 0, 0, 0),
                 o_params * wd, False, quantized_dense),
        mlp,
        *comm,
        Operator("lm_head", 1, 3, (0, 0, 0, 2 * d * v), (0, 0, 0, (d + 2 * v) * a),
                 model.lm_head_bytes, True, False),  # a BF16 head (Model.lm_head_bytes), BF16 math
    )


@dataclass(frozen=True)
class Rates:
    """The achieved rates a model is priced at on a GPU."""

    gemm_flops: float  # FLOP/s of the GEMMs (weights' precision)
    bf16_flops: float  # FLOP/s of BF16 math (attention, the LM head, a partly quantised model's BF16 layers)
    bandwidth: float  # bytes/s


def allreduce_hops(n_gpus: int) -> int:
    """The latency hops of one all-reduce over ``n_gpus`` GPUs: 2(n - 1), the textbook ring's."""
    return 2 * (n_gpus - 1)


def allreduce_s(gpu: GPU, n_gpus: int, message_bytes: float | np.ndarray,
                assumptions: Assumptions = DEFAULT_ASSUMPTIONS, latency: bool = True) -> float | np.ndarray:
    """Seconds for one all-reduce of ``message_bytes`` (a number or an array of them) over ``n_gpus``
    GPUs: the textbook ring's ``2(n-1) alpha + 2(n-1)/n S / busbw`` (MEASURED.md 3.3), alpha =
    ``allreduce_hop_s`` and busbw the GPU's measured large-message bus bandwidth at that count; 0 on
    one GPU. ``latency=False``: the bandwidth term alone. The step model adds the kernel's fixed
    ``graph_kernel_s`` (``step_time_coefficients``), as it does to every kernel."""
    size = np.asarray(message_bytes, dtype=float)
    if not (isinstance(n_gpus, (int, np.integer)) and n_gpus >= 1):
        raise ValueError(f"n_gpus must be an integer >= 1, got {n_gpus!r}")
    if n_gpus == 1:
        return 0.0 * size if size.ndim else 0.0
    hops = allreduce_hops(n_gpus)
    out = ((hops * assumptions.allreduce_hop_s if latency else 0.0)
           + hops / n_gpus * size / gpu.allreduce_bandwidth(n_gpus))
    return out if size.ndim else float(out)


def achieved_rates(gpu: GPU, model: Model, assumptions: Assumptions = DEFAULT_ASSUMPTIONS) -> Rates:
    """Spec peak x the GPU's measured ceiling x efficiency: what the GPU's own microbenchmark
    reached, times the share of it a serving step's kernels reach (spec peak x efficiency with
    ``measured_ceilings`` off)."""
    prec = model.compute_precision
    a = assumptions
    cap = a.measured_ceilings
    return Rates(
        gemm_flops=gpu.peak_flops(prec) * (gpu.gemm_ceiling(prec) if cap else 1.0) * a.compute_eff,
        bf16_flops=gpu.peak_flops("bf16") * (gpu.gemm_ceiling("bf16") if cap else 1.0) * a.compute_eff,
        bandwidth=gpu.hbm_bandwidth * (gpu.hbm_ceiling() if cap else 1.0) * a.memory_eff,
    )


@dataclass(frozen=True)
class OperatorCost:
    """One operator's share of each step (arrays of the steps' shape)."""

    time_s: np.ndarray  # runs x max(compute, memory), seconds (kernels' fixed cost not included)
    compute_time_s: np.ndarray  # FLOP / achieved FLOP/s, seconds
    memory_time_s: np.ndarray  # bytes / achieved bytes/s, seconds
    launch_s: np.ndarray  # what the kernels' fixed costs add to time_s, seconds
    flops: np.ndarray  # FLOP
    bytes: np.ndarray  # bytes

    @property
    def memory_bound(self) -> np.ndarray:
        """True where moving the operator's bytes takes longer than its math."""
        return self.memory_time_s >= self.compute_time_s


@dataclass(frozen=True)
class StepCost:
    """Per-step cost arrays (all the same shape as the inputs).

    Steps with no new tokens are steps the engine does not run: every field is 0 there.
    ``compute_time_s`` and the three memory times are what each would take alone; a step overlaps
    them only within an operator, so ``gpu_time_s`` lies between their max and their sum.
    """

    time_s: np.ndarray  # wall time of the step: kernels (launch cost included) + exposed host time, s
    gpu_time_s: np.ndarray  # time with a kernel running: sum over operators of max(math, memory)
    #                         plus the launch cost, seconds
    compute_time_s: np.ndarray  # all FLOP at the achieved rates, seconds
    weight_time_s: np.ndarray  # weight bytes at the achieved bandwidth, seconds
    kv_time_s: np.ndarray  # KV-cache bytes at the achieved bandwidth, seconds
    activation_time_s: np.ndarray  # activation bytes (between kernels) at the achieved bandwidth, s
    launch_time_s: np.ndarray  # kernel launch cost, seconds
    host_time_s: np.ndarray  # host time the GPU waits for (not hidden under kernels), seconds
    comm_time_s: np.ndarray  # tensor-parallel all-reduces (part of gpu_time_s), seconds
    flops: np.ndarray  # FLOP
    bytes: np.ndarray  # bytes moved to or from HBM
    kv_bytes: np.ndarray  # the KV-cache part of ``bytes``
    peak_flops: float  # FLOP/s the MFU is measured against
    bandwidth: float  # bytes/s the MBU is measured against
    breakdown: object = field(default=None, repr=False, compare=False)  # dict, or a function making it

    @cached_property
    def operators(self) -> dict[str, OperatorCost]:
        """The breakdown by operator name (OPERATORS order), computed when first asked for."""
        b = self.breakdown
        return b() if callable(b) else dict(b or {})

    @property
    def memory_time_s(self) -> np.ndarray:
        return self.weight_time_s + self.kv_time_s + self.activation_time_s

    @property
    def memory_bound(self) -> np.ndarray:
        """True where moving the step's bytes takes longer than its math (each operator's own bound
        is in ``operators``)."""
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


_ARRAY_FIELDS = tuple(f.name for f in fields(StepCost)
                      if f.name not in ("peak_flops", "bandwidth", "breakdown"))
_OP_FIELDS = tuple(f.name for f in fields(OperatorCost))


def scale_steps(cost: StepCost, factor: float) -> StepCost:
    """Steps costing ``factor`` times ``cost`` in every respect (time, FLOPs, bytes): a drafter priced
    as a fixed share of a target step, say."""
    ops = {n: OperatorCost(**{f: factor * np.asarray(getattr(o, f)) for f in _OP_FIELDS})
           for n, o in cost.operators.items()}
    return StepCost(**{f: factor * np.asarray(getattr(cost, f)) for f in _ARRAY_FIELDS},
                    peak_flops=cost.peak_flops, bandwidth=cost.bandwidth, breakdown=ops)


def take_steps(cost: StepCost, index) -> StepCost:
    """The steps ``index`` (a slice or an index array) of ``cost``, breakdown included."""
    ops = {n: OperatorCost(**{f: np.asarray(getattr(o, f))[index] for f in _OP_FIELDS})
           for n, o in cost.operators.items()}
    return StepCost(**{f: np.asarray(getattr(cost, f))[index] for f in _ARRAY_FIELDS},
                    peak_flops=cost.peak_flops, bandwidth=cost.bandwidth, breakdown=ops)


def concat_steps(costs: list[StepCost]) -> StepCost:
    """Several runs of steps as one run, in order (MFU and MBU against the first one's peaks).
    The breakdown keeps the operators every run has."""
    names = [n for n in costs[0].operators if all(n in c.operators for c in costs)]
    ops = {n: OperatorCost(**{f: np.concatenate([np.ravel(getattr(c.operators[n], f)) for c in costs])
                              for f in _OP_FIELDS}) for n in names}
    return StepCost(**{f: np.concatenate([np.ravel(getattr(c, f)) for c in costs]) for f in _ARRAY_FIELDS},
                    peak_flops=costs[0].peak_flops, bandwidth=costs[0].bandwidth, breakdown=ops)


def _safe_div(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    num, den = np.broadcast_arrays(np.asarray(num, dtype=float), np.asarray(den, dtype=float))
    out = np.zeros(num.shape)
    np.divide(num, den, out=out, where=den > 0)
    return out


def attention_pairs(new_tokens, cached_tokens) -> np.ndarray:
    """Causal (query, key) pairs for q new tokens on top of c cached ones: q * (c + (q + 1) / 2)."""
    q = np.asarray(new_tokens, dtype=float)
    return q * (np.asarray(cached_tokens, dtype=float) + (q + 1) / 2)


def attention_sums(model: Model, new_tokens, cached_tokens) -> tuple[np.ndarray, np.ndarray]:
    """Per sequence, the (P, K) sums its attention is priced on: q new tokens on c cached ones.

    Full-attention layers: P = q (c + (q + 1) / 2) pairs and K = c + q KV tokens (c read, q
    written). A sliding-window or chunked layer of window W (Mistral, gpt-oss, Llama 4) attends
    over at most W keys (the token itself included), so there the j-th new token has min(c + j, W)
    pairs and the step reads only the min(c, W - 1) cached tokens its first new token sees:

        P_w = m c + m (m + 1) / 2 + (q - m) W,  m = clip(W - c, 0, q);   K_w = min(c, W - 1) + q

    (a decode step, q = 1: P_w = K_w = min(c + 1, W), as P = K = c + 1 with full attention).

    The attention operator runs once a layer at the layer-average shape (``operators``), so the
    sums it is priced on are the layer averages: with a share f of the layers windowed,
    P = (1 - f) P_full + f P_w and K = (1 - f) K_full + f K_w. Broadcasts; pass these to
    ``step_cost`` summed over the step's sequences."""
    q = np.asarray(new_tokens, dtype=float)
    c = np.asarray(cached_tokens, dtype=float)
    p_full, k_full = attention_pairs(q, c), c + q
    if not model.window_layers:
        return p_full, k_full
    w, f = float(model.sliding_window), model.window_share
    m = np.clip(w - c, 0.0, q)
    p_win = m * c + m * (m + 1) / 2 + (q - m) * w
    k_win = np.minimum(c, w - 1) + q
    return p_full - f * (p_full - p_win), k_full - f * (k_full - k_win)


def attention_sums_scalar(model: Model, new_tokens: float, cached_tokens: float) -> tuple[float, float]:
    """``attention_sums`` for one (q, c) in plain floats: a scheduler's per-step loop, where a numpy
    call per prompt chunk would cost more than the step's arithmetic (equal to it: tested)."""
    q, c = float(new_tokens), float(cached_tokens)
    p_full, k_full = q * (c + (q + 1) / 2), c + q
    f = model.window_share
    if not f:
        return p_full, k_full
    w = float(model.sliding_window)
    m = min(max(w - c, 0.0), q)
    p_win = m * c + m * (m + 1) / 2 + (q - m) * w
    k_win = min(c, w - 1) + q
    return p_full - f * (p_full - p_win), k_full - f * (k_full - k_win)


def _touched(e: float, k: float, tokens, groups: int = 1, skew: float = 0.0):
    """Expert reads of a step, in experts' per-GPU shares: the distinct experts of E that ``tokens``
    tokens routed top-k touch (uniform routing, or skewed by ``skew``; 0 tokens, 0), or with the
    experts spread whole over ``groups`` GPUs (expert parallelism) what the slowest GPU reads
    (``sim.models.expert_reads``)."""
    if groups > 1 or skew:
        return expert_reads(e, k, tokens, groups, skew)
    if isinstance(tokens, (int, float)):
        return e * -math.expm1(tokens * math.log1p(-k / e)) if k < e else (e if tokens > 0 else 0.0)
    t = np.asarray(tokens, dtype=float)
    return e * -np.expm1(t * np.log1p(-k / e)) if k < e else np.where(t > 0, e, 0.0)


def _combine(terms, x, const: float) -> np.ndarray:
    """const + sum of coef * x[k] over the (k, coef) terms, as an array of x's shape."""
    out = None
    for k, v in terms:
        out = v * x[k] if out is None else out + v * x[k]
    if out is None:
        return np.full(x[0].shape, const)
    return out + const if const else out


@dataclass(frozen=True)
class StepTimeCoefficients:
    """The step-time model as numbers, for schedulers that advance a clock step by step (admission
    under arrivals) and want scalar arithmetic. ``step_cost`` is defined through these same numbers.

    For operator j: compute_j = c_j . X and memory_j = w_j + m_j . X seconds, X = (T, P, K, S), and
    roof_j = max(compute_j, memory_j). With n_j kernels, each pays a fixed cost t_graph on the GPU
    (ramp-up, tail, the gap to the next): roof_j + n_j * t_graph. A step launched kernel by kernel
    takes at least n_j * t_launch, the CPU's time to launch them: max(roof_j + n_j * t_graph,
    n_j * t_launch), the limit only when the kernels are shorter than their launches. Then
    t_step = sum_j t_j + host, or max(sum_j t_j, host) where the host overlaps the kernels, with
    host = host_s + sequence_host_s * S (S: the step's sequences that sample).
    """

    compute: np.ndarray  # (ops, 4) seconds per unit of X, runs folded in
    memory: np.ndarray  # (ops, 4) seconds per unit of X
    weight_s: np.ndarray  # (ops,) seconds to read the operator's weights, runs folded in
    on_samples: np.ndarray  # (ops,) bool
    kernels: np.ndarray  # (ops,) kernels per step of each operator, runs folded in
    graph_kernel_s: float
    kernel_launch_s: float
    graph_max_tokens: float  # steps with at most this many new tokens run as CUDA graphs
    host_s: float
    overlap_host: bool
    flop_matrix: np.ndarray  # (ops, 4) FLOP per unit of X, runs folded in
    byte_matrix: np.ndarray  # (ops, 4) bytes per unit of X, runs folded in
    weight_bytes: np.ndarray  # (ops,) weight bytes read when the operator runs, runs folded in
    kv_bytes_per_token: np.ndarray  # (ops,) KV bytes per K token (attention's), runs folded in
    comm: np.ndarray  # (ops,) bool: a collective over the interconnect (its "memory" is the link's)
    moe: tuple = ()  # (op index, E, k, seconds per expert read, bytes per expert, GPUs the experts
    #                  are spread over whole: 1 under tensor parallelism, routing skew), runs folded in
    sequence_host_s: float = 0.0  # host seconds per sampling sequence a step

    def __post_init__(self) -> None:
        # Python lists for the scalar path (a scheduler's clock calls it once a step).
        object.__setattr__(self, "_rows", list(zip(self.compute.tolist(), self.memory.tolist(),
                                                   self.weight_s.tolist(), self.on_samples.tolist(),
                                                   self.kernels.tolist(), strict=True)))
        object.__setattr__(self, "_flat", [(*c, w, *m, s, n) for c, m, w, s, n in self._rows])

        # The array path: each operator's nonzero terms only (most depend on one of T, P, K, S).
        def terms(row):
            return tuple((k, v) for k, v in enumerate(row) if v)

        # Totals that are linear in X: summed over the operators that always run (a) and the LM
        # head's, which runs only where tokens sample (s).
        always, head = ~self.on_samples, self.on_samples
        hbm = ~self.comm  # the HBM totals leave the interconnect's time out
        linear = (("comp", self.compute, None), ("mem", self.memory * hbm[:, None], self.weight_s * hbm),
                  ("flops", self.flop_matrix, None), ("bytes", self.byte_matrix, self.weight_bytes),
                  ("wbytes", None, self.weight_bytes), ("kvb", None, self.kv_bytes_per_token))
        for name, matrix, const in linear:
            for tag, sel in (("a", always), ("s", head)):
                row = matrix[sel].sum(axis=0).tolist() if matrix is not None else [0.0] * 4
                c0 = float(const[sel].sum()) if const is not None else 0.0
                object.__setattr__(self, f"_lin_{name}_{tag}", (terms(row), c0))
        object.__setattr__(self, "_sparse", tuple(
            (terms(c), terms(m), w, bool(on), n, terms(f), terms(b), wb, kvb)
            for c, m, w, on, n, f, b, wb, kvb in zip(
                self.compute.tolist(), self.memory.tolist(), self.weight_s.tolist(),
                self.on_samples.tolist(), self.kernels.tolist(), self.flop_matrix.tolist(),
                self.byte_matrix.tolist(), self.weight_bytes.tolist(), self.kv_bytes_per_token.tolist(),
                strict=True)))

    def __reduce__(self):
        # Pickled as its fields, rebuilt by __post_init__ on the other side: the derived lists and
        # the lazily built scalar pricer (a closure) stay behind (a worker process: ui.workers).
        return type(self), tuple(getattr(self, f.name) for f in fields(self))

    def _host(self, gpu, sequences):
        host = self.host_s + self.sequence_host_s * sequences
        if self.overlap_host:
            return np.maximum(gpu, host) if isinstance(gpu, np.ndarray) or isinstance(host, np.ndarray) \
                else max(gpu, host)
        return gpu + host

    def step_time_s(self, new_tokens, attn_pairs, kv_tokens, sampled_tokens):
        """t_step for steps that run (new_tokens > 0); broadcasts like numpy, fast for scalars."""
        x0, x1, x2, x3 = new_tokens, attn_pairs, kv_tokens, sampled_tokens
        if (isinstance(x0, (int, float)) and isinstance(x1, (int, float)) and isinstance(x2, (int, float))
                and isinstance(x3, (int, float))):
            # A scheduler's clock calls this once per run of steps: plain floats, no numpy.
            graph = x0 <= self.graph_max_tokens
            gk, lk = self.graph_kernel_s, self.kernel_launch_s
            extra = {j: _touched(e, kk, x0, g, z) * sec for j, e, kk, sec, _, g, z in self.moe} \
                if self.moe else None
            total = 0.0
            for j, (c0, c1, c2, c3, w, m0, m1, m2, m3, s, n) in enumerate(self._flat):
                if s and x3 <= 0:
                    continue
                comp = c0 * x0 + c1 * x1 + c2 * x2 + c3 * x3
                mem = w + m0 * x0 + m1 * x1 + m2 * x2 + m3 * x3
                if extra and j in extra:
                    mem += extra[j]
                gap = (comp if comp > mem else mem) + n * gk
                if not graph and n * lk > gap:
                    gap = n * lk
                total += gap
            return self._host(total, x3)
        return self._host(self.parts(new_tokens, attn_pairs, kv_tokens, sampled_tokens)[2].sum(axis=0),
                          np.asarray(sampled_tokens, dtype=float))

    def scalar_pricer(self):
        """A function t_step(T, P, K, S) of plain floats for one step (a scheduler's clock prices its
        prefill and mixed steps one at a time): the same arithmetic as ``step_time_s`` in the same
        order (each operator's max of math and memory time plus its kernels' fixed cost, the LM head
        only when the step samples), without its scalar-or-array switch; built once per coefficients.
        Mixture-of-experts models get ``step_time_s`` itself (experts touched depend on T)."""
        pricer = self.__dict__.get("_scalar_pricer")
        if pricer is not None:
            return pricer
        if self.moe:
            pricer = self.step_time_s
        else:
            rows = self._flat
            g_k, l_k, gmax, host0, per_seq, overlap = (
                self.graph_kernel_s, self.kernel_launch_s, self.graph_max_tokens, self.host_s,
                self.sequence_host_s, self.overlap_host)

            def pricer(t, p, k, s):
                total = 0.0
                graph = t <= gmax
                for c0, c1, c2, c3, w, m0, m1, m2, m3, on, n in rows:
                    if on and s <= 0:
                        continue
                    comp = c0 * t + c1 * p + c2 * k + c3 * s
                    mem = w + m0 * t + m1 * p + m2 * k + m3 * s
                    gap = (comp if comp > mem else mem) + n * g_k
                    total += gap if graph or gap > n * l_k else n * l_k
                host = host0 + per_seq * s
                return (total if total > host else host) if overlap else total + host

        object.__setattr__(self, "_scalar_pricer", pricer)
        return pricer

    def parts(self, new_tokens, attn_pairs, kv_tokens, sampled_tokens):
        """(compute, memory, time) seconds per operator, each of shape (ops, *steps): the time with
        the kernels' fixed costs, for steps that run."""
        x = [np.asarray(v, dtype=float) for v in np.broadcast_arrays(
            *(np.asarray(v, dtype=float) for v in (new_tokens, attn_pairs, kv_tokens, sampled_tokens)))]
        ops = self.operator_arrays(x)
        return tuple(np.stack([o[i] for o in ops]) for i in range(3))

    def operator_arrays(self, x):
        """Per operator (compute, memory, time, flops, bytes, weight bytes, KV bytes) arrays for
        steps X = [T, P, K, S] (a list of equal-shape arrays), before the T > 0 gate."""
        t, _, k, s = x
        samples = (s > 0).astype(float)
        eager = t > self.graph_max_tokens
        any_eager = bool(np.any(eager))
        out = []
        moe = {j: (_touched(e, kk, t, g, z), sec, b) for j, e, kk, sec, b, g, z in self.moe}
        for j, (c_terms, m_terms, w, on, n, f_terms, b_terms, wb, kvb) in enumerate(self._sparse):
            comp = _combine(c_terms, x, 0.0)
            mem = _combine(m_terms, x, w)
            extra_b = 0.0
            if j in moe:
                touched, sec, b = moe[j]
                mem, extra_b = mem + touched * sec, touched * b
            time = np.maximum(comp, mem) + n * self.graph_kernel_s
            if any_eager:
                time = np.where(eager, np.maximum(time, n * self.kernel_launch_s), time)
            flops = _combine(f_terms, x, 0.0)
            nbytes = _combine(b_terms, x, wb) + extra_b
            kv = kvb * k
            wbytes = np.full(t.shape, wb) + extra_b
            if on:  # the LM head: only where tokens sample
                comp, mem, time, flops, nbytes, kv, wbytes = (a * samples for a in
                                                              (comp, mem, time, flops, nbytes, kv, wbytes))
            out.append((comp, mem, time, flops, nbytes, wbytes, kv))
        return out

    def decode_terms(self, n_seq: float):
        """For decode steps of ``n_seq`` sequences (T = S = n_seq, P = K = kv): per operator
        (a, b, g, d) with compute = a + b kv and memory = g + d kv, and the fixed per-step cost,
        as Python floats (a scheduler's scalar loop: t = sum max(a + b kv, g + d kv) + fixed).
        Only for steps that run as CUDA graphs (n_seq <= graph_max_tokens)."""
        cache = self.__dict__.setdefault("_decode_terms", {})
        if n_seq in cache:
            return cache[n_seq]
        extra = {j: _touched(e, kk, n_seq, g, z) * sec for j, e, kk, sec, _, g, z in self.moe}
        terms = [(c[0] * n_seq + c[3] * n_seq, c[1] + c[2],
                  w + extra.get(j, 0.0) + m[0] * n_seq + m[3] * n_seq, m[1] + m[2])
                 for j, (c, m, w, _, _) in enumerate(self._rows)]
        kernels = sum(n for *_, n in self._rows)
        fixed = kernels * self.graph_kernel_s + (
            0.0 if self.overlap_host else self.host_s + self.sequence_host_s * n_seq)
        if len(cache) < 4096:
            cache[n_seq] = (terms, fixed)
        return terms, fixed

    def decode_run_s(self, n_seq: float, kv0: float, steps: int, kv_per_step: float | None = None
                     ) -> np.ndarray:
        """Times of ``steps`` decode steps of ``n_seq`` sequences whose KV tokens start at ``kv0``
        and grow by ``kv_per_step`` a step (default ``n_seq``; less where windowed layers no longer
        grow) (T = S = n_seq, P = K = kv): a scheduler's fast path."""
        grow = n_seq if kv_per_step is None else kv_per_step
        return self.decode_steps_s(n_seq, kv0 + grow * np.arange(steps, dtype=float))

    def decode_steps_s(self, n_seq: float, kv) -> np.ndarray:
        """Times of decode steps of ``n_seq`` sequences with the given KV tokens a step (an array;
        T = S = n_seq, P = K = kv), equal to ``step_time_s(n_seq, kv, kv, n_seq)`` (tested) without
        its per-operator bookkeeping: a scheduler's fast path, called once per run of steps."""
        kv = np.asarray(kv, dtype=float)
        cache = self.__dict__.setdefault("_decode_vectors", {})
        vec = cache.get(n_seq)
        if vec is None:
            c, m = self.compute, self.memory
            w = self.weight_s.copy()
            for j, e, kk, sec, _, g, z in self.moe:
                w[j] += _touched(e, kk, n_seq, g, z) * sec
            vec = ((c[:, 0] + c[:, 3])[:, None] * n_seq, (c[:, 1] + c[:, 2])[:, None],
                   (w + (m[:, 0] + m[:, 3]) * n_seq)[:, None], (m[:, 1] + m[:, 2])[:, None])
            if len(cache) < 256:  # ~0.7 KB each, per setup's coefficients (512 of them at most)
                cache[n_seq] = vec
        a, b, g, d = vec
        roof = np.maximum(a + b * kv, g + d * kv)
        if n_seq > self.graph_max_tokens:
            gpu = np.maximum(roof + self.kernels[:, None] * self.graph_kernel_s,
                             self.kernels[:, None] * self.kernel_launch_s).sum(axis=0)
        else:
            gpu = roof.sum(axis=0) + self.kernels.sum() * self.graph_kernel_s
        return self._host(gpu, n_seq)


@lru_cache(maxsize=512)
def step_time_coefficients(gpu: GPU, model: Model, assumptions: Assumptions = DEFAULT_ASSUMPTIONS
                           ) -> StepTimeCoefficients:
    rates = achieved_rates(gpu, model, assumptions)
    ops = operators(model)
    rate = np.array([[rates.gemm_flops if op.tensor_precision else rates.bf16_flops]
                     for op in ops])
    flops = np.array([op.flops for op in ops], dtype=float)
    bf16 = np.array([op.bf16_flops for op in ops], dtype=float)
    runs = np.array([[op.runs] for op in ops], dtype=float)
    memory = runs * np.array([op.bytes for op in ops], dtype=float) / rates.bandwidth
    weight_s = runs[:, 0] * np.array([op.weight_bytes for op in ops]) / rates.bandwidth
    for j, op in enumerate(ops):
        if op.comm:  # 2 all-reduces a layer of T x hidden BF16 values (allreduce_s)
            per_token = allreduce_s(gpu, model.tp, model.hidden * ACTIVATION_BYTES, assumptions,
                                    latency=False)
            memory[j] = (op.runs * 2 * per_token, 0, 0, 0)
            weight_s[j] = op.runs * 2 * allreduce_s(gpu, model.tp, 0.0, assumptions)
    return StepTimeCoefficients(
        compute=runs * (flops / rate + bf16 / rates.bf16_flops),
        memory=memory,
        weight_s=weight_s,
        on_samples=np.array([op.on_samples for op in ops]),
        kernels=np.array([op.runs * op.kernels for op in ops], dtype=float),
        comm=np.array([op.comm for op in ops]),
        moe=tuple((j, op.experts[0], op.experts[1], op.runs * op.expert_bytes / rates.bandwidth,
                   op.runs * op.expert_bytes, model.expert_groups, model.routing_skew)
                  for j, op in enumerate(ops) if op.experts[0]),
        graph_kernel_s=assumptions.graph_kernel_s,
        kernel_launch_s=assumptions.kernel_launch_s,
        graph_max_tokens=float(assumptions.cuda_graph_max_tokens) if assumptions.cuda_graphs else -1.0,
        host_s=assumptions.host_overhead_s,
        sequence_host_s=assumptions.sequence_host_s,
        overlap_host=assumptions.overlap_host,
        flop_matrix=runs * (flops + bf16),
        byte_matrix=runs * np.array([op.bytes for op in ops], dtype=float),
        weight_bytes=runs[:, 0] * np.array([op.weight_bytes for op in ops]),
        kv_bytes_per_token=runs[:, 0] * np.array([op.bytes[2] for op in ops]),
    )


def step_cost(
    gpu: GPU,
    model: Model,
    new_tokens,
    attn_pairs,
    kv_tokens,
    assumptions: Assumptions = DEFAULT_ASSUMPTIONS,
    sampled_tokens=None,
    sequences=None,
) -> StepCost:
    """Price engine steps from their per-step sums (arrays broadcast together).

    Args:
        new_tokens: T, tokens processed in the step (sum of q_i over the batch).
        attn_pairs: P, causal attention pairs in the step (sum of q_i * (c_i + (q_i + 1) / 2); a
            model with windowed layers: the layer-average sum of ``attention_sums``).
        kv_tokens: K, tokens whose KV the step reads or writes (sum of c_i + q_i; windowed layers
            as in ``attention_sums``).
        sampled_tokens: S, positions whose logits the step computes. None: every new token samples
            (right for decode and verification; pass the count for prefill).
        sequences: sequences that sample in the step, each paying ``sequence_host_s`` of host time.
            None: S (one sampled position a sequence; a verify pass passes its batch).
    """
    t, p, k = np.broadcast_arrays(
        np.asarray(new_tokens, dtype=float), np.asarray(attn_pairs, dtype=float),
        np.asarray(kv_tokens, dtype=float),
    )
    s = t if sampled_tokens is None else np.broadcast_to(np.asarray(sampled_tokens, dtype=float), t.shape)
    if np.any(t < 0) or np.any(p < 0) or np.any(k < 0) or np.any(s < 0):
        raise ValueError("new_tokens, attn_pairs, kv_tokens and sampled_tokens must be >= 0")
    if np.any(s > t):
        raise ValueError("sampled_tokens cannot exceed new_tokens")
    coef = step_time_coefficients(gpu, model, assumptions)
    bandwidth = achieved_rates(gpu, model, assumptions).bandwidth
    x = [t, p, k, s]
    all_run = bool(np.all(t > 0))
    runs = 1.0 if all_run else (t > 0).astype(float)
    samples = (s > 0).astype(float)

    def total(name: str) -> np.ndarray:
        (ta, ca), (ts, cs) = getattr(coef, f"_lin_{name}_a"), getattr(coef, f"_lin_{name}_s")
        kv_term = name == "kvb"
        a = ca * k if kv_term else _combine(ta, x, ca)
        b = cs * k if kv_term else _combine(ts, x, cs)
        out = a + samples * b
        return out if all_run else out * runs

    # Time is the one quantity that is not linear: each operator's own max, then summed.
    gpu_time = np.zeros(t.shape)
    roof_sum = np.zeros(t.shape)
    comm_time = np.zeros(t.shape)
    eager = t > coef.graph_max_tokens
    any_eager = bool(np.any(eager))
    moe = {j: (_touched(e, kk, t, g, z), sec, b) for j, e, kk, sec, b, g, z in coef.moe}
    moe_bytes = sum((touched * b for touched, _, b in moe.values()), np.zeros(t.shape))
    for j, ((c_terms, m_terms, w, on, n, *_), is_comm) in enumerate(zip(coef._sparse, coef.comm.tolist(),
                                                                           strict=True)):
        mem_j = _combine(m_terms, x, w)
        if j in moe:
            mem_j = mem_j + moe[j][0] * moe[j][1]
        roof = np.maximum(_combine(c_terms, x, 0.0), mem_j)
        time = roof + n * coef.graph_kernel_s
        if any_eager:
            time = np.where(eager, np.maximum(time, n * coef.kernel_launch_s), time)
        if on:
            roof, time = roof * samples, time * samples
        if is_comm:
            comm_time = comm_time + time
        roof_sum += roof
        gpu_time += time
    if not all_run:
        gpu_time, roof_sum, comm_time = gpu_time * runs, roof_sum * runs, comm_time * runs
    seqs = s if sequences is None else np.broadcast_to(np.asarray(sequences, dtype=float), t.shape)
    if np.any(seqs < 0):
        raise ValueError("sequences must be >= 0")
    host_cpu = (coef.host_s + coef.sequence_host_s * seqs) * (np.ones(t.shape) if all_run else runs)
    host = np.maximum(host_cpu - gpu_time, 0.0) * runs if coef.overlap_host else host_cpu  # GPU waits
    moe_bytes = moe_bytes if all_run else moe_bytes * runs
    weight_time, kv_bytes = (total("wbytes") + moe_bytes) / bandwidth, total("kvb")
    kv_time = kv_bytes / bandwidth
    mem = total("mem") + moe_bytes / bandwidth

    return StepCost(
        time_s=gpu_time + host, gpu_time_s=gpu_time, compute_time_s=total("comp"),
        weight_time_s=weight_time, kv_time_s=kv_time,
        activation_time_s=np.maximum(mem - weight_time - kv_time, 0.0),
        launch_time_s=gpu_time - roof_sum, host_time_s=host, comm_time_s=comm_time, flops=total("flops"),
        bytes=total("bytes") + moe_bytes, kv_bytes=kv_bytes,
        peak_flops=gpu.peak_flops(model.compute_precision), bandwidth=gpu.hbm_bandwidth,
        breakdown=partial(_operator_breakdown, model, coef, x, runs),
    )


def _operator_breakdown(model: Model, coef: StepTimeCoefficients, x: list, runs) -> dict[str, OperatorCost]:
    """``step_cost``'s per-operator breakdown, computed when first asked for (a partial of this, not a
    closure: a StepCost pickles, so a worker process can compute it: ``ui.workers``)."""
    out = {}
    for op, arrays in zip(operators(model), coef.operator_arrays(x), strict=True):
        comp_j, mem_j, time_j, flops_j, bytes_j, _, _ = (a * runs for a in arrays)
        roof_j = np.maximum(comp_j, mem_j)
        out[op.name] = OperatorCost(time_s=roof_j, compute_time_s=comp_j, memory_time_s=mem_j,
                                    launch_s=time_j - roof_j, flops=flops_j, bytes=bytes_j)
    return out


def batch_step_cost(gpu, model, new_tokens, cached_tokens, assumptions=DEFAULT_ASSUMPTIONS,
                    sampled=None) -> StepCost:
    """Price steps given per-sequence arrays of shape (steps, slots): q new tokens and c cached tokens
    of each sequence at each step (q = 0: the slot takes no part in that step). ``sampled`` gives each
    sequence's sampling positions (None: one per taking part, the last of its new tokens)."""
    q = np.asarray(new_tokens, dtype=float)
    c = np.asarray(cached_tokens, dtype=float)
    active = q > 0
    s = active.astype(float) if sampled is None else np.where(active, np.asarray(sampled, dtype=float), 0.0)
    pairs, kv = attention_sums(model, q, c)
    return step_cost(
        gpu, model,
        new_tokens=q.sum(axis=-1),
        attn_pairs=np.where(active, pairs, 0.0).sum(axis=-1),
        kv_tokens=np.where(active, kv, 0.0).sum(axis=-1),
        assumptions=assumptions,
        sampled_tokens=s.sum(axis=-1),
        sequences=(s > 0).sum(axis=-1),  # a sequence sampling several positions pays its host time once
    )


def uniform_step_cost(
    gpu, model, batch, new_tokens_per_seq, cached_tokens, assumptions=DEFAULT_ASSUMPTIONS,
    sampled_per_seq=1,
) -> StepCost:
    """Steps where each of ``batch`` sequences brings the same q new tokens on c cached tokens and
    samples at ``sampled_per_seq`` of them (1: the last; q when verifying q drafted positions).

    Decode is q = 1; a prefill of a p-token prompt is q = p, c = 0; verifying k drafts is q = k + 1
    with k + 1 samples. All arguments broadcast, so a sweep over batch sizes or contexts is one call.
    """
    b = np.asarray(batch, dtype=float)
    q = np.asarray(new_tokens_per_seq, dtype=float)
    c = np.asarray(cached_tokens, dtype=float)
    s = np.minimum(np.asarray(sampled_per_seq, dtype=float), q)
    if np.any(b < 0) or np.any(q < 0) or np.any(c < 0) or np.any(s < 0):
        raise ValueError("batch, new_tokens_per_seq, cached_tokens and sampled_per_seq must be >= 0")
    pairs, kv = attention_sums(model, q, c)
    return step_cost(gpu, model, b * q, b * pairs, b * kv, assumptions, sampled_tokens=b * s,
                     sequences=b * (s > 0))


def decode_step_cost(gpu, model, batch, context_tokens, assumptions=DEFAULT_ASSUMPTIONS) -> StepCost:
    """One decode step: ``batch`` sequences each add 1 token on ``context_tokens`` cached tokens."""
    return uniform_step_cost(gpu, model, batch, 1, context_tokens, assumptions)


def prefill_cost(gpu, model, prompt_tokens, batch=1, assumptions=DEFAULT_ASSUMPTIONS) -> StepCost:
    """One prefill pass over ``batch`` prompts of ``prompt_tokens`` tokens each (nothing cached); each
    prompt samples once (its first output token)."""
    return uniform_step_cost(gpu, model, batch, prompt_tokens, 0, assumptions)


def gemm_ridge_batch(gpu, model, assumptions=DEFAULT_ASSUMPTIONS) -> float:
    """Tokens per step from which a weight GEMM is compute-bound: 2 FLOP per weight per token
    against the weight's bytes, at the achieved rates (about 200 for BF16 on an H100)."""
    rates = achieved_rates(gpu, model, assumptions)
    return rates.gemm_flops / rates.bandwidth * model.weight_bytes_per_element / 2.0


def compute_bound_batch(gpu, model, context_tokens, assumptions=DEFAULT_ASSUMPTIONS) -> float:
    """The decode batch size at which the step's math time catches up with its memory time (``inf``
    if never): where ``StepCost.memory_bound`` turns False.

    Decode at batch B and context c: X = B * (1, c + 1, c + 1, 1) (windowed layers capped, as in
    ``attention_sums``), so math = B * a and HBM time = W + B * k + R(B), with a and k the
    per-sequence seconds summed over operators, W the weight seconds and R(B) the routed experts'
    reads (mixture of experts: the experts B tokens touch, ``_touched``; 0 for a dense model). The
    all-reduces of tensor parallelism are the interconnect's time, not HBM's: left out, as in
    ``StepCost.memory_time_s``. Dense: B = W / (a - k). With experts, R grows with B up to every
    expert, so B solves B (a - k) = W + R(B), found by bisection between a batch that is memory-bound
    and one that is not (one crossing on every preset, skewed routing included: tested).
    If a <= k every extra sequence adds more memory time than math time (long contexts with GQA:
    attention does ~H/KV FLOP per KV byte), and decode never turns compute-bound.
    """
    coef = step_time_coefficients(gpu, model, assumptions)
    pairs, kv = attention_sums(model, 1, float(context_tokens))
    x = np.array([1.0, float(pairs), float(kv), 1.0])
    hbm = ~coef.comm
    a = float((coef.compute @ x).sum())
    k = float((coef.memory[hbm] @ x).sum())
    w = float(coef.weight_s[hbm].sum())
    margin = a - k
    if margin <= 0:
        return math.inf
    if not coef.moe:
        return w / margin

    def short(b: float) -> float:  # math time minus HBM time at batch b: < 0 while memory-bound
        return b * margin - w - sum(_touched(e, kk, b, g, z) * sec for _, e, kk, sec, _, g, z in coef.moe)

    lo = hi = w / margin  # R >= 0: not compute-bound below W / (a - k)
    for _ in range(200):
        if short(hi) >= 0:
            break
        lo, hi = hi, 2.0 * hi
    else:
        return math.inf
    while hi - lo > 1e-9 * hi:
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if short(mid) >= 0 else (mid, hi)
    return hi


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


@lru_cache(maxsize=64)
def calibration_step_s(assumptions: Assumptions = DEFAULT_ASSUMPTIONS) -> float:
    """The model's decode step, in seconds, at the quoted point (compare CALIBRATION_MEASURED_S).
    Cached: the sidebar quotes it on every run (``Assumptions`` is frozen, so hashable)."""
    step = decode_step_cost(GPUS[CALIBRATION_GPU], MODELS[CALIBRATION_MODEL], 1, CALIBRATION_CONTEXT_TOKENS,
                            assumptions)
    return float(step.time_s)

