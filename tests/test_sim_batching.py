"""sim.batching: REFERENCE.md V17, the article's thesis at the defaults, and the scheduler invariants."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sim.batching import (
    N_REQUESTS_RANGE,
    RATE_RANGE,
    SLOTS_RANGE,
    WORKLOADS,
    _SegmentClock,
    compare,
    expected_static_slot_efficiency,
    make_requests,
    sample_requests,
    simulate,
)
from sim.cost import DEFAULT_ASSUMPTIONS, step_cost
from sim.hardware import GPUS
from sim.models import MODELS

H100, A100, B200 = GPUS["H100 SXM"], GPUS["A100 80GB SXM"], GPUS["B200"]
LLAMA8, LLAMA70, LLAMA1 = MODELS["Llama-3.1-8B"], MODELS["Llama-3.1-70B"], MODELS["Llama-3.2-1B"]


# --- REFERENCE.md V17 ------------------------------------------------------------------------------


def test_v17_harmonic_number_formula():
    """V17: E[L] / E[max of B exponentials] = 1 / H_B: 0.368 at B = 8, 0.246 at B = 32."""
    assert expected_static_slot_efficiency(8) == pytest.approx(0.368, abs=0.001)
    assert expected_static_slot_efficiency(32) == pytest.approx(0.246, abs=0.001)


@pytest.mark.parametrize(("slots", "expected"), [(8, 0.369), (32, 0.247)])
def test_v17_static_slot_efficiency_exponential_outputs(slots, expected):
    """V17: static batching, Anyscale outputs (exponential mean 128, capped at 1536): slot efficiency
    0.369 at B = 8 and 0.247 at B = 32 (±0.02, Monte Carlo); continuous with a queue is near 1;
    utilization.gpu reads near 100 % in both modes."""
    req = sample_requests("anyscale", 8000, seed=1)
    static = simulate(H100, LLAMA8, req, slots, "static")
    continuous = simulate(H100, LLAMA8, req, slots, "continuous")
    assert static.requested_share == pytest.approx(expected, abs=0.02)
    assert continuous.requested_share > 0.95
    assert static.utilization_gpu > 0.9 and continuous.utilization_gpu > 0.9


# --- the thesis at the page's defaults -------------------------------------------------------------


@pytest.mark.parametrize(("gpu", "model"), [(H100, LLAMA8), (A100, LLAMA70), (B200, LLAMA1)])
def test_utilization_barely_moves_while_goodput_moves_tens_of_points(gpu, model):
    """The gauge that moves is the useful-work one. On a 1B model on a B200 the host's 0.5 ms a step
    shows in nvidia-smi (a decode step's kernels take under 1 ms), and continuous batching's steps
    carry more kernel time, so utilization moves ~10 points there: still a quarter of the other."""
    c = compare(gpu, model, slots=64, n_requests=1000)
    s, k = c.static, c.continuous
    if model is not LLAMA1:
        assert abs(k.utilization_gpu - s.utilization_gpu) < 0.03
    assert abs(k.utilization_gpu - s.utilization_gpu) < (k.requested_share - s.requested_share) / 4
    assert k.requested_share - s.requested_share > 0.4
    assert k.output_tokens_per_s > 2 * s.output_tokens_per_s
    assert s.padding_share > 0.5 and k.padding_share == 0


def test_defaults_h100_llama8_numbers():
    """Pin the default view (H100, Llama-3.1-8B, Anyscale, 1000 requests, 64 slots, burst)."""
    c = compare(H100, LLAMA8, slots=64, n_requests=1000)
    assert c.static.utilization_gpu == pytest.approx(0.934, abs=0.005)
    assert c.continuous.utilization_gpu == pytest.approx(0.948, abs=0.005)
    assert c.static.requested_share == pytest.approx(0.214, abs=0.01)  # ~1/H_64 = 0.210 (V17)
    assert c.continuous.requested_share == pytest.approx(0.838, abs=0.01)


def test_equal_lengths_static_loses_nothing():
    """The control workload: with identical lengths both policies run the same schedule."""
    c = compare(H100, LLAMA8, slots=32, n_requests=256, workload="fixed")
    assert c.static.requested_share == pytest.approx(c.continuous.requested_share, rel=1e-12)
    assert c.static.wall_s == pytest.approx(c.continuous.wall_s, rel=1e-12)
    assert c.static.padding_share == 0


def test_poisson_continuous_cuts_time_to_first_token():
    c = compare(H100, LLAMA8, slots=64, n_requests=400, load="poisson", rate_per_s=8.0)
    assert c.continuous.ttft_p50_s < 0.5 * c.static.ttft_p50_s
    assert c.continuous.ttft_p99_s < c.static.ttft_p99_s
    # At a low rate the engine waits for arrivals: idle gaps pull utilization.gpu down in both modes.
    low = compare(H100, LLAMA8, slots=64, n_requests=200, load="poisson", rate_per_s=1.0)
    assert low.static.idle_s > 0 and low.continuous.idle_s > 0
    assert low.static.utilization_gpu < 0.9 and low.continuous.utilization_gpu < 0.9


# --- workloads -------------------------------------------------------------------------------------


def test_anyscale_preset_lengths():
    req = sample_requests("anyscale", 20_000, seed=3)
    assert np.all(req.prompt_tokens == 512)
    assert req.output_tokens.min() >= 1 and req.output_tokens.max() <= 1536
    assert req.output_tokens.mean() == pytest.approx(128.5, abs=3)  # ceil of exponential(128)
    lat = sample_requests("anyscale_latency", 20_000, seed=3)
    assert lat.prompt_tokens.min() >= 1 and lat.prompt_tokens.max() <= 512
    assert np.array_equal(lat.output_tokens, req.output_tokens)  # same seed, same output stream


def test_same_seed_same_lengths_whatever_the_load():
    burst = sample_requests("chat", 300, "burst", seed=7)
    poisson = sample_requests("chat", 300, "poisson", 5.0, seed=7)
    assert np.array_equal(burst.prompt_tokens, poisson.prompt_tokens)
    assert np.array_equal(burst.output_tokens, poisson.output_tokens)
    assert np.all(burst.arrival_s == 0) and poisson.arrival_s[0] == 0
    assert np.mean(np.diff(poisson.arrival_s)) == pytest.approx(1 / 5.0, rel=0.2)
    assert not np.array_equal(sample_requests("chat", 300, seed=8).output_tokens, burst.output_tokens)


# --- bad input -------------------------------------------------------------------------------------


@pytest.mark.parametrize(("kwargs", "name"), [
    (dict(slots=0), "slots"), (dict(slots=SLOTS_RANGE[1] + 1), "slots"), (dict(slots=2.5), "slots"),
    (dict(slots=True), "slots"), (dict(n_requests=0), "n_requests"),
    (dict(n_requests=N_REQUESTS_RANGE[1] + 1), "n_requests"), (dict(rate_per_s=0.0), "rate_per_s"),
    (dict(rate_per_s=float("nan")), "rate_per_s"), (dict(rate_per_s=RATE_RANGE[1] * 2), "rate_per_s"),
    (dict(workload="sharegpt"), "workload"), (dict(load="closed"), "load"), (dict(seed=-1), "seed"),
])
def test_bad_arguments_raise_a_clear_value_error(kwargs, name):
    args = dict(slots=8, n_requests=10) | kwargs
    with pytest.raises(ValueError, match=name):
        compare(H100, LLAMA8, **args)


def test_bad_requests_and_policy():
    req = make_requests([10, 20], [3, 4])
    with pytest.raises(ValueError, match="policy"):
        simulate(H100, LLAMA8, req, 4, "dynamic")
    with pytest.raises(ValueError, match="prompt_tokens"):
        make_requests([0, 20], [3, 4])
    with pytest.raises(ValueError, match="output_tokens"):
        make_requests([10, 20], [3.5, 4.0])
    with pytest.raises(ValueError, match="arrival_s"):
        make_requests([10, 20], [3, 4], [1.0, 0.5])


# --- invariants (hypothesis) -----------------------------------------------------------------------


@st.composite
def workloads(draw):
    n = draw(st.integers(1, 40))
    prompt = draw(st.lists(st.integers(1, 600), min_size=n, max_size=n))
    output = draw(st.lists(st.integers(1, 80), min_size=n, max_size=n))
    if draw(st.booleans()):
        arrival = None
    else:
        gaps = draw(st.lists(st.floats(0, 0.5, allow_nan=False), min_size=n, max_size=n))
        arrival = np.cumsum(gaps)
    return make_requests(prompt, output, arrival), draw(st.integers(1, 12))


def _occupancy(run) -> np.ndarray:
    """Requests holding a slot at each step."""
    diff = np.zeros(run.n_steps + 1, dtype=int)
    np.add.at(diff, run.start_step, 1)
    np.add.at(diff, run.release_step + 1, -1)
    return np.cumsum(diff)[:-1]


def _check_run(run, req, slots):
    # every request gets exactly its tokens: one prefill step, then one token a step
    assert np.array_equal(run.end_step - run.start_step + 1, req.output_tokens)
    assert np.all(run.release_step >= run.end_step)
    assert np.all((run.slot >= 0) & (run.slot < slots))
    # no slot holds two requests at a step
    order = np.lexsort((run.start_step, run.slot))
    same = run.slot[order][1:] == run.slot[order][:-1]
    assert np.all(run.start_step[order][1:][same] > run.release_step[order][:-1][same])
    occupancy = _occupancy(run)
    assert occupancy.max() <= slots and occupancy.min() >= 1  # no empty step is ever run
    assert np.allclose(run.useful_slots + run.padding_slots, occupancy)
    # the step aggregates carry every token: prompts (padded) plus one per computing slot per step
    computed = run.prefill_tokens.sum() + (run.release_step - run.start_step).sum()
    assert run.cost.flops.size == run.n_steps
    assert np.all(run.cost.time_s > 0)
    assert run.useful_slots.sum() == pytest.approx(run.n_steps * slots * run.requested_share)
    assert computed >= req.prompt_tokens.sum() + (req.output_tokens - 1).sum()
    # shares are fractions that add up; utilization is a fraction
    for share in (run.requested_share, run.padding_share, run.idle_share, run.utilization_gpu):
        assert -1e-12 <= share <= 1 + 1e-12
    assert run.requested_share + run.padding_share + run.idle_share == pytest.approx(1)
    # wall time: every step plus the idle gaps; idle slot-time from the per-slot gaps agrees
    assert run.wall_s == pytest.approx(run.cost.time_s.sum() + run.idle_s)
    slot_i, a, b = run.idle_segments()
    assert np.all((slot_i >= 0) & (slot_i < slots)) and np.all(b > a)
    held = (run.release_s - run.step_start_s[run.start_step]).sum()
    assert (b - a).sum() + held == pytest.approx(slots * run.wall_s)
    empty = (slots - occupancy) * run.cost.time_s  # slot-time of empty slots in the steps, seconds
    assert (b - a).sum() == pytest.approx(empty.sum() + slots * run.idle_s)
    assert run.idle_share == pytest.approx(1 - occupancy.sum() / (slots * run.n_steps), abs=1e-9)
    # latency: nothing starts before it arrives; first token after one step
    assert np.all(run.step_start_s[run.start_step] >= req.arrival_s - 1e-9)
    assert np.all(run.ttft_s > 0) and np.all(run.finish_s >= run.first_token_s)


@given(workloads())
def test_invariants_both_policies(case):
    req, slots = case
    for policy in ("static", "continuous"):
        _check_run(simulate(H100, LLAMA8, req, slots, policy), req, slots)


@given(workloads())
def test_continuous_never_finishes_later_than_static_on_a_burst(case):
    req, slots = case
    req = make_requests(req.prompt_tokens, req.output_tokens)  # all queued at t = 0
    s = simulate(H100, LLAMA8, req, slots, "static")
    k = simulate(H100, LLAMA8, req, slots, "continuous")
    assert np.all(k.start_step <= s.start_step)  # no request starts later (in steps)
    assert k.n_steps <= s.n_steps
    assert k.wall_s <= s.wall_s * (1 + 1e-12)
    assert k.output_tokens_per_s >= s.output_tokens_per_s * (1 - 1e-12)


@given(workloads())
def test_continuous_admits_as_soon_as_a_slot_and_the_request_are_there(case):
    """Work conservation under arrivals: between the first step that starts after a request arrived
    (and after its predecessor was admitted, FCFS) and the step it joins, every slot is busy."""
    req, slots = case
    run = simulate(H100, LLAMA8, req, slots, "continuous")
    occupancy = _occupancy(run)
    for r in range(req.n):
        earliest = int(np.searchsorted(run.step_start_s, req.arrival_s[r] + 1e-9))
        if r > 0:
            earliest = max(earliest, int(run.start_step[r - 1]))
        waited = range(earliest, int(run.start_step[r]))
        assert all(occupancy[z] == slots for z in waited)


def test_static_takes_every_arrived_request_up_to_b():
    req = make_requests([100] * 5, [10, 50, 10, 10, 10], [0.0, 0.0, 0.0, 0.0, 100.0])
    run = simulate(H100, LLAMA8, req, 2, "static")
    # batches {0, 1}, {2, 3} (queued), then {4} after an idle wait for its arrival
    assert run.start_step.tolist() == [0, 0, 50, 50, 60]
    assert run.slot.tolist() == [0, 1, 0, 1, 0]
    assert run.release_step[0] == 49  # request 0 pads until its batch-mate finishes
    assert run.idle_s > 0 and run.step_start_s[60] == pytest.approx(100.0)
    assert run.padding_slots[10:50].tolist() == [1.0] * 40


def test_continuous_refills_the_freed_slot_next_step():
    req = make_requests([100] * 4, [10, 50, 5, 5])
    run = simulate(H100, LLAMA8, req, 2, "continuous")
    assert run.start_step.tolist() == [0, 0, 10, 15]
    assert run.slot.tolist() == [0, 1, 0, 0]
    assert run.padding_slots.sum() == 0


def test_segment_clock_matches_step_cost():
    """The Poisson scheduler's clock reproduces step_cost's times on the fast and the long path."""
    clock = _SegmentClock(H100, LLAMA8, DEFAULT_ASSUMPTIONS)
    for m in (5, 200):
        first = (40.0 + 512, 20_000.0 + 512 * 513 / 2, 20_000.0 + 512)
        kv = 20_512.0 + 41 * np.arange(m, dtype=float)
        new, pairs = np.full(m, 41.0), kv.copy()
        new[0], pairs[0], kv[0] = first
        sampled = np.full(m, 41.0)  # every sequence samples, the joining prompt its first token
        expected = np.cumsum(step_cost(H100, LLAMA8, new, pairs, kv, sampled_tokens=sampled).time_s)
        steps, end = clock.run(1.0, first, 41, 20_512.0, m, np.inf)
        assert steps == m and end == pytest.approx(1.0 + expected[-1], rel=1e-12)
        steps, end = clock.run(1.0, first, 41, 20_512.0, m, 1.0 + expected[2] - 1e-9)
        assert steps == 3 and end == pytest.approx(1.0 + expected[2], rel=1e-12)


@pytest.mark.parametrize("workload", list(WORKLOADS))
def test_every_workload_runs_under_both_loads(workload):
    for load in ("burst", "poisson"):
        c = compare(H100, LLAMA8, slots=16, n_requests=60, workload=workload, load=load, rate_per_s=4.0)
        for run in (c.static, c.continuous):
            _check_run(run, run.requests, 16)


def _reference_run(clock, t0, first, n_seq, kv0, m, deadline):
    """``_SegmentClock.run`` as it was before its one-pass rewrite (2026-12-02): the reference it must
    equal bit for bit (the scheduler's admissions hang on ``clock < deadline`` comparisons)."""
    c = clock.coef
    ns = float(n_seq)
    clock_s = t0 + float(c.step_time_s(*first, ns))
    if m <= 1 or clock_s >= deadline:
        return 1, clock_s
    if m <= 32 and ns <= c.graph_max_tokens and not c.overlap_host:
        terms, fixed = c.decode_terms(ns)
        lo, hi = kv0 + n_seq, kv0 + n_seq * (m - 1)
        same = [(a + b * lo >= g + d * lo) == (a + b * hi >= g + d * hi) for a, b, g, d in terms]
        j = 1
        if all(same):
            lin_a = fixed + sum(a if a + b * lo >= g + d * lo else g for a, b, g, d in terms)
            lin_b = sum(b if a + b * lo >= g + d * lo else d for a, b, g, d in terms)
            while clock_s < deadline and j < m:
                clock_s += lin_a + lin_b * (kv0 + n_seq * j)
                j += 1
            return j, clock_s
        while clock_s < deadline and j < m:
            kv = kv0 + n_seq * j
            clock_s += fixed + sum(max(a + b * kv, g + d * kv) for a, b, g, d in terms)
            j += 1
        return j, clock_s
    ends = clock_s + np.cumsum(c.decode_run_s(ns, kv0 + ns, m - 1))
    j = min(m - 1, int(np.searchsorted(ends, deadline, side="left")) + 1)
    return j + 1, float(ends[j - 1])


@given(st.sampled_from(["Llama-3.1-8B", "Llama-3.2-1B", "Mixtral-8x7B", "Llama-3.1-70B"]),
       st.sampled_from(["H100 SXM", "A100 80GB SXM", "L4"]), st.integers(1, 300),
       st.integers(0, 200_000), st.integers(1, 40), st.floats(0, 0.5), st.integers(0, 4096))
def test_segment_clock_equals_its_previous_arithmetic(model, gpu, n_seq, kv0, m, deadline_s, new):
    """The Poisson scheduler's clock (one-step pricer, one-pass linear check) gives exactly what its
    earlier arithmetic gave: the same steps and the same clock, to the last bit."""
    from sim.batching import _SegmentClock

    clock = _SegmentClock(GPUS[gpu], MODELS[model], DEFAULT_ASSUMPTIONS)
    first = (float(new + n_seq), float(kv0 * 1.5), float(kv0 + new))
    args = (0.25, first, n_seq, float(kv0), m, 0.25 + deadline_s)
    assert clock.run(*args) == _reference_run(clock, *args)


def test_keeps_up_says_whether_the_queue_stays_bounded():
    """One slot at 8 requests a second falls ever further behind; 64 slots at 1 a second keep up."""
    from sim.batching import compare
    from sim.hardware import GPUS
    from sim.models import MODELS

    g, m = GPUS["H100 SXM"], MODELS["Llama-3.1-8B"]
    behind = compare(g, m, slots=1, n_requests=400, load="poisson", rate_per_s=8.0)
    assert not behind.static.keeps_up and not behind.continuous.keeps_up
    light = compare(g, m, slots=64, n_requests=400, load="poisson", rate_per_s=1.0)
    assert light.static.keeps_up and light.continuous.keeps_up
    assert behind.behind() == ("static", "continuous") and light.behind() == ()


def test_static_falls_behind_with_continuous_where_it_finishes_no_sooner():
    """Equal lengths at 64 requests/s on 256 slots: continuous batching's queue grows; static's TTFT
    trend passes the bounded-queue test only because its waits are long from the start, but it
    finishes later on the same arrivals, so it is behind too."""
    from sim.batching import compare
    from sim.hardware import GPUS
    from sim.models import MODELS

    c = compare(GPUS["H100 SXM"], MODELS["Llama-3.1-8B"], slots=256, workload="fixed", n_requests=1000,
                load="poisson", rate_per_s=64.0)
    assert c.static.keeps_up and not c.continuous.keeps_up  # the trend test alone
    assert c.static.wall_s >= c.continuous.wall_s
    assert c.behind() == ("static", "continuous")
