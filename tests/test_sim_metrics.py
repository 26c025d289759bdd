"""sim.metrics: metric definitions on hand-built runs with known answers (V20, V21)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sim import speculative as spec
from sim.batching import make_requests, sample_requests, simulate
from sim.chunked import chunked_prefill
from sim.cost import decode_step_cost, step_cost
from sim.hardware import GPUS
from sim.memory import memory_plan
from sim.metrics import (
    ALERTS,
    DEFAULT_DAY_REQUESTS,
    HIGH_LOAD,
    MODERATE_LOAD,
    NOT_RUN,
    SLO,
    _integral_of_count,
    batching_metrics,
    card_metrics,
    chunked_metrics,
    dashboard_day,
    measure,
    per_gpu_goodput,
    phases_metrics,
    plain_decode_metrics,
    run_metrics,
    scenario_runs,
    scenarios,
    speculative_metrics,
    weighted_percentile,
)
from sim.models import MODELS
from sim.paging import card_fit
from sim.paging import compare as paging_compare
from sim.phases import two_phases

H100, A100, LLAMA8 = GPUS["H100 SXM"], GPUS["A100 80GB SXM"], MODELS["Llama-3.1-8B"]
LLAMA70 = MODELS["Llama-3.1-70B"]


def test_idle_gaps_lower_utilization_exactly_by_their_share():
    steps = decode_step_cost(H100, LLAMA8, np.ones(100), 128)
    busy = run_metrics(steps, useful_tokens=100)
    wall = busy.wall_s
    gappy = run_metrics(steps, useful_tokens=100, idle_s=wall)  # as much idle as busy time
    assert gappy.wall_s == pytest.approx(2 * wall)
    assert gappy.utilization_gpu == pytest.approx(busy.utilization_gpu / 2)
    assert gappy.output_tok_s == pytest.approx(busy.output_tok_s / 2)
    assert gappy.mfu == pytest.approx(busy.mfu / 2)


def test_v21_batch1_decode_utilization_near_one_mfu_a_quarter_percent():
    steps = decode_step_cost(H100, LLAMA8, np.ones(1000), 128)
    m = run_metrics(steps, useful_tokens=1000)
    assert m.utilization_gpu > 0.9
    assert m.mfu * 100 == pytest.approx(0.26, abs=0.05)
    assert m.throughput_tok_s == pytest.approx(158.34, rel=0.15)  # V10's band (the fit: -11 %)
    # Bytes moved (weights less the embedding table, one KV row) over spec bandwidth x step time.
    assert m.mbu == pytest.approx(float(steps.mbu[0]), rel=1e-9)
    # V10's MBU counts every weight (REFERENCE's floor, 4.79 ms) over the step: in its 0.65-0.85;
    # the bytes this model moves leave the embedding table's 1.05 GB out, so its MBU is lower.
    v10_mbu = LLAMA8.weight_bytes / H100.hbm_bandwidth / float(steps.time_s[0])
    assert 0.65 < v10_mbu < 0.85 and 0.55 < m.mbu < v10_mbu


def test_padding_lowers_goodput_not_utilization():
    steps = decode_step_cost(H100, LLAMA8, np.full(10, 8.0), 128)
    full = run_metrics(steps, useful_tokens=80, processed_tokens=80)
    padded = run_metrics(steps, useful_tokens=20, processed_tokens=80)
    assert padded.utilization_gpu == full.utilization_gpu
    assert padded.useful_share == pytest.approx(0.25)
    assert padded.output_tok_s == pytest.approx(full.output_tok_s / 4)


def test_v20_distserve_disaggregated_goodput():
    per_gpu = per_gpu_goodput(2, 5.6, 1, 10.0)
    assert per_gpu == pytest.approx(10 / 3, abs=0.005)
    assert per_gpu / 1.6 == pytest.approx(2.08, abs=0.01)


def test_request_goodput_counts_requests_meeting_both_targets():
    steps = decode_step_cost(H100, LLAMA8, np.ones(10), 128)
    ttft = np.array([0.1, 0.2, 2.0, 0.3])
    tpot = np.array([0.01, 0.09, 0.01, 0.02])
    m = run_metrics(steps, useful_tokens=10, ttft_s=ttft, tpot_s=tpot, slo=SLO(1.0, 0.05))
    assert m.slo_attainment == pytest.approx(0.5)  # the 1st and 4th
    assert m.goodput_rps == pytest.approx(2 / m.wall_s)
    assert m.ttft_p50_s == pytest.approx(0.25)


def test_time_weighted_kv_use_and_queue():
    steps = step_cost(H100, LLAMA8, [1, 1000], [1, 1000], [1, 1000])
    m = run_metrics(steps, useful_tokens=1001, kv_use=[0.0, 1.0], queue_depth=[4, 0])
    w = steps.time_s / steps.time_s.sum()
    assert m.kv_cache_use == pytest.approx(w[1])
    assert m.queue_depth == pytest.approx(4 * w[0])


def test_unmodelled_metrics_are_nan():
    m = run_metrics(decode_step_cost(H100, LLAMA8, np.ones(3), 128), useful_tokens=3)
    assert math.isnan(m.ttft_p50_s) and math.isnan(m.kv_cache_use) and math.isnan(m.goodput_rps)


@pytest.mark.parametrize("kwargs", [dict(useful_tokens=-1), dict(useful_tokens=5, idle_s=-1),
                                    dict(useful_tokens=5, processed_tokens=4)])
def test_rejects_invalid(kwargs):
    with pytest.raises(ValueError):
        run_metrics(decode_step_cost(H100, LLAMA8, np.ones(3), 128), **kwargs)


def test_slo_rejects_nonpositive():
    with pytest.raises(ValueError, match="tpot_s"):
        SLO(ttft_s=1.0, tpot_s=0)


@given(st.integers(1, 256), st.integers(0, 32768), st.floats(0, 10), st.floats(0, 1))
def test_metrics_are_shares(batch, context, idle_s, useful_share):
    steps = decode_step_cost(H100, LLAMA8, np.full(5, batch), context)
    processed = 5.0 * batch
    m = run_metrics(steps, useful_tokens=useful_share * processed, processed_tokens=processed,
                    idle_s=idle_s)
    for share in (m.utilization_gpu, m.mfu, m.mbu, m.useful_share):
        assert 0 <= share <= 1
    assert m.output_tok_s <= m.throughput_tok_s * (1 + 1e-12)


# --- inter-token latency and unmodelled preemptions ------------------------------------------------


@given(st.lists(st.floats(0, 1), min_size=1, max_size=30), st.data())
def test_weighted_percentile_is_the_inverse_cdf_of_the_repeated_samples(values, data):
    weights = data.draw(st.lists(st.integers(0, 5), min_size=len(values), max_size=len(values)))
    q = data.draw(st.sampled_from([1, 50, 90, 99, 100]))
    repeated = np.repeat(values, weights)
    got = weighted_percentile(values, weights, q)
    if repeated.size == 0:
        assert math.isnan(got)
    else:
        assert got == np.percentile(repeated, q, method="inverted_cdf")


def test_itl_and_preemptions_not_modelled():
    steps = decode_step_cost(H100, LLAMA8, np.ones(4), 128)
    m = run_metrics(steps, useful_tokens=4, itl_s=[0.01, 0.5], itl_weights=[99, 1], preemptions=None)
    assert m.itl_p50_s == 0.01 and m.itl_p99_s == 0.01  # 1 token in 100 waited 0.5 s
    assert run_metrics(steps, useful_tokens=4, itl_s=[0.01, 0.5], itl_weights=[98, 2]).itl_p99_s == 0.5
    assert math.isnan(m.preemptions)
    assert run_metrics(steps, useful_tokens=4).preemptions == 0


# --- adapters: each reuses its section's run and agrees with what that section reports ----------------


def test_batching_adapter_hand_built_queue_and_itl():
    """One slot, three 2-token requests queued at t = 0: they run one after another (steps 0-1, 2-3,
    4-5). Waiting: 2, 2, 1, 1, 0, 0 requests; each request's second token waits one decode step."""
    req = make_requests(np.array([1, 1, 1]), np.array([2, 2, 2]))
    run = simulate(H100, LLAMA8, req, 1, "continuous")
    m = batching_metrics(run)
    w = run.cost.time_s
    assert m.queue_depth == pytest.approx(float(np.dot([2, 2, 1, 1, 0, 0], w) / w.sum()))
    assert m.itl_p50_s == pytest.approx(w[1]) and m.itl_p99_s == pytest.approx(w[1])
    assert m.output_tok_s == pytest.approx(6 / run.wall_s)
    assert m.ttft_p99_s == pytest.approx(run.ttft_p99_s)


def test_batching_adapter_agrees_with_section_01():
    burst = sample_requests("anyscale", 300)
    for policy in ("static", "continuous"):
        run = simulate(H100, LLAMA8, burst, 32, policy)
        m = batching_metrics(run, slo=SLO())
        assert m.wall_s == pytest.approx(run.wall_s)
        assert m.utilization_gpu == pytest.approx(run.utilization_gpu)
        assert m.output_tok_s == pytest.approx(run.output_tokens_per_s)
        assert m.throughput_tok_s == pytest.approx(run.generated_tokens_per_s)
        assert (m.ttft_p50_s, m.tpot_p99_s) == pytest.approx((run.ttft_p50_s, run.tpot_p99_s))
    assert batching_metrics(simulate(H100, LLAMA8, burst, 32, "continuous")).useful_share == 1.0


def test_card_adapter_prices_the_step_card_fit_priced_v14():
    """V14: reserving for the max leaves ~20 % of the KV cache holding tokens (15-40 %); paging >= 95 %."""
    fit = card_fit(H100, LLAMA8, 16, 2048)
    for policy in ("reserved", "paged"):
        m = card_metrics(fit, H100, LLAMA8, policy)
        assert m.tpot_p50_s == pytest.approx(fit.step_s[policy])
        assert m.output_tok_s == pytest.approx(fit.tokens_per_s[policy])
    assert 0.15 <= card_metrics(fit, H100, LLAMA8, "reserved").kv_cache_use <= 0.40
    assert card_metrics(fit, H100, LLAMA8, "paged").kv_cache_use >= 0.95


def test_card_adapter_when_the_model_does_not_fit():
    fit = card_fit(H100, LLAMA70, 16, 2048)
    assert not fit.fits
    assert math.isnan(card_metrics(fit, H100, LLAMA70, "paged").utilization_gpu)


def test_phases_adapter_v21():
    """V21: Llama-3.1-8B at batch 1 on H100: MFU ~0.26 % while utilization.gpu reads ~100 %."""
    r = two_phases(H100, LLAMA8, 2048, 1, 512)
    m = phases_metrics(r)
    assert m.output_tok_s == pytest.approx(r.decode_tokens_per_s)
    assert m.utilization_gpu == pytest.approx(r.decode_utilization_gpu) and m.utilization_gpu > 0.9
    assert m.mfu * 100 == pytest.approx(0.26, abs=0.05)
    assert m.ttft_p50_s == pytest.approx(r.prefill_time_s)


def test_chunked_adapter_worst_gap_and_ttft():
    cp = chunked_prefill(H100, LLAMA8)
    for sched in (cp.unchunked, cp.chunked):
        m = chunked_metrics(sched)
        assert m.itl_p99_s == pytest.approx(sched.worst_gap_s)
        assert m.ttft_p50_s == pytest.approx(sched.ttft_s)
        assert m.wall_s == pytest.approx(float(sched.time_s.sum()))
    assert chunked_metrics(cp.unchunked).itl_p99_s > 10 * chunked_metrics(cp.chunked).itl_p99_s


@pytest.mark.parametrize("method", list(spec.METHODS))
def test_speculative_adapter_is_section_03s_round(method):
    mth = spec.METHODS[method]
    s = spec.speculate(H100, LLAMA8, mth, mth.alpha, mth.k, 1, 1024)
    m = speculative_metrics(s, H100, LLAMA8)
    plain = plain_decode_metrics(s, H100, LLAMA8)
    assert m.wall_s == pytest.approx(s.round_s)
    assert m.output_tok_s == pytest.approx(s.tokens_per_s)
    assert plain.output_tok_s == pytest.approx(s.plain_tokens_per_s)
    assert m.tpot_p50_s == pytest.approx(s.time_per_token_s)
    assert m.useful_share == pytest.approx(s.expected_tokens / s.verified_tokens)  # a tree verifies its nodes
    assert m.mfu > plain.mfu  # verifying k + 1 tokens a pass: the idle tensor cores get work


@pytest.mark.parametrize("method", list(spec.METHODS))
@pytest.mark.parametrize("gpu", ["H100 SXM", "L4"])
def test_speculative_kv_use_counts_the_drafters_cache_and_weights(method, gpu):
    """The speculative row's KV use is the memory check's: the target's and the drafter's KV over what
    is left once both models' weights are loaded. A method that holds nothing reads as plain decode."""
    g, mth = GPUS[gpu], spec.METHODS[method]
    s = spec.speculate(g, LLAMA8, mth, mth.alpha, mth.k, 16, 4096)
    budget = memory_plan(g, LLAMA8, 0, 0).kv_budget_bytes
    m = speculative_metrics(s, g, LLAMA8, kv_budget_bytes=budget)
    plain = plain_decode_metrics(s, g, LLAMA8, kv_budget_bytes=budget)
    drafter = spec.drafter_held(LLAMA8, mth, mth.k)
    if drafter is None:
        assert m.kv_cache_use == pytest.approx(plain.kv_cache_use)
        return
    both = memory_plan(g, LLAMA8, s.batch, s.context_tokens, drafter=drafter)
    if not both.weights_fit:  # Medusa's five heads on an L4: no room left at all (the page refuses it)
        assert math.isnan(m.kv_cache_use)
        return
    assert m.kv_cache_use == pytest.approx(both.kv_bytes / both.kv_budget_bytes, rel=1e-3)
    assert m.kv_cache_use > plain.kv_cache_use


# --- the scenario table --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def rows():
    return {r.key: r.metrics for r in scenarios(H100, LLAMA8)}


def test_scenario_rows_in_article_order(rows):
    assert list(rows) == ["batch1", "static", "continuous", "reserved", "paged", "unchunked", "chunked",
                          "plain", "speculative", "overload"]
    assert [r.section for r in scenarios(H100, LLAMA8)] == ["00", "01", "01", "02", "02", "02", "02", "03",
                                                           "03", "01"]


def test_headline_utilization_flat_while_goodput_and_mfu_differ_by_orders_of_magnitude(rows):
    util = np.array([m.utilization_gpu for m in rows.values()])
    good = np.array([m.output_tok_s for m in rows.values()])
    mfu = np.array([m.mfu for m in rows.values()])
    assert util.min() > 0.9 and util.max() - util.min() < 0.10
    assert good.max() / good.min() > 100
    assert mfu.max() / mfu.min() > 100


def test_each_scenario_tells_its_story(rows):
    r = rows
    assert r["continuous"].output_tok_s > 1.5 * r["static"].output_tok_s
    assert r["continuous"].slo_attainment > 0.9 > 0.1 > r["static"].slo_attainment
    assert r["paged"].kv_cache_use > 3 * r["reserved"].kv_cache_use
    # 4x the batch, but past the GEMMs' ridge each sequence brings its own math: a modest gain here.
    assert r["paged"].output_tok_s > 1.05 * r["reserved"].output_tok_s
    assert r["unchunked"].itl_p99_s > 10 * r["chunked"].itl_p99_s
    assert r["chunked"].ttft_p50_s > r["unchunked"].ttft_p50_s  # the prompt's own first token: later
    assert r["speculative"].output_tok_s > 1.5 * r["plain"].output_tok_s
    assert r["overload"].queue_depth > 50 and r["continuous"].queue_depth < 1
    assert r["overload"].ttft_p99_s > 10 * r["continuous"].ttft_p99_s
    assert abs(r["overload"].utilization_gpu - r["continuous"].utilization_gpu) < 0.03


def test_runs_match_section_01_choices_of_rate():
    runs = scenario_runs(H100, LLAMA8)
    assert runs.moderate_rate_rps == 16 and runs.high_rate_rps == 64  # capacity ~35 req/s
    assert runs.moderate_rate_rps <= MODERATE_LOAD * runs.flat_out_rps
    assert runs.high_rate_rps >= HIGH_LOAD * runs.flat_out_rps


def test_slo_changes_only_which_requests_count():
    runs = scenario_runs(H100, LLAMA8)
    strict, loose = measure(runs, SLO(0.05, 0.01)), measure(runs, SLO(60.0, 0.5))
    for a, b in zip(strict, loose, strict=True):
        assert a.metrics.utilization_gpu == b.metrics.utilization_gpu
        assert a.metrics.output_tok_s == b.metrics.output_tok_s
        if math.isfinite(a.metrics.slo_attainment):
            assert a.metrics.slo_attainment <= b.metrics.slo_attainment
    assert {r.key: r.metrics.slo_attainment for r in loose}["static"] == 1.0


def test_a_setup_a_page_refuses_is_blank_in_its_row():
    """Each row is blank exactly where its page shows no numbers (``sim.memory``): a model whose
    weights leave no room for a KV cache blanks every row; on an L4, page 02's long prompt among 32
    decoders does not fit, the single-user rows and page 01's rows (on fewer slots) do; on one H100,
    Llama-3.1-70B FP8 leaves no slot for page 01's longest request."""
    assert all(math.isnan(r.metrics.utilization_gpu) for r in scenarios(H100, LLAMA70))
    l4 = {r.key: r.metrics for r in scenarios(GPUS["L4"], LLAMA8)}
    blank = {k for k, m in l4.items() if math.isnan(m.utilization_gpu)}
    assert {"unchunked", "chunked"} <= blank
    assert not blank & {"batch1", "plain", "speculative", "reserved", "paged", "static", "continuous"}
    fp8 = {r.key: r.metrics for r in scenarios(H100, LLAMA70.with_precision("fp8", "bf16"))}
    fp8_blank = {k for k, m in fp8.items() if math.isnan(m.utilization_gpu)}
    assert {"static", "continuous", "overload"} <= fp8_blank


def test_scenarios_follow_the_gpu():
    a100 = {r.key: r.metrics for r in scenarios(A100, LLAMA8)}
    h100 = {r.key: r.metrics for r in scenarios(H100, LLAMA8)}
    assert a100["batch1"].output_tok_s < h100["batch1"].output_tok_s


# --- alerts ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("alert", [a for a in ALERTS if a.scenario], ids=lambda a: a.key)
def test_each_alert_fires_on_its_failure_and_clears_with_the_fix(alert, rows):
    assert alert.fires(rows[alert.scenario])
    if alert.fixed_in:
        assert not alert.fires(rows[alert.fixed_in])
    for field in alert.shows:
        assert hasattr(rows[alert.scenario], field)


def test_alert_rules_use_the_slo(rows):
    stall = next(a for a in ALERTS if a.key == "prefill_stall")
    assert not stall.fires(rows["unchunked"], SLO(1.0, 0.5))  # a 500 ms budget tolerates the stall
    assert "{tpot}" in stall.rule


def test_preemption_alert_on_section_02s_pool():
    pool = paging_compare()
    alert = next(a for a in ALERTS if a.key == "preemption")
    m = dataclasses.replace(NOT_RUN, preemptions=pool.paged.total_preemptions)
    assert pool.paged.total_preemptions > 0 and alert.fires(m)
    assert not alert.fires(dataclasses.replace(NOT_RUN, preemptions=0))


# --- a day on the dashboard ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def day():
    return dashboard_day(H100, LLAMA8)


def test_day_utilization_flat_while_goodput_and_latency_move(day):
    slo = SLO()
    assert day.utilization_gpu.max() - day.utilization_gpu.min() < 0.05
    assert day.utilization_gpu.min() > 0.9
    assert day.output_tok_s.max() / day.output_tok_s.min() > 5
    assert day.mfu.max() / day.mfu.min() > 5
    assert np.nanmax(day.ttft_p99_s) > 2 * slo.ttft_s  # the peak overruns the engine
    assert day.ttft_p99_s[:8].max() < 0.2 * slo.ttft_s  # the night does not
    assert day.slo_attainment(slo).min() < 0.1 and day.slo_attainment(slo)[:8].min() == 1.0
    assert day.queue_depth.max() > 50 and day.queue_depth[:8].max() < 1


def test_day_windows_conserve_tokens_and_arrivals(day):
    run = day.run
    in_day = float(day.output_tok_s.sum() * day.window_s)
    end_of_day = 24 * day.window_s
    after = run.finish_s > end_of_day
    assert in_day <= run.output_tokens
    assert in_day >= run.output_tokens - run.requests.output_tokens[after].sum() - 1e-6
    assert day.arrivals.sum() == run.requests.n
    assert run.requests.n == pytest.approx(DEFAULT_DAY_REQUESTS, rel=0.1)
    assert np.array_equal(day.arrivals, np.bincount(day.request_window, minlength=24))
    busy = day.utilization_gpu * day.window_s
    assert busy.sum() <= float(run.cost.gpu_time_s.sum()) + 1e-9


def test_day_is_deterministic_and_seeded():
    a, b = dashboard_day(H100, LLAMA8, n_requests=300), dashboard_day(H100, LLAMA8, n_requests=300)
    assert np.array_equal(a.output_tok_s, b.output_tok_s)
    c = dashboard_day(H100, LLAMA8, n_requests=300, seed=1)
    assert not np.array_equal(a.arrivals, c.arrivals)


def test_integral_of_count():
    assert np.allclose(_integral_of_count(np.array([1.0, 2.0]), np.array([0.5, 1.5, 3.0])), [0, 0.5, 3.0])


@pytest.mark.parametrize(("kwargs", "name"), [
    (dict(n_windows=2), "n_windows"), (dict(n_requests=10**6), "n_requests"), (dict(low=0.0), "low"),
    (dict(low=0.5, peak=0.2), "peak"), (dict(seed=-1), "seed"),
])
def test_day_rejects_bad_arguments_by_name(kwargs, name):
    with pytest.raises(ValueError, match=name):
        dashboard_day(H100, LLAMA8, **kwargs)


def test_scenarios_reject_bad_arguments_by_name():
    with pytest.raises(ValueError, match="gpu"):
        scenario_runs("H100 SXM", LLAMA8)
    with pytest.raises(ValueError, match="slo"):
        measure(scenario_runs(H100, LLAMA8), slo=1.0)
    with pytest.raises(ValueError, match="policy"):
        card_metrics(card_fit(H100, LLAMA8), H100, LLAMA8, "contiguous")


@given(st.integers(1, 16), st.integers(1, 60), st.sampled_from(["static", "continuous"]),
       st.floats(0.5, 200.0), st.integers(0, 5))
def test_batching_adapter_invariants(slots, n, policy, rate, seed):
    req = sample_requests("chat", n, "poisson", rate, seed)
    run = simulate(H100, LLAMA8, req, slots, policy)
    m = batching_metrics(run, slo=SLO(), kv_budget_bytes=5e10)
    for share in (m.utilization_gpu, m.mfu, m.mbu, m.useful_share, m.slo_attainment):
        assert 0 <= share <= 1
    assert m.output_tok_s <= m.throughput_tok_s * (1 + 1e-12)
    assert 0 <= m.queue_depth <= n
    assert not m.itl_p50_s > m.itl_p99_s  # (both NaN when no request outlives its first token)
    assert m.goodput_rps <= n / m.wall_s + 1e-12


def test_alerts_stay_quiet_where_their_condition_does_not_hold(rows):
    """The rules' 'while requests wait' / 'waiting > 0' parts are part of the check: a lightly loaded
    continuous-batching engine holds little KV cache and has no queue, and must not page anyone."""
    by_key = {a.key: a for a in ALERTS}
    light = rows["continuous"]
    assert light.kv_cache_use < 0.5  # the cache is mostly empty...
    # ...and nobody waits: quiet
    assert not by_key["over_reservation"].fires(dataclasses.replace(light, queue_depth=0.0))
    assert by_key["over_reservation"].fires(dataclasses.replace(light, queue_depth=3.0))
    assert not by_key["overload"].fires(dataclasses.replace(rows["overload"], queue_depth=0.0))


def test_dollars_per_million_tokens_is_one_definition_for_gpu_and_replica():
    from sim.metrics import dollars_per_million_tokens as cost

    assert cost(1000.0, 3.6) == pytest.approx(1.0)  # $3.60/h making 1,000 tok/s: $1 per million
    # A replica of 4 GPUs making 4x the tokens costs the same per token as one GPU.
    assert cost(4000.0, 3.6, gpus=4) == pytest.approx(cost(1000.0, 3.6))
    assert cost(0.0, 3.6) == math.inf
    assert list(cost(np.array([1000.0, 2000.0]), 3.6)) == pytest.approx([1.0, 0.5])
    for bad in (dict(price_per_gpu_hour=-1), dict(price_per_gpu_hour=float("nan")), dict(gpus=0)):
        with pytest.raises(ValueError):
            cost(1000.0, **{"price_per_gpu_hour": 1.0, **bad})


@pytest.mark.parametrize("gpu", sorted(GPUS))
def test_the_speculative_row_reads_higher_than_plain_decode(gpu):
    """Page 04 says so: a round pays the host time once for its draft steps and verify pass together,
    plain decode every step, so utilization reads higher with speculation (while doing more)."""
    for name in ("Llama-3.1-8B", "Qwen2.5-7B", "Mixtral-8x7B"):
        rows = {r.key: r.metrics for r in scenarios(GPUS[gpu], MODELS[name])}
        plain, specd = rows["plain"].utilization_gpu, rows["speculative"].utilization_gpu
        if not (math.isnan(plain) or math.isnan(specd)):
            assert specd > plain, name


@pytest.mark.parametrize(("gpu", "model", "weights"), [
    ("H100 SXM", "Llama-3.1-8B", None), ("L4", "Llama-3.1-8B", None), ("L4", "Mistral-7B", None),
    ("H100 SXM", "Llama-3.1-70B", "fp8"), ("A100 80GB SXM", "Llama-3.1-70B", None),
])
def test_section_01s_rows_run_on_the_most_slots_that_fit(gpu, model, weights):
    """Page 04's batching rows and its day follow page 01's 64 slots where both modes fit the card,
    else the largest power of two that does (L4 + an 8B model, A100 + Llama-3.1-70B: setups whose rows
    used to read n/a); where even one slot cannot fit, 64 and the rows say so."""
    from sim.memory import memory_plan
    from sim.metrics import BATCH_SLOTS, batching_fits, fitting_batch_slots

    g, m = GPUS[gpu], MODELS[model]
    if weights:
        m = m.with_precision(weights, m.kv_dtype)
    slots, capacity = fitting_batch_slots(g, m)
    assert capacity.slots == slots and slots & (slots - 1) == 0 and 1 <= slots <= BATCH_SLOTS
    requests = sample_requests("anyscale", 1000)
    if not memory_plan(g, m, 1, int((requests.prompt_tokens + requests.output_tokens).max())).fits:
        # Not even one slot holds the workload's longest request (H100 + Llama-3.1-70B FP8 leaves
        # ~0.3 GiB of KV cache): 64 slots, and the rows say so rather than pricing it.
        assert slots == BATCH_SLOTS
        rows = {r.key: r.metrics for r in measure(scenario_runs(g, m))}
        assert np.isnan(rows["continuous"].goodput_rps) and np.isnan(rows["static"].goodput_rps)
        return
    if slots < BATCH_SLOTS:  # the next power of two up does not fit, in one mode or the other
        assert not all(batching_fits(simulate(g, m, requests, slots * 2, mode), g, m)
                       for mode in ("static", "continuous"))
    runs = scenario_runs(g, m)
    assert runs.slots == slots
    for run in (runs.static, runs.continuous):
        assert run.slots == slots and batching_fits(run, g, m)
    rows = {r.key: r.metrics for r in measure(runs)}
    assert np.isfinite(rows["continuous"].goodput_rps) and np.isfinite(rows["static"].goodput_rps)
    day = dashboard_day(g, m, flat_out=runs.flat_out)
    assert day.run.slots == slots


@given(st.floats(min_value=1e-9, max_value=1e9, allow_nan=False), st.booleans())
def test_scenario_rates_are_powers_of_two_inside_the_rate_range(x, up):
    """The scenario rows' arrival rates (``_pow2``) are powers of two that sim.batching accepts, each
    one of page 01's choices, however slow or fast the setup (the old clamp gave 0.01 and 10,000)."""
    from sim.batching import RATE_RANGE
    from sim.metrics import RATE_EXPONENTS, _pow2

    rate = _pow2(x, up)
    e = math.log2(rate)
    assert e == int(e) and RATE_EXPONENTS[0] <= e <= RATE_EXPONENTS[1]
    assert RATE_RANGE[0] <= rate <= RATE_RANGE[1]
    if 2.0 ** RATE_EXPONENTS[0] <= x <= 2.0 ** RATE_EXPONENTS[1]:
        assert (rate >= x) if up else (rate <= x)
        assert (rate / 2 < x) if up else (rate * 2 > x)


def test_a_row_that_did_not_run_says_whether_memory_or_positions_stopped_it():
    """GPT-J-6B (2,048 positions) on an A100 80GB: section 02's rows ask for longer requests than the
    model reads; Llama-3.1-8B on an L4: the long prompt's batch does not fit the card. A row that ran
    has no reason."""
    from sim.hardware import GPUS
    from sim.metrics import scenarios
    from sim.models import ALL_MODELS

    rows = {r.key: r for r in scenarios(GPUS["A100 80GB SXM"], ALL_MODELS["GPT-J-6B"])}
    assert {k for k, r in rows.items() if not r.metrics.ran} == {"reserved", "paged", "unchunked", "chunked"}
    assert all(r.blocked == ("" if r.metrics.ran else "positions") for r in rows.values())
    rows = {r.key: r for r in scenarios(GPUS["L4"], ALL_MODELS["Llama-3.1-8B"])}
    assert rows["chunked"].blocked == rows["unchunked"].blocked == "memory"
    assert not rows["chunked"].metrics.ran
