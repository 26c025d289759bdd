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
from ui.setup import CUSTOM, EXPERT_LAYOUTS, GPU_COUNTS, same_setup


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


def test_a_first_run_draws_the_sidebar_first_and_a_rerun_the_page_first(reads):
    at = open_app()
    assert reads == [None]  # the values are in the URL until the sidebar's widgets read them
    at.run()
    assert reads[-1] is not None and same_setup(reads[-1], at.session_state["_setup"])


SETUPS = [
    {},
    {"gpu": "L4", "model": "Llama-3.2-1B"},
    {"gpu": "H200 SXM", "model": "Qwen3-30B-A3B", "gpus": "2", "experts": EXPERT_LAYOUTS[1], "skew": "0.5"},
    {"gpu": "MI300X", "model": "gpt-oss-20b", "weights": "mxfp4"},
    {"gpu": "H100 SXM", "model": "Llama-3.1-70B", "gpus": "4", "kv": "fp8", "price": "3.5"},
    {"gpu": "A100 80GB SXM", "model": "Llama-3.1-8B", "gpus": "8"},  # more GPUs than its heads allow
    {"gpu": CUSTOM, "custom_tflops": "500", "custom_tbps": "2.5", "custom_gb": "48"},
    {"compute_eff": "0.5", "memory_eff": "0.6", "overhead_us": "100", "seq_host_us": "20", "graph_us": "3",
     "launch_us": "8"},
]


@pytest.mark.parametrize("params", SETUPS,
                         ids=lambda p: ",".join(f"{k}={v}" for k, v in p.items()) or "defaults")
def test_a_rerun_reads_the_setup_the_sidebar_draws(reads, params):
    at = open_app(None, params)
    at.run()
    assert not at.exception
    early = reads[-1]
    assert early is not None
    assert same_setup(early, at.session_state["_setup"])
    assert "_setup_read_off" not in at.session_state


@given(gpu=st_.sampled_from(list(GPUS)), model=st_.sampled_from(list(ALL_MODELS)),
       weights=st_.sampled_from(WEIGHT_DTYPES), kv=st_.sampled_from(KV_DTYPES),
       gpus=st_.sampled_from(GPU_COUNTS))
def test_a_setup_changed_in_the_sidebar_is_read_right_on_the_next_run(gpu, model, weights, kv, gpus):
    """The widgets moved one after another, as a reader does, then one more run: the setup read from
    the session is the one the sidebar draws."""
    answers: list = []
    real = ui.setup.setup_from_state
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ui.setup, "setup_from_state", lambda: answers.append(real()) or answers[-1])
        at = open_app()
        for kind, key, value in (("selectbox", "gpu", gpu), ("selectbox", "model", model),
                                 ("radio", "weights", weights), ("radio", "kv", kv),
                                 ("radio", "gpus", gpus)):
            getattr(at, kind)(key=key).set_value(value).run()
            assert not at.exception
        at.run()
    assert answers[-1] is not None
    assert same_setup(answers[-1], at.session_state["_setup"])
    assert "_setup_read_off" not in at.session_state


# Controls the sidebar draws only for some setups, hidden and shown again; the price set and cleared.
ROUND_TRIPS = {
    "skew": [("selectbox", "model", "Qwen3-30B-A3B"), ("slider", "skew", 0.7),
             ("selectbox", "model", "Llama-3.1-8B"), ("selectbox", "model", "Qwen3-30B-A3B")],
    "experts": [("selectbox", "model", "Qwen3-30B-A3B"), ("radio", "gpus", 2),
                ("radio", "experts", EXPERT_LAYOUTS[1]), ("radio", "gpus", 1), ("radio", "gpus", 2)],
    "custom GPU": [("selectbox", "gpu", CUSTOM), ("number_input", "custom_tflops", 500.0),
                   ("selectbox", "gpu", "L4"), ("selectbox", "gpu", CUSTOM)],
    "price": [("number_input", "price", 4.25), ("number_input", "price", None)],
}


@pytest.mark.parametrize("steps", ROUND_TRIPS.values(), ids=ROUND_TRIPS.keys())
def test_controls_hidden_and_shown_again_are_read_right(reads, steps):
    at = open_app()
    for kind, key, value in steps:
        getattr(at, kind)(key=key).set_value(value).run()
        assert not at.exception
        at.run()  # a rerun after each step: read from the session, or the sidebar first
        if reads[-1] is not None:
            assert same_setup(reads[-1], at.session_state["_setup"]), (key, value)
    assert reads[-1] is not None  # every control has been drawn by now
    assert "_setup_read_off" not in at.session_state


def test_the_reset_button_resets_and_the_next_run_reads_the_defaults(reads):
    at = open_app(None, {"gpu": "L4", "model": "Llama-3.2-1B", "price": "3.1", "compute_eff": "0.5"})
    at.run()
    at.button(key="setup_reset").click().run()
    assert not at.exception
    fresh = open_app().session_state["_setup"]  # what a new session's sidebar draws
    setup = at.session_state["_setup"]
    assert (setup.gpu.name, setup.model.name) == ("H100 SXM", "Llama-3.1-8B")
    assert same_setup(setup, fresh)
    at.run()
    assert reads[-1] is not None and same_setup(reads[-1], fresh)


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
