"""Measured runs on the model's own charts, with the model's error (ui.measured), pages 02-04."""

from __future__ import annotations

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
