"""The model against every measured row of measured.csv (MEASURED.md section 1): ../shared's copy
where the checkout has it beside it, else the copy the app ships (sim/data/measured.csv, the same rows:
test_the_shipped_copy_is_the_shared_file), so that no machine skips these tests."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

from sim import truth
from sim.cost import DEFAULT_ASSUMPTIONS
from sim.measured import DATA as SHIPPED

SHARED = Path(__file__).resolve().parents[2] / "shared" / "measured.csv"
MEASURED = SHARED if SHARED.exists() else SHIPPED
ROWS = truth.parse_rows(MEASURED.read_text(encoding="utf-8"))
#: Per-row tolerance: the issue's 90th-percentile target.
TOLERANCE = 0.35
#: Rows the model misses by more than that, and what it leaves out. Each is a known gap, not a pass:
#: the test fails the day the model reaches them (strict xfail).
KNOWN_GAPS = {
    "trt05-01": "TensorRT-LLM v0.5's FP8 ran at about BF16 speed in this release's rows; the model "
                "prices FP8 weights as FP8.",
    "trtha-01": "the same TensorRT-LLM v0.5 FP8 effect: 5.4 ms a token is the BF16 weight-read time.",
    "ora-03": "vLLM on ROCm (2024) at batch 256, Llama-3.1-405B FP8 on 8 x MI300X: the row's own "
              "batch 64/128/256 points (1184, 1585, 1846 tok/s) flatten well below the FP8 rate the "
              "model allows there (compute_eff of MI300X's best measured FP8 GEMM, itself 47 % of peak): "
              "their latencies give about the BF16 rate, and priced as FP8 weights with BF16 math "
              "the row is within 12 % (test_ora_03s_gap_is_fp8_weights_at_bf16_math). AMD's own "
              "2025 vLLM table on the card shows the same decode gap at batch 64 and up with short "
              "prompts (tests/test_sim_rocm_latency_table.py), and this 2024 engine is already 12 % "
              "slower than the model at batch 1, where AMD's 2025 one is within 5 % "
              "(tests/test_sim_oracle_mi300x_sweep.py).",
    "goss-01": "gpt-oss-120b on one H100 barely fits: after vLLM's padded MXFP4 experts (65.9 GiB) "
               "and its start-up reserve the model leaves 0.57 GiB of KV cache, and the queued run's "
               "throughput follows that room (1.6 GiB reproduces its throughput and mean TTFT, not its "
               "TPOT); vLLM 0.10.1 logged -2.14 GiB for this setup. The same page's TP2 and TP4 runs, "
               "with room to spare, land at +28 % and +25 % (tests/test_sim_engine_memory.py).",
}
ENGINE_KINDS = ("static_batch_tok_s", "ttft_ms", "tpot_ms", "offline_tok_s")


def _row_params():
    for row in ROWS:
        marks = []
        pred = truth.predict(row)
        if pred.model_value is None:
            marks.append(pytest.mark.skip(reason=f"cannot express: {pred.reason}"))
        elif row.id in KNOWN_GAPS:
            marks.append(pytest.mark.xfail(strict=True, reason=KNOWN_GAPS[row.id]))
        yield pytest.param(row, id=row.id, marks=marks)



@pytest.mark.parametrize("row", list(_row_params()))
def test_row_within_tolerance(row):
    pred = truth.predict(row)
    if row.kind in ENGINE_KINDS:
        assert abs(pred.error) <= TOLERANCE, f"{row.id}: {pred.model_value:.4g} vs {row.value:g}"
    else:
        # Microbenchmarks are the GPUs' ceilings (the presets' are read from these rows): the model's
        # best-shape GEMM and STREAM rates are theirs; serving kernels run at a share of them.
        assert pred.model_value == pytest.approx(row.value, rel=1e-3)


def test_every_row_is_read_and_the_gaps_are_real():
    assert len(ROWS) == 44
    for rid in KNOWN_GAPS:
        pred = truth.predict(next(r for r in ROWS if r.id == rid))
        assert abs(pred.error) > TOLERANCE


def test_targets_per_kind():
    """The issue's targets (median |error| <= 15 %, p90 <= 35 % per kind) over the engine rows the
    model expresses, the named gaps set aside: every kind meets both."""
    preds = [p for p in truth.predict_all(ROWS) if p.row.id not in KNOWN_GAPS]
    by_kind = {s.kind: s for s in truth.summarize(preds)}
    for kind in ENGINE_KINDS:
        assert by_kind[kind].median_abs_error <= 0.15, by_kind[kind]
        assert by_kind[kind].p90_abs_error <= 0.35, by_kind[kind]


def test_targets_per_kind_with_every_row():
    """Issue 10's "done when": with every row in (the README's table), every kind meets both targets.
    The static batches' p90 is 32.9 %: numpy's linear 90th percentile of 19 rows sits a fifth of the
    way from the 17th error (lmd-02, +32 %) to the 18th (ora-03, +36 %). Until 2026-12-06, with one
    all-reduce latency for every GPU count, it was 35.03 %."""
    by_kind = {s.kind: s for s in truth.summarize(truth.predict_all(ROWS))}
    for kind in ENGINE_KINDS:
        assert by_kind[kind].expressed == by_kind[kind].rows, by_kind[kind]
        assert by_kind[kind].median_abs_error <= 0.15, by_kind[kind]
        assert by_kind[kind].p90_abs_error <= 0.35, by_kind[kind]


def _tp_or_moe(row) -> bool:
    return row.gpus > 1 or bool(truth.ALL_MODELS[row.model].n_experts)


def test_tensor_parallel_and_mixture_rows_meet_the_targets():
    """Issue 11's target: the tensor-parallel and mixture-of-experts rows, every one of them, meet
    median |error| <= 15 % and p90 <= 35 % per kind."""
    preds = [p for p in truth.predict_all(ROWS) if p.row.kind in ENGINE_KINDS and _tp_or_moe(p.row)]
    assert {p.row.id for p in preds} >= {"gf-06", "gf-12", "t017-02", "tpo-05", "goss-01", "tb1-01",
                                          "trt05-05", "t014-03"}
    for s in truth.summarize(preds):
        assert s.median_abs_error <= 0.15, s
        assert s.p90_abs_error <= 0.35, s


def test_cli_prints_every_row(capsys):
    assert truth.main([str(MEASURED)]) == 0
    out = capsys.readouterr().out
    assert all(r.id in out for r in ROWS)
    assert "median |error|" in out
    assert "cannot: " not in out  # every row of measured.csv is expressed (MoE and MLA included)


@pytest.mark.parametrize("text, message", [
    ("id,gpu\n", "missing column"),
    ("id,gpu,gpus,model,weights,kv,kind,value\nx,H100 SXM,1,Llama-3.1-8B,bf16,bf16,ttft_ms,abc\n",
     "value = 'abc' is not a number"),
    ("id,gpu,gpus,model,weights,kv,kind,value\nx,H100 SXM,1,Llama-3.1-8B,bf16,bf16,made_up,1\n",
     "kind = 'made_up'"),
    ("id,gpu,gpus,model,weights,kv,kind,value\nx,H100 SXM,1.5,Llama-3.1-8B,bf16,bf16,ttft_ms,1\n",
     "gpus = '1.5'"),
    ("id,gpu,gpus,model,weights,kv,kind,value\nx,H100 SXM,1,Llama-3.1-8B,bf16,bf16,ttft_ms,nan\n",
     "finite number"),
])
def test_bad_files_name_the_row_and_field(text, message):
    with pytest.raises(truth.RowError, match=message):
        truth.parse_rows(text)


def test_unknown_setups_are_named_not_guessed():
    text = ("id,gpu,gpus,model,weights,kv,kind,value,prompt_tokens,output_tokens\n"
            "a,TPU v9,1,Llama-3.1-8B,bf16,bf16,ttft_ms,10,128,1\n"
            "b,H100 SXM,1,Made-Up-9B,bf16,bf16,ttft_ms,10,128,1\n"
            "c,H100 SXM,1,Llama-3.1-8B,fp4,bf16,ttft_ms,10,128,1\n")
    reasons = [p.reason for p in truth.predict_all(truth.parse_rows(text))]
    assert "not a preset" in reasons[0] and "not loadable" in reasons[1] and "fp4" in reasons[2]


def test_the_defaults_are_the_calibration_fit():
    """scripts/calibrate.py's least-squares fit reproduces the default assumptions (no drift), run as
    the script runs it: from the defaults and from its other starts, keeping the lowest loss (from the
    defaults alone it could not see a lower minimum elsewhere)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
    import calibrate

    fitted, _ = calibrate.fit(ROWS)
    d = DEFAULT_ASSUMPTIONS
    assert fitted.compute_eff == pytest.approx(d.compute_eff, abs=0.01)
    assert fitted.memory_eff == pytest.approx(d.memory_eff, abs=0.01)
    for name in ("host_overhead_s", "kernel_launch_s", "graph_kernel_s", "allreduce_hop_s",
                 "sequence_host_s"):
        assert math.isclose(getattr(fitted, name), getattr(d, name), rel_tol=0.05, abs_tol=1e-7), name


def test_the_shipped_copy_is_the_shared_file():
    """The app ships sim/data/measured.csv (a deployed app has no ../shared): it must be the same rows."""
    from sim.measured import DATA, shipped_rows

    assert len(shipped_rows()) > 40
    assert [r.id for r in shipped_rows()] == [r.id for r in ROWS]
    if SHARED.exists():  # beside a checkout in ../shared: byte for byte the same file
        assert DATA.read_text(encoding="utf-8") == SHARED.read_text(encoding="utf-8")


def test_gpt_fast_int4_rows_are_priced_with_its_group_of_32():
    """MEASURED.md: int4 is weight-only, group 32 in gpt-fast; other engines' INT4 keeps AWQ's 128."""
    rows = {r.id: r for r in ROWS}
    _, model = truth.row_setup(rows["gf-03"])
    assert model.int4_group == 32 and model.weight_bytes_per_element * 8 == pytest.approx(5.0)
    assert truth.int4_group_for("vLLM v0.10.2") == 128
    assert truth.predict(rows["gf-03"]).error == pytest.approx(0.168, abs=0.01)


def test_an_offline_run_decodes_at_most_its_engines_cap():
    """A vLLM offline run (the 'total' policy) decodes at most vLLM's max_num_seqs for the GPU, as the
    ShareGPT path and pages 02, 04 and 05 do; TensorRT-LLM's rows keep its 2,048."""
    from sim.hardware import GPUS
    from sim.models import MODELS

    small = MODELS["Llama-3.2-1B"]
    assert truth.offline_batch(GPUS["H100 SXM"], small, 128, 128, 5000, "total") == 1024
    assert truth.offline_batch(GPUS["A100 80GB SXM"], small, 128, 128, 5000, "total") == 256
    assert truth.offline_batch(GPUS["H100 SXM"], small, 128, 128, 5000, "free") == truth.MAX_NUM_SEQS


def test_ora_03s_gap_is_fp8_weights_at_bf16_math():
    """The README's explanation of ora-03 (+36 %): its own batch 64 -> 256 latencies give about
    450-480 TFLOP/s a GPU of math, the model's BF16 rate on an MI300X. Priced as FP8 storage with BF16
    math (INT8 weight-only: the same bytes a weight) it lands within 12 % (-11 %), and the bandwidth-bound
    batch-1 row from the same source does not move; TensorRT-LLM's FP8 rows need FP8 math."""
    import dataclasses

    from sim.truth import parse_rows, predict

    shipped = Path(truth.__file__).parent / "data" / "measured.csv"  # the app's copy of shared/measured.csv
    rows = {r.id: r for r in parse_rows(shipped.read_text(encoding="utf-8"))}

    def err(rid: str, weights: str | None = None) -> float:
        row = rows[rid] if weights is None else dataclasses.replace(rows[rid], weights=weights)
        return predict(row).error

    assert err("ora-03") > 0.35 and abs(err("ora-03", "int8")) < 0.12
    assert abs(err("ora-01", "int8") - err("ora-01")) < 0.01
    for rid in ("t017-02", "t017-07", "tpo-01"):
        assert err(rid, "int8") < err(rid) - 0.15, rid


def test_the_readmes_table_is_what_sim_truth_prints():
    """README's measured-row table (between its truth markers) is `python -m sim.truth --markdown` on
    the shipped measured.csv, so a change of the model that moves a row moves the README too."""
    shipped = Path(truth.__file__).parent / "data" / "measured.csv"
    table = truth.format_markdown(truth.predict_all(truth.parse_rows(shipped.read_text(encoding="utf-8"))))
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    between = readme.split("<!-- truth:start -->", 1)[1].split("<!-- truth:end -->", 1)[0]
    assert between.strip() == table.strip()
    assert "e+" not in table


@pytest.mark.parametrize("prompt", [512, 2048, 8192, 20000, 60000])
def test_an_offline_runs_prefill_is_priced_by_its_prompts_chunks(prompt):
    """An offline run's full prefill steps are priced on their sequences' sums: each chunk reads its
    cached tokens once (K = c + q), as one prompt's TTFT does. A prompt of a step or more costs what
    its chunks cost alone (``prefill_time_s``: the same chunks on an H100); shorter prompts share a
    step's fixed costs. The offline prefill had read every prompt token's whole cached context, as a
    decode token does: a 20,000-token prompt came to 5.3 s instead of 0.52."""
    gpu, model = truth.GPUS["H100 SXM"], truth.ALL_MODELS["Llama-3.1-8B"].with_precision("fp8", "fp8")
    share = truth._prefill_per_prompt_s(gpu, model, prompt, DEFAULT_ASSUMPTIONS)
    alone = truth.prefill_time_s(gpu, model, prompt)
    if prompt >= truth.MAX_BATCHED_TOKENS:
        assert share == pytest.approx(alone, rel=0.01)
    else:
        assert 0.75 * alone < share <= alone
