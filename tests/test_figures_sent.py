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
#: and a mixture of experts with 4-bit weights on two GPUs. Llama-2-7B reads 4,096 positions, so page
#: 05 runs it on its fixed-length workload (the chat workload's long tail does not fit in them).
SETUPS = {
    "measured runs": {"gpu": "A100 80GB SXM", "model": "Llama-2-7B", "load_workload": "Fixed 1,024 → 128"},
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


def test_a_send_leaves_the_cached_encoding_as_it_was():
    """``ui.layout._Sent`` sends a figure's encoded dict as it is, not a copy: Streamlit's send must
    only read it. The calls Streamlit 1.67's st.plotly_chart makes, on a figure with a trace uid (the
    one field plotly.io.to_json writes to), leave it unchanged, and a page drawn again from its cached
    figures sends the same JSON as the first time."""
    import copy

    import plotly.io
    import plotly.tools

    import ui.layout
    from ui.theme import Spec

    spec = Spec([{"type": "scatter", "x": [0, 1], "y": [2, 3], "uid": "a"}], {"height": 300})
    first = ui.layout._Sent.of(spec)
    before = copy.deepcopy(spec._sent)
    for _ in range(2):
        fig = plotly.tools.return_figure_from_figure_or_data(ui.layout._Sent.of(spec), validate_figure=True)
        plotly.io.to_json(fig, validate=False)
    assert first.to_dict() is spec._sent and spec._sent == before
    assert "uid" not in spec._sent["data"][0] and spec._data[0]["uid"] == "a"  # the figure keeps its own

    ui.sim_cache.clear_all()
    ui.theme.VALIDATE_FIGURES = False
    try:
        at = open_app("app_pages/two_phases.py")
        sent = [c.proto.spec for c in at.get("plotly_chart")]
        at.run()  # a full rerun: the page's cached figures are sent again
        assert [c.proto.spec for c in at.get("plotly_chart")] == sent
    finally:
        ui.theme.VALIDATE_FIGURES = True
        ui.sim_cache.clear_all()
