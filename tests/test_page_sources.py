"""The Sources page through AppTest: every preset GPU, price and model is listed, with its source."""

from __future__ import annotations

from sim.hardware import GPUS
from sim.models import ALL_MODELS
from tests.conftest import open_app
from ui.sources import GPU_PRICES


def test_every_gpu_price_and_model_is_listed_with_its_source():
    at = open_app("app_pages/sources.py")
    assert not at.exception
    gpus, prices, models = (d.value for d in at.dataframe)
    assert list(gpus["GPU"]) == list(GPUS)
    assert list(prices["GPU"]) == list(GPU_PRICES) and prices["$ per GPU-hour"].gt(0).all()
    listed = " ".join(m.value for m in at.markdown)
    assert all(g.source in listed for g in GPUS.values())  # the sources, under the tables
    assert all(source.replace("$", "\\$") in listed for _, source in GPU_PRICES.values())  # $ escaped
    assert list(models["Model"]) == list(ALL_MODELS) and models["Source"].str.len().min() > 0
    # a GPU without FP8 tensor cores has no FP8 rate (a dash, not a number or "None")
    no_fp8 = [g.name for g in GPUS.values() if not g.fp8_flops]
    assert no_fp8 and (gpus.set_index("GPU").loc[no_fp8, "FP8 dense TFLOP/s"] == "–").all()


def test_goodput_keeps_one_sense():
    """'Goodput' is the rate of the requests that meet the targets (vLLM's benchmark); DistServe's
    per-GPU goodput, the highest rate that meets them, is capacity per GPU. No page calls a capacity
    'goodput per GPU' (page 05's disaggregation did, beside its goodput in the other sense)."""
    from pathlib import Path

    from ui.glossary import define

    assert "capacity per GPU" in define("Goodput") and "per-GPU goodput" in define("Capacity")
    root = Path(__file__).resolve().parents[1]
    for path in [*root.glob("app_pages/*.py"), *root.glob("ui/*.py")]:
        assert "goodput per gpu" not in path.read_text().lower(), path.name


def test_the_glossarys_ridge_and_knee_hold_on_every_preset():
    """The glossary says the pages call a step compute- or memory-bound by the knee, which sits below
    the ridge on every preset (198 against 295 FLOP/B on an H100): checked at both math precisions."""
    from sim.hardware import GPUS
    from sim.models import MODELS
    from sim.phases import achievable_knee
    from ui.glossary import define

    assert "198 against 295 FLOP/B on an H100" in define("Ridge point")
    m = MODELS["Llama-3.1-8B"]
    for gpu in GPUS.values():
        for dtype in ("bf16", "fp8"):
            model = m.with_precision(dtype, "bf16")
            assert achievable_knee(gpu, model) < gpu.ridge_point(model.compute_precision)
    h100 = GPUS["H100 SXM"]
    assert (round(achievable_knee(h100, m)), round(h100.ridge_point("bf16"))) == (198, 295)


def test_mfu_names_the_peak_it_is_measured_against():
    """MFU divides by the spec peak of the precision the weights' GEMMs run in (StepCost.peak_flops):
    FP8 weights on an H100 against the FP8 peak, weight-only INT8 against BF16's. The glossary says so,
    so an FP8 step's lower MFU for the same FLOPs is not read as less work."""
    from sim.cost import decode_step_cost
    from sim.models import MODELS
    from ui.glossary import define

    h100, llama = GPUS["H100 SXM"], MODELS["Llama-3.1-8B"]
    for weights, peak in (("bf16", "bf16"), ("fp8", "fp8"), ("int8", "bf16")):
        cost = decode_step_cost(h100, llama.with_precision(weights, "bf16"), 1, 512)
        assert cost.peak_flops == h100.peak_flops(peak)
    text = define("MFU")
    assert "FP8 weights are measured against a peak twice BF16's" in text
