"""Dense decoder-only transformers, from their ``config.json``, and what they cost in bytes.

Parameter counts are computed from the config (REFERENCE.md section 2):
    attention = d*H*hd + 2*d*KV*hd + H*hd*d   (+ q/k/v biases for Qwen2)
    MLP       = 3*d*ff                         (SwiGLU: gate, up, down)
    total     = L*(attention + MLP + 2 norms) + embedding + untied lm_head + final norm
and match the official totals exactly, which cross-checks the configs. The KV cache holds one key and
one value vector per layer, KV head and token:
    kv_bytes_per_token = 2 * L * n_kv_heads * head_dim * bytes_per_kv_element
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import cached_property

#: Bytes per stored element for each weight / KV-cache precision.
BYTES_PER_ELEMENT: dict[str, float] = {"bf16": 2.0, "fp8": 1.0, "int4": 0.5}
WEIGHT_DTYPES = ("bf16", "fp8", "int4")
KV_DTYPES = ("bf16", "fp8")


@dataclass(frozen=True)
class Model:
    """A dense decoder. Shapes are the config's; precisions are serving choices.

    Attributes:
        name: display name.
        n_layers, hidden, n_heads, n_kv_heads, head_dim, intermediate, vocab: from config.json.
        tied_embeddings: lm_head shares the embedding matrix (no extra parameters).
        qkv_bias: q/k/v projections carry a bias (Qwen2).
        sliding_window: attention window in tokens, or None (full attention). Shown, not modelled:
            the cost model reads the whole context's KV (an overestimate past the window).
        weight_dtype: 'bf16', 'fp8' or 'int4' (weight-only quantisation).
        kv_dtype: 'bf16' or 'fp8'.
        source: where the config comes from.
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
    sliding_window: int | None = None
    weight_dtype: str = "bf16"
    kv_dtype: str = "bf16"

    def __post_init__(self) -> None:
        if self.weight_dtype not in WEIGHT_DTYPES:
            raise ValueError(f"weight_dtype must be one of {WEIGHT_DTYPES}, got {self.weight_dtype!r}")
        if self.kv_dtype not in KV_DTYPES:
            raise ValueError(f"kv_dtype must be one of {KV_DTYPES}, got {self.kv_dtype!r}")
        for field in ("n_layers", "hidden", "n_heads", "n_kv_heads", "head_dim", "intermediate", "vocab"):
            value = getattr(self, field)
            if not isinstance(value, int) or value <= 0:
                raise ValueError(f"{field} must be a positive integer, got {value!r}")

    @cached_property
    def n_params(self) -> int:
        """Total parameter count (embedding and lm_head included)."""
        d, hd, ff = self.hidden, self.head_dim, self.intermediate
        attention = d * self.n_heads * hd + 2 * d * self.n_kv_heads * hd + self.n_heads * hd * d
        if self.qkv_bias:
            attention += self.n_heads * hd + 2 * self.n_kv_heads * hd
        per_layer = attention + 3 * d * ff + 2 * d
        embeddings = self.vocab * d * (1 if self.tied_embeddings else 2)
        return self.n_layers * per_layer + embeddings + d

    @property
    def weight_bytes(self) -> float:
        """Bytes of weights every forward pass reads once: n_params * bytes per weight."""
        return self.n_params * BYTES_PER_ELEMENT[self.weight_dtype]

    @property
    def kv_bytes_per_token(self) -> float:
        """KV-cache bytes one token occupies: 2 (K and V) * layers * kv_heads * head_dim * bytes."""
        return 2 * self.n_layers * self.n_kv_heads * self.head_dim * BYTES_PER_ELEMENT[self.kv_dtype]

    @property
    def compute_precision(self) -> str:
        """Tensor-core precision of the matmuls: FP8 weights run FP8 math; BF16 and INT4 (weight-only,
        dequantised on the fly) run BF16 math."""
        return "fp8" if self.weight_dtype == "fp8" else "bf16"

    def with_precision(self, weight_dtype: str = "bf16", kv_dtype: str = "bf16") -> Model:
        """The same model served at another weight / KV-cache precision."""
        return dataclasses.replace(self, weight_dtype=weight_dtype, kv_dtype=kv_dtype)


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
    )
}

DEFAULT_MODEL = "Llama-3.1-8B"
#: The draft model the speculative-decoding page pairs with the Llama targets (shared vocabulary).
DRAFT_MODEL = "Llama-3.2-1B"
