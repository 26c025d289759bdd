"""Models from Hugging Face ``config.json`` files: the presets in ``sim/configs/`` and pasted ones.

One loader maps a config into ``sim.models.Model``. It understands dense GQA/MHA decoders (Llama,
Mistral, Qwen2, Qwen3, GPT-J's parallel attention + MLP), mixtures of experts (Mixtral, Qwen3-MoE,
DeepSeek-V3, gpt-oss, Llama 4: routed experts, experts per token, expert width, shared experts,
leading dense layers), DeepSeek's multi-head latent attention (MLA) and sliding-window / chunked
attention layers. Anything else is refused with the reason, never half-priced.

Three steps, each pure (stdlib ``json`` only; nothing is evaluated):

    parse_config_text(text)  -> dict       size-capped JSON, depth-capped, no NaN/Infinity
    spec_from_config(config) -> Spec       the fields the loader uses, named after Model's fields
    model_from_spec(spec)    -> Model      every number checked against a cap

A ``Spec`` travels in a link as ``encode_spec`` / ``decode_spec`` (short ``key.value`` pairs joined by
``~``, URL-safe without escaping) and goes through the same checks when it comes back.
"""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sim.models import Model


def _m():
    """sim.models, imported when first needed (it imports this module to build its presets)."""
    from sim import models

    return models

CONFIG_DIR = Path(__file__).resolve().parent / "configs"
#: Largest pasted or uploaded config.json, bytes. Real ones are 1-6 KB.
MAX_CONFIG_BYTES = 64 * 1024
#: Deepest nesting of objects and lists a config may have (real ones: 3).
MAX_DEPTH = 6
#: Longest encoded spec a link may carry, characters.
MAX_SPEC_CHARS = 400

SUPPORTED_TYPES = ("llama", "mistral", "mixtral", "qwen2", "qwen3", "qwen3_moe", "gptj", "deepseek_v2",
                   "deepseek_v3", "gpt_oss", "llama4", "llama4_text")
#: Families readers may paste that this loader cannot price, and why.
REFUSED_TYPES = {
    "qwen3_next": "hybrid linear attention (Gated DeltaNet layers keep a fixed-size state, not a KV cache)",
    "mamba": "a state-space model (no attention, no KV cache)",
    "mamba2": "a state-space model (no attention, no KV cache)",
    "jamba": "hybrid attention + Mamba layers",
    "falcon_h1": "hybrid attention + Mamba layers",
    "nemotron_h": "hybrid attention + Mamba layers",
    "minimax": "hybrid lightning (linear) attention",
    "rwkv": "a recurrent model (no KV cache)",
    "zamba2": "hybrid attention + Mamba layers",
    "t5": "an encoder-decoder model",
    "bert": "an encoder, not a decoder",
}
ATTENTION_LAYER_TYPES = ("full_attention", "sliding_attention", "chunked_attention")

#: Caps on every number (a config beyond them is not a model this app can show).
CAPS: dict[str, tuple[int, int]] = {
    "n_layers": (1, 1024), "hidden": (1, 65536), "n_heads": (1, 1024), "n_kv_heads": (1, 1024),
    "head_dim": (1, 1024), "intermediate": (1, 1 << 20), "vocab": (1, 1 << 22),
    "n_experts": (0, 4096), "experts_per_token": (0, 4096), "moe_intermediate": (0, 1 << 20),
    "shared_intermediate": (0, 1 << 20), "dense_layers": (0, 1024), "window_layers": (0, 1024),
    "sliding_window": (0, 100_000_000), "q_lora_rank": (0, 65536), "kv_lora_rank": (0, 65536),
    "qk_nope_head_dim": (0, 1024), "qk_rope_head_dim": (0, 1024), "v_head_dim": (0, 1024),
    "max_positions": (64, 1 << 31),  # fewer than 64 positions is no language model this app shows
}
MAX_PARAMS = 10**13  # 10 trillion
FLAGS = ("tied_embeddings", "qkv_bias", "o_bias", "qk_norm", "gated_mlp", "parallel_block",
         "lm_head_bias", "expert_bias", "router_bias", "attn_sinks")
#: Short names of the spec's fields in a link.
SHORT = {"family": "t", "n_layers": "L", "hidden": "d", "n_heads": "H", "n_kv_heads": "kv",
         "head_dim": "hd", "intermediate": "ff", "vocab": "V", "n_experts": "E", "experts_per_token": "k",
         "moe_intermediate": "fe", "shared_intermediate": "fs", "dense_layers": "dl",
         "window_layers": "wl", "sliding_window": "w", "q_lora_rank": "ql", "kv_lora_rank": "kl",
         "qk_nope_head_dim": "qn", "qk_rope_head_dim": "qr", "v_head_dim": "vd", "quant_scope": "qs",
         "tied_embeddings": "tie", "qkv_bias": "qb", "o_bias": "ob", "qk_norm": "qkn", "gated_mlp": "g",
         "parallel_block": "pb", "lm_head_bias": "lb", "expert_bias": "eb", "router_bias": "rb",
         "attn_sinks": "sk", "shipped_dtype": "sd", "max_positions": "mp"}
LONG = {v: k for k, v in SHORT.items()}
#: The config.json field each spec field comes from (for messages).
HF_NAME = {"n_layers": "num_hidden_layers", "hidden": "hidden_size", "n_heads": "num_attention_heads",
           "n_kv_heads": "num_key_value_heads", "intermediate": "intermediate_size", "vocab": "vocab_size",
           "n_experts": "number of experts", "experts_per_token": "num_experts_per_tok",
           "moe_intermediate": "moe_intermediate_size", "shared_intermediate": "shared expert width",
           "dense_layers": "dense layers", "window_layers": "windowed layers",
           "max_positions": "max_position_embeddings (GPT-J: n_positions)"}

#: Fields real configs carry that this loader knows: those that do not change what a step costs (tokens,
#: training), and the few read elsewhere in ``spec_from_config`` (max_position_embeddings, n_positions).
IGNORED_FIELDS = frozenset((
    "architectures", "auto_map", "bos_token_id", "eos_token_id", "pad_token_id", "torch_dtype", "dtype",
    "transformers_version", "rope_theta", "rope_scaling", "max_position_embeddings", "initializer_range",
    "rms_norm_eps", "layer_norm_epsilon", "hidden_act", "activation_function", "use_cache",
    "attention_dropout", "pretraining_tp", "_name_or_path", "name_or_path", "model_name", "n_positions",
    "rotary", "rotary_dim", "rotary_pct", "scale_attn_weights", "attn_pdrop", "embd_pdrop", "resid_pdrop",
    "gradient_checkpointing", "tokenizer_class", "router_aux_loss_coef", "output_router_logits",
    "norm_topk_prob", "aux_loss_alpha", "seq_aux", "ep_size", "n_group", "topk_group", "topk_method",
    "scoring_func", "routed_scaling_factor", "num_nextn_predict_layers", "router_jitter_noise",
    "swiglu_limit", "initial_context_length", "boi_token_index", "eoi_token_index", "image_token_index",
    "for_llm_compressor", "quantization_config", "mlp_bias", "attention_bias", "use_sliding_window",
    "max_window_layers", "sliding_window", "layer_types", "decoder_sparse_step", "mlp_only_layers",
    "first_k_dense_replace", "moe_layer_freq", "interleave_moe_layer_step", "intermediate_size_mlp",
    "no_rope_layers", "no_rope_layer_interval", "attention_chunk_size", "use_qk_norm",
    "attn_temperature_tuning", "floor_scale", "attn_scale", "moe_layers", "vision_config", "text_config",
    "task_specific_params",
    "bos_token", "eos_token", "is_decoder", "model_type", "tie_word_embeddings", "head_dim",
    "vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
    "num_key_value_heads", "n_embd", "n_head", "n_layer", "n_inner", "num_local_experts", "num_experts",
    "n_routed_experts", "num_experts_per_tok", "experts_per_token", "moe_intermediate_size",
    "n_shared_experts", "kv_lora_rank", "q_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim",
    "v_head_dim", "use_return_dict", "return_dict", "output_attentions", "output_hidden_states",
    "pruned_heads", "id2label", "label2id", "chunk_size_feed_forward", "problem_type",
))


class ConfigError(ValueError):
    """A config the loader cannot read or express; the message names every field at fault."""


@dataclass(frozen=True)
class Spec:
    """What the loader took from a config: Model's shape fields, and notes for the reader."""

    fields: dict
    family: str
    notes: tuple[str, ...] = field(default=(), compare=False)


# ---- step 1: text -> dict ----


def _reject_constant(name: str):
    raise ConfigError(f"{name} is not a number JSON allows")


def _depth(obj, limit: int) -> int:
    """Nesting depth of ``obj``, stopping once past ``limit``."""
    stack, deepest = [(obj, 1)], 0
    while stack:
        node, depth = stack.pop()
        if isinstance(node, (dict, list)):
            deepest = max(deepest, depth)
            if deepest > limit:
                return deepest
            children = node.values() if isinstance(node, dict) else node
            stack.extend((c, depth + 1) for c in children)
    return deepest


def too_large(n_bytes: int) -> str:
    """Why a config of ``n_bytes`` bytes (over MAX_CONFIG_BYTES) is refused."""
    return (f"the config is {n_bytes:,} bytes; at most {MAX_CONFIG_BYTES:,} are read (a real config.json is "
            "a few KB)")


def parse_config_text(text: str | bytes) -> dict:
    """The JSON object in ``text`` (a pasted or uploaded config.json). Raises ConfigError for text
    over MAX_CONFIG_BYTES, not UTF-8, not JSON, NaN/Infinity, nesting deeper than MAX_DEPTH, or a
    top level that is not an object."""
    raw = text.encode("utf-8", "replace") if isinstance(text, str) else bytes(text)
    if len(raw) > MAX_CONFIG_BYTES:
        raise ConfigError(too_large(len(raw)))
    try:
        decoded = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError("the config is not UTF-8 text") from None
    if not decoded.strip():
        raise ConfigError("the config is empty")
    try:
        config = json.loads(decoded, parse_constant=_reject_constant)
    except RecursionError:
        raise ConfigError(f"the config is nested too deeply (more than {MAX_DEPTH} levels)") from None
    except ConfigError:
        raise
    except ValueError as exc:  # JSONDecodeError, or an integer too long to convert
        raise ConfigError(f"not valid JSON: {exc}") from None
    if not isinstance(config, dict):
        raise ConfigError(f"a config.json is a JSON object ({{...}}), not a {type(config).__name__}")
    if _depth(config, MAX_DEPTH) > MAX_DEPTH:
        raise ConfigError(f"the config is nested too deeply (more than {MAX_DEPTH} levels)")
    return config


# ---- step 2: dict -> Spec ----


class _Reader:
    """Reads typed fields from a config, collecting every problem before raising."""

    def __init__(self, config: dict):
        self.config = config
        self.errors: list[str] = []
        self.missing: list[str] = []
        self.notes: list[str] = []

    def has(self, key: str) -> bool:
        return self.config.get(key) is not None

    def int(self, key: str, default=None, *, lo: int = 0, hi: int = 1 << 40, alias: str | None = None):
        value = self.config.get(key)
        if value is None and alias is not None:
            value, key = self.config.get(alias), alias if self.config.get(alias) is not None else key
        if value is None:
            if default is None:
                self.missing.append(key)
            return default
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            self.errors.append(f"{key} must be a whole number, got {_show(value)}")
            return default
        if isinstance(value, float):
            if not (math.isfinite(value) and value.is_integer()):
                self.errors.append(f"{key} must be a whole number, got {_show(value)}")
                return default
            value = int(value)
        if not lo <= value <= hi:
            self.errors.append(f"{key} = {_show(value)} is outside {lo:,}..{hi:,}")
            return default
        return value

    def bool(self, key: str, default: bool) -> bool:
        value = self.config.get(key)
        if value is None:
            return default
        if not isinstance(value, bool):
            self.errors.append(f"{key} must be true or false, got {_show(value)}")
            return default
        return value

    def list(self, key: str) -> list | None:
        value = self.config.get(key)
        if value is None:
            return None
        if not isinstance(value, list) or len(value) > 4096:
            self.errors.append(f"{key} must be a list (at most 4,096 items), got {_show(value)}")
            return None
        return value

    def finish(self) -> None:
        problems = list(self.errors)
        if self.missing:
            problems.insert(0, "missing field(s): " + ", ".join(dict.fromkeys(self.missing)))
        if problems:
            raise ConfigError("; ".join(problems))


def _show(value) -> str:
    """A value for an error message, short and plain."""
    text = json.dumps(value) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 40 else text[:39] + "…"


def spec_from_config(config: dict) -> Spec:
    """The loader's reading of a config.json dict (raises ConfigError naming the fields at fault)."""
    if not isinstance(config, dict):
        raise ConfigError("a config.json is a JSON object")
    family = config.get("model_type")
    if not isinstance(family, str) or not family:
        raise ConfigError("missing field(s): model_type (which family of model this is)")
    if family == "llama4" and isinstance(config.get("text_config"), dict):
        top = config
        config = dict(config["text_config"])
        config.setdefault("tie_word_embeddings", top.get("tie_word_embeddings"))
        family = "llama4_text"
    if family in REFUSED_TYPES:
        raise ConfigError(f"model_type {family!r} is {REFUSED_TYPES[family]}: this cost model prices "
                          "attention with a KV cache and cannot express it")
    if family not in SUPPORTED_TYPES:
        shown = family if len(family) <= 40 else family[:39] + "…"
        raise ConfigError(f"model_type {shown!r} is not one this loader knows (it reads "
                          f"{', '.join(SUPPORTED_TYPES)})")
    r = _Reader(config)
    f: dict = {}
    gptj = family == "gptj"
    f["hidden"] = r.int("n_embd" if gptj else "hidden_size", lo=1, hi=1 << 40)
    f["n_layers"] = r.int("n_layer" if gptj else "num_hidden_layers", lo=1, hi=1 << 40)
    f["n_heads"] = r.int("n_head" if gptj else "num_attention_heads", lo=1, hi=1 << 40)
    f["vocab"] = r.int("vocab_size", lo=1, hi=1 << 40)
    r.finish()  # the shape everything else derives from
    d, heads = f["hidden"], f["n_heads"]
    if gptj:
        f["n_kv_heads"] = heads
    else:
        f["n_kv_heads"] = r.int("num_key_value_heads", heads, lo=1, hi=1 << 40)
        if not r.has("num_key_value_heads"):
            r.notes.append("num_key_value_heads not given: taken as num_attention_heads (MHA), as "
                           "Hugging Face does")
    if r.has("head_dim"):
        f["head_dim"] = r.int("head_dim", lo=1, hi=1 << 40)
    elif d % heads:
        r.errors.append(f"hidden_size {d} does not divide by num_attention_heads {heads}; give head_dim")
    else:
        f["head_dim"] = d // heads
    tie_default = False
    f["tied_embeddings"] = r.bool("tie_word_embeddings", tie_default)
    if config.get("tie_word_embeddings") is None:
        r.notes.append("tie_word_embeddings not given: taken as false (the default of these families)")
    attn_bias = r.bool("attention_bias", False)
    if gptj:
        f["intermediate"] = r.int("n_inner", 4 * d, lo=1, hi=1 << 40)
        f.update(gated_mlp=False, parallel_block=True, lm_head_bias=True)
    elif family == "deepseek_v2" or family == "deepseek_v3":
        _deepseek(r, f)
    elif family == "gpt_oss":
        _gpt_oss(r, f, config)
    elif family == "llama4_text":
        _llama4(r, f)
    else:
        f["intermediate"] = r.int("intermediate_size", lo=1, hi=1 << 40)
        if family in ("qwen2",):
            f["qkv_bias"] = True
        if family in ("llama", "qwen3", "qwen3_moe") and attn_bias:
            f["qkv_bias"] = True
            f["o_bias"] = family == "llama"
        if family in ("qwen3", "qwen3_moe"):
            f["qk_norm"] = True
        if r.bool("mlp_bias", False):
            r.errors.append("mlp_bias = true (biases on a SwiGLU MLP) is not expressed by this loader")
        if family == "mixtral":
            f["n_experts"] = r.int("num_local_experts", lo=1, hi=1 << 40)
            f["experts_per_token"] = r.int("num_experts_per_tok", lo=1, hi=1 << 40)
        if family == "qwen3_moe":
            _qwen3_moe(r, f)
        _window(r, f, family)
    _shipped(r, f, config)
    positions = "n_positions" if gptj else "max_position_embeddings"
    if r.has(positions):
        f["max_positions"] = r.int(positions, lo=64, hi=1 << 31)
    r.finish()
    known_top = IGNORED_FIELDS
    unknown = sorted(k for k in config if k not in known_top)
    notes = list(r.notes)
    if unknown:
        shown = ", ".join(_show(k)[1:-1] if len(k) <= 40 else k[:39] + "…" for k in unknown[:12])
        more = f" and {len(unknown) - 12} more" if len(unknown) > 12 else ""
        notes.append(f"fields this loader does not know, ignored: {shown}{more}. If one changes the "
                     "architecture, the estimate does not see it.")
    return Spec(fields=f, family=family, notes=tuple(notes))


#: quantization_config.quant_method -> the weight precision the checkpoint ships.
SHIPPED = {"fp8": "fp8", "mxfp4": "mxfp4", "modelopt_fp4": "nvfp4", "nvfp4": "nvfp4", "awq": "int4",
           "gptq": "int4"}


def _shipped(r: _Reader, f: dict, config: dict) -> None:
    quant = config.get("quantization_config")
    if quant is None:
        return
    method = quant.get("quant_method") if isinstance(quant, dict) else None
    if method in SHIPPED:
        f["shipped_dtype"] = SHIPPED[method]
    else:
        r.notes.append(f"quantization_config.quant_method {_show(method)} not read: pick the weight "
                       "precision in the sidebar")


def _window(r: _Reader, f: dict, family: str) -> None:
    """Sliding window: Mistral/Mixtral apply it to every layer; Qwen2/3 only with use_sliding_window,
    to the layers from max_window_layers on."""
    if not r.has("sliding_window"):
        return
    window = r.int("sliding_window", lo=1, hi=1 << 40)
    if window is None:
        return
    if family in ("mistral", "mixtral"):
        f["sliding_window"], f["window_layers"] = window, f["n_layers"]
    elif family in ("qwen2", "qwen3", "qwen3_moe") and r.bool("use_sliding_window", False):
        full = r.int("max_window_layers", f["n_layers"], lo=0, hi=1 << 40)
        f["sliding_window"] = window
        f["window_layers"] = max(0, f["n_layers"] - min(full, f["n_layers"]))
    elif family == "llama":
        r.notes.append("sliding_window ignored: Llama applies none")


def _qwen3_moe(r: _Reader, f: dict) -> None:
    f["n_experts"] = r.int("num_experts", lo=1, hi=1 << 40)
    f["experts_per_token"] = r.int("num_experts_per_tok", lo=1, hi=1 << 40)
    f["moe_intermediate"] = r.int("moe_intermediate_size", lo=1, hi=1 << 40)
    step = r.int("decoder_sparse_step", 1, lo=1, hi=1 << 40)
    only = r.list("mlp_only_layers") or []
    if any(isinstance(i, bool) or not isinstance(i, int) for i in only):
        r.errors.append("mlp_only_layers must list layer numbers")
        only = []
    L = f["n_layers"]
    if step and L:
        dense = sum(1 for i in range(L) if i in set(only) or (i + 1) % step != 0)
        f["dense_layers"] = dense


def _deepseek(r: _Reader, f: dict) -> None:
    f["intermediate"] = r.int("intermediate_size", lo=1, hi=1 << 40)
    f["n_experts"] = r.int("n_routed_experts", lo=1, hi=1 << 40)
    f["experts_per_token"] = r.int("num_experts_per_tok", lo=1, hi=1 << 40)
    f["moe_intermediate"] = r.int("moe_intermediate_size", lo=1, hi=1 << 40)
    shared = r.int("n_shared_experts", 0, lo=0, hi=1 << 40)
    if shared and f.get("moe_intermediate"):
        f["shared_intermediate"] = shared * f["moe_intermediate"]
    f["dense_layers"] = r.int("first_k_dense_replace", 0, lo=0, hi=1 << 40)
    if r.int("moe_layer_freq", 1, lo=1, hi=1 << 40) != 1:
        r.errors.append("moe_layer_freq other than 1 is not expressed by this loader")
    f["kv_lora_rank"] = r.int("kv_lora_rank", lo=1, hi=1 << 40)
    f["q_lora_rank"] = r.int("q_lora_rank", 0, lo=0, hi=1 << 40)
    f["qk_nope_head_dim"] = r.int("qk_nope_head_dim", lo=1, hi=1 << 40)
    f["qk_rope_head_dim"] = r.int("qk_rope_head_dim", lo=1, hi=1 << 40)
    f["v_head_dim"] = r.int("v_head_dim", lo=1, hi=1 << 40)
    if f.get("qk_nope_head_dim") and f.get("qk_rope_head_dim"):
        f["head_dim"] = f["qk_nope_head_dim"] + f["qk_rope_head_dim"]
    # V3's noaux_tc routing keeps one correction bias per expert (e_score_correction_bias).
    f["router_bias"] = r.config.get("topk_method") == "noaux_tc"


def _gpt_oss(r: _Reader, f: dict, config: dict) -> None:
    f["intermediate"] = r.int("intermediate_size", lo=1, hi=1 << 40)
    f["n_experts"] = r.int("num_local_experts", lo=1, hi=1 << 40)
    k_key = "num_experts_per_tok" if r.has("num_experts_per_tok") else "experts_per_token"
    f["experts_per_token"] = r.int(k_key, lo=1, hi=1 << 40)
    bias = r.bool("attention_bias", True)
    f.update(qkv_bias=bias, o_bias=bias, expert_bias=True, router_bias=True, attn_sinks=True)
    _layer_types(r, f)
    quant = config.get("quantization_config")
    if isinstance(quant, dict):
        kept = quant.get("modules_to_not_convert")
        if isinstance(kept, list) and any(isinstance(m, str) and "self_attn" in m for m in kept):
            f["quant_scope"] = "experts"


def _layer_types(r: _Reader, f: dict) -> None:
    types = r.list("layer_types")
    if types is None:
        return
    bad = sorted({str(t)[:30] for t in types if t not in ATTENTION_LAYER_TYPES})
    if bad:
        r.errors.append(f"layer_types has {', '.join(bad)}: only attention layers with a KV cache "
                        f"({', '.join(ATTENTION_LAYER_TYPES)}) can be priced; hybrid linear-attention or "
                        "state-space layers cannot")
        return
    if len(types) != f["n_layers"]:
        r.errors.append(f"layer_types lists {len(types)} layers, num_hidden_layers is {f['n_layers']}")
        return
    windowed = sum(t != "full_attention" for t in types)
    if windowed:
        window = r.int("sliding_window", lo=1, hi=1 << 40)
        if window is not None:
            f["sliding_window"], f["window_layers"] = window, windowed


def _llama4(r: _Reader, f: dict) -> None:
    f["n_experts"] = r.int("num_local_experts", lo=1, hi=1 << 40)
    f["experts_per_token"] = r.int("num_experts_per_tok", lo=1, hi=1 << 40)
    width = r.int("intermediate_size", lo=1, hi=1 << 40)
    f["moe_intermediate"] = width
    f["shared_intermediate"] = width  # one shared expert a MoE layer (HF Llama4TextMoe)
    step = r.int("interleave_moe_layer_step", 1, lo=1, hi=1 << 40)
    L = f["n_layers"]
    dense = L - L // step if step else 0
    f["dense_layers"] = dense
    f["intermediate"] = r.int("intermediate_size_mlp", width, lo=1, hi=1 << 40) if dense else width
    chunk = r.int("attention_chunk_size", 0, lo=0, hi=1 << 40)
    if chunk:
        no_rope = r.list("no_rope_layers")
        if no_rope is not None and len(no_rope) == L:
            chunked = sum(1 for x in no_rope if x)  # 1: a RoPE layer, chunked; 0: a global NoPE layer
        else:
            interval = r.int("no_rope_layer_interval", 4, lo=1, hi=1 << 40)
            chunked = L - L // interval
        f["sliding_window"], f["window_layers"] = chunk, chunked
    if r.bool("attention_bias", False):
        f["qkv_bias"] = f["o_bias"] = True


# ---- step 3: Spec -> Model ----


def model_from_spec(spec: Spec, name: str = "Custom model", source: str = "pasted config.json"
                    ) -> Model:
    """The Model for ``spec``; raises ConfigError where a number is past its cap or the shapes
    disagree."""
    f = dict(spec.fields)
    problems = []
    for key, (lo, hi) in CAPS.items():
        value = f.get(key)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
            problems.append(f"{HF_NAME.get(key, key)} = {_show(value)} is outside {lo:,}..{hi:,}")
    for key in FLAGS:
        if key in f and not isinstance(f[key], bool):
            problems.append(f"{key} must be true or false")
    if problems:
        raise ConfigError("; ".join(problems))
    heads, kv = f["n_heads"], f["n_kv_heads"]
    if heads % kv and not f.get("kv_lora_rank"):
        raise ConfigError(f"num_attention_heads {heads} does not divide by num_key_value_heads {kv}")
    if f.get("n_experts") and not 1 <= f.get("experts_per_token", 0) <= f["n_experts"]:
        raise ConfigError(f"experts per token must be 1..{f['n_experts']}")
    if f.get("sliding_window") == 0:
        f["sliding_window"] = None
    known = {x.name for x in dataclasses.fields(_m().Model)}
    kwargs = {k: v for k, v in f.items() if k in known}
    try:
        model = _m().Model(name=name, source=source, **kwargs)
    except (TypeError, ValueError) as exc:
        raise ConfigError(str(exc)) from None
    if model.n_params > MAX_PARAMS:
        raise ConfigError(f"{model.n_params / 1e12:,.1f} trillion parameters: more than this app shows "
                          f"({MAX_PARAMS / 1e12:.0f} trillion)")
    return model


def model_from_config(config: dict, name: str = "Custom model", source: str = "pasted config.json"
                      ) -> Model:
    return model_from_spec(spec_from_config(config), name, source)


def load_text(text: str | bytes, name: str = "Custom model") -> tuple[Model, Spec]:
    """A pasted or uploaded config.json as a Model (and the Spec, for the link and the notes)."""
    spec = spec_from_config(parse_config_text(text))
    return model_from_spec(spec, name), spec


# ---- links ----


def encode_spec(spec: Spec) -> str:
    """``spec`` as a short URL-safe string: ``t.llama~L.32~d.4096~...`` (booleans as 0/1; fields at
    their defaults left out)."""
    defaults = {x.name: x.default for x in dataclasses.fields(_m().Model)}
    parts = [f"t.{spec.family}"]
    for key, value in spec.fields.items():
        if key not in SHORT or value == defaults.get(key, object()):
            continue
        if isinstance(value, bool):
            value = int(value)
        parts.append(f"{SHORT[key]}.{value}")
    return "~".join(parts)


def decode_spec(text: str) -> Spec:
    """The Spec a link carries (raises ConfigError for anything ``encode_spec`` would not write)."""
    if not isinstance(text, str) or not text or len(text) > MAX_SPEC_CHARS or not text.isascii():
        raise ConfigError(f"the custom model in the link is empty, longer than {MAX_SPEC_CHARS} "
                          "characters or not plain ASCII")
    fields: dict = {}
    family = None
    for part in text.split("~"):
        key, sep, value = part.partition(".")
        if not sep or key not in LONG:
            raise ConfigError(f"the custom model in the link has an unknown part {_show(part)}")
        name = LONG[key]
        if name in fields or (name == "family" and family is not None):
            raise ConfigError(f"the custom model in the link repeats {key!r}")
        if name == "family":
            if value not in SUPPORTED_TYPES:
                raise ConfigError(f"the custom model in the link has an unknown family {_show(value)}")
            family = value
        elif name in ("quant_scope", "shipped_dtype"):
            allowed = _m().QUANT_SCOPES if name == "quant_scope" else _m().WEIGHT_DTYPES
            if value not in allowed:
                raise ConfigError(f"the custom model in the link has {key} = {_show(value)}")
            fields[name] = value
        elif not (value.isdigit() and len(value) <= 10):
            raise ConfigError(f"the custom model in the link has {key} = {_show(value)}, not a whole number")
        elif name in FLAGS:
            if value not in ("0", "1"):
                raise ConfigError(f"the custom model in the link has {key} = {_show(value)}, not 0 or 1")
            fields[name] = value == "1"
        else:
            fields[name] = int(value)
    if family is None:
        raise ConfigError("the custom model in the link does not say its family (t.)")
    missing = [SHORT[k] for k in ("n_layers", "hidden", "n_heads", "n_kv_heads", "head_dim",
                                  "intermediate", "vocab") if k not in fields]
    if missing:
        raise ConfigError(f"the custom model in the link lacks {', '.join(missing)}")
    fields.setdefault("tied_embeddings", False)
    return Spec(fields=fields, family=family)


# ---- presets ----

#: Where each preset's config comes from (sim/configs/SOURCES.md has the details).
PRESET_SOURCES = {
    "Llama-3.1-8B": "meta-llama/Llama-3.1-8B config.json; llama-models sku_list.py",
    "Llama-3.1-70B": "meta-llama/Llama-3.1-70B config.json; llama-models sku_list.py",
    "Llama-3.1-405B": "meta-llama/Llama-3.1-405B config.json; sku_list.py (REFERENCE.md V07); 405.85 B",
    "Llama-3.2-1B": "meta-llama/Llama-3.2-1B config.json (tied embeddings, head_dim 64)",
    "Mistral-7B": "mistralai/Mistral-7B-v0.1 config.json (mlx-community copy)",
    "Qwen2.5-7B": "Qwen/Qwen2.5-7B-Instruct config.json; model card 7.61 B params",
    "Qwen2.5-72B": "Qwen/Qwen2.5-72B config.json; model card 72.7 B params",
    "Mixtral-8x7B": "mistralai/Mixtral-8x7B-v0.1 config.json (MEASURED.md 2.2): 8 experts, top-2; "
                    "46.7 B params, 12.9 B active a token",
    "Llama-2-7B": "meta-llama/Llama-2-7b-hf config.json (MEASURED.md 1); 6.74 B params",
    "Llama-2-70B": "meta-llama/Llama-2-70b-hf config.json (MEASURED.md 1); 68.98 B params",
    "GPT-J-6B": "EleutherAI/gpt-j-6b config.json (MEASURED.md 1; n_inner null = 4 x hidden); 6.05 B",
    "Qwen3-8B": "Qwen/Qwen3-8B config.json (MEASURED.md 1); 8.19 B params",
    "Qwen3-30B-A3B": "Qwen/Qwen3-30B-A3B config.json (MEASURED.md 2, InferSim copy); 30.5 B / 3.3 B",
    "Qwen3-235B-A22B": "Qwen/Qwen3-235B-A22B config.json (MEASURED.md 2, InferSim copy); 235 B / 22 B",
    "DeepSeek-V3": "deepseek-ai/DeepSeek-V3 config.json (MEASURED.md 2); 671 B / 37 B, MLA",
    "gpt-oss-20b": "openai/gpt-oss-20b config.json (MEASURED.md 2); 20.9 B / 3.6 B, MXFP4 experts",
    "gpt-oss-120b": "openai/gpt-oss-120b config.json (MEASURED.md 2); 116.8 B / 5.1 B, MXFP4 experts",
    "Llama-4-Scout": "meta-llama/Llama-4-Scout-17B-16E config.json, text decoder (MEASURED.md 2); "
                     "107.8 B text / 17 B active",
}
PRESET_NAMES = tuple(PRESET_SOURCES)


def preset_config(name: str) -> dict:
    """The stored config.json of preset ``name`` (only files in sim/configs/ are read)."""
    if name not in PRESET_SOURCES:
        raise KeyError(name)
    return parse_config_text((CONFIG_DIR / f"{name}.json").read_bytes())


def load_preset(name: str) -> Model:
    """Preset ``name`` from its config.json."""
    return model_from_config(preset_config(name), name=name,
                             source=f"sim/configs/{name}.json: {PRESET_SOURCES[name]}")
