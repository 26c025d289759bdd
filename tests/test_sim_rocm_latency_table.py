"""A second source on MI300X: AMD's published vLLM latency table, run through ``sim.truth``.

ROCm/vllm ``docs/dev-docker/README.md`` (commit 040de12d) gives ``benchmark_latency.py`` times for
Llama-3.1-70B and -405B (AMD's FP8-KV checkpoints) on 8 x MI300X with TP8, vLLM v0.10.0 on ROCm
6.4.1: batch 1 to 128, 128 or 2,048 prompt tokens, 2,048 out. ``sim/data/published.csv`` holds them
as static-batch rows (batch x 2,048 / latency), and the sidebar summarises them on MI300X
(``sim.measured.published_summary``); the latency command sets no ``--kv-cache-dtype``, so the KV cache is
in the model's 16-bit dtype. The model is not fitted to them (they are not in measured.csv). They say
where the model holds on this card and where it does not (README, the ora-03 bullet): within 15 % at
batches up to 8 (9 % at most), and for 405B with 2,048-token prompts at every batch; with 128-token
prompts the engine's decode steps grow with the batch much faster than the model's, 40-61 % at batch
64-128.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sim.truth import parse_rows, predict_all

FIXTURE = Path(__file__).resolve().parents[1] / "sim" / "data" / "published.csv"
ROWS = parse_rows(FIXTURE.read_text(encoding="utf-8"))
PREDICTED = {p.row.id: p for p in predict_all(ROWS)}

#: The published latencies, seconds: (model, prompt tokens) -> batch 1, 2, 4, ..., 128.
PUBLISHED_S = {
    ("Llama-3.1-70B", 128): (17.236, 18.057, 18.450, 19.677, 22.072, 24.932, 33.287, 46.484),
    ("Llama-3.1-70B", 2048): (17.500, 18.055, 18.858, 20.161, 22.347, 25.966, 35.324, 52.394),
    ("Llama-3.1-405B", 128): (48.453, 49.268, 51.136, 54.226, 57.274, 68.901, 88.631, 117.027),
    ("Llama-3.1-405B", 2048): (48.362, 49.121, 52.347, 54.471, 57.841, 70.538, 91.452, 125.471),
}
BATCHES = (1, 2, 4, 8, 16, 32, 64, 128)

#: Where the model is more than 25 % above the engine: short prompts at batch 64 and up. Strict: the
#: test fails the day the model reaches them. (Until 2026-12-06, with one all-reduce latency for every
#: GPU count, batch 32 with short prompts and 70B's longest run were past 25 % too.)
GAP = {"rocm-405b-128-b64", "rocm-405b-128-b128", "rocm-70b-128-b64", "rocm-70b-128-b128"}
GAP_REASON = ("AMD's vLLM v0.10.0 on MI300X: at larger batches each decode step grows with the batch "
              "far faster than the model's (70B with 128-token prompts: about 8.4 ms at batch 1 to "
              "22.7 ms at 128, and about as much with 2,048-token prompts): about 0.1 ms a sequence, "
              "where the model's host time is 4.3 us a sequence for every engine")


def test_the_fixture_is_the_published_table():
    assert len(ROWS) == 32
    for (model, prompt), secs in PUBLISHED_S.items():
        for batch, s in zip(BATCHES, secs, strict=True):
            tag = "405b" if "405" in model else "70b"
            row = next(r for r in ROWS if r.id == f"rocm-{tag}-{prompt}-b{batch}")
            assert (row.gpu, row.gpus, row.model, row.weights, row.kv) == ("MI300X", 8, model, "fp8", "bf16")
            assert (row.batch, row.prompt_tokens, row.output_tokens) == (batch, prompt, 2048)
            assert row.value == pytest.approx(batch * 2048 / s, abs=0.01)


@pytest.mark.parametrize("rid", sorted(r.id for r in ROWS if r.batch <= 8))
def test_batches_up_to_8_within_15_percent(rid):
    assert abs(PREDICTED[rid].error) <= 0.15, PREDICTED[rid].error


@pytest.mark.parametrize("rid", sorted(r.id for r in ROWS if r.model == "Llama-3.1-405B"
                                       and r.prompt_tokens == 2048))
def test_405b_with_long_prompts_within_15_percent_at_every_batch(rid):
    assert abs(PREDICTED[rid].error) <= 0.15, PREDICTED[rid].error


def test_where_the_model_is_below_this_engine_it_is_by_at_most_10_percent():
    """The model is slowest against this engine where a step is most all-reduce latency (70B at batch
    1: 160 all-reduces of 2(n - 1) = 14 hops, 22 us each on 8 GPUs, 39 % of the model's step; 44 % with
    the kernels' fixed cost and bytes), and there by 9 %: vLLM v0.10.0 ran its own all-reduce kernel
    on ROCm, quicker than the latency the model fits for every engine. A held-out miss that the
    n-dependent latency of 2026-12-06 made: with one latency for every GPU count the model was within
    1 % there, and the optimistic side of every run. With short prompts from batch 32 the model is
    above the engine (the decode gap)."""
    worst = min(PREDICTED.values(), key=lambda p: p.error)
    assert -0.10 <= worst.error < -0.05 and worst.row.id == "rocm-70b-128-b1"
    assert all(p.error > 0.15 for p in PREDICTED.values() if p.row.batch >= 32 and p.row.prompt_tokens == 128)


@pytest.mark.parametrize("rid", [pytest.param(r.id, marks=pytest.mark.xfail(strict=True, reason=GAP_REASON))
                                 if r.id in GAP else r.id for r in sorted(ROWS, key=lambda r: r.id)
                                 if r.batch > 8])
def test_larger_batches_within_25_percent(rid):
    assert abs(PREDICTED[rid].error) <= 0.25, PREDICTED[rid].error


def test_the_sidebars_summary_is_these_rows():
    """``sim.measured.published_summary`` (the sidebar's note on MI300X) summarises exactly these
    rows at the fitted defaults, and says nothing for a GPU with no published runs."""
    from sim.hardware import GPUS
    from sim.measured import SMALL_BATCH, published_rows, published_summary

    assert [r.id for r in published_rows()] == [r.id for r in ROWS]
    s = published_summary("MI300X")
    small = [abs(p.error) for p in PREDICTED.values() if p.row.batch <= SMALL_BATCH]
    large = [p.error for p in PREDICTED.values() if p.row.batch > SMALL_BATCH]
    assert s.runs == 32 and s.batches == (1, 128)
    assert s.small_max_abs_error == pytest.approx(max(small))
    assert s.large_error_range == pytest.approx((min(large), max(large)))
    assert s.worst.id == max(PREDICTED.values(), key=lambda p: abs(p.error)).row.id == "rocm-70b-128-b128"
    assert all(published_summary(name) is None for name in GPUS if name != "MI300X")
