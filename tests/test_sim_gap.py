"""The gap from the roofline floor to the estimate, assumption by assumption (sim.gap)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim import gap
from sim.cost import DEFAULT_ASSUMPTIONS, Assumptions, decode_step_cost, prefill_cost
from sim.hardware import GPUS
from sim.models import ALL_MODELS, MODELS

H100 = GPUS["H100 SXM"]
LLAMA8 = MODELS["Llama-3.1-8B"]


def test_decode_gap_at_the_measured_point():
    """Llama-3.1-8B batch 1 on an H100: the floor is the weight read at spec bandwidth (4.48 ms, the
    embedding table gathered); the estimate is the model's 7.09 ms; SGLang measured 6.32 ms."""
    g = gap.explain_decode(H100, LLAMA8, 1, 128)
    assert g.floor_s * 1e3 == pytest.approx(4.49, abs=0.02)
    assert g.estimate_s == pytest.approx(float(decode_step_cost(H100, LLAMA8, 1, 128).time_s))
    assert list(g.steps_s) == list(gap.STAGES[1:])
    assert sum(g.steps_s.values()) == pytest.approx(g.estimate_s - g.floor_s)
    assert sum(g.shares().values()) == pytest.approx(1.0)
    s = g.steps_s
    # Batch-1 decode: bandwidth and the fixed costs explain the gap; math and KV barely matter.
    assert s["sustained bandwidth"] > 0.4e-3 and s["kernel and host costs"] > 0.8e-3
    assert s["compute efficiency"] == pytest.approx(0, abs=1e-9)
    assert s["KV-cache reads"] < 0.05e-3


def test_prefill_gap_is_math():
    g = gap.explain_prefill(H100, LLAMA8, 8192)
    assert g.estimate_s == pytest.approx(float(prefill_cost(H100, LLAMA8, 8192).time_s))
    assert max(g.steps_s, key=g.steps_s.get) == "compute efficiency"


@settings(max_examples=50, deadline=None)
@given(st.sampled_from(list(GPUS.values())), st.sampled_from(list(ALL_MODELS.values())),
       st.integers(1, 1024), st.integers(0, 32768))
def test_every_stage_adds_time_and_the_last_is_the_estimate(gpu, model, batch, context):
    g = gap.explain_decode(gpu, model, batch, context)
    assert all(b >= a * (1 - 1e-12) for a, b in zip(g.times_s, g.times_s[1:], strict=False))
    assert g.estimate_s == pytest.approx(float(decode_step_cost(gpu, model, batch, context).time_s),
                                         rel=1e-12)


@pytest.mark.parametrize("n", [2, 4, 8])
def test_tensor_parallel_communication_is_the_last_bar(n):
    """On n GPUs the all-reduces get their own bar: the step's comm time, and nothing before it."""
    model = MODELS["Llama-3.1-70B"].with_tp(n)
    g = gap.explain_decode(H100, model, 8, 1024)
    cost = decode_step_cost(H100, model, 8, 1024)
    assert g.steps_s["communication (TP)"] == pytest.approx(float(cost.comm_time_s), rel=1e-9)
    # 2 a layer, each at least its 2(n - 1) hops of latency
    assert g.steps_s["communication (TP)"] > 2 * 80 * 2 * (n - 1) * DEFAULT_ASSUMPTIONS.allreduce_hop_s
    assert g.estimate_s == pytest.approx(float(cost.time_s), rel=1e-12)
    assert gap.explain_decode(H100, LLAMA8, 8, 1024).steps_s["communication (TP)"] == 0.0


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(list(GPUS.values())), st.booleans(), st.floats(0.3, 1.0), st.floats(0.5, 1.0),
       st.integers(1, 512), st.integers(1, 8192))
def test_stages_add_up_for_any_assumptions_with_or_without_ceilings(gpu, ceilings, eta_c, eta_m,
                                                                    batch, prompt):
    """The stages price with the caller's own ceilings: every bar is >= 0 and the last is the
    estimate, with the efficiencies as shares of the microbenchmarks or of the spec peaks."""
    a = Assumptions(compute_eff=eta_c, memory_eff=eta_m, measured_ceilings=ceilings)
    decode = (gap.explain_decode(gpu, LLAMA8, batch, 1024, a), decode_step_cost(gpu, LLAMA8, batch, 1024, a))
    prefill = (gap.explain_prefill(gpu, LLAMA8, prompt, a), prefill_cost(gpu, LLAMA8, prompt, assumptions=a))
    for g, cost in (decode, prefill):
        assert all(b >= x * (1 - 1e-12) for x, b in zip(g.times_s, g.times_s[1:], strict=False))
        assert g.estimate_s == pytest.approx(float(cost.time_s), rel=1e-12)
