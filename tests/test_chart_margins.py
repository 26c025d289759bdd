"""``ui.layout.CHART_MARGINS``: base margins that let a chart be drawn once a change (the browser check
is in tests/browser/test_first_screen_browser.py)."""

from __future__ import annotations

import plotly.graph_objects as go

from tests.conftest import ALL_SECTIONS, open_app
from ui.layout import CHART_MARGINS, _base_margins
from ui.nav import SECTIONS
from ui.theme import Spec


def test_every_key_is_a_chart_a_page_draws():
    drawn = set()
    for section in SECTIONS:
        at = open_app(section.path, ALL_SECTIONS.get(section.path))
        drawn |= {c.proto.id.rsplit("-", 1)[-1] for c in at.get("plotly_chart")}
    assert set(CHART_MARGINS) <= drawn, sorted(set(CHART_MARGINS) - drawn)
    # every chart has its entry (page 01's gauges, which had none, are SVG now: ui.gauge)
    assert drawn == set(CHART_MARGINS)


def test_base_margins_raise_and_never_lower():
    key = "phases_roofline"
    l_, r, t, b = CHART_MARGINS[key]
    spec = Spec([], {"margin": {"l": 5, "t": t + 40}})
    _base_margins(spec, key)
    assert spec._layout["margin"] == {"l": l_, "r": r, "t": t + 40, "b": b}
    fig = go.Figure(layout={"margin": {"b": b + 7}})
    _base_margins(fig, key)
    assert (fig.layout.margin.l, fig.layout.margin.r, fig.layout.margin.t, fig.layout.margin.b) == \
        (l_, r, t, b + 7)
    other = Spec([], {"margin": {"l": 3}})
    _base_margins(other, "not_a_chart")
    assert other._layout["margin"] == {"l": 3}
