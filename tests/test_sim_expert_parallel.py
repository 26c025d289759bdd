"""Expert parallelism: a mixture's routed experts spread whole over the replica's GPUs (E / n each)
instead of each split by width. Same bytes per GPU; the slowest GPU's expert reads set a step."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sim import cost
from sim.cost import decode_step_cost
from sim.hardware import GPUS
from sim.models import ALL_MODELS, expert_reads

H200 = GPUS["H200 SXM"]
MOE = sorted(n for n, m in ALL_MODELS.items() if m.n_experts)


def _both(name: str, n: int):
    """(split, whole) layouts of the preset on n GPUs, or None where either cannot exist."""
    m = ALL_MODELS[name]
    try:
        return m.with_tp(n), m.with_tp(n, expert_parallel=True)
    except ValueError:
        return None


def _monte_carlo(e: int, k: int, tokens: int, n: int, trials: int, rng) -> float:
    """n x the mean, over routings, of the most experts any one GPU's E / n has touched."""
    per = e // n
    most = np.empty(trials)
    for i in range(trials):
        # k distinct experts a token: the k smallest of e uniform draws (the same set argsort's
        # first k would give, found without sorting the rest)
        picks = np.argpartition(rng.random((tokens, e)), k - 1, axis=1)[:, :k]
        touched = np.zeros(e, dtype=bool)
        touched[picks.ravel()] = True
        most[i] = touched.reshape(n, per).sum(axis=1).max()
    return n * float(most.mean())


@pytest.mark.parametrize(("e", "k", "n"), [(256, 8, 8), (128, 8, 8), (128, 4, 4), (32, 4, 4), (8, 2, 2),
                                           (16, 1, 8), (1024, 8, 8), (1024, 1, 4)])
def test_the_slowest_gpu_reads_match_a_monte_carlo_of_the_routing(e, k, n):
    rng = np.random.default_rng(7)
    for tokens in (1, 4, 16, 64):
        model = float(expert_reads(e, k, tokens, n))
        assert model == pytest.approx(_monte_carlo(e, k, tokens, n, 800, rng), rel=0.05)


def test_past_the_exact_count_the_fallback_keeps_the_pigeonhole():
    """More experts than the exact count handles (a pasted config): one token, one expert, and one
    GPU reads it whole; never fewer reads than the balanced split."""
    assert float(expert_reads(2048, 1, 1, 8)) == pytest.approx(8.0)
    for t in (1.0, 10.0, 1e4):
        assert float(expert_reads(2048, 8, t, 8)) >= float(expert_reads(2048, 8, t, 1)) * (1 - 1e-9)


def test_batch_1_on_deepseek_v3_lands_unevenly():
    """8 routed experts of 256 on 8 GPUs: split, each GPU reads one expert's worth; whole, the
    busiest GPU holds 2-3 of the 8 (expected 2.56)."""
    assert float(expert_reads(256, 8, 1, 1)) == pytest.approx(8.0)
    assert 2.3 < float(expert_reads(256, 8, 1, 8)) / 8 < 2.7


@given(e=st.sampled_from([8, 16, 32, 64, 128, 256]), k=st.integers(1, 8), n=st.sampled_from([2, 4, 8]),
       tokens=st.integers(0, 100_000))
def test_reads_lie_between_the_balanced_split_and_every_expert(e, k, n, tokens):
    if k > e or e % n:
        return
    whole = float(expert_reads(e, k, tokens, n))
    split = float(expert_reads(e, k, tokens, 1))
    assert split * (1 - 1e-9) - 1e-9 <= whole <= e * (1 + 1e-9)
    assert (tokens == 0) == (whole == 0)


def test_scalar_and_array_reads_agree():
    t = np.array([0.0, 1.0, 3.0, 50.0, 4096.0])
    arr = expert_reads(128, 4, t, 4)
    assert [expert_reads(128, 4, float(x), 4) for x in t] == pytest.approx(list(arr), rel=1e-12)


@pytest.mark.parametrize("name", MOE)
@pytest.mark.parametrize("n", [2, 4, 8])
def test_whole_experts_hold_the_same_bytes_and_never_decode_faster(name, n):
    layouts = _both(name, n)
    if layouts is None:
        return
    split, whole = layouts
    assert whole.weight_bytes == pytest.approx(split.weight_bytes, rel=1e-12)
    assert whole.kv_bytes_per_token == split.kv_bytes_per_token
    batch = np.array([1.0, 2.0, 8.0, 64.0, 512.0])
    t_split = decode_step_cost(H200, split, batch, 1024).time_s
    t_whole = decode_step_cost(H200, whole, batch, 1024).time_s
    assert np.all(t_whole >= t_split * (1 - 1e-12))
    assert t_whole[0] > t_split[0]  # batch 1: the busiest GPU holds more than its share
    # The same math on average: the FLOPs per GPU do not depend on the layout.
    f_split = decode_step_cost(H200, split, batch, 1024).flops
    assert np.allclose(decode_step_cost(H200, whole, batch, 1024).flops, f_split, rtol=1e-9)


def test_the_scalar_clock_prices_whole_experts_like_the_array_path():
    whole = ALL_MODELS["Qwen3-30B-A3B"].with_tp(4, expert_parallel=True)
    coef = cost.step_time_coefficients(H200, whole)
    for b in (1.0, 5.0, 64.0):
        pairs, kv = cost.attention_sums(whole, 1, 128)
        assert coef.step_time_s(b, b * float(pairs), b * float(kv), b) == pytest.approx(
            float(decode_step_cost(H200, whole, b, 128).time_s), rel=1e-12)


def test_layouts_that_cannot_exist_are_refused():
    with pytest.raises(ValueError, match="no experts"):
        ALL_MODELS["Llama-3.1-8B"].with_tp(2, expert_parallel=True)
    with pytest.raises(ValueError, match="cannot be spread whole"):
        ALL_MODELS["Mixtral-8x7B"].with_tp(8).with_tp(8, expert_parallel=True).with_tp(3, True)
    one = ALL_MODELS["Mixtral-8x7B"].with_tp(1, expert_parallel=True)
    assert not one.expert_parallel and one.expert_groups == 1  # one GPU: nothing to spread
