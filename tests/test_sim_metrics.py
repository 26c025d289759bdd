"""sim.metrics: metric definitions on hand-built runs with known answers (V20, V21)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sim.cost import decode_step_cost, step_cost
from sim.hardware import GPUS
from sim.metrics import SLO, per_gpu_goodput, run_metrics
from sim.models import MODELS

H100, LLAMA8 = GPUS["H100 SXM"], MODELS["Llama-3.1-8B"]


def test_idle_gaps_lower_utilization_exactly_by_their_share():
    steps = decode_step_cost(H100, LLAMA8, np.ones(100), 128)
    busy = run_metrics(steps, useful_tokens=100)
    wall = busy.wall_s
    gappy = run_metrics(steps, useful_tokens=100, idle_s=wall)  # as much idle as busy time
    assert gappy.wall_s == pytest.approx(2 * wall)
    assert gappy.utilization_gpu == pytest.approx(busy.utilization_gpu / 2)
    assert gappy.goodput_tok_s == pytest.approx(busy.goodput_tok_s / 2)
    assert gappy.mfu == pytest.approx(busy.mfu / 2)


def test_v21_batch1_decode_utilization_near_one_mfu_a_quarter_percent():
    steps = decode_step_cost(H100, LLAMA8, np.ones(1000), 128)
    m = run_metrics(steps, useful_tokens=1000)
    assert m.utilization_gpu > 0.9
    assert m.mfu * 100 == pytest.approx(0.26, abs=0.05)
    assert m.throughput_tok_s == pytest.approx(158.34, rel=0.05)
    assert m.mbu == pytest.approx(0.76, abs=0.02)


def test_padding_lowers_goodput_not_utilization():
    steps = decode_step_cost(H100, LLAMA8, np.full(10, 8.0), 128)
    full = run_metrics(steps, useful_tokens=80, processed_tokens=80)
    padded = run_metrics(steps, useful_tokens=20, processed_tokens=80)
    assert padded.utilization_gpu == full.utilization_gpu
    assert padded.goodput_share == pytest.approx(0.25)
    assert padded.goodput_tok_s == pytest.approx(full.goodput_tok_s / 4)


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
    for share in (m.utilization_gpu, m.mfu, m.mbu, m.goodput_share):
        assert 0 <= share <= 1
    assert m.goodput_tok_s <= m.throughput_tok_s * (1 + 1e-12)
