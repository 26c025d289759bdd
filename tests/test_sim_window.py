"""Sliding-window and chunked attention layers (Mistral, gpt-oss, Llama 4) in the cost model and the
memory check: a windowed layer attends over at most W keys and holds at most W tokens of KV."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sim.cost import attention_pairs, attention_sums, attention_sums_scalar, decode_step_cost, prefill_cost
from sim.hardware import GPUS
from sim.memory import memory_plan
from sim.models import ALL_MODELS

WINDOWED = sorted(n for n, m in ALL_MODELS.items() if m.window_layers)
H200 = GPUS["H200 SXM"]


def test_the_windowed_presets_are_the_ones_we_expect():
    assert {"Mistral-7B", "gpt-oss-20b", "gpt-oss-120b", "Llama-4-Scout"} <= set(WINDOWED)


@pytest.mark.parametrize("name", WINDOWED)
@given(q=st.integers(1, 600), c=st.integers(0, 10_000))
def test_attention_sums_match_a_count_of_every_query_key_pair(name, q, c):
    model = ALL_MODELS[name]
    w, f = model.sliding_window, model.window_layers / model.n_layers
    keys = c + np.arange(1, q + 1)  # keys the j-th new token sees with full attention
    full_p, win_p = keys.sum(), np.minimum(keys, w).sum()
    full_k, win_k = c + q, min(c, w - 1) + q
    pairs, kv = attention_sums(model, q, c)
    assert float(pairs) == pytest.approx((1 - f) * full_p + f * win_p, rel=1e-12)
    assert float(kv) == pytest.approx((1 - f) * full_k + f * win_k, rel=1e-12)


@pytest.mark.parametrize("name", [*WINDOWED, "Llama-3.1-8B"])
@given(q=st.integers(0, 9000), c=st.integers(0, 20_000))
def test_the_schedulers_scalar_sums_are_the_same_sums(name, q, c):
    model = ALL_MODELS[name]
    pairs, kv = attention_sums(model, q, c)
    assert attention_sums_scalar(model, q, c) == pytest.approx((float(pairs), float(kv)), rel=1e-12)


@given(q=st.integers(0, 4096), c=st.integers(0, 100_000))
def test_a_full_attention_model_keeps_the_plain_sums(q, c):
    pairs, kv = attention_sums(ALL_MODELS["Llama-3.1-8B"], q, c)
    assert float(pairs) == float(attention_pairs(q, c)) and float(kv) == c + q


def test_an_all_windowed_model_reads_no_more_kv_past_its_window():
    mistral = ALL_MODELS["Mistral-7B"]  # every layer windowed at 4096
    at_window = decode_step_cost(H200, mistral, 32, 8192)
    far = decode_step_cost(H200, mistral, 32, 32768)
    assert float(far.time_s) == pytest.approx(float(at_window.time_s), rel=1e-12)
    assert float(far.kv_bytes) == pytest.approx(32 * 4096 * mistral.kv_bytes_per_token, rel=1e-12)
    llama = ALL_MODELS["Llama-3.1-8B"]  # full attention: the longer context costs more
    assert float(decode_step_cost(H200, llama, 32, 32768).time_s) > float(
        decode_step_cost(H200, llama, 32, 8192).time_s)


@pytest.mark.parametrize("name", ["gpt-oss-20b", "gpt-oss-120b", "Llama-4-Scout"])
@given(context=st.integers(0, 200_000))
def test_a_decode_step_reads_the_kv_the_sequence_holds(name, context):
    """One decode step reads what the cache holds (``Model.kv_bytes_per_sequence``) and writes one
    token: within one token's KV of it, at every context."""
    model = ALL_MODELS[name]
    step = decode_step_cost(H200, model, 1, context)
    held = float(model.kv_bytes_per_sequence(context))
    assert held <= float(step.kv_bytes) <= held + model.kv_bytes_per_token * (1 + 1e-12)


def test_gpt_oss_long_context_decode_is_cheaper_than_counting_every_layer():
    model = ALL_MODELS["gpt-oss-120b"]  # half its layers windowed at 128
    step = decode_step_cost(H200, model, 64, 32768)
    every_layer = 64 * 32769 * model.kv_bytes_per_token
    assert 0.49 < float(step.kv_bytes) / every_layer < 0.51


@pytest.mark.parametrize("name", WINDOWED)
def test_prefill_attention_math_is_capped_by_the_window(name):
    model = ALL_MODELS[name]
    f, w = model.window_layers / model.n_layers, model.sliding_window
    p = 4 * w
    step = prefill_cost(H200, model, p)
    attention = step.operators["attention"].flops.item()
    full = 4 * model.heads_per_gpu * (model.qk_dim + model.v_dim) / 2 * model.n_layers * attention_pairs(p, 0)
    assert attention < float(full) * (1 - f / 2)  # the windowed layers do well under half their pairs


@pytest.mark.parametrize("name", sorted(ALL_MODELS))
@given(batch=st.integers(0, 512), context=st.integers(0, 300_000))
def test_the_memory_check_counts_what_each_sequence_holds(name, batch, context):
    model = ALL_MODELS[name]
    plan = memory_plan(H200, model, batch, context)
    assert plan.kv_bytes == pytest.approx(batch * float(model.kv_bytes_per_sequence(context)), rel=1e-12)


def _fitting(name: str):
    """The preset on one H200: gpt-oss-120b with its shipped MXFP4 experts, Llama-4-Scout's BF16
    weights split over 2 GPUs."""
    model = ALL_MODELS[name]
    if name == "gpt-oss-120b":
        return model.with_precision("mxfp4")
    return model.with_tp(2) if name == "Llama-4-Scout" else model


@pytest.mark.parametrize("name", ["gpt-oss-20b", "gpt-oss-120b", "Llama-4-Scout", "Llama-3.1-8B", "Qwen3-8B"])
@given(context=st.integers(1, 300_000))
def test_max_batch_is_the_largest_that_fits(name, context):
    model = _fitting(name)
    plan = memory_plan(H200, model, 1, context)
    b = plan.max_batch
    assert b == 0 or memory_plan(H200, model, b, context).fits
    assert not memory_plan(H200, model, b + 1, context).fits


@pytest.mark.parametrize("name", ["gpt-oss-20b", "gpt-oss-120b", "Llama-4-Scout", "Llama-3.1-8B"])
@given(batch=st.integers(1, 256))
def test_the_longest_context_is_the_inverse_of_the_bytes_held(name, batch):
    model = _fitting(name)
    plan = memory_plan(H200, model, batch, 1)
    longest = plan.max_context_tokens
    assert longest > 0
    assert memory_plan(H200, model, batch, longest).fits
    assert not memory_plan(H200, model, batch, longest + 1).fits


def test_windows_let_gpt_oss_hold_about_twice_the_context_of_counting_every_layer():
    model = ALL_MODELS["gpt-oss-20b"]
    plan = memory_plan(H200, model, 16, 1)
    every_layer = int(plan.kv_budget_bytes / (16 * model.kv_bytes_per_token))
    assert 1.95 < plan.max_context_tokens / every_layer < 2.05
    mistral = memory_plan(H200, ALL_MODELS["Mistral-7B"], 64, 131072)
    assert mistral.fits  # every layer windowed at 4096: a long context costs no more KV than 4096


@pytest.mark.parametrize("name", ["Mistral-7B", "gpt-oss-20b", "Llama-3.1-8B"])
@pytest.mark.parametrize("policy", ["static", "continuous"])
def test_batching_prices_each_sequence_with_its_window(name, policy):
    """Page 01's scheduler: every step's KV bytes are the sum, over the sequences computing in it, of
    what ``attention_sums`` gives for that sequence (a prefill, or one decode token on c cached)."""
    from sim.batching import make_requests, simulate

    model = ALL_MODELS[name].with_precision("mxfp4") if name.startswith("gpt-oss") else ALL_MODELS[name]
    rng = np.random.default_rng(1)
    req = make_requests(rng.integers(100, 6000, 24), rng.integers(1, 400, 24))
    run = simulate(H200, model, req, 8, policy)
    kv = np.zeros(run.cost.kv_bytes.size)
    held = np.zeros(kv.size)
    for i in range(req.n):
        s, r, q0 = int(run.start_step[i]), int(run.release_step[i]), float(run.prefill_tokens[i])
        kv[s] += float(attention_sums(model, q0, 0)[1])
        held[s] += q0
        c = q0 + np.arange(r - s)  # cached tokens at steps s + 1 .. r
        kv[s + 1:r + 1] += attention_sums(model, 1, c)[1]
        held[s + 1:r + 1] += c + 1
    assert np.allclose(run.cost.kv_bytes, kv * model.kv_bytes_per_token, rtol=1e-9)
    assert np.allclose(run.kv_tokens, held, rtol=1e-12)  # the memory check's count: every token


@pytest.mark.parametrize("page", ["app_pages/paging.py", "app_pages/load.py", "app_pages/watch.py"])
def test_the_sections_say_how_they_count_a_windowed_model(page):
    """Pages 02 and 04 count every layer at every token and say so; page 05's scheduler counts the
    windowed layers at their window and says how."""
    from tests.conftest import open_app

    def note(at) -> list[str]:
        return [c.value for c in at.caption if "layers attend over" in c.value]

    at = open_app(page, {"model": "gpt-oss-20b", "weights": "mxfp4"})
    assert not at.exception, [e.value for e in at.exception]
    said = note(at)
    assert len(said) == 1 and "12 of its 24 layers" in said[0]
    assert {"paging.py": "lower bound", "load.py": "last 128 tokens",
            "watch.py": "fits fewer requests"}[page.split("/")[-1]] in said[0]
    at = open_app(page)  # Llama-3.1-8B: no windowed layers, no note
    assert not at.exception and note(at) == []


@pytest.mark.parametrize(("name", "lengths"), [("gpt-oss-20b", {"lengths": "sharegpt"}),
                                               ("Mistral-7B", {"lengths": "fixed", "prompt_tokens": 3900,
                                                               "output_tokens": 400}),
                                               ("Llama-3.1-8B", {"lengths": "sharegpt"})])
@pytest.mark.parametrize("policy", ["prefill-first", "chunked"])
def test_the_load_scheduler_prices_each_decoder_with_its_window(name, lengths, policy):
    """Page 05's scheduler: every decode step's K is the layer average of each decoder's
    min(c + 1, W) on the windowed layers and c + 1 on the others, decoders crossing the window
    mid-run included (rebuilt here from the run's decode spans)."""
    from sim import load

    model = ALL_MODELS[name].with_precision("mxfp4") if name.startswith("gpt-oss") else ALL_MODELS[name]
    stream = load.make_stream(60, 40.0, seed=3, **lengths)
    run = load.simulate(H200, model, stream, policy, prefix_caching=False)
    assert run.preemptions == 0  # every decoder joins once, with its first token made
    f = model.window_layers / model.n_layers
    w = model.sliding_window or 10**9
    n_dec = int(run.step_decode.astype(bool).sum())
    full, win = np.zeros(n_dec), np.zeros(n_dec)
    for r, g0, g1 in run.spans:
        x = stream.prompt_tokens[r] + 1 + np.arange(g1 - g0)  # c + 1 at each of its decode steps
        full[g0:g1] += x
        win[g0:g1] += np.minimum(x, w)
    _, pairs, kv, _ = run.step_sums
    decoding = run.step_decode > 0
    pure = run.step_prefill_tokens[decoding] == 0  # chunked steps that carry a prompt add its sums
    expected = (1 - f) * full + f * win  # a decode token: P = K = min(c + 1, W) on a windowed layer
    assert np.allclose(kv[decoding][pure], expected[pure], rtol=1e-9)
    assert np.allclose(pairs[decoding][pure], expected[pure], rtol=1e-9)
    if f:
        assert np.any(win < full)  # the window bites on this stream
    assert np.allclose(run.step_time_s, run.cost.time_s, rtol=1e-9)  # the clock and the pricing agree


@pytest.mark.parametrize("name", ["gpt-oss-20b", "Mistral-7B", "Llama-3.1-8B"])
@pytest.mark.parametrize("workload", ["chat", "anyscale"])
def test_page_01s_arrival_clock_prices_the_windows_as_the_schedule_does(name, workload):
    """Under Poisson arrivals the scheduler's clock decides when each request is admitted, and the
    finished schedule is priced again: with windowed layers both must price the same steps, or a
    request starts before it arrives (a negative TTFT; found in review)."""
    from sim.batching import compare

    model = ALL_MODELS[name].with_precision("mxfp4") if name.startswith("gpt-oss") else ALL_MODELS[name]
    cmp = compare(H200, model, slots=64, workload=workload, n_requests=400, load="poisson", rate_per_s=8)
    for run in (cmp.continuous, cmp.static):
        arrival = run.requests.arrival_s
        assert np.all(run.step_start_s[run.start_step] >= arrival - 1e-9), run.policy
        assert np.all(run.first_token_s > arrival)
