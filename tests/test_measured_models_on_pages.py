"""The models the measured runs name are in the sidebar (so their runs can be drawn): every page
takes each of them, on the GPU and precision of one of its runs, without an exception, and a model
too big for the card says so instead of showing numbers."""

from __future__ import annotations

import pytest

from sim.models import MEASURED_MODELS
from tests.conftest import ALL_SECTIONS, open_app
from ui.nav import ALL_PAGES

#: One measured setup per model (measured.csv), so the pages draw its runs.
SETUPS = {
    "Llama-2-7B": {"gpu": "A100 80GB SXM"},
    "Llama-2-70B": {"gpu": "H100 SXM", "weights": "fp8", "kv": "fp8", "gpus": "4"},
    "GPT-J-6B": {"gpu": "H100 SXM", "weights": "fp8", "kv": "fp8"},
    "Qwen3-8B": {"gpu": "H100 SXM"},
    "Llama-3.1-405B": {"gpu": "MI300X", "weights": "fp8", "gpus": "8"},
}


def test_every_measured_model_has_a_setup_here():
    assert set(SETUPS) == set(MEASURED_MODELS)


@pytest.mark.parametrize("name", sorted(MEASURED_MODELS))
def test_every_page_takes_the_measured_models(name):
    for page in ALL_PAGES:
        at = open_app(page.path, {"model": name, **SETUPS[name], **ALL_SECTIONS.get(page.path, {})})
        assert not at.exception, (name, page.path, [e.value for e in at.exception])
        assert at.sidebar.selectbox(key="model").value == name, page.path


def test_a_measured_model_too_big_for_the_card_is_refused_in_words():
    at = open_app("app_pages/two_phases.py", {"model": "Llama-3.1-405B"})
    assert not at.exception
    text = " ".join(e.value for e in at.error)
    assert "does not fit" in text and not at.metric


def test_every_section_keeps_its_title_when_the_setup_does_not_fit():
    """Found by scripts/hostile_inputs.py: page 04 refused a setup before its title, so the page had
    no heading at all."""
    from ui.nav import SECTIONS

    for section in SECTIONS:
        at = open_app(section.path, {"model": "DeepSeek-V3"})  # 1.2 TiB of weights on one H100
        assert not at.exception, section.path
        assert any("does not fit" in e.value for e in at.error), section.path
        assert at.title and at.title[0].value.startswith(f"{section.number} · "), section.path


def test_the_landing_page_shows_its_two_numbers_only_for_a_setup_that_fits():
    """The landing page's utilization and MFU are a batch-1 decode on the sidebar's setup: for
    Llama-3.1-70B in BF16 on an L4 (141 GB of weights, a 24 GB card) it showed 99.9 % and 0.19 % with
    no word; now it says what does not fit, and the way through the sections stays."""
    at = open_app("app_pages/home.py", {"gpu": "L4", "model": "Llama-3.1-70B"})
    assert not at.exception
    assert any("does not fit" in e.value for e in at.error)
    assert not at.metric
    assert not any("Lower the batch" in c.value for c in at.caption)  # the page has no batch
    assert any(h.value == "The story, in order" for h in at.subheader)
    fits = open_app("app_pages/home.py")
    assert not fits.error and len(fits.metric) == 2
