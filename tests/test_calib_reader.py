"""calib.reader: a reader's parsed rows on the sidebar's setup."""

from __future__ import annotations

import pytest

from calib.reader import MAX_READER_ROWS, reader_rows
from sim.hardware import GPUS
from sim.models import MODELS
from sim.truth import RowError, predict

H200, LLAMA70 = GPUS["H200 SXM"], MODELS["Llama-3.1-70B"].with_precision("fp8", "fp8").with_tp(2)


def _row(**kw) -> dict[str, str]:
    base = dict(id="r", kind="tpot_ms", concurrency="8", prompt_tokens="512", output_tokens="128",
                value="20", unit="ms")
    return {**base, **kw}


def test_blank_gpu_and_model_run_on_the_sidebar_setup_at_its_precisions_and_gpu_count():
    got = reader_rows([_row()], H200, LLAMA70)
    gpu, model = got.setups["r"]
    assert gpu is H200 and model.name == "Llama-3.1-70B" and model.tp == 2
    assert (model.weight_dtype, model.kv_dtype) == ("fp8", "fp8")
    assert predict(got.rows[0], setup=got.setups["r"]).model_value > 0


def test_a_row_that_names_its_precision_keeps_it_and_named_presets_use_truth():
    got = reader_rows([_row(weights="bf16", kv="bf16", gpus="4"),
                       _row(id="named", gpu="H100 SXM", model="Llama-3.1-8B", gpus="1")], H200, LLAMA70)
    assert got.setups["r"][1].weight_dtype == "bf16" and got.setups["r"][1].tp == 4
    assert "named" not in got.setups  # priced by sim.truth from its own columns
    assert predict(got.rows[1]).model_value > 0


def test_duplicate_ids_are_made_unique_and_unknown_gpus_are_noted_not_priced():
    got = reader_rows([_row(), _row(), _row(id="x", gpu="TPU v9")], H200, LLAMA70)
    assert len({r.id for r in got.rows}) == 3
    assert any("TPU v9" in n for n in got.notes) or predict(got.rows[2]).model_value is None


def test_too_many_rows_and_bad_values_are_errors():
    with pytest.raises(RowError, match="at most"):
        reader_rows([_row(id=str(i)) for i in range(MAX_READER_ROWS + 1)], H200, LLAMA70)
    with pytest.raises(RowError, match="value"):
        reader_rows([_row(value="-3")], H200, LLAMA70)


def test_queued_sharegpt_runs_are_capped_so_one_paste_stays_cheap():
    """A queued ShareGPT run is simulated step by step: at most MAX_QUEUED_RUNS a file, each of at
    most MAX_QUEUED_REQUESTS requests and MAX_QUEUED_OUTPUT_TOKENS output tokens; the rest are shown
    with the reason, not priced."""
    from calib.reader import MAX_QUEUED_REQUESTS, MAX_QUEUED_RUNS, price
    from sim.cost import DEFAULT_ASSUMPTIONS

    queued = dict(kind="offline_tok_s", workload="sharegpt", requests="1000", prompt_tokens="200",
                  output_tokens="200", value="5000", unit="tok/s", concurrency="")
    rows = [_row(id=f"q{i}", **queued) for i in range(MAX_QUEUED_RUNS + 2)]
    rows.append(_row(id="big", **{**queued, "requests": str(MAX_QUEUED_REQUESTS + 1)}))
    rows.append(_row(id="long", **{**queued, "requests": "2000", "output_tokens": "251"}))
    rows.append(_row(id="fixed", **{**queued, "workload": "fixed"}))  # a closed form: not capped
    got = reader_rows(rows, H200, LLAMA70)
    assert sorted(got.reasons) == ["big", "long", f"q{MAX_QUEUED_RUNS}", f"q{MAX_QUEUED_RUNS + 1}"]
    assert "requests" in got.reasons["big"] and "output tokens" in got.reasons["long"]
    assert f"more than {MAX_QUEUED_RUNS} queued" in got.reasons[f"q{MAX_QUEUED_RUNS}"]
    preds = {p.row.id: p for p in price(got, DEFAULT_ASSUMPTIONS)}
    assert preds["q0"].model_value > 0 and preds["fixed"].model_value > 0
    assert preds["big"].model_value is None


def test_a_value_beyond_the_roofline_floor_is_refused_as_a_unit_slip():
    """A TPOT of 0.0071 'ms' (seconds typed into the ms column) was fitted, driving the assumptions to
    their bounds; it is 600x below the pure roofline floor for the setup, so it is shown, not priced.
    A plausible TPOT on the same setup is priced."""
    rows = [{"id": "secs", "kind": "tpot_ms", "concurrency": "1", "prompt_tokens": "128",
             "output_tokens": "256", "value": "0.0071", "unit": "ms"},
            {"id": "ok", "kind": "tpot_ms", "concurrency": "1", "prompt_tokens": "128",
             "output_tokens": "256", "value": "7.1", "unit": "ms"}]
    got = reader_rows(rows, GPUS["H100 SXM"], MODELS["Llama-3.1-8B"])
    assert "check the unit" in got.reasons["secs"] and "ok" not in got.reasons
