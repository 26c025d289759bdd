"""Models as config.json files (sim/configs/, sim.configs): parameter totals, KV bytes, round trips
through the link encoding, and hostile inputs."""

from __future__ import annotations

import dataclasses
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sim import configs
from sim.configs import ConfigError
from sim.models import ALL_MODELS, MODELS

# Exact totals derived from the configs in MEASURED.md 2.3 (its own script) and REFERENCE.md /
# MEASURED.md 1 for the dense models: the loader must reproduce them to the parameter.
DERIVED_TOTALS = {
    "Mixtral-8x7B": 46_702_792_704, "Qwen3-30B-A3B": 30_532_122_624, "Qwen3-235B-A22B": 235_093_634_560,
    "DeepSeek-V3": 671_026_419_200, "gpt-oss-120b": 116_829_156_672, "gpt-oss-20b": 20_914_757_184,
    "Llama-4-Scout": 107_769_861_120, "Llama-3.1-8B": 8_030_261_248, "Llama-3.1-70B": 70_553_706_496,
    "Mistral-7B": 7_241_732_096, "Qwen2.5-7B": 7_615_616_512, "Qwen2.5-72B": 72_706_203_648,
    "Llama-3.2-1B": 1_235_814_400, "Llama-3.1-405B": 405_853_388_800,
}
# Official totals as published (billions), and the precision they are published to: a computed total
# must agree to the published figure's last digit (within one unit of it: cards round or truncate;
# Qwen's 7.6156 B is "7.61B"). Llama-4-Scout's
# "109B" includes the vision encoder, which the text decoder here does not (MEASURED.md 2.1).
OFFICIAL_TOTALS_B = {
    "Mixtral-8x7B": (47, 1), "Qwen3-30B-A3B": (30.5, 0.1), "Qwen3-235B-A22B": (235, 1),
    "DeepSeek-V3": (671, 1), "gpt-oss-120b": (116.8, 0.1), "gpt-oss-20b": (20.9, 0.1),
    "Llama-2-7B": (6.74, 0.01), "Llama-2-70B": (68.98, 0.01), "GPT-J-6B": (6.05, 0.01),
    "Qwen3-8B": (8.19, 0.01), "Qwen2.5-7B": (7.61, 0.01), "Qwen2.5-72B": (72.7, 0.1),
}
# Official active counts: OpenAI and DeepSeek leave the input embedding out, Qwen, Mistral and Meta
# count both embeddings (MEASURED.md 2.3).
OFFICIAL_ACTIVE_B = {
    "Mixtral-8x7B": (13, 1, True), "Qwen3-30B-A3B": (3.3, 0.1, True), "Qwen3-235B-A22B": (22, 1, True),
    "DeepSeek-V3": (36.7, 0.1, False), "gpt-oss-120b": (5.1, 0.1, False), "gpt-oss-20b": (3.6, 0.1, False),
    "Llama-4-Scout": (17, 1, True),
}


@pytest.mark.parametrize("name", configs.PRESET_NAMES)
def test_every_preset_loads_from_its_config(name):
    model = configs.load_preset(name)
    assert model == dataclasses.replace(ALL_MODELS[name])
    assert f"sim/configs/{name}.json" in model.source
    assert set(configs.PRESET_NAMES) == set(ALL_MODELS)


@pytest.mark.parametrize("name", sorted(DERIVED_TOTALS))
def test_parameter_totals_match_the_derived_totals_exactly(name):
    assert ALL_MODELS[name].n_params == DERIVED_TOTALS[name]


@pytest.mark.parametrize("name", sorted(OFFICIAL_TOTALS_B))
def test_parameter_totals_round_to_the_official_figures(name):
    value, unit = OFFICIAL_TOTALS_B[name]
    assert abs(ALL_MODELS[name].n_params / 1e9 - value) <= unit, ALL_MODELS[name].n_params


@pytest.mark.parametrize("name", sorted(OFFICIAL_ACTIVE_B))
def test_active_parameters_round_to_the_official_figures(name):
    value, unit, both_embeddings = OFFICIAL_ACTIVE_B[name]
    m = ALL_MODELS[name]
    active = m.active_params + (m.embedding_params if both_embeddings else 0)
    assert abs(active / 1e9 - value) <= unit, active


def test_the_existing_presets_keep_their_shapes():
    """The presets that were written in Python before keep every number (sim/configs reproduces them)."""
    m = MODELS["Llama-3.1-8B"]
    assert (m.n_layers, m.hidden, m.n_heads, m.n_kv_heads, m.head_dim, m.intermediate, m.vocab) == (
        32, 4096, 32, 8, 128, 14336, 128256)
    assert MODELS["Qwen2.5-7B"].qkv_bias and MODELS["Llama-3.2-1B"].tied_embeddings
    gptj = ALL_MODELS["GPT-J-6B"]
    assert gptj.parallel_block and not gptj.gated_mlp and gptj.lm_head_bias and gptj.intermediate == 16384
    assert ALL_MODELS["Qwen3-8B"].qk_norm
    assert MODELS["Mistral-7B"].sliding_window == 4096


@pytest.mark.parametrize(("name", "kv"), [
    ("DeepSeek-V3", 70_272), ("Qwen3-30B-A3B", 98_304), ("Qwen3-235B-A22B", 192_512),
    ("Mixtral-8x7B", 131_072),
])
def test_kv_bytes_per_token_match_measured(name, kv):
    assert ALL_MODELS[name].kv_bytes_per_token == kv


def test_mla_kv_is_the_latent_and_the_rope_key_on_every_gpu():
    """MLA: L x (kv_lora_rank + qk_rope_head_dim) x bytes, replicated under tensor parallelism."""
    ds = ALL_MODELS["DeepSeek-V3"]
    assert ds.kv_bytes_per_token == 61 * (512 + 64) * 2
    # FP8 as vLLM / FlashMLA lay it out (MEASURED.md 2.3): the 512-value latent in FP8 with four FP32
    # scales, the 64-value RoPE key in BF16: 656 B a layer, 40,016 B a token.
    assert ds.with_precision("fp8", "fp8").kv_bytes_per_token == 61 * (512 + 4 * 4 + 64 * 2) == 40_016
    assert ds.with_tp(8).kv_bytes_per_token == ds.kv_bytes_per_token
    # 71x less than caching K and V per head (MEASURED.md 2.3).
    assert 61 * 128 * (192 + 128) * 2 / ds.kv_bytes_per_token == pytest.approx(71.1, abs=0.1)


def test_windowed_layers_cap_the_cache_per_sequence():
    oss = ALL_MODELS["gpt-oss-120b"]
    assert oss.kv_bytes_per_token_beyond_window == 36_864
    cap = float(oss.kv_bytes_per_sequence(10**6) - 36_864 * 10**6)
    assert cap == pytest.approx(4.72e6, rel=0.001)
    assert ALL_MODELS["gpt-oss-20b"].kv_bytes_per_token_beyond_window == 24_576
    scout = ALL_MODELS["Llama-4-Scout"]
    assert scout.kv_bytes_per_token_beyond_window == 49_152 and scout.kv_bytes_per_token == 196_608
    assert float(scout.kv_bytes_per_sequence(10**6) - 49_152 * 10**6) == pytest.approx(1.21e9, rel=0.01)
    # Below the window every layer holds every token.
    assert float(scout.kv_bytes_per_sequence(1000)) == 1000 * scout.kv_bytes_per_token


def test_moe_and_mla_shapes_are_read():
    ds = ALL_MODELS["DeepSeek-V3"]
    assert (ds.n_experts, ds.experts_per_token, ds.expert_width, ds.shared_intermediate, ds.dense_layers,
            ds.moe_layers) == (256, 8, 2048, 2048, 3, 58)
    assert (ds.kv_lora_rank, ds.q_lora_rank, ds.qk_dim, ds.v_dim) == (512, 1536, 192, 128)
    oss = ALL_MODELS["gpt-oss-120b"]
    assert oss.quant_scope == "experts" and oss.window_layers == 18 and oss.sliding_window == 128
    scout = ALL_MODELS["Llama-4-Scout"]
    assert scout.window_layers == 36 and scout.sliding_window == 8192 and scout.shared_intermediate == 8192
    q3 = ALL_MODELS["Qwen3-30B-A3B"]
    assert q3.expert_width == 768 and q3.dense_layers == 0 and q3.qk_norm


@pytest.mark.parametrize("name", configs.PRESET_NAMES)
def test_link_encoding_round_trips(name):
    spec = configs.spec_from_config(configs.preset_config(name))
    text = configs.encode_spec(spec)
    assert len(text) < 200 and all(c.isalnum() or c in "._~" for c in text)
    back = configs.model_from_spec(configs.decode_spec(text), name=name, source="x")
    assert back == dataclasses.replace(ALL_MODELS[name], source="x")


# --- hostile inputs ----------------------------------------------------------------------------


def _llama(**changes):
    c = configs.preset_config("Llama-3.1-8B")
    c.update(changes)
    return c


@pytest.mark.parametrize(("text", "message"), [
    ("", "empty"), ("not json", "not valid JSON"), ("[1, 2]", "JSON object"), ("42", "JSON object"),
    ('{"a": NaN}', "not a number JSON allows"), ('{"a": Infinity}', "not a number JSON allows"),
    ("[" * 100_000, "nested too deeply|larger|at most"), ('{"a":' * 50 + "1" + "}" * 50, "nested too deeply"),
    ("x" * (5 * 2**20), "at most 65,536"), (b"\xff\xfe{}", "not UTF-8"),
    ('{"hidden_size": ' + "9" * 5000 + "}", "not valid JSON"),
])
def test_unreadable_text_is_refused_clearly(text, message):
    with pytest.raises(ConfigError, match=message):
        configs.parse_config_text(text)


@pytest.mark.parametrize(("changes", "message"), [
    ({"hidden_size": 10**12}, "hidden_size = 1000000000000 is outside 1..65,536"),
    ({"num_hidden_layers": -3}, "num_hidden_layers = -3 is outside"),
    ({"num_attention_heads": "32"}, "num_attention_heads must be a whole number"),
    ({"vocab_size": 1.5}, "vocab_size must be a whole number"),
    ({"vocab_size": True}, "vocab_size must be a whole number"),
    ({"hidden_size": None}, "missing field\\(s\\): hidden_size"),
    ({"tie_word_embeddings": "yes"}, "tie_word_embeddings must be true or false"),
    ({"num_key_value_heads": 7}, "does not divide"),
    ({"model_type": "qwen3_next"}, "hybrid linear attention"),
    ({"model_type": "mamba"}, "state-space"),
    ({"model_type": "frobnicator"}, "not one this loader knows"),
    ({"model_type": ["llama"]}, "model_type"),
    ({"layer_types": ["linear_attention"] * 32}, "hybrid linear-attention"),
    ({"mlp_bias": True}, "mlp_bias"),
])
def test_bad_fields_are_named(changes, message):
    config = _llama(**changes)
    if config.get("model_type") == "llama" and "layer_types" in changes:
        config["model_type"] = "gpt_oss"
    with pytest.raises(ConfigError, match=message):
        configs.model_from_config({k: v for k, v in config.items() if v is not None})


def test_missing_fields_are_all_named_at_once():
    with pytest.raises(ConfigError, match="hidden_size, num_hidden_layers, num_attention_heads, vocab_size"):
        configs.spec_from_config({"model_type": "llama"})


def test_unknown_fields_are_named_not_fatal():
    spec = configs.spec_from_config(_llama(frobnication_depth=3))
    assert any("frobnication_depth" in n for n in spec.notes)


def test_a_wrapped_llama4_and_a_bare_text_config_agree():
    full = configs.preset_config("Llama-4-Scout")
    text = dict(full["text_config"], tie_word_embeddings=False)
    assert configs.model_from_config(full) == configs.model_from_config(text)


_leaf = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8)
_json = st.recursive(_leaf,
                     lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner,
                                                                                 max_size=4),
                     max_leaves=20)


@given(st.dictionaries(st.sampled_from(["hidden_size", "num_hidden_layers", "num_attention_heads",
                                        "num_key_value_heads", "head_dim", "intermediate_size",
                                        "vocab_size", "num_local_experts", "num_experts_per_tok",
                                        "sliding_window", "layer_types", "text_config"]), _json,
                       max_size=6),
       st.sampled_from(configs.SUPPORTED_TYPES))
def test_any_json_gives_a_model_or_a_config_error(changes, family):
    config = dict(_llama(), model_type=family, **changes)
    try:
        model = configs.model_from_config(json.loads(json.dumps(config)))
    except ConfigError as exc:
        assert str(exc)
    else:
        assert model.n_params > 0 and model.kv_bytes_per_token > 0


@given(st.text(max_size=80))
def test_any_link_text_gives_a_spec_or_a_config_error(text):
    try:
        spec = configs.decode_spec(text)
        configs.model_from_spec(spec)
    except ConfigError as exc:
        assert str(exc)


@pytest.mark.parametrize("text", [
    "t.llama~L.32~d.4096~H.32~kv.8~hd.128~ff.14336~V.99999999999", "t.llama~L.32", "t.evil~L.1",
    "t.llama~L.-1~d.4096~H.32~kv.8~hd.128~ff.14336~V.128256", "x" * 500, "t.llama~L.32~L.33",
    "t.llama~L.32~d.4096~H.32~kv.8~hd.128~ff.14336~V.128256~tie.2", "t.llama~zz.1",
])
def test_bad_links_are_refused(text):
    with pytest.raises(ConfigError):
        configs.model_from_spec(configs.decode_spec(text))


# --- precisions as stored ------------------------------------------------------------------------


def test_bytes_per_weight_include_the_scales():
    from sim.models import BYTES_PER_ELEMENT as B

    assert B["nvfp4"] * 8 == pytest.approx(4.5)  # 4 bits + an FP8 scale per 16
    assert B["mxfp4"] * 8 == pytest.approx(4.25)  # 4 bits + an E8M0 scale per 32
    assert B["int4"] * 8 == pytest.approx(4.25)  # 4 bits + BF16 scale and zero per 128


def test_the_int4_group_sets_the_bytes_a_weight_and_the_step():
    """gpt-fast quantises INT4 per 32 weights: 5 bits a weight, so a batch-1 step reads more."""
    from sim.cost import step_cost
    from sim.hardware import GPUS
    from sim.models import MODELS

    base = MODELS["Llama-3.1-8B"].with_precision("int4", "bf16")
    g32 = MODELS["Llama-3.1-8B"].with_precision("int4", "bf16", int4_group=32)
    assert base.int4_group == 128 and base.weight_bytes_per_element * 8 == pytest.approx(4.25)
    assert g32.weight_bytes_per_element * 8 == pytest.approx(5.0)
    assert g32.weight_bytes > base.weight_bytes
    gpu = GPUS["A100 80GB SXM"]
    slower = float(step_cost(gpu, g32, 1, 128, 128).time_s) / float(step_cost(gpu, base, 1, 128, 128).time_s)
    assert slower > 1.05
    # The group matters only at INT4.
    fp8 = MODELS["Llama-3.1-8B"].with_precision("fp8", "bf16", int4_group=32)
    assert fp8.weight_bytes == MODELS["Llama-3.1-8B"].with_precision("fp8", "bf16").weight_bytes


@pytest.mark.parametrize("group", [0, 4, 12.5, True, "32"])
def test_a_bad_int4_group_is_refused(group):
    from sim.models import MODELS

    with pytest.raises(ValueError, match="int4_group"):
        MODELS["Llama-3.1-8B"].with_precision("int4", "bf16", int4_group=group)


@pytest.mark.parametrize(("name", "shipped_gb", "rel"), [
    # MEASURED.md 2.3: 65.3 GB and 13.8 GB, given to 3 digits (13.8 +- 0.05 is 0.36 %).
    ("gpt-oss-120b", 65.3, 0.002), ("gpt-oss-20b", 13.8, 0.004),
])
def test_gpt_oss_bytes_match_the_shipped_checkpoints(name, shipped_gb, rel):
    m = ALL_MODELS[name]
    assert m.shipped_dtype == "mxfp4" and m.quant_scope == "experts"
    assert m.with_precision("mxfp4").weight_bytes / 1e9 == pytest.approx(shipped_gb, rel=rel)


def test_fp4_runs_fp4_math_only_where_the_gpu_has_it():
    from sim.cost import achieved_rates, operators
    from sim.hardware import GPUS

    ds = ALL_MODELS["DeepSeek-V3"].with_precision("nvfp4")
    assert ds.compute_precision == "fp4"
    b200, h100 = GPUS["B200"], GPUS["H100 SXM"]
    assert b200.peak_flops("fp4") == 2 * b200.peak_flops("fp8")
    assert h100.peak_flops("fp4") == h100.peak_flops("bf16") and h100.math_precision("fp4") == "bf16"
    assert achieved_rates(h100, ds).gemm_flops == achieved_rates(h100, ds.with_precision("bf16")).gemm_flops
    assert achieved_rates(b200, ds).gemm_flops > achieved_rates(b200, ds.with_precision("fp8")).gemm_flops
    # gpt-oss: MXFP4 experts, BF16 attention (priced at the BF16 rate, BF16 bytes).
    oss = ALL_MODELS["gpt-oss-120b"].with_precision("mxfp4")
    ops = {op.name: op for op in operators(oss)}
    assert not ops["qkv"].tensor_precision and not ops["o_proj"].tensor_precision
    assert ops["o_proj"].weight_bytes == 64 * 64 * 2880 * 2.0
    # MXFP4 bytes (0.53125 a weight), in vLLM's padded layout (below).
    assert ops["mlp"].expert_bytes == pytest.approx(oss.expert_params * 0.53125 * oss.expert_storage_factor)


@pytest.mark.parametrize("name", ["gpt-oss-20b", "gpt-oss-120b"])
@pytest.mark.parametrize("tp, expert_parallel, factor", [
    (1, False, 3072 * 2944 / 2880**2),  # 2880 x 2880 padded to 3072 x 2944
    (2, False, 3072 * 1536 / (2880 * 1440)),  # each GPU's 1440-wide share padded to 1536
    (4, False, 3072 * 768 / (2880 * 720)),
    (8, False, 3072 * 384 / (2880 * 360)),
    (4, True, 3072 * 2944 / 2880**2),  # whole experts: the full width, padded once
])
def test_mxfp4_experts_are_held_in_vllms_padded_layout(name, tp, expert_parallel, factor):
    """vLLM pads MXFP4 experts to its kernels' tiles (hidden to 256, each GPU's expert width to 128):
    the engine holds and reads more than the checkpoint ships. Other precisions and dense models
    are held as shipped."""
    from sim.hardware import GPUS
    from sim.memory import memory_plan

    m = ALL_MODELS[name].with_precision("mxfp4").with_tp(tp, expert_parallel)
    assert m.expert_storage_factor == pytest.approx(factor)
    experts = (m.routed_expert_params - m.routed_expert_bias_params) / tp * 0.53125
    assert m.served_weight_bytes - m.weight_bytes == pytest.approx((factor - 1) * experts)
    assert memory_plan(GPUS["H200 SXM"], m, 1, 1024).weight_bytes == m.served_weight_bytes
    for other in ("bf16", "fp8", "nvfp4"):
        held = ALL_MODELS[name].with_precision(other).with_tp(tp, expert_parallel)
        assert held.expert_storage_factor == 1.0 and held.served_weight_bytes == held.weight_bytes
    dense = ALL_MODELS["Llama-3.1-8B"].with_precision("mxfp4")
    assert dense.expert_storage_factor == 1.0 and dense.served_weight_bytes == dense.weight_bytes


def test_gpt_oss_120b_as_vllm_loads_it_on_one_h100():
    """vLLM's start-up log for gpt-oss-120b on one H100 (vllm-project/vllm#23278): "Model loading took
    65.9651 GiB". The checkpoint is 60.8 GiB; the padded layout makes up the difference."""
    m = ALL_MODELS["gpt-oss-120b"].with_precision("mxfp4")
    assert m.weight_bytes / 2**30 == pytest.approx(60.77, abs=0.05)
    assert m.served_weight_bytes / 2**30 == pytest.approx(65.9651, rel=0.005)


def test_shipped_precision_is_read_from_quantization_config():
    assert ALL_MODELS["DeepSeek-V3"].shipped_dtype == "fp8"
    assert ALL_MODELS["Llama-3.1-8B"].shipped_dtype == "bf16"
