"""The page before the sidebar: on a rerun the entrypoint reads the setup from the sidebar widgets'
state (``ui.setup.setup_from_state``), draws the page, then the sidebar. The setup it read must be
the one the sidebar then draws, for every kind of setup; where it is not, the page is drawn again
with the sidebar's, and the session goes back to drawing the sidebar first."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st_

import ui.setup
from sim.hardware import GPUS
from sim.models import ALL_MODELS, KV_DTYPES, WEIGHT_DTYPES
from tests.conftest import open_app
from ui.setup import CUSTOM, EXPERT_LAYOUTS, GPU_COUNTS


@pytest.fixture
def reads(monkeypatch):
    """What ``setup_from_state`` answered in each run (None: the sidebar was drawn first)."""
    answers: list = []
    real = ui.setup.setup_from_state

    def recording():
        answers.append(real())
        return answers[-1]

    monkeypatch.setattr(ui.setup, "setup_from_state", recording)
    return answers


def _same(a, b) -> bool:
    return (repr(a), a.price_per_gpu_hour) == (repr(b), b.price_per_gpu_hour)


def test_a_first_run_draws_the_sidebar_first_and_a_rerun_the_page_first(reads):
    at = open_app()
    assert reads == [None]  # the values are in the URL until the sidebar's widgets read them
    at.run()
    assert reads[-1] is not None and _same(reads[-1], at.session_state["_setup"])


SETUPS = [
    {},
    {"gpu": "L4", "model": "Llama-3.2-1B"},
    {"gpu": "H200 SXM", "model": "Qwen3-30B-A3B", "gpus": "2", "experts": EXPERT_LAYOUTS[1], "skew": "0.5"},
    {"gpu": "MI300X", "model": "gpt-oss-20b", "weights": "mxfp4"},
    {"gpu": "H100 SXM", "model": "Llama-3.1-70B", "gpus": "4", "kv": "fp8", "price": "3.5"},
    {"gpu": "A100 80GB SXM", "model": "Llama-3.1-8B", "gpus": "8"},  # more GPUs than its heads allow
    {"gpu": CUSTOM, "custom_tflops": "500", "custom_tbps": "2.5", "custom_gb": "48"},
    {"compute_eff": "0.5", "memory_eff": "0.6", "overhead_us": "100", "graph_us": "3", "launch_us": "8"},
]


@pytest.mark.parametrize("params", SETUPS,
                         ids=lambda p: ",".join(f"{k}={v}" for k, v in p.items()) or "defaults")
def test_a_rerun_reads_the_setup_the_sidebar_draws(reads, params):
    at = open_app(None, params)
    at.run()
    assert not at.exception
    early = reads[-1]
    assert early is not None
    assert _same(early, at.session_state["_setup"])
    assert "_setup_read_off" not in at.session_state


@given(gpu=st_.sampled_from(list(GPUS)), model=st_.sampled_from(list(ALL_MODELS)),
       weights=st_.sampled_from(WEIGHT_DTYPES), kv=st_.sampled_from(KV_DTYPES),
       gpus=st_.sampled_from(GPU_COUNTS))
def test_a_setup_changed_in_the_sidebar_is_read_right_on_the_next_run(gpu, model, weights, kv, gpus):
    """The widgets moved one after another, as a reader does, then one more run: the setup read from
    the session is the one the sidebar draws."""
    answers: list = []
    real = ui.setup.setup_from_state
    ui.setup.setup_from_state = lambda: answers.append(real()) or answers[-1]
    try:
        at = open_app()
        for kind, key, value in (("selectbox", "gpu", gpu), ("selectbox", "model", model),
                                 ("radio", "weights", weights), ("radio", "kv", kv),
                                 ("radio", "gpus", gpus)):
            getattr(at, kind)(key=key).set_value(value).run()
            assert not at.exception
        at.run()
    finally:
        ui.setup.setup_from_state = real
    assert answers[-1] is not None
    assert _same(answers[-1], at.session_state["_setup"])
    assert "_setup_read_off" not in at.session_state


def test_a_wrong_read_draws_the_page_again_with_the_sidebars_setup(monkeypatch):
    at = open_app()
    real = ui.setup._setup_controls

    def wrong_when_reading(draw):
        setup = real(draw)
        if isinstance(draw, ui.setup._StateReader):  # read as another GPU than the sidebar's
            return dataclasses.replace(setup, gpu=GPUS["L4"])
        return setup

    monkeypatch.setattr(ui.setup, "_setup_controls", wrong_when_reading)
    at.run()
    assert not at.exception
    assert at.session_state["_setup"].gpu.name == "H100 SXM"
    assert at.session_state["_setup_read_off"] is True
    assert "on H100 SXM" in at.main.caption[0].value  # the page's setup line: the sidebar's GPU
    at.run()  # from now on the sidebar is drawn first in this session
    assert at.session_state["_setup"].gpu.name == "H100 SXM"
