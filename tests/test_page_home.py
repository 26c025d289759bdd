"""The landing page's two numbers: one batch-1 decode step right after a 2,048-token prompt."""

from __future__ import annotations

import pytest

from sim.hardware import GPUS
from sim.models import MODELS
from sim.phases import two_phases
from tests.conftest import metric, number, open_app

PAGE = "app_pages/home.py"


@pytest.mark.parametrize("params", [{}, {"gpu": "L4"}, {"gpu": "MI300X", "model": "Llama-3.1-70B"}])
def test_the_decode_it_prices_holds_the_prompt_it_checks(params):
    """The page checks that one request with a 2,048-token prompt fits, so the decode step it shows
    holds those 2,048 tokens (it priced a 512-token context before, which no such request has)."""
    at = open_app(PAGE, params)
    assert not at.exception
    gpu, model = GPUS[params.get("gpu", "H100 SXM")], MODELS[params.get("model", "Llama-3.1-8B")]
    expected = two_phases(gpu, model, prompt_tokens=2048, batch=1, context_tokens=2048)
    shown = number(metric(at, "What the tensor cores deliver: MFU"))
    assert shown == pytest.approx(100 * float(expected.decode.mfu[0]), abs=0.006)
    help_text = next(m.help for m in at.metric if m.label.startswith("What the dashboard shows"))
    assert "right after a 2,048-token prompt" in help_text


def test_a_model_that_reads_2048_positions_gets_a_prompt_it_can_answer():
    """GPT-J-6B reads at most 2,048 positions (its n_positions): a 2,048-token prompt leaves none for
    the token the decode step makes, so the page uses half of them, 1,024, and says so."""
    from sim.models import ALL_MODELS

    at = open_app(PAGE, {"model": "GPT-J-6B"})
    assert not at.exception and not at.error
    model = ALL_MODELS["GPT-J-6B"]
    assert model.max_positions == 2048
    expected = two_phases(GPUS["H100 SXM"], model, prompt_tokens=1024, batch=1, context_tokens=1024)
    shown = number(metric(at, "What the tensor cores deliver: MFU"))
    assert shown == pytest.approx(100 * float(expected.decode.mfu[0]), abs=0.006)
    help_text = next(m.help for m in at.metric if m.label.startswith("What the dashboard shows"))
    assert "right after a 1,024-token prompt" in help_text
