"""Cost model v2's invariants: operators, the floor, monotonicity, memory (hypothesis)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim import cost
from sim.cost import DEFAULT_ASSUMPTIONS, ROOFLINE_FLOOR, decode_step_cost, prefill_cost, step_cost
from sim.hardware import GPUS
from sim.memory import describe, memory_plan
from sim.models import ALL_MODELS, MODELS, WEIGHT_DTYPES

H100 = GPUS["H100 SXM"]
LLAMA8 = MODELS["Llama-3.1-8B"]
gpus = st.sampled_from(list(GPUS.values()))
models = st.builds(lambda m, w, kv: m.with_precision(w, kv), st.sampled_from(list(ALL_MODELS.values())),
                   st.sampled_from(WEIGHT_DTYPES), st.sampled_from(["bf16", "fp8"]))
assumptions = st.builds(cost.Assumptions, st.floats(0.1, 1.0), st.floats(0.3, 1.0), st.floats(0, 2e-3),
                        st.floats(0, 50e-6), st.floats(0, 10e-6))


def test_operator_breakdown_sums_to_the_step():
    c = decode_step_cost(H100, LLAMA8, np.array([1.0, 64.0, 512.0]), 1024)
    assert list(c.operators) == [n for n in cost.OPERATORS if n != "allreduce"]  # one GPU: no collective
    total = sum(o.time_s + o.launch_s for o in c.operators.values())
    np.testing.assert_allclose(total + c.host_time_s, c.time_s)
    np.testing.assert_allclose(sum(o.flops for o in c.operators.values()), c.flops)
    np.testing.assert_allclose(sum(o.bytes for o in c.operators.values()), c.bytes)
    # Batch-1 decode: every operator is bound by memory; the MLP reads the most weights.
    assert all(bool(o.memory_bound[0]) for o in c.operators.values())
    assert max(c.operators, key=lambda n: c.operators[n].time_s[0]) == "mlp"
    # A long prefill: the GEMMs are bound by math, the embedding gather by memory.
    p = prefill_cost(H100, LLAMA8, 8192)
    assert not bool(p.operators["mlp"].memory_bound) and bool(p.operators["embed"].memory_bound)


def test_lm_head_runs_only_where_tokens_sample():
    """The issue's count: prefill ran the LM head on every prompt token (13 % extra FLOPs)."""
    everywhere = step_cost(H100, LLAMA8, 2048, 2048 * 2049 / 2, 2048)  # S = T
    once = prefill_cost(H100, LLAMA8, 2048)
    head = 2 * 4096 * 128256
    assert float(everywhere.flops - once.flops) == pytest.approx(2047 * head)
    assert float(once.operators["lm_head"].flops) == head
    none = step_cost(H100, LLAMA8, 512, 512 * 513 / 2, 512, sampled_tokens=0)  # a middle chunk
    assert float(none.operators["lm_head"].time_s) == 0 and float(none.operators["lm_head"].bytes) == 0


def test_decode_gathers_embedding_rows_instead_of_reading_the_table():
    c = decode_step_cost(H100, LLAMA8, 1, 0)
    assert float(c.operators["embed"].bytes) == pytest.approx(4096 * 4.0)  # one BF16 row, read and written
    assert float(c.operators["lm_head"].bytes) > 1.0e9  # the head is read whole


def test_kernel_costs_show_at_small_models_and_cuda_graphs_are_cheaper():
    small = MODELS["Llama-3.2-1B"]
    c = decode_step_cost(H100, small, 1, 128)
    assert float(c.launch_time_s) > 0.1 * float(c.time_s)
    eager = decode_step_cost(H100, small, 1, 128, cost.Assumptions(cuda_graphs=False))
    assert float(eager.time_s) > float(c.time_s)


@settings(max_examples=60, deadline=None)
@given(gpus, models, assumptions, st.integers(1, 512), st.integers(0, 16384))
def test_never_below_the_pure_roofline_floor(gpu, model, a, batch, context):
    floor = decode_step_cost(gpu, model, batch, context, ROOFLINE_FLOOR)
    est = decode_step_cost(gpu, model, batch, context, a)
    assert float(est.time_s) >= float(floor.time_s) * (1 - 1e-12)
    # The floor itself: the larger of all math at peak and all bytes at peak, at least.
    assert float(floor.time_s) >= max(float(floor.flops) / gpu.peak_flops(model.compute_precision) / 2,
                                      float(floor.bytes) / gpu.hbm_bandwidth) * (1 - 1e-9)


@settings(max_examples=60, deadline=None)
@given(gpus, models, assumptions, st.integers(1, 2048), st.integers(0, 32768), st.integers(1, 32768))
def test_monotone_in_batch_context_and_prompt(gpu, model, a, batch, context, prompt):
    t = float(decode_step_cost(gpu, model, batch, context, a).time_s)
    assert float(decode_step_cost(gpu, model, batch + 1, context, a).time_s) >= t * (1 - 1e-12)
    assert float(decode_step_cost(gpu, model, batch, context + 1, a).time_s) >= t * (1 - 1e-12)
    p = float(prefill_cost(gpu, model, prompt, 1, a).time_s)
    assert float(prefill_cost(gpu, model, prompt + 1, 1, a).time_s) >= p * (1 - 1e-12)


@given(gpus, models, st.integers(0, 4096), st.integers(0, 131072))
def test_memory_parts_sum_to_the_total(gpu, model, batch, context):
    plan = memory_plan(gpu, model, batch, context)
    assert sum(plan.parts().values()) == pytest.approx(plan.budget_bytes)
    assert plan.budget_bytes + plan.reserve_bytes == pytest.approx(plan.total_bytes)
    assert plan.fits == (plan.weights_fit and plan.used_bytes <= plan.budget_bytes)
    if plan.weights_fit and context > 0:
        assert memory_plan(gpu, model, plan.max_batch, context).fits
        assert not memory_plan(gpu, model, plan.max_batch + 1, context).fits
    assert describe(plan)  # always a sentence


def test_the_issues_impossible_setups_are_refused():
    """Batch 64 at 32k context on an 80 GB card (~275 GB of KV); Llama-3.1-70B BF16 on an L4."""
    plan = memory_plan(H100, LLAMA8, 64, 32768)
    assert not plan.fits and plan.kv_bytes == pytest.approx(64 * 32768 * 131072)
    assert plan.kv_bytes / 1e9 == pytest.approx(275, abs=1)
    assert "largest batch that fits" in describe(plan)
    big = memory_plan(GPUS["L4"], MODELS["Llama-3.1-70B"], 1, 1)
    assert not big.weights_fit and "does not fit on this card at all" in describe(big)
    assert "a GPU, its share" not in describe(big)
    # Split over GPUs, the weights named are one GPU's share, and the replica is not 'this card'.
    split = memory_plan(GPUS["B200"], ALL_MODELS["DeepSeek-V3"].with_tp(8), 1, 512)
    text = describe(split)
    assert not split.weights_fit and "GiB a GPU, its share on 8 GPUs" in text
    assert "this card" not in text and "does not fit on 8 of them at all" in text
    # Binary units, as the driver reports them: an "80 GB" H100 is 81,559 MiB.
    assert H100.hbm_bytes == 81559 * 2**20


def test_assumptions_are_checked():
    for bad in (dict(compute_eff=0), dict(memory_eff=1.5), dict(graph_kernel_s=-1e-6),
                dict(kernel_launch_s=float("nan")), dict(cuda_graph_max_tokens=-1)):
        with pytest.raises(ValueError):
            cost.Assumptions(**bad)
    assert DEFAULT_ASSUMPTIONS.measured_ceilings and not ROOFLINE_FLOOR.measured_ceilings


def test_tensor_parallel_shards_weights_and_adds_two_allreduces_a_layer():
    """Megatron layout: heads, MLP width and vocabulary split, KV heads split down to one a GPU,
    two all-reduces a layer priced as latency + 2(n-1)/n x bytes / bus bandwidth."""
    llama70 = MODELS["Llama-3.1-70B"]
    for n in (2, 4, 8):
        tp = llama70.with_tp(n)
        assert tp.heads_per_gpu == 64 // n and tp.kv_heads_per_gpu == 8 // n
        assert tp.kv_bytes_per_token == pytest.approx(llama70.kv_bytes_per_token / n)
        sharded = llama70.n_layers * (llama70.layer_params - llama70.norm_params) + 2 * 128256 * 8192
        rest = llama70.n_params - sharded  # norms, replicated on every GPU
        assert tp.weight_bytes == pytest.approx(2 * (sharded / n + rest))
        c = decode_step_cost(H100, tp, 4, 1024)
        ar = c.operators["allreduce"]
        coef = cost.step_time_coefficients(H100, tp)
        assert coef.kernels[list(c.operators).index("allreduce")] == 2 * llama70.n_layers
        per = 2 * (n - 1) / n * 8192 * 2 / H100.allreduce_bandwidth(n)
        # the textbook ring: 2(n - 1) hops of latency + the bandwidth term, two a layer
        expected = 2 * llama70.n_layers * (2 * (n - 1) * DEFAULT_ASSUMPTIONS.allreduce_hop_s + 4 * per)
        assert float(ar.time_s) == pytest.approx(expected)
        assert float(c.comm_time_s) == pytest.approx(float(ar.time_s + ar.launch_s))
    # Fewer KV heads than GPUs: each GPU keeps a whole one (replicated).
    small = MODELS["Qwen2.5-7B"].with_tp(2)  # 28 heads, 4 KV heads -> 2 a GPU
    assert small.kv_heads_per_gpu == 2
    assert MODELS["Llama-3.1-8B"].with_tp(8).kv_heads_per_gpu == 1
    with pytest.raises(ValueError, match="cannot be split"):
        MODELS["Qwen2.5-7B"].with_tp(8)  # 28 heads do not divide by 8


def test_moe_touched_experts_match_a_monte_carlo_of_the_routing():
    """E (1 - (1 - k/E)^T) distinct experts for T tokens routed top-k of E uniformly."""
    mixtral = ALL_MODELS["Mixtral-8x7B"]
    assert mixtral.n_params == 46_702_792_704  # MEASURED.md 2.3
    rng = np.random.default_rng(0)
    trials = 4000
    for tokens in (1, 2, 4, 16, 64):
        # each token's top-2 of 8 without replacement: the first two of a random permutation
        picks = rng.random((trials, tokens, 8)).argsort(axis=-1)[..., :2].reshape(trials, -1)
        touched = np.zeros((trials, 8), dtype=bool)
        touched[np.arange(trials)[:, None], picks] = True
        draws = touched.sum(axis=1)
        assert float(mixtral.experts_touched(tokens)) == pytest.approx(np.mean(draws), abs=0.05)
    assert mixtral.experts_touched(1) == pytest.approx(2) and mixtral.experts_touched(64) == pytest.approx(8)


def test_moe_decode_reads_only_the_active_experts_at_batch_1():
    """The MoE lesson: batch-1 decode reads the 2 active experts (~13 B params), batch 64 all 8."""
    mixtral = ALL_MODELS["Mixtral-8x7B"]
    c = decode_step_cost(H100, mixtral, np.array([1.0, 64.0]), 128)
    expert = mixtral.expert_params * 2.0 * mixtral.n_layers
    mlp = c.operators["mlp"].bytes
    assert float(mlp[0]) == pytest.approx(2 * expert, rel=0.01)
    assert float(mlp[1]) == pytest.approx(8 * expert, rel=0.01)
    coef = cost.step_time_coefficients(H100, mixtral)
    for b in (1.0, 7.0, 64.0):
        assert coef.step_time_s(b, b * 129, b * 129, b) == pytest.approx(
            float(decode_step_cost(H100, mixtral, b, 128).time_s), rel=1e-12)


# --- efficiencies as shares of each GPU's own microbenchmarks ---------------------------------------

@pytest.mark.parametrize("gpu", list(GPUS))
@pytest.mark.parametrize("weights", WEIGHT_DTYPES)
def test_rates_are_shares_of_the_gpus_own_microbenchmarks(gpu, weights):
    """gemm_best x compute_eff and stream x memory_eff: at efficiency 1 a serving kernel runs at the
    GPU's measured best GEMM and STREAM rate, never faster; with the ceilings off, at the spec peaks."""
    g, model = GPUS[gpu], MODELS["Llama-3.1-8B"].with_precision(weights, "bf16")
    prec = model.compute_precision
    a = DEFAULT_ASSUMPTIONS
    rates = cost.achieved_rates(g, model, a)
    assert rates.gemm_flops == pytest.approx(g.peak_flops(prec) * g.gemm_ceiling(prec) * a.compute_eff)
    assert rates.bandwidth == pytest.approx(g.hbm_bandwidth * g.hbm_ceiling() * a.memory_eff)
    attention = g.peak_flops("bf16") * g.gemm_ceiling("bf16") * a.compute_eff
    assert rates.bf16_flops == pytest.approx(attention)
    assert 0 < g.gemm_ceiling(prec) <= 1 and 0 < g.hbm_ceiling() <= 1
    best = cost.achieved_rates(g, model, cost.Assumptions(compute_eff=1.0, memory_eff=1.0))
    assert best.gemm_flops == pytest.approx(g.peak_flops(prec) * g.gemm_ceiling(prec))
    assert best.gemm_flops <= g.peak_flops(prec) and best.bandwidth <= g.hbm_bandwidth
    spec = cost.achieved_rates(g, model, ROOFLINE_FLOOR)
    assert (spec.gemm_flops, spec.bandwidth) == (g.peak_flops(prec), g.hbm_bandwidth)


@pytest.mark.parametrize("gpu, model, weights", [("H100 SXM", "Llama-3.1-8B", "fp8"),
                                                  ("B200", "Llama-3.1-8B", "nvfp4"),
                                                  ("B200", "gpt-oss-120b", "mxfp4"),
                                                  ("H100 SXM", "Qwen3-30B-A3B", "fp8")])
def test_bf16_weights_run_bf16_math(gpu, model, weights):
    """The LM head is held and read in BF16 (Model.lm_head_bytes), so its math runs at the BF16 rate,
    not the quantised weights' FP8 or FP4 rate; in a mixture quantised only in its experts (gpt-oss)
    the router, shared experts and dense layers are BF16 too, and only the experts' math runs at FP4."""
    g, m = GPUS[gpu], ALL_MODELS[model].with_precision(weights, "bf16")
    rates = cost.achieved_rates(g, m)
    assert rates.gemm_flops > 1.5 * rates.bf16_flops  # the quantised rate is the faster one
    step = decode_step_cost(g, m, 256, 1024)
    head = step.operators["lm_head"]
    assert float(head.compute_time_s) == pytest.approx(float(head.flops) / rates.bf16_flops)
    mlp = step.operators["mlp"]
    ops = {op.name: op for op in cost.operators(m)}
    expert_part = ops["mlp"].runs * ops["mlp"].flops[0] * 256
    bf16_part = ops["mlp"].runs * ops["mlp"].bf16_flops[0] * 256
    assert float(mlp.flops) == pytest.approx(expert_part + bf16_part)
    assert float(mlp.compute_time_s) == pytest.approx(
        expert_part / rates.gemm_flops + bf16_part / rates.bf16_flops)
    if m.quant_scope == "experts":
        assert bf16_part > 0  # gpt-oss: its router
    else:
        assert bf16_part == 0


def test_gpus_without_a_microbenchmark_take_the_measured_gpus_median():
    import statistics

    from sim.hardware import TYPICAL_GEMM_CEILING, TYPICAL_HBM_CEILING

    nvidia_bf16 = [dict(g.gemm_eff_measured)["bf16"] for g in GPUS.values()
                   if g.gemm_eff_measured and g.name != "MI300X"]
    streams = [g.hbm_eff_measured for g in GPUS.values()
               if g.hbm_eff_measured is not None and g.name != "MI300X"]
    assert abs(TYPICAL_GEMM_CEILING - statistics.median(nvidia_bf16)) < 5e-4
    assert abs(TYPICAL_HBM_CEILING - statistics.median(streams)) < 5e-4
    assert GPUS["L4"].gemm_ceiling("bf16") == TYPICAL_GEMM_CEILING
    nvidia_fp8 = [dict(g.gemm_eff_measured)["fp8"] for g in GPUS.values()
                  if "fp8" in dict(g.gemm_eff_measured) and g.name != "MI300X"]
    assert abs(GPUS["L4"].gemm_ceiling("fp8") - statistics.median(nvidia_fp8)) < 5e-4  # FP8's own
    assert GPUS["L4"].typical_ceilings("bf16") == ("GEMM", "STREAM")
    assert GPUS["B200"].hbm_ceiling() == TYPICAL_HBM_CEILING
    assert GPUS["B200"].typical_ceilings("fp4") == ("STREAM",)  # FP4 takes the measured FP8 GEMM
    assert GPUS["H100 SXM"].typical_ceilings("fp8") == ()


@pytest.mark.parametrize("field, value", [("gemm_eff_measured", (("bf16", 0.0),)),
                                          ("gemm_eff_measured", (("bf16", 1.2),)),
                                          ("gemm_eff_measured", (("fp16", 0.8),)),
                                          ("hbm_eff_measured", 0.0), ("hbm_eff_measured", 1.5)])
def test_a_measured_share_outside_0_1_is_refused(field, value):
    import dataclasses

    with pytest.raises(ValueError, match=field):
        dataclasses.replace(GPUS["H100 SXM"], **{field: value})


@pytest.mark.parametrize("gpu_name", sorted(GPUS))
def test_a_four_gpu_replica_is_not_the_slowest_per_gpu(gpu_name):
    """Per GPU, a replica of 4 decodes and prefills at least as fast as the slower of 2 and 8. MI300X's
    board is a full mesh, so 4 GPUs all-reduce over 3 peer links (derived: 3 x 64 GB/s at the 8-GPU
    run's 0.698 of its 7), not over the 2-GPU run's one link, which made 4 GPUs the slowest."""
    gpu = GPUS[gpu_name]
    if not gpu.allreduce_busbw:
        pytest.skip("no tensor parallelism on this GPU")
    base = MODELS["Llama-3.1-70B"]
    decode_per_gpu, prefill_per_gpu = {}, {}
    for n in (2, 4, 8):
        m = base.with_tp(n)
        decode_per_gpu[n] = 256 / float(decode_step_cost(gpu, m, 256, 512).time_s) / n
        prefill_per_gpu[n] = 8192 / float(prefill_cost(gpu, m, 8192).time_s) / n
    for per_gpu in (decode_per_gpu, prefill_per_gpu):
        assert per_gpu[4] >= min(per_gpu[2], per_gpu[8]), per_gpu
    if gpu_name == "MI300X":
        assert gpu.allreduce_bandwidth(4) == pytest.approx(3 / 7 * gpu.allreduce_bandwidth(8))
        assert gpu.allreduce_bandwidth(2) < gpu.allreduce_bandwidth(4) < gpu.allreduce_bandwidth(8)


@pytest.mark.parametrize("n", [1, 2, 4, 8])
def test_the_h200_is_never_slower_than_the_h100_it_extends(n):
    """Same compute, same NVLink 4 and NVSwitch, more and faster memory: at every GPU count the H200's
    steps take no longer than the H100's. Its 8-GPU all-reduce was read from another source (473.1
    against the H100's 478.87 GB/s) and put 8 x H200 about 0.2 % below 8 x H100."""
    h100, h200 = GPUS["H100 SXM"], GPUS["H200 SXM"]
    assert h200.allreduce_bandwidth(n) >= h100.allreduce_bandwidth(n) if n > 1 else True
    for name in ("Llama-3.1-8B", "Llama-3.1-70B"):
        m = MODELS[name].with_tp(n)
        for batch in (1, 64):
            assert float(decode_step_cost(h200, m, batch, 1024).time_s) <= float(
                decode_step_cost(h100, m, batch, 1024).time_s)
        assert float(prefill_cost(h200, m, 8192).time_s) <= float(prefill_cost(h100, m, 8192).time_s)


def test_host_time_is_per_step_plus_per_sampling_sequence():
    """t_host = host_overhead_s + sequence_host_s x S: a decode step of 256 sequences pays the
    per-sequence share 256 times; a verify pass of 8 drafted positions a sequence pays it once a
    sequence, not once a position; a prefill chunk that samples no token pays none of it."""
    from sim.cost import uniform_step_cost

    a = DEFAULT_ASSUMPTIONS
    assert a.sequence_host_s > 0
    for batch in (1, 256):
        step = decode_step_cost(H100, LLAMA8, batch, 1024)
        assert float(step.host_time_s) == pytest.approx(a.host_overhead_s + batch * a.sequence_host_s)
    verify = uniform_step_cost(H100, LLAMA8, 4, 8, 1024, sampled_per_seq=8)
    assert float(verify.host_time_s) == pytest.approx(a.host_overhead_s + 4 * a.sequence_host_s)
    chunk = step_cost(H100, LLAMA8, 512, 512 * 256.5, 512, sampled_tokens=0)
    assert float(chunk.host_time_s) == pytest.approx(a.host_overhead_s)
    # Per-slot steps: two sequences verifying 4 and 3 positions pay it twice, a third not sampling not.
    slots = cost.batch_step_cost(H100, LLAMA8, [[4, 3, 5]], [[900, 900, 0]], sampled=[[4, 3, 0]])
    assert float(slots.host_time_s[0]) == pytest.approx(a.host_overhead_s + 2 * a.sequence_host_s)
    with pytest.raises(ValueError, match="sequences"):
        step_cost(H100, LLAMA8, 8, 8, 8, sequences=-1)


@pytest.mark.parametrize("overlap", [False, True])
def test_every_pricing_path_charges_the_per_sequence_host_time(overlap):
    """The schedulers' fast paths (scalar pricer, decode runs, decode terms) price a step as
    ``step_cost`` does, per-sequence host time included, with and without an overlapped host."""
    import dataclasses

    a = dataclasses.replace(DEFAULT_ASSUMPTIONS, sequence_host_s=40e-6, overlap_host=overlap)
    coef = cost.step_time_coefficients(H100, LLAMA8, a)
    for n in (1.0, 64.0, 300.0):
        kv = n * 1500.0
        full = float(step_cost(H100, LLAMA8, n, kv, kv, a).time_s)
        assert coef.scalar_pricer()(n, kv, kv, n) == pytest.approx(full, rel=1e-9)
        assert float(coef.step_time_s(n, kv, kv, n)) == pytest.approx(full, rel=1e-9)
        assert float(coef.decode_steps_s(n, np.array([kv]))[0]) == pytest.approx(full, rel=1e-9)
        if not overlap and n <= coef.graph_max_tokens:
            terms, fixed = coef.decode_terms(n)
            assert sum(max(p + q * kv, g + d * kv) for p, q, g, d in terms) + fixed == pytest.approx(full)
    # 300 sequences at 40 us: 12 ms of host time, more than the kernels of this step: an overlapped host
    # sets the step's time, a serial one adds to it.
    step = step_cost(H100, LLAMA8, 300.0, 300 * 1500.0, 300 * 1500.0, a)
    if overlap:
        assert float(step.time_s) == pytest.approx(max(float(step.gpu_time_s), 0.5e-3 + 300 * 40e-6))
    else:
        assert float(step.time_s) == pytest.approx(float(step.gpu_time_s) + 0.5e-3 + 300 * 40e-6)


def test_an_all_reduce_is_the_textbook_rings_latency_and_bandwidth():
    """``allreduce_s``: 2(n - 1) hops of ``allreduce_hop_s`` + 2(n - 1)/n of the message over the bus
    bandwidth; nothing on one GPU (for a number or an array of them); a GPU count below 1 is refused."""
    import numpy as np

    a = DEFAULT_ASSUMPTIONS
    for gpu in GPUS.values():  # every preset card: the same latency, its own bus bandwidth
        for n in (2, 4, 8):
            bw = gpu.allreduce_bandwidth(n)
            assert cost.allreduce_hops(n) == 2 * (n - 1)
            assert cost.allreduce_s(gpu, n, 0.0) == pytest.approx(2 * (n - 1) * a.allreduce_hop_s)
            assert cost.allreduce_s(gpu, n, 1e6, latency=False) == pytest.approx(2 * (n - 1) / n * 1e6 / bw)
    assert cost.allreduce_s(H100, 8, 0.0) > 6 * cost.allreduce_s(H100, 2, 0.0)  # 14 hops against 2
    assert cost.allreduce_s(H100, 1, 1e6) == 0.0
    sizes = np.array([1e3, 1e6, 1e9])
    assert cost.allreduce_s(H100, 1, sizes).shape == (3,) and not cost.allreduce_s(H100, 1, sizes).any()
    assert np.all(np.diff(cost.allreduce_s(H100, 8, sizes)) > 0)
    for bad in (0, -2, 2.5):
        with pytest.raises(ValueError):
            cost.allreduce_s(H100, bad, 1e6)
