"""What an engine holds besides the KV cache, how its scheduler counts windowed layers, and offline
runs of ShareGPT-length requests (sim.memory's start-up reserve, sim.load's KV units and
ShareGPT sample, sim.truth's offline ShareGPT rows)."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim import load, truth
from sim.hardware import GPUS, GiB
from sim.memory import (
    FIXED_RESERVE_BYTES,
    MAX_BATCHED_TOKENS,
    activation_bytes,
    engine_max_seqs,
    forward_workspace_bytes,
    kv_budget_bytes,
    sampler_warmup_bytes,
)
from sim.models import ALL_MODELS, MODELS

H100, A100, L4 = GPUS["H100 SXM"], GPUS["A100 80GB SXM"], GPUS["L4"]
OSS120 = ALL_MODELS["gpt-oss-120b"].with_precision("mxfp4")
OSS20 = ALL_MODELS["gpt-oss-20b"].with_precision("mxfp4")
LLAMA8 = MODELS["Llama-3.1-8B"]
FIXTURE = Path(__file__).resolve().parent / "fixtures" / "gpustack_gpt_oss_120b_tp.csv"


# ---- the start-up reserve ------------------------------------------------------------------------


@pytest.mark.parametrize("gpu, seqs", [("H100 SXM", 1024), ("H200 SXM", 1024), ("B200", 1024),
                                       ("MI300X", 1024), ("A100 80GB SXM", 256), ("L40S", 256),
                                       ("L4", 256)])
def test_engine_max_seqs_follows_vllms_defaults(gpu, seqs):
    """vLLM V1: 1,024 running requests on cards of 70 GiB or more other than the A100, 256 elsewhere."""
    assert engine_max_seqs(GPUS[gpu]) == seqs
    assert engine_max_seqs(None) == 256


@pytest.mark.parametrize("gpu, tokens", [("H100 SXM", 8192), ("H200 SXM", 8192), ("B200", 8192),
                                         ("MI300X", 8192), ("A100 80GB SXM", 2048), ("L40S", 2048),
                                         ("L4", 2048)])
def test_engine_max_batched_tokens_follows_vllms_defaults(gpu, tokens):
    """vLLM V1's API server: steps of up to 8,192 tokens on the cards that get 1,024 running requests,
    2,048 elsewhere; page 00's TTFT curve cuts a long prompt into such chunks."""
    from sim.memory import engine_max_batched_tokens
    from sim.phases import ttft_curve

    assert engine_max_batched_tokens(GPUS[gpu]) == tokens
    assert ttft_curve(GPUS[gpu], LLAMA8, [64]).chunk_tokens == tokens


def test_sampler_warmup_is_rows_times_vocabulary_times_its_live_tensors():
    # BF16 logits, FP32 copy, sorted copy, int64 indices, softmax: 22 bytes a logit, 1,024 rows.
    assert sampler_warmup_bytes(OSS120, H100) == 1024 * 201_088 * 22
    assert sampler_warmup_bytes(OSS120, H100) / GiB == pytest.approx(4.22, abs=0.01)
    assert sampler_warmup_bytes(OSS120, A100) == 256 * 201_088 * 22
    # Tensor parallelism gathers the logits: every GPU holds the whole vocabulary's rows.
    assert sampler_warmup_bytes(OSS120.with_tp(4), H100) == sampler_warmup_bytes(OSS120, H100)


@pytest.mark.parametrize("name", sorted(ALL_MODELS))
@pytest.mark.parametrize("gpu", sorted(GPUS))
def test_the_reserve_is_the_larger_of_the_two_profile_runs(name, gpu):
    """The forward pass and the sampler's warm-up run one after the other, so the peak is the larger,
    not the sum. Splitting a model over GPUs shrinks each GPU's forward workspace (its share of the
    heads and MLP) but not the warm-up (the logits are gathered whole on every GPU)."""
    m, g = ALL_MODELS[name], GPUS[gpu]
    a = activation_bytes(m, g) - FIXED_RESERVE_BYTES
    fwd, warm = forward_workspace_bytes(m, g), sampler_warmup_bytes(m, g)
    assert a in (fwd, warm) and a >= fwd and a >= warm and a < fwd + warm
    split = m.with_tp(8) if m.n_heads % 8 == 0 and m.intermediate % 8 == 0 else None
    if split is not None and not m.n_experts:
        assert forward_workspace_bytes(split, g) < fwd
        assert sampler_warmup_bytes(split, g) == warm


def test_tensorrt_llms_cache_is_sized_without_vllms_sampler_warmup():
    """The 'free' policy (TensorRT-LLM) takes a share of what is left after the weights and a forward
    pass; vLLM's sampler warm-up is not TensorRT-LLM's."""
    for m in (LLAMA8, OSS120.with_tp(2)):
        free = kv_budget_bytes(H100, m, policy="free")
        left = H100.hbm_bytes - m.served_weight_bytes - forward_workspace_bytes(m) - FIXED_RESERVE_BYTES
        assert free == pytest.approx(0.9 * left)
        assert kv_budget_bytes(H100, m) == pytest.approx(
            0.9 * H100.hbm_bytes - m.served_weight_bytes - activation_bytes(m, H100))


def test_gpt_oss_120b_on_one_h100_barely_fits_as_vllm_found():
    """vLLM's logs for this setup: 66.0 GiB of weights loaded, and -2.14 GiB of KV room at 0.9
    (v0.10.1, #23278); a measured v0.10.2 run completed (measured.csv goss-01). The model's room lies
    between: positive, under a GiB."""
    room = kv_budget_bytes(H100, OSS120) / GiB
    assert 0.0 < room < 1.0
    assert kv_budget_bytes(H100, OSS120.with_tp(2)) / GiB > 30


# ---- the scheduler's KV units for windowed layers ------------------------------------------------


def test_kv_units_are_full_attention_tokens_for_a_windowed_model():
    assert OSS20.window_share == 0.5 and OSS20.sliding_window == 128
    assert load.kv_unit_bytes(OSS20) == OSS20.kv_bytes_per_token / 2
    assert load.kv_unit_bytes(LLAMA8) == LLAMA8.kv_bytes_per_token
    mistral = MODELS["Mistral-7B"]  # every layer windowed: every token counted
    assert load.kv_unit_bytes(mistral) == mistral.kv_bytes_per_token
    assert load.window_hold_tokens(OSS20, [1, 100, 128, 5000]).tolist() == [1, 100, 128, 128]
    assert load.window_hold_tokens(mistral, [5000]).tolist() == [0]
    assert load.window_hold_tokens(LLAMA8, [5000]).tolist() == [0]
    scout = ALL_MODELS["Llama-4-Scout"]  # 36 of 48 layers chunked at 8,192: 3 units a windowed token
    assert load.window_hold_tokens(scout, [1000, 20000]).tolist() == [3000, 3 * 8192]
    budget = load.kv_budget_tokens(H100, OSS20)
    assert budget * load.kv_unit_bytes(OSS20) <= kv_budget_bytes(H100, OSS20)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 40), rate=st.floats(1.0, 200.0), kv=st.sampled_from([700, 1000, 1400, 3000, 30000]),
       policy=st.sampled_from(load.POLICIES), seqs=st.sampled_from([None, 4, 64]),
       prefix=st.sampled_from([0, 64, 512]), seed=st.integers(0, 1000))
def test_windowed_runs_hold_within_the_cache_and_the_seat_limit(n, rate, kv, policy, seqs, prefix, seed):
    """gpt-oss-20b: a request holds its full-attention tokens plus its windowed layers' window; the
    cache is never exceeded, every admitted request gets every token, at most max_seqs run."""
    stream = load.make_stream(n, rate, prompt_tokens=300, output_tokens=80, seed=seed, prefix_share=0.5,
                              prefix_tokens=prefix, n_prefixes=2)
    run = load.simulate(H100, OSS20, stream, policy, chunk_tokens=512, kv_tokens=kv, max_seqs=seqs)
    assert np.all(run.step_kv_tokens <= kv)
    total = stream.prompt_tokens + stream.output_tokens
    prefixed = (stream.prefix_id >= 0) & (prefix > 0)
    # a request holding the cached prefix: its entry (prefix + its window) and its own window beyond
    with_prefix = (total + load.window_hold_tokens(OSS20, total - prefix)
                   + load.window_hold_tokens(OSS20, prefix))
    held = np.where(prefixed, with_prefix, total + load.window_hold_tokens(OSS20, total))
    assert np.array_equal(run.rejected, held > kv)
    for rid in np.nonzero(~run.rejected)[0]:
        assert run.token_times_s(int(rid)).size == stream.output_tokens[rid]
    limit = engine_max_seqs(H100) if seqs is None else seqs
    if policy == "chunked":
        limit = min(limit, 512)
    assert run.step_decode.max(initial=0) <= limit


def test_requests_sharing_a_cached_prefix_each_hold_their_own_window():
    """gpt-oss-20b (W = 128, half the layers): three requests share a cached 512-token prefix, whose
    entry holds 512 + 128 units (its windowed layers' last 128 tokens). Each also holds its own 16
    tokens and its own windowed layers' 128, not the prefix's: when the three first decode together
    the cache holds 640 + 3 x (16 + 128) units and a token each."""
    ptok, own, out = 512, 16, 300
    stream = load.Stream(np.array([0.0, 5.0, 5.0, 5.0]), np.full(4, ptok + own), np.full(4, out),
                         np.zeros(4, dtype=np.int64), ptok)
    run = load.simulate(H100, OSS20, stream, "chunked", chunk_tokens=8192, kv_tokens=10_000)
    assert run.cache_hit.tolist() == [False, True, True, True] and not run.rejected.any()
    first = int(np.argmax(run.step_decode == 3))
    assert run.step_decode[first] == 3
    assert run.step_kv_tokens[first] == ptok + 128 + 3 * (own + 128 + 1)
    # Alone, a request with a cached prefix can need more than one without (min(a + b, W) <=
    # min(a, W) + min(b, W)): the rejection test takes the prefixed total, so none stalls.
    tight = ptok + 128 + own + 128 + out
    run = load.simulate(H100, OSS20, stream, "chunked", chunk_tokens=8192, kv_tokens=tight)
    assert not run.rejected.any() and np.all(run.step_kv_tokens <= tight)
    run = load.simulate(H100, OSS20, stream, "chunked", chunk_tokens=8192, kv_tokens=tight - 1)
    assert run.rejected.all()


def test_counting_the_window_admits_more_than_counting_every_layer():
    """The same bytes of cache hold more gpt-oss requests when the windowed layers stop at the window
    (vLLM's hybrid allocator) than when every layer holds every token."""
    stream = load.sharegpt_sample(300, 600, 300)
    room = 2 * GiB
    windowed = load.simulate(H100, OSS120, stream, "chunked", chunk_tokens=8192,
                             kv_tokens=int(room // load.kv_unit_bytes(OSS120)))
    no_window = dataclasses.replace(OSS120, window_layers=0)  # every layer holds every token
    every = load.simulate(H100, no_window, stream, "chunked", chunk_tokens=8192,
                          kv_tokens=int(room // no_window.kv_bytes_per_token))
    assert windowed.step_decode.max() > 1.5 * every.step_decode.max()
    assert windowed.wall_s < every.wall_s


def test_max_seqs_caps_the_running_batch():
    stream = load.make_stream(400, 1e4, lengths="fixed", prompt_tokens=64, output_tokens=64)
    for seqs in (16, 128):
        run = load.simulate(H100, LLAMA8, stream, "prefill-first", max_seqs=seqs)
        assert run.step_decode.max() == seqs
    with pytest.raises(ValueError, match="max_seqs"):
        load.simulate(H100, LLAMA8, stream, "chunked", max_seqs=0)


# ---- ShareGPT as vLLM's benchmark samples it ----------------------------------------------------


@settings(max_examples=30, deadline=None)
@given(n=st.integers(50, 3000), p=st.floats(20, 900), o=st.floats(20, 900), seed=st.integers(0, 2**32 - 1))
def test_sharegpt_sample_matches_the_means_within_the_benchmarks_limits(n, p, o, seed):
    s = load.sharegpt_sample(n, p, o, seed=seed)
    lo, max_prompt, max_total = load.SHAREGPT_FILTER
    assert s.n == n and np.all(s.arrival_s == 0)
    assert s.prompt_tokens.min() >= lo and s.prompt_tokens.max() <= max_prompt
    assert s.output_tokens.min() >= lo and np.all(s.prompt_tokens + s.output_tokens <= max_total)
    assert s.prompt_tokens.mean() == pytest.approx(p, rel=0.02)
    assert s.output_tokens.mean() == pytest.approx(o, rel=0.02)
    again = load.sharegpt_sample(n, p, o, seed=seed)
    assert np.array_equal(s.prompt_tokens, again.prompt_tokens)
    assert np.array_equal(s.output_tokens, again.output_tokens)


def test_sharegpt_sample_has_the_long_tail():
    """goss-01's means (215 in, 196 out): the longest output is several times the mean, which is what
    makes a queued run last past its mean request."""
    s = load.sharegpt_sample(1000, 215, 196)
    assert s.output_tokens.max() > 6 * s.output_tokens.mean()
    assert np.median(s.output_tokens) < s.output_tokens.mean()


@pytest.mark.parametrize("bad", [dict(prompt_mean=2), dict(prompt_mean=2000), dict(output_mean=3000),
                                 dict(output_mean=math.nan), dict(prompt_mean=1000, output_mean=1500),
                                 dict(output_mean=2000)])
def test_sharegpt_sample_refuses_means_it_cannot_draw(bad):
    kwargs = dict(n_requests=100, prompt_mean=200, output_mean=200) | bad
    with pytest.raises(ValueError):
        load.sharegpt_sample(**kwargs)


# ---- offline ShareGPT runs in sim.truth ----------------------------------------------------------


def test_a_queued_sharegpt_run_is_slower_than_its_mean_request_suggests():
    """With every request queued at once the run lasts until its longest outputs finish: the
    scheduler's throughput is below the closed form at the mean lengths, which has no tail."""
    for tp in (2, 4):
        m = OSS120.with_tp(tp)
        tail = truth.offline_tokens_per_s(H100, m, 215, 196, 1000, workload="sharegpt")
        flat = truth.offline_tokens_per_s(H100, m, 215, 196, 1000, workload="fixed")
        assert tail < 0.5 * flat
        run = truth.offline_sharegpt_run(H100, m, 215, 196, 1000)
        assert run.output_tokens / run.wall_s == pytest.approx(tail)
        # the last request to finish is one of the longest
        assert run.stream.output_tokens[np.argmax(run.finish_s)] > 4 * 196


@pytest.mark.parametrize("a", [dict(compute_eff=0.4, memory_eff=0.6), dict(host_overhead_s=0.0),
                               dict(overlap_host=True, kernel_launch_s=5e-6), dict(cuda_graphs=False)])
def test_a_queued_runs_schedule_does_not_depend_on_the_assumptions(a):
    """All requests at t = 0: the schedule is set by tokens and memory, so pricing the cached run's
    steps with other assumptions gives what a run under those assumptions gives."""
    import dataclasses

    from sim.cost import DEFAULT_ASSUMPTIONS

    assumptions = dataclasses.replace(DEFAULT_ASSUMPTIONS, **a)
    for m in (OSS120, OSS120.with_tp(2), LLAMA8):
        cached = truth.offline_tokens_per_s(H100, m, 215, 196, 600, assumptions, workload="sharegpt")
        budget = kv_budget_bytes(H100, m)
        fresh = load.simulate(H100, m, load.sharegpt_sample(600, 215, 196), "chunked",
                              chunk_tokens=MAX_BATCHED_TOKENS, prefix_caching=False, assumptions=assumptions,
                              kv_tokens=int(budget // load.kv_unit_bytes(m)))
        assert cached == pytest.approx(fresh.output_tokens / fresh.wall_s, rel=1e-6)  # float32 sums


@pytest.mark.parametrize("prompt, output, requests, says", [
    (3000, 200, 100, "ShareGPT"), (200, 2100, 100, "ShareGPT"), (200, 2000, 100, "out of reach"),
    (200, 200, 10**6, "requests"), (200, 200, 0, "requests")])
def test_lengths_a_sharegpt_sample_cannot_have_are_named(prompt, output, requests, says):
    value = truth.offline_tokens_per_s(H100, LLAMA8, prompt, output, requests, workload="sharegpt")
    assert isinstance(value, str) and says in value


def test_no_room_is_named_not_priced():
    value = truth.offline_tokens_per_s(L4, OSS120, 215, 196, 100, workload="sharegpt")
    assert isinstance(value, str) and "no room" in value


def test_what_room_the_one_gpu_row_implies():
    """goss-01 (2,901 tok/s, mean TTFT 24.8 s, mean TPOT 54.1 ms): with 1.6 GiB of KV room the model's
    queued run gives its throughput and TTFT within 5 %, but half its TPOT (README, the gap)."""
    stream = load.sharegpt_sample(1000, 215, 196)
    run = load.simulate(H100, OSS120, stream, "chunked", chunk_tokens=MAX_BATCHED_TOKENS,
                        prefix_caching=False, kv_tokens=int(1.6 * GiB // load.kv_unit_bytes(OSS120)))
    assert run.output_tokens / run.wall_s == pytest.approx(2901.05, rel=0.05)
    assert float(run.ttft_s.mean()) == pytest.approx(24.83, rel=0.05)
    assert float(np.nanmean(run.tpot_s)) < 0.6 * 0.0541
    model = truth.offline_sharegpt_run(H100, OSS120, 215, 196, 1000)
    assert model.kv_budget_tokens * load.kv_unit_bytes(OSS120) < 0.6 * GiB
    assert model.output_tokens / model.wall_s < 0.6 * 2901.05


def test_the_same_source_pages_tensor_parallel_runs():
    """gpustack's page for goss-01 ran the same benchmark with TP2 and TP4 (and async scheduling) on
    H100s: 7,648.67 and 11,327.22 output tok/s. Those runs are not memory-bound, so they check the
    tail-bound offline model apart from the one-GPU run's KV room."""
    rows = truth.parse_rows(FIXTURE.read_text(encoding="utf-8"))
    assert [r.gpus for r in rows] == [2, 4]
    for pred in truth.predict_all(rows):
        assert abs(pred.error) <= 0.35, (pred.row.id, pred.model_value, pred.row.value)


@pytest.mark.parametrize("gpu", sorted(GPUS))
def test_the_forward_workspace_is_the_engines_largest_step_on_that_gpu(gpu):
    """vLLM's profile run is a forward pass over ``max_num_batched_tokens``, the same step size page
    00's TTFT chart cuts prompts into: 2,048 tokens on the A100, L40S and L4, 8,192 elsewhere (and
    for TensorRT-LLM's 'free' policy, whose ``max_num_tokens`` default is 8,192 on every GPU)."""
    from sim.memory import engine_max_batched_tokens

    g, m = GPUS[gpu], ALL_MODELS["Llama-3.1-70B"].with_tp(2)
    tokens = engine_max_batched_tokens(g)
    expected = forward_workspace_bytes(m) * tokens / MAX_BATCHED_TOKENS
    assert forward_workspace_bytes(m, g) == pytest.approx(expected)
    assert activation_bytes(m, g) >= forward_workspace_bytes(m, g) + FIXED_RESERVE_BYTES
    if tokens < MAX_BATCHED_TOKENS:
        assert activation_bytes(m, g) < forward_workspace_bytes(m) + FIXED_RESERVE_BYTES
