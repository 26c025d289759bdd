"""Dense decoder-only transformers, from their ``config.json``, and what they cost in bytes.

Parameter counts are computed from the config (REFERENCE.md section 2, MEASURED.md section 1):
    attention = d*H*hd + 2*d*KV*hd + H*hd*d   (+ q/k/v biases for Qwen2, q/k norms for Qwen3)
    MLP       = 3*d*ff                         (SwiGLU: gate, up, down; GPT-J: 2*d*ff + biases)
    total     = L*(attention + MLP + norms) + embedding + untied lm_head + final norm
and match the official totals, which cross-checks the configs. The KV cache holds one key and one
value vector per layer, KV head and token:
    kv_bytes_per_token = 2 * L * n_kv_heads * head_dim * bytes_per_kv_element

Precisions are as stored: quantised checkpoints (FP8, INT8, INT4) quantise the decoder's linear
layers; the embedding table and the LM head stay BF16, as ModelOpt FP8, AWQ and GPTQ checkpoints ship
them. INT4 is weight-only with one BF16 scale and one BF16 zero point per group of 128 weights.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import cached_property

import numpy as np

#: Bytes per stored element for each weight / KV-cache precision, group scales included.
INT4_GROUP = 128  # weights per quantisation group (AWQ / GPTQ default)
BYTES_PER_ELEMENT: dict[str, float] = {
    "bf16": 2.0, "fp8": 1.0, "int8": 1.0, "int4": 0.5 + 2 * 2.0 / INT4_GROUP,
}
WEIGHT_DTYPES = ("bf16", "fp8", "int8", "int4")
KV_DTYPES = ("bf16", "fp8")
#: Bytes per activation element (BF16 activations between kernels).
ACTIVATION_BYTES = 2.0


@dataclass(frozen=True)
class Model:
    """A dense decoder. Shapes are the config's; precisions are serving choices.

    Attributes:
        name: display name.
        n_layers, hidden, n_heads, n_kv_heads, head_dim, intermediate, vocab: from config.json.
        tied_embeddings: lm_head shares the embedding matrix (no extra parameters).
        qkv_bias: q/k/v projections carry a bias (Qwen2).
        qk_norm: per-head RMSNorm on q and k (Qwen3): 2 * head_dim parameters a layer.
        gated_mlp: SwiGLU (3 matrices). False: a plain 2-matrix MLP with biases (GPT-J's GELU MLP).
        parallel_block: attention and MLP read the same normed input (GPT-J): one norm a layer, and
            the output projection carries no bias.
        lm_head_bias: the LM head carries a bias (GPT-J).
        sliding_window: attention window in tokens, or None (full attention). Shown, not modelled:
            the cost model reads the whole context's KV (an overestimate past the window).
        weight_dtype: 'bf16', 'fp8', 'int8' or 'int4' (INT8 and INT4 weight-only).
        kv_dtype: 'bf16' or 'fp8'.
        source: where the config comes from.
        n_experts: routed experts in each MLP (0: a dense MLP). A mixture-of-experts layer holds
            n_experts MLPs of width ``intermediate`` and a router; each token uses ``experts_per_token``.
        experts_per_token: experts each token is routed to (top-k).
        tp: GPUs the replica is split across (Megatron tensor parallelism: heads, MLP width and
            vocabulary split; a KV head is replicated where there are fewer KV heads than GPUs).
            ``weight_bytes`` and ``kv_bytes_per_token`` are per GPU.
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

    def __post_init__(self) -> None:
        if self.weight_dtype not in WEIGHT_DTYPES:
            raise ValueError(f"weight_dtype must be one of {WEIGHT_DTYPES}, got {self.weight_dtype!r}")
        if self.kv_dtype not in KV_DTYPES:
            raise ValueError(f"kv_dtype must be one of {KV_DTYPES}, got {self.kv_dtype!r}")
        for field in ("n_layers", "hidden", "n_heads", "n_kv_heads", "head_dim", "intermediate", "vocab"):
            value = getattr(self, field)
            if not isinstance(value, int) or value <= 0:
                raise ValueError(f"{field} must be a positive integer, got {value!r}")
        if self.n_experts and not (isinstance(self.experts_per_token, int)
                                   and 1 <= self.experts_per_token <= self.n_experts):
            raise ValueError(f"experts_per_token must be in 1..{self.n_experts}, "
                             f"got {self.experts_per_token!r}")
        if not isinstance(self.tp, int) or self.tp < 1:
            raise ValueError(f"tp must be a positive integer, got {self.tp!r}")
        if self.n_heads % self.tp or self.intermediate % self.tp:
            raise ValueError(f"{self.name} cannot be split across {self.tp} GPUs: its {self.n_heads} "
                             f"heads and {self.intermediate} MLP width must divide by {self.tp}")

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

    @property
    def qkv_params(self) -> int:
        """Parameters of one layer's q, k, v projections (biases included)."""
        d, hd = self.hidden, self.head_dim
        n = d * (self.n_heads + 2 * self.n_kv_heads) * hd
        if self.qkv_bias:
            n += (self.n_heads + 2 * self.n_kv_heads) * hd
        return n

    @property
    def o_params(self) -> int:
        """Parameters of one layer's output projection."""
        return self.n_heads * self.head_dim * self.hidden

    @property
    def mlp_matrices(self) -> int:
        """Weight matrices of the MLP: 3 for SwiGLU (gate, up, down), 2 for a plain MLP."""
        return 3 if self.gated_mlp else 2

    @property
    def expert_params(self) -> int:
        """Parameters of one MLP (one expert of a mixture; biases included for a plain MLP)."""
        d, ff = self.hidden, self.intermediate
        n = self.mlp_matrices * d * ff
        if not self.gated_mlp:
            n += ff + d
        return n

    @property
    def mlp_params(self) -> int:
        """Parameters of one layer's MLP: one MLP, or every expert of a mixture plus its router."""
        if self.n_experts:
            return self.n_experts * self.expert_params + self.hidden * self.n_experts
        return self.expert_params

    @property
    def active_mlp_params(self) -> int:
        """MLP parameters one token uses: all of a dense MLP; k experts and the router of a mixture."""
        if self.n_experts:
            return self.experts_per_token * self.expert_params + self.hidden * self.n_experts
        return self.expert_params

    def experts_touched(self, tokens):
        """Distinct experts a step of ``tokens`` tokens reads in each layer under uniform routing:
        E (1 - (1 - k/E)^T) (MEASURED.md 2.3; 1 for a dense MLP). Broadcasts."""
        t = np.asarray(tokens, dtype=float)
        if not self.n_experts:
            return np.ones_like(t)
        e, k = float(self.n_experts), float(self.experts_per_token)
        return e * -np.expm1(t * np.log1p(-k / e)) if k < e else np.full_like(t, e)

    @property
    def norm_params(self) -> int:
        """Norm parameters of one layer: RMSNorm weights (2 a layer), LayerNorm weight + bias for a
        parallel block (1 a layer), q/k norms."""
        n = 2 * self.hidden  # two RMSNorm weights, or one LayerNorm's weight and bias (GPT-J)
        if self.qk_norm:
            n += 2 * self.head_dim
        return n

    @property
    def layer_params(self) -> int:
        return self.qkv_params + self.o_params + self.mlp_params + self.norm_params

    @property
    def embedding_params(self) -> int:
        return self.vocab * self.hidden

    @property
    def lm_head_params(self) -> int:
        """The LM head's own parameters (0 when tied to the embedding), bias included."""
        if self.tied_embeddings:
            return 0
        return self.vocab * self.hidden + (self.vocab if self.lm_head_bias else 0)

    @cached_property
    def n_params(self) -> int:
        """Total parameter count (embedding and lm_head included)."""
        final_norm = 2 * self.hidden if self.parallel_block else self.hidden
        return (self.n_layers * self.layer_params + self.embedding_params + self.lm_head_params
                + final_norm)

    @property
    def decoder_params(self) -> int:
        """Parameters of the decoder layers: what a quantised checkpoint stores in ``weight_dtype``."""
        return self.n_layers * self.layer_params

    # ---- bytes ----

    @property
    def weight_bytes_per_element(self) -> float:
        return BYTES_PER_ELEMENT[self.weight_dtype]

    @property
    def layer_params_per_gpu(self) -> float:
        """One layer's parameters on one GPU: q and the output projection and the MLP split, k and v
        split by head (replicated below one head a GPU), norms replicated."""
        d, hd = self.hidden, self.head_dim
        attn = d * (self.heads_per_gpu + 2 * self.kv_heads_per_gpu) * hd + self.heads_per_gpu * hd * d
        if self.qkv_bias:
            attn += (self.heads_per_gpu + 2 * self.kv_heads_per_gpu) * hd
        return attn + self.mlp_params / self.tp + self.norm_params

    @property
    def weight_bytes(self) -> float:
        """Bytes of weights one GPU holds, as stored: decoder layers in ``weight_dtype``; embedding,
        LM head and final norm in BF16 (all weights when ``tp`` is 1)."""
        rest = self.n_params - self.decoder_params
        if self.tp == 1:
            decoder = self.decoder_params
        else:
            decoder = self.n_layers * self.layer_params_per_gpu
            rest = rest / self.tp
        return decoder * self.weight_bytes_per_element + rest * BYTES_PER_ELEMENT["bf16"]

    @property
    def lm_head_bytes(self) -> float:
        """Bytes one LM-head pass reads on one GPU: its share of the head (the embedding table when
        tied), BF16."""
        return self.vocab_per_gpu * self.hidden * BYTES_PER_ELEMENT["bf16"]

    @property
    def kv_bytes_per_token(self) -> float:
        """KV-cache bytes one token occupies on one GPU: 2 (K and V) * layers * kv_heads (per GPU)
        * head_dim * bytes."""
        return 2 * self.n_layers * self.kv_heads_per_gpu * self.head_dim * BYTES_PER_ELEMENT[self.kv_dtype]

    @property
    def compute_precision(self) -> str:
        """Tensor-core precision of the matmuls: FP8 weights run FP8 math; BF16, INT8 and INT4
        (weight-only, dequantised on the fly) run BF16 math."""
        return "fp8" if self.weight_dtype == "fp8" else "bf16"

    def with_precision(self, weight_dtype: str = "bf16", kv_dtype: str = "bf16") -> Model:
        """The same model served at another weight / KV-cache precision."""
        return dataclasses.replace(self, weight_dtype=weight_dtype, kv_dtype=kv_dtype)

    def with_tp(self, tp: int) -> Model:
        """The same model split across ``tp`` GPUs (raises ValueError if its shapes do not divide)."""
        return dataclasses.replace(self, tp=tp)


MODELS: dict[str, Model] = {
    m.name: m
    for m in (
        Model("Llama-3.1-8B", 32, 4096, 32, 8, 128, 14336, 128256, False,
              source="meta-llama/llama-models sku_list.py; HF config.json (head_dim 128)"),
        Model("Llama-3.1-70B", 80, 8192, 64, 8, 128, 28672, 128256, False,
              source="meta-llama/llama-models sku_list.py"),
        Model("Mistral-7B", 32, 4096, 32, 8, 128, 14336, 32000, False, sliding_window=4096,
              source="mistralai/Mistral-7B-v0.1 config (mlx-community copy)"),
        Model("Qwen2.5-7B", 28, 3584, 28, 4, 128, 18944, 152064, False, qkv_bias=True,
              source="Qwen/Qwen2.5-7B-Instruct config.json; model card 7.61 B params"),
        Model("Qwen2.5-72B", 80, 8192, 64, 8, 128, 29568, 152064, False, qkv_bias=True,
              source="Qwen/Qwen2.5-72B config.json; model card 72.7 B params"),
        Model("Llama-3.2-1B", 16, 2048, 32, 8, 64, 8192, 128256, True,
              source="meta-llama/Llama-3.2-1B config.json (tied embeddings, head_dim 64)"),
        Model("Mixtral-8x7B", 32, 4096, 32, 8, 128, 14336, 32000, False, n_experts=8, experts_per_token=2,
              source="mistralai/Mixtral-8x7B-v0.1 config (MEASURED.md 2.2): 8 experts, top-2; "
                     "46.7 B params, 12.9 B active a token"),
    )
}

#: Dense models the measured rows name (MEASURED.md section 1), loadable but not in the sidebar.
MEASURED_MODELS: dict[str, Model] = {
    m.name: m
    for m in (
        Model("Llama-2-7B", 32, 4096, 32, 32, 128, 11008, 32000, False,
              source="MEASURED.md section 1 (HF config.json copies); 6.74 B params"),
        Model("Llama-2-70B", 80, 8192, 64, 8, 128, 28672, 32000, False,
              source="MEASURED.md section 1 (HF config.json copies); 68.98 B params"),
        Model("GPT-J-6B", 28, 4096, 16, 16, 256, 16384, 50400, False, gated_mlp=False,
              parallel_block=True, lm_head_bias=True,
              source="MEASURED.md section 1: EleutherAI/gpt-j-6b config (n_inner = 4 x hidden); "
                     "6.05 B params"),
        Model("Qwen3-8B", 36, 4096, 32, 8, 128, 12288, 151936, False, qk_norm=True,
              source="MEASURED.md section 1 (HF config.json copies); 8.19 B params"),
        Model("Llama-3.1-405B", 126, 16384, 128, 8, 128, 53248, 128256, False,
              source="meta-llama/llama-models sku_list.py (REFERENCE.md V07); 405.85 B params"),
    )
}

ALL_MODELS: dict[str, Model] = {**MODELS, **MEASURED_MODELS}

DEFAULT_MODEL = "Llama-3.1-8B"
#: The draft model the speculative-decoding page pairs with the Llama targets (shared vocabulary).
DRAFT_MODEL = "Llama-3.2-1B"
