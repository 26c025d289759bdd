"""Does a setup fit on the card? Weights, KV cache, activations and the engine's reserve, in bytes.

Serving engines budget the card the same way (vLLM's ``gpu_memory_utilization``, TensorRT-LLM's
``kv_cache_free_gpu_mem_fraction``, SGLang's ``mem_fraction_static``):

    budget     = utilization * total memory (as the driver reports it, binary units)
    kv_budget  = budget - weights - activations
    kv needed  = batch * kv_bytes_per_sequence(context)
                 (context * kv_bytes_per_token, the windowed layers of Mistral, gpt-oss and Llama 4
                 holding at most their window: sim.models.Model.kv_bytes_per_sequence)
    fits       = weights + activations + kv needed <= budget

Activations are the peak of the engine's start-up profile run (vLLM's ``profile_run``): the larger
of the model's forward pass over ``max_batched_tokens`` tokens (one layer's widest tensors) and the
sampler's warm-up over ``max_num_seqs`` rows of logits (``sampler_warmup_bytes``), plus a fixed
reserve for the CUDA context, GEMM workspaces and captured graphs. The rest of the card
(1 - utilization) is left to the driver and other processes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from sim.hardware import GPU, GiB
from sim.models import ACTIVATION_BYTES, Model, kv_bytes_held

#: vLLM's default ``gpu_memory_utilization``.
DEFAULT_UTILIZATION = 0.9
UTILIZATION_RANGE = (0.1, 1.0)
#: Tokens of the largest step the engine profiles its activation peak with (vLLM V1's
#: ``max_num_batched_tokens`` for chunked prefill on large GPUs).
MAX_BATCHED_TOKENS = 8192
#: vLLM V1's API-server default ``max_num_batched_tokens`` on the other GPUs (the A100 and cards under
#: 70 GiB; vllm/engine/arg_utils.py, ``get_batch_defaults``, the same rule as ``max_num_seqs``).
MAX_BATCHED_TOKENS_DEFAULT = 2048
#: vLLM V1's default ``max_num_seqs`` (requests running at once): 1024 on GPUs with at least 70 GiB
#: other than the A100, 256 elsewhere (vllm/engine/arg_utils.py: "For GPUs like H100 and MI300x, use
#: larger default values"; the A100 is excluded after a measured regression, vLLM PR #17885).
MAX_SEQS_LARGE_GPU, MAX_SEQS_DEFAULT = 1024, 256
LARGE_GPU_BYTES = 70 * GiB
#: Bytes per logit the sampler's start-up run holds at its peak. vLLM V1 warms its sampler up with
#: top-p 0.9 and top-k on every row (``_dummy_sampler_run``), the PyTorch path: the BF16 logits (2),
#: their FP32 copy (4), the sorted copy (4) with its int64 indices (8) and the softmax over it (4)
#: are alive at once (vllm/v1/sample/ops/topk_topp_sampler.py ``apply_top_k_top_p``). The sort's own
#: scratch space is not counted, so this is a floor.
SAMPLER_WARMUP_BYTES_PER_LOGIT = 2.0 + 4.0 + 4.0 + 8.0 + 4.0
#: CUDA context, cuBLAS/attention workspaces and CUDA-graph pools, bytes.
FIXED_RESERVE_BYTES = 1.0 * GiB


def engine_max_seqs(gpu: GPU | None) -> int:
    """Requests an engine runs at once by default on ``gpu`` (vLLM V1's ``max_num_seqs``; None: the
    smaller default)."""
    if gpu is not None and gpu.hbm_bytes >= LARGE_GPU_BYTES and "a100" not in gpu.name.lower():
        return MAX_SEQS_LARGE_GPU
    return MAX_SEQS_DEFAULT


def engine_max_batched_tokens(gpu: GPU | None) -> int:
    """Tokens in the engine's largest step by default on ``gpu``, the size of a long prompt's prefill
    chunks (vLLM V1's API server: ``max_num_batched_tokens`` 8192 on GPUs with at least 70 GiB other
    than the A100, 2048 elsewhere; None: the larger)."""
    if gpu is None or (gpu.hbm_bytes >= LARGE_GPU_BYTES and "a100" not in gpu.name.lower()):
        return MAX_BATCHED_TOKENS
    return MAX_BATCHED_TOKENS_DEFAULT


def forward_workspace_bytes(model: Model, gpu: GPU | None = None) -> float:
    """One GPU's activations for the start-up profile's forward pass, bytes: one layer's widest live
    tensors (hidden in and out, the GPU's share of the MLP's up/gate output and of q/k/v) for the
    engine's largest step on ``gpu`` (``engine_max_batched_tokens``: 8,192 tokens, 2,048 on the A100,
    L40S and L4; None: 8,192, as TensorRT-LLM's default ``max_num_tokens``)."""
    widest = (2 * model.hidden + model.mlp_matrices * model.intermediate_per_gpu
              + (model.heads_per_gpu + 2 * model.kv_heads_per_gpu) * model.head_dim)
    return engine_max_batched_tokens(gpu) * widest * ACTIVATION_BYTES


def sampler_warmup_bytes(model: Model, gpu: GPU | None = None) -> float:
    """The sampler's start-up run on one GPU, bytes: ``engine_max_seqs`` rows (at most
    ``engine_max_batched_tokens``) of logits over the whole vocabulary (tensor-parallel engines gather the
    logits on every GPU) at SAMPLER_WARMUP_BYTES_PER_LOGIT each. For a 201k-token vocabulary
    (gpt-oss) on an H100: 1,024 rows, 4.2 GiB."""
    rows = min(engine_max_seqs(gpu), engine_max_batched_tokens(gpu))
    return rows * float(model.vocab) * SAMPLER_WARMUP_BYTES_PER_LOGIT


def activation_bytes(model: Model, gpu: GPU | None = None) -> float:
    """Peak of the engine's start-up profile run on one GPU, bytes: the larger of the forward pass's
    workspace (``forward_workspace_bytes``) and the sampler's warm-up (``sampler_warmup_bytes``;
    they run one after the other), plus the fixed reserve."""
    return max(forward_workspace_bytes(model, gpu), sampler_warmup_bytes(model, gpu)) + FIXED_RESERVE_BYTES


@dataclass(frozen=True)
class MemoryPlan:
    """Where one GPU's memory goes for ``batch`` sequences of ``context_tokens`` tokens each."""

    gpu_name: str
    model_name: str
    total_bytes: float  # the card, as the driver reports it
    utilization: float  # share of it the engine may use
    weight_bytes: float
    activation_bytes: float
    kv_bytes_per_token: float  # every layer's KV for one token
    batch: int
    context_tokens: int
    window_tokens: int = 0  # the windowed layers' window, tokens (0: no windowed layers)
    window_share: float = 0.0  # share of the KV bytes of a token held by windowed layers
    gpus: int = 1  # GPUs the model is split over (tensor parallelism): every figure is one GPU's share

    @property
    def where(self) -> str:
        """'one H100 SXM', or 'each of the 2 x H100 SXM' under tensor parallelism."""
        return f"one {self.gpu_name}" if self.gpus == 1 else f"each of the {self.gpus} × {self.gpu_name}"

    def kv_bytes_per_sequence(self, context_tokens) -> np.ndarray | float:
        """KV bytes one sequence of ``context_tokens`` holds (``sim.models.kv_bytes_held``)."""
        return kv_bytes_held(context_tokens, self.kv_bytes_per_token, self.window_tokens, self.window_share)

    def context_for_bytes(self, per_sequence_bytes: float) -> int:
        """The longest context whose KV fits in ``per_sequence_bytes`` (the inverse of
        ``kv_bytes_per_sequence``; a model whose every layer is windowed holds any context once
        its window fits: then the largest int64)."""
        if per_sequence_bytes < self.kv_bytes_per_token:
            return 0
        tokens = per_sequence_bytes / self.kv_bytes_per_token
        if not self.window_share or tokens <= self.window_tokens:
            return int(tokens)
        if self.window_share >= 1.0:
            return int(np.iinfo(np.int64).max)
        return int(self.window_tokens + (tokens - self.window_tokens) / (1.0 - self.window_share))

    @property
    def budget_bytes(self) -> float:
        """What the engine may use: utilization x total."""
        return self.utilization * self.total_bytes

    @property
    def reserve_bytes(self) -> float:
        """What the engine leaves to the driver and other processes."""
        return self.total_bytes - self.budget_bytes

    @property
    def kv_budget_bytes(self) -> float:
        """Room left for the KV cache after weights and activations (negative: the weights alone do
        not fit)."""
        return self.budget_bytes - self.weight_bytes - self.activation_bytes

    @property
    def kv_bytes(self) -> float:
        """KV cache the batch needs at its context."""
        return self.batch * float(self.kv_bytes_per_sequence(self.context_tokens))

    @property
    def used_bytes(self) -> float:
        return self.weight_bytes + self.activation_bytes + self.kv_bytes

    @property
    def weights_fit(self) -> bool:
        """Weights and activations fit, leaving room for at least one token of KV cache."""
        return self.kv_budget_bytes >= self.kv_bytes_per_token

    @property
    def fits(self) -> bool:
        return self.weights_fit and self.used_bytes <= self.budget_bytes

    @property
    def shortfall_bytes(self) -> float:
        """How much more memory the setup needs than the budget (0 if it fits)."""
        return max(0.0, self.used_bytes - self.budget_bytes)

    @property
    def max_batch(self) -> int:
        """The largest batch that fits at this context (0: not even one sequence)."""
        per_seq = max(float(self.kv_bytes_per_sequence(max(self.context_tokens, 1))), 1e-30)
        return int(max(self.kv_budget_bytes, 0.0) // per_seq)

    @property
    def max_context_tokens(self) -> int:
        """The longest context each of ``batch`` sequences can hold."""
        if not self.weights_fit or self.batch <= 0:
            return 0
        return self.context_for_bytes(self.kv_budget_bytes / self.batch)

    def parts(self) -> dict[str, float]:
        """The budget split, bytes: weights, activations, KV cache, free (negative: over budget)."""
        return {"weights": self.weight_bytes, "activations": self.activation_bytes,
                "KV cache": self.kv_bytes, "free": self.budget_bytes - self.used_bytes}


def memory_plan(gpu: GPU, model: Model, batch: int, context_tokens: int,
                utilization: float = DEFAULT_UTILIZATION, drafter=None) -> MemoryPlan:
    """The memory ``batch`` sequences of ``context_tokens`` tokens need on one ``gpu``.

    ``drafter``: a speculative-decoding drafter served beside ``model`` (``sim.speculative
    .drafter_held``: a ``Model``, or Medusa's heads): its weights and its KV cache, one entry per
    context token like the target's, count too (the plan is then named after both). A drafter's
    windowed layers share the target's window (an EAGLE head of a windowed target)."""
    if not (isinstance(utilization, (int, float)) and math.isfinite(utilization)
            and UTILIZATION_RANGE[0] <= utilization <= UTILIZATION_RANGE[1]):
        raise ValueError(f"utilization must be in {list(UTILIZATION_RANGE)}, got {utilization!r}")
    if not (isinstance(batch, (int, np.integer)) and batch >= 0):
        raise ValueError(f"batch must be an integer >= 0, got {batch!r}")
    if not (isinstance(context_tokens, (int, np.integer)) and context_tokens >= 0):
        raise ValueError(f"context_tokens must be an integer >= 0, got {context_tokens!r}")
    weights, kv_token, name = model.served_weight_bytes, float(model.kv_bytes_per_token), model.name
    if drafter is not None:
        weights += drafter.served_weight_bytes
        kv_token += drafter.kv_bytes_per_token
        name = f"{model.name} with its {drafter.name}"
    return MemoryPlan(
        gpu_name=gpu.name, model_name=name, total_bytes=gpu.hbm_bytes,
        utilization=float(utilization), weight_bytes=weights,
        activation_bytes=activation_bytes(model, gpu), kv_bytes_per_token=kv_token,
        batch=int(batch), context_tokens=int(context_tokens),
        gpus=int(model.tp),
        window_tokens=int(model.sliding_window or 0) if model.window_layers else 0,
        # the windowed layers' bytes (target's and drafter's) as a share of a token's, both added
        window_share=(model.window_share * model.kv_bytes_per_token
                      + (drafter.window_share * drafter.kv_bytes_per_token if drafter is not None else 0.0))
        / kv_token,
    )


KV_POLICIES = ("total", "free")


def kv_budget_bytes(gpu: GPU, model: Model, utilization: float = DEFAULT_UTILIZATION,
                    policy: str = "total") -> float:
    """Room for the KV cache on one ``gpu`` after weights and activations, bytes (may be < 0).

    ``policy`` says what ``utilization`` is a share of: 'total' memory (vLLM's
    ``gpu_memory_utilization``, SGLang's ``mem_fraction_static``) or the memory still 'free' once
    weights and a forward pass's activations are loaded (TensorRT-LLM's
    ``kv_cache_free_gpu_mem_fraction``; vLLM's sampler warm-up is vLLM's own, so not counted there).
    """
    if policy not in KV_POLICIES:
        raise ValueError(f"policy must be one of {KV_POLICIES}, got {policy!r}")
    plan = memory_plan(gpu, model, 0, 0, utilization)
    if policy == "free":
        reserve = forward_workspace_bytes(model) + FIXED_RESERVE_BYTES
        return utilization * (plan.total_bytes - plan.weight_bytes - reserve)
    return plan.kv_budget_bytes


def can_run(gpu: GPU, model: Model, batch: int, context_tokens: int, drafter=None) -> bool:
    """Whether ``batch`` sequences of ``context_tokens`` tokens can exist on ``gpu``: they fit in its
    memory (``memory_plan``) and within the model's positions (``Model.reads``). Every page's check
    before it shows a number, and page 04's rows', is this one."""
    return (memory_plan(gpu, model, int(batch), int(context_tokens), drafter=drafter).fits
            and model.reads(int(context_tokens)))


def smallest_gpu_count(gpu: GPU, model: Model, batch: int, context_tokens: int,
                       counts: tuple[int, ...] = (1, 2, 4, 8), drafter=None) -> int | None:
    """The fewest GPUs per replica (tensor parallelism, of ``counts``) on which ``batch`` sequences of
    ``context_tokens`` fit (with ``drafter``, as in ``memory_plan``, split the same way), or None:
    not on any of them, or the model's shapes or the GPU's links do not allow that split."""
    for n in counts:
        try:
            split = model.with_tp(n)
            split_drafter = drafter.with_tp(n) if drafter is not None else None
            if n > 1:
                gpu.allreduce_bandwidth(n)
        except ValueError:
            continue
        if memory_plan(gpu, split, batch, context_tokens, drafter=split_drafter).fits:
            return n
    return None


def gib(n_bytes: float) -> float:
    """Bytes in GiB (what ``nvidia-smi`` and the engines' logs print)."""
    return n_bytes / GiB


#: The sidebar's weight precisions by bits a weight, smallest change first, as the advice names them.
_WEIGHT_STEPS = (("8-bit weights (FP8 or INT8)", "fp8"), ("4-bit weights", "int4"))


def _listed(options: list[str], word: str = "or") -> str:
    """'a', 'a or b', 'a, b or c' (``word`` 'and' for a list that is all of them)."""
    return options[0] if len(options) == 1 else ", ".join(options[:-1]) + f" {word} " + options[-1]


def fit_levers(gpu: GPU, model: Model, batch: int, context_tokens: int, *, drafter=None,
               gpus: dict[str, GPU] | None = None, counts: tuple[int, ...] = (1, 2, 4, 8)) -> str:
    """What the sidebar offers that makes ``batch`` sequences of ``context_tokens`` fit, each change
    alone, checked with ``memory_plan``, as a list for 'Pick ...': smaller weights, an FP8 KV cache,
    the other ``gpus`` presets with more memory, more GPUs per replica (of ``counts``), and always a
    smaller model (the last resort, and the only one where no single change is enough). It named
    "smaller weights (FP8 or INT4)" for Llama-3.1-70B on an L4, where 4-bit weights (37 GiB) still do
    not fit."""
    def ok(m: Model, g: GPU = gpu, d=drafter) -> bool:
        try:
            return memory_plan(g, m, int(batch), int(context_tokens), drafter=d).fits
        except ValueError:
            return False

    options = []
    now = model.weight_bytes_per_element
    for label, dtype in _WEIGHT_STEPS:
        if model.weight_dtype in ("int4", "nvfp4", "mxfp4"):
            break  # already 4-bit: INT4's scales are no real step down from NVFP4's or MXFP4's
        smaller = model.with_precision(dtype, model.kv_dtype, model.int4_group)
        if smaller.weight_bytes_per_element < now and ok(smaller):
            options.append(label)
            break
    if model.kv_dtype != "fp8" and ok(model.with_precision(model.weight_dtype, "fp8", model.int4_group)):
        options.append("an FP8 KV cache")
    if gpus is None:
        from sim.hardware import GPUS as gpus
    bigger = sorted((g for g in gpus.values() if g.hbm_bytes > gpu.hbm_bytes and ok(model, g)),
                    key=lambda g: g.hbm_bytes)

    def weights_only(g: GPU) -> bool:
        try:
            return memory_plan(g, model, int(batch), int(context_tokens), drafter=drafter).weights_fit
        except ValueError:
            return False

    # Where the weights alone do not fit here: cards with more memory that hold them but not this
    # batch, named, so that a reader whom another page (a smaller batch) sent there is not left
    # wondering why this page does not.
    short = [] if weights_only(gpu) else sorted(
        (g for g in gpus.values() if gpu.hbm_bytes < g.hbm_bytes and not ok(model, g) and weights_only(g)),
        key=lambda g: g.hbm_bytes)
    if bigger:  # the smallest three that fit, by memory
        names = [g.name for g in bigger[:3]]
        options.append("a GPU with more memory (the " + (_listed(names) if len(bigger) <= 3 else
                                                         ", ".join(names) + " or larger")
                       + (f"; the {_listed([g.name for g in short], 'and')} "
                          f"{'holds' if len(short) == 1 else 'hold'} the weights but not this batch's "
                          "KV cache" if short else "") + ")")
    more = smallest_gpu_count(gpu, model, batch, context_tokens,
                              counts=tuple(n for n in counts if n > model.tp), drafter=drafter)
    if more:
        options.append(f"{more} GPUs per replica")
    options.append("a smaller model" if len(options) else
                   "a smaller model (no other single change in the sidebar makes it fit)")
    return _listed(options)


def amount(n_bytes: float) -> str:
    """Memory as a notice writes it: GiB to one decimal from 1 GiB, MiB below (a shortfall of a few
    MiB read '0.0 GiB short'), KiB below 1 MiB."""
    if n_bytes >= GiB:
        return f"{gib(n_bytes):,.1f} GiB"
    if n_bytes >= 2**20:
        return f"{n_bytes / 2**20:,.0f} MiB"
    return f"{n_bytes / 2**10:,.0f} KiB"


def describe(plan: MemoryPlan, levers: str | None = None) -> str:
    """One plain sentence: what does not fit, by how much, and the largest setup that does; where
    the weights alone do not fit, ``levers`` (``fit_levers``) says what would."""
    if not plan.weights_fit:
        need = plan.weight_bytes + plan.activation_bytes
        share = "" if plan.gpus == 1 else f" a GPU, its share on {plan.gpus} GPUs"
        return (f"The weights of {plan.model_name} ({gib(plan.weight_bytes):,.1f} GiB{share}, as the engine "
                f"holds them) "
                f"and the engine's start-up reserve ({gib(plan.activation_bytes):,.1f} GiB: activations, the "
                f"sampler's warm-up, CUDA context) need {gib(need):,.1f} GiB, more than the "
                f"{gib(plan.budget_bytes):,.1f} GiB an engine may use on {plan.where} "
                f"({plan.utilization:.0%} of {gib(plan.total_bytes):,.1f} GiB): it does not fit on "
                + ("this card at all." if plan.gpus == 1 else f"{plan.gpus} of them at all.")
                + (f" Pick {levers}." if levers else ""))
    if plan.fits:
        return (f"Fits: {gib(plan.used_bytes):,.1f} of {gib(plan.budget_bytes):,.1f} GiB "
                f"(weights {gib(plan.weight_bytes):,.1f}, KV cache {gib(plan.kv_bytes):,.1f}); "
                f"up to {plan.max_batch:,} sequences at this context.")
    largest = plan.max_batch
    tail = (f"The largest batch that fits at {plan.context_tokens:,} tokens is {largest:,}."
            if largest > 0 else
            f"Not even one sequence of {plan.context_tokens:,} tokens fits; the longest context for "
            f"one is {plan.context_for_bytes(plan.kv_budget_bytes):,} tokens.")
    return (f"Batch {plan.batch:,} at {plan.context_tokens:,} tokens of context needs "
            f"{amount(plan.kv_bytes)} of KV cache, but only {amount(plan.kv_budget_bytes)} "
            f"is left on {plan.where} after the weights and the engine's start-up reserve: "
            f"{amount(plan.shortfall_bytes)} short. {tail}")
