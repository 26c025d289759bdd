"""calib.fit: the one fit behind scripts/calibrate.py and the "Your measurements" panel."""

from __future__ import annotations

import dataclasses

import pytest

from calib import fit as cf
from sim.cost import DEFAULT_ASSUMPTIONS
from sim.hardware import GPUS
from sim.models import MODELS
from sim.truth import Row, predict

#: Assumptions the synthetic rows are generated with (all inside the fit's bounds, none at a bound).
TRUE = dataclasses.replace(DEFAULT_ASSUMPTIONS, compute_eff=0.62, memory_eff=0.78, host_overhead_s=0.21e-3,
                           graph_kernel_s=1.7e-6, allreduce_hop_s=2.3e-6)


def _row(rid, kind, *, gpus=1, model="Llama-3.1-8B", batch=None, concurrency=None, prompt=None,
         output=None, requests=None, value=1.0) -> Row:
    return Row(id=rid, gpu="H100 SXM", gpus=gpus, model=model, weights="bf16", kv="bf16", engine="synthetic",
               kind=kind, batch=batch, concurrency=concurrency, qps=None, requests=requests, workload="fixed",
               prompt_tokens=prompt, output_tokens=output, value=value, unit="")


def _synthetic() -> list[Row]:
    """Rows the model itself generates at TRUE: batch-1 to batch-256 decode, prefills, online runs,
    and tensor-parallel decode (which the all-reduce latency decides)."""
    shapes = [_row(f"s{b}", "static_batch_tok_s", batch=b, prompt=128, output=64)
              for b in (1, 4, 16, 64, 256)]
    shapes += [_row(f"t{p}", "ttft_ms", prompt=p, output=1) for p in (256, 2048, 8192)]
    shapes += [_row(f"c{c}", "tpot_ms", concurrency=c, prompt=512, output=128) for c in (1, 32)]
    shapes += [_row(f"tp{n}", "static_batch_tok_s", gpus=n, model="Llama-3.1-70B", batch=1, prompt=128,
                    output=64) for n in (2, 4, 8)]
    return [dataclasses.replace(r, value=predict(r, TRUE).model_value) for r in shapes]


NAMES = ("compute_eff", "memory_eff", "host_overhead_s", "graph_kernel_s", "allreduce_hop_s")


def test_the_fit_recovers_known_assumptions_within_two_percent():
    result = cf.fit(_synthetic(), names=NAMES)
    for name in NAMES:
        assert getattr(result.assumptions, name) == pytest.approx(getattr(TRUE, name), rel=0.02), name
    assert result.rms_log_error < 0.01
    assert max(abs(p.error) for p in result.after) < 0.01 < max(abs(p.error) for p in result.before)


def test_a_prior_keeps_what_the_rows_cannot_decide():
    """One batch-1 decode row says nothing about the all-reduce (one GPU) or the compute
    efficiency: with the prior those stay at their start, and the row is still matched."""
    row = _synthetic()[0]
    measured = dataclasses.replace(row, value=row.value * 0.8)  # a slower engine than TRUE
    result = cf.fit([measured], names=cf.PARAM_NAMES, prior_weight=0.05)
    a = result.assumptions
    assert a.allreduce_hop_s == pytest.approx(DEFAULT_ASSUMPTIONS.allreduce_hop_s, rel=1e-3)
    assert a.compute_eff == pytest.approx(DEFAULT_ASSUMPTIONS.compute_eff, rel=0.05)
    assert abs(result.after[0].error) < abs(result.before[0].error)


def test_rows_for_a_setup_that_is_not_a_preset_fit_through_setups():
    gpu = dataclasses.replace(GPUS["H100 SXM"], name="My card")
    row = dataclasses.replace(_synthetic()[0], id="mine", gpu="")
    assert predict(row).model_value is None  # no preset named ""
    start = dataclasses.replace(TRUE, memory_eff=0.6)
    result = cf.fit([row], start, names=("memory_eff",), setups={"mine": (gpu, MODELS["Llama-3.1-8B"])})
    assert result.assumptions.memory_eff == pytest.approx(TRUE.memory_eff, rel=0.02)


def test_nothing_to_fit_and_unknown_names_are_errors():
    with pytest.raises(ValueError, match="nothing to fit"):
        cf.fit([dataclasses.replace(_synthetic()[0], gpu="TPU v9")])
    with pytest.raises(ValueError, match="not a fitted assumption"):
        cf.fit(_synthetic()[:1], names=("peak_flops",))
