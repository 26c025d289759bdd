"""The app draws its figures as plain dicts (``ui.theme.Spec``) and sends them without plotly's
copy (``ui.layout._Sent``); under test they are validated ``go.Figure``s. Both must send the same
JSON, chart for chart, on every page: the dicts the reader's browser gets are the ones the tests
validated."""

from __future__ import annotations

import json

import pytest

import ui.sim_cache
import ui.theme
from tests.conftest import ALL_SECTIONS, open_app
from ui.nav import ALL_PAGES, SECTIONS

#: Setups beyond the defaults: one whose measured runs the charts draw (crosses, rings, hatched bars),
#: and a mixture of experts with 4-bit weights on two GPUs.
SETUPS = {
    "measured runs": {"gpu": "A100 80GB SXM", "model": "Llama-2-7B"},
    "MoE, MXFP4, 2 GPUs": {"model": "gpt-oss-120b", "weights": "mxfp4", "gpus": "2"},
}


def _specs(path: str, validate: bool, params: dict | None = None) -> list[dict]:
    # The pages cache their figures process-wide (``ui.sim_cache.page_cache``): emptied before, so
    # this run builds its own (plain or validated), and after, so no later test draws a plain one.
    ui.sim_cache.clear_all()
    ui.theme.VALIDATE_FIGURES = validate
    try:
        at = open_app(path, {**ALL_SECTIONS.get(path, {}), **(params or {})})  # every chart
    finally:
        ui.theme.VALIDATE_FIGURES = True
        ui.sim_cache.clear_all()
    assert not at.exception, [e.value for e in at.exception]
    return [_drop_empty(json.loads(c.proto.spec)) for c in at.get("plotly_chart")]


def _drop_empty(value):
    """Empty lists left out (plotly drops an empty ``shapes=[]``; Plotly.js reads both alike)."""
    if isinstance(value, dict):
        return {k: _drop_empty(v) for k, v in value.items() if v != []}
    if isinstance(value, list):
        return [_drop_empty(v) for v in value]
    return value


@pytest.mark.parametrize("path", [p.path for p in ALL_PAGES])
def test_plain_figures_send_what_validated_figures_send(path):
    plain, validated = _specs(path, False), _specs(path, True)
    assert len(plain) == len(validated)
    for a, b in zip(plain, validated, strict=True):
        assert a == b


@pytest.mark.parametrize("setup", list(SETUPS))
@pytest.mark.parametrize("path", [s.path for s in SECTIONS])
def test_the_same_on_other_setups(path, setup):
    plain, validated = _specs(path, False, SETUPS[setup]), _specs(path, True, SETUPS[setup])
    assert plain, "the setup should draw charts on this page"
    assert plain == validated
