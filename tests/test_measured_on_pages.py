"""Measured runs on the model's own charts, with the model's error (ui.measured), pages 02-04."""

from __future__ import annotations

import itertools
import json

from tests.conftest import open_app


def _spec(at, key: str) -> dict:
    chart = next(c for c in at.get("plotly_chart") if key in c.proto.id)
    return json.loads(chart.proto.spec)


def _captions(at) -> str:
    return " ".join(c.value for c in at.caption)


def test_page02_card_chart_has_the_static_batch_runs_of_this_setup():
    at = open_app("app_pages/paging.py")
    assert not at.exception
    trace = next(t for t in _spec(at, "paging_card")["data"] if t.get("name", "").startswith("Measured"))
    assert trace["x"] == [1] and trace["y"] == [158.34]  # eag-01: SGLang, batch 1
    assert "eag-01" in trace["hovertemplate"][0] and "%" in trace["hovertemplate"][0]
    assert "eag-01" in _captions(at) and "t014-01" in _captions(at)
    at = open_app("app_pages/paging.py", {"gpu": "L40S"})
    assert not any(t.get("name", "").startswith("Measured") for t in _spec(at, "paging_card")["data"])
    assert "No measurement for this setup" in _captions(at)


def test_page04_names_the_runs_measured_on_this_setup_and_the_errors():
    at = open_app("app_pages/watch.py", {"weights": "fp8", "kv": "fp8"})
    assert not at.exception
    assert "tpo-01" in _captions(at)  # TensorRT-LLM FP8 offline on H100


def test_page03_measured_gains_carry_the_models_value_and_error():
    at = open_app("app_pages/speculative.py")
    assert not at.exception
    traces = [t for t in _spec(at, "spec_batch_chart")["data"] if t.get("name", "").startswith("measured")]
    assert len(traces) == 2
    assert all("model, EAGLE" in h and "%)" in h for t in traces for h in t["hovertemplate"])
    assert "The model's signed error at each point" in _captions(at)


def test_page03_shows_the_measured_gains_only_on_the_measured_setup():
    for params in ({"kv": "fp8"}, {"gpus": "2"}, {"weights": "fp8"}):
        at = open_app("app_pages/speculative.py", params)
        assert not at.exception
        traces = _spec(at, "spec_batch_chart")["data"]
        assert not [t for t in traces if t.get("name", "").startswith("measured")]


def _values(v) -> list[float]:
    """A trace's values: a list, or plotly's typed array ({"dtype", "bdata": base64})."""
    if isinstance(v, dict):
        import base64

        import numpy as np

        return np.frombuffer(base64.b64decode(v["bdata"]), dtype=np.dtype(v["dtype"])).tolist()
    return list(v)


def _named(at, key: str, prefix: str) -> list[dict]:
    return [t for t in _spec(at, key)["data"] if (t.get("name") or "").startswith(prefix)]


def test_page00_ttft_chart_draws_the_measured_ttft_with_the_models_error():
    from sim.measured import shipped_rows
    from sim.truth import predict

    at = open_app("app_pages/two_phases.py", {"gpu": "A100 80GB SXM", "model": "Llama-2-7B"})
    assert not at.exception
    (trace,) = _named(at, "phases_ttft", "Measured TTFT")
    row = next(r for r in shipped_rows() if r.id == "lmd-06")
    assert trace["x"] == [row.prompt_tokens] and trace["y"] == [row.value]  # 2,048 tokens, 139 ms
    err = predict(row).error
    assert "lmd-06" in trace["hovertemplate"][0] and f"{err:+.0%}" in trace["hovertemplate"][0]
    assert f"lmd-06 {err:+.0%}" in _captions(at)
    # Two TensorRT-LLM runs on H100 with FP8 weights and KV; none on the default setup.
    at = open_app("app_pages/two_phases.py", {"model": "Llama-2-7B", "weights": "fp8", "kv": "fp8"})
    (trace,) = _named(at, "phases_ttft", "Measured TTFT")
    assert sorted(trace["x"]) == [128, 2048]
    at = open_app("app_pages/two_phases.py")
    assert not _named(at, "phases_ttft", "Measured TTFT")
    # the default setup has a measured decode run (eag-01, on the roofline) but no TTFT: say which
    assert "No TTFT measurement for this setup" in _captions(at)


def test_page00_ttft_chart_follows_the_prompt_slider():
    at = open_app("app_pages/two_phases.py")
    (here,) = _named(at, "phases_ttft", "This prompt")
    (curve,) = _named(at, "phases_ttft", "Model")
    assert here["x"] == [2048]
    at.select_slider(key="phases_prompt").set_value(16384).run()
    (longer,) = _named(at, "phases_ttft", "This prompt")
    assert longer["x"] == [16384] and longer["y"][0] > 4 * here["y"][0]
    ys = _values(curve["y"])
    assert len(ys) > 10 and all(b >= a for a, b in itertools.pairwise(ys))  # never falls with the prompt


def test_page02_draws_offline_runs_at_the_batch_the_model_runs_them():
    from sim.hardware import GPUS
    from sim.measured import shipped_rows
    from sim.models import MODELS
    from sim.truth import offline_batch, predict

    at = open_app("app_pages/paging.py", {"weights": "fp8", "kv": "fp8"})
    assert not at.exception
    (measured,) = _named(at, "paging_card", "Measured offline")
    (model,) = _named(at, "paging_card", "Model, the same offline")
    row = next(r for r in shipped_rows() if r.id == "tpo-01")
    b = offline_batch(GPUS["H100 SXM"], MODELS["Llama-3.1-8B"].with_precision("fp8", "fp8"),
                      row.prompt_tokens, row.output_tokens, row.requests, "free")
    assert measured["x"] == [b] == model["x"] and measured["y"] == [row.value]
    assert model["y"][0] == predict(row).model_value
    assert "tpo-01" in measured["hovertemplate"][0] and "An offline run" in _captions(at)
    at = open_app("app_pages/paging.py")
    assert not _named(at, "paging_card", "Measured offline")


def test_page04_adds_a_row_per_measured_offline_run():
    at = open_app("app_pages/watch.py",
                  {"model": "Llama-3.1-70B", "weights": "fp8", "kv": "fp8", "gpus": "2"})
    assert not at.exception
    bars = _spec(at, "watch_bars")
    (cross,) = [t for t in bars["data"] if t.get("name") == "measured"]
    from sim.measured import shipped_rows
    from sim.truth import predict

    err = predict(next(r for r in shipped_rows() if r.id == "t017-02")).error
    assert cross["y"] == [f"Measured t017-02 offline (model {err:+.0%})"] and cross["x"] == [4390.53]
    assert cross["y"][0] in bars["layout"]["yaxis"]["categoryarray"]
    assert "last rows" in _captions(at)
    at = open_app("app_pages/watch.py")
    assert not [t for t in _spec(at, "watch_bars")["data"] if t.get("name") == "measured"]


def test_page05_names_the_online_runs_of_this_setup_and_why_they_are_not_drawn():
    at = open_app("app_pages/load.py", {"load_show_curves": "true"})  # the section with the curves
    assert not at.exception
    assert "t014-01" in _captions(at) and "not a p99 of this page's stream" in _captions(at)
    at = open_app("app_pages/load.py", {"gpu": "L40S", "load_show_curves": "true"})
    assert "No measurement for this setup" in _captions(at)


def test_page02_says_why_a_tensorrt_offline_run_sits_past_the_memory_limit():
    at = open_app("app_pages/paging.py", {"model": "Llama-3.1-70B", "weights": "fp8", "kv": "fp8"})
    assert not at.exception
    (measured,) = _named(at, "paging_card", "Measured offline")  # t017-01, TensorRT-LLM, one H100
    paged = next(t for t in _spec(at, "paging_card")["data"] if (t.get("name") or "").startswith("Paged"))
    assert measured["x"][0] > paged["x"][0]  # past the shaded limit
    assert "kv_cache_free_gpu_mem_fraction" in _captions(at)
    at = open_app("app_pages/paging.py", {"weights": "fp8", "kv": "fp8"})  # tpo-01 fits inside it
    assert "kv_cache_free_gpu_mem_fraction" not in _captions(at)


def test_gpt_fast_int4_run_is_priced_with_its_own_group_on_the_page():
    """gf-03 was stored by gpt-fast in INT4 groups of 32; page 00 prices it so (sim.truth's +16.8 %),
    not with the sidebar's AWQ group of 128 (+29 %), and its waterfall says so."""
    at = open_app("app_pages/two_phases.py",
                  {"gpu": "A100 80GB SXM", "model": "Llama-2-7B", "weights": "int4", "phases_batch": "1"})
    assert not at.exception
    text = _captions(at)
    assert "gf-03" in text and "INT4 in groups of 32 (5 bits a weight), not the sidebar's 128" in text
    hovers = [h for c in at.get("plotly_chart") for t in json.loads(c.proto.spec)["data"]
              for h in (t.get("hovertemplate") or []) if isinstance(h, str) and "gf-03" in h]
    assert hovers and all("+17%" in h and "INT4 in groups of 32" in h for h in hovers)
