"""The landing page's two numbers: page 00's first view, one batch-1 decode step at 512 tokens of context."""

from __future__ import annotations

import pytest

from sim.hardware import GPUS
from sim.models import MODELS
from sim.phases import two_phases
from tests.conftest import metric, number, open_app

PAGE = "app_pages/home.py"


@pytest.mark.parametrize("params", [{}, {"gpu": "L4"}, {"gpu": "MI300X", "model": "Llama-3.1-70B"}])
def test_the_decode_it_prices_holds_the_prompt_it_checks(params):
    """The two numbers are page 00's first view (a 2,048-token prompt's prefill, batch-1 decode at 512
    tokens of context), and read as page 00 reads them (0.23 % here against page 00's 0.22 % had sent a
    reader looking for the difference); the page checks both of that view's requests fit."""
    at = open_app(PAGE, params)
    assert not at.exception
    gpu, model = GPUS[params.get("gpu", "H100 SXM")], MODELS[params.get("model", "Llama-3.1-8B")]
    expected = two_phases(gpu, model, prompt_tokens=2048, batch=1, context_tokens=512)
    shown = metric(at, "What the tensor cores deliver: MFU")
    assert number(shown) == pytest.approx(100 * float(expected.decode.mfu[0]), abs=0.006)
    assert shown == metric(open_app("app_pages/two_phases.py", params), "MFU, decode")
    help_text = next(m.help for m in at.metric if m.label.startswith("What the dashboard shows"))
    assert "batch-1 decode at 512 tokens of context, page 00's first view" in help_text


def test_a_model_that_reads_2048_positions_gets_a_prompt_it_can_answer():
    """GPT-J-6B reads at most 2,048 positions (its n_positions): a 2,048-token prompt leaves none for
    the token the decode step makes, so the page prices a prompt of half of them, 1,024, beside page
    00's 512 tokens of context."""
    from sim.models import ALL_MODELS

    at = open_app(PAGE, {"model": "GPT-J-6B"})
    assert not at.exception and not at.error
    model = ALL_MODELS["GPT-J-6B"]
    assert model.max_positions == 2048
    expected = two_phases(GPUS["H100 SXM"], model, prompt_tokens=1024, batch=1, context_tokens=512)
    shown = number(metric(at, "What the tensor cores deliver: MFU"))
    assert shown == pytest.approx(100 * float(expected.decode.mfu[0]), abs=0.006)
    help_text = next(m.help for m in at.metric if m.label.startswith("What the dashboard shows"))
    assert "batch-1 decode at 512 tokens of context" in help_text
