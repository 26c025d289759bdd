"""``ui.legend``: a chart's legend drawn as page text, read from the figure's own traces.

Page 01's slot timeline, page 02's pool and page 03's α chart draw their legends this way
(``ui.layout.chart(..., legend_at=...)``): the entries must be the ones Plotly would have shown, with
their colours and line styles; nothing in a trace's name or colour may become markup; the figure sent
has Plotly's legend off; and the legend is on each page, next to its chart.
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import pytest
from hypothesis import given
from hypothesis import strategies as st

import ui.layout
from tests.conftest import open_app
from ui import legend
from ui.theme import COLORS, Spec

TRACES = [
    dict(type="heatmap", z=[[1]], name="cells"),  # no legend entry by default
    dict(type="scatter", mode="lines", name="k = 4 (yours)", line=dict(color="#009E73", width=3.5)),
    dict(type="scatter", mode="lines", name="1/(1−α) ceiling", line=dict(color="#5B6570", dash="dash")),
    dict(type="scatter", mode="markers", name="<b>your</b> setting", marker=dict(symbol="diamond",
                                                                                color="#000000")),
    dict(type="scatter", mode="markers", name="Free", marker=dict(symbol="square", color="rgb(1, 2, 3)")),
    dict(type="scatter", mode="lines", name="hidden", showlegend=False),
    dict(type="bar", name="bars", marker=dict(color="#E69F00")),
]


def test_entries_are_the_ones_plotly_shows_in_order():
    got = legend.entries(TRACES)
    assert [e.name for e in got] == ["k = 4 (yours)", "1/(1−α) ceiling", "your setting", "Free", "bars"]
    assert [e.kind for e in got] == ["line", "line", "diamond", "square", "square"]
    assert got[0].color == "#009E73" and got[0].width == 3.5 and got[0].dash == "solid"
    assert got[1].dash == "dashed"
    assert got[3].color == "rgb(1, 2, 3)"


def test_html_has_one_item_per_entry_with_its_colour():
    out = legend.to_html(legend.entries(TRACES))
    assert out.count('role="listitem"') == 5
    assert "border-top: 3.5px solid #009E73" in out and "background: #E69F00" in out


@pytest.mark.parametrize("bad", ["red; background: url(https://example.invalid/x.png)",
                                 "#12345g", "expression(alert(1))", 'red" onclick="alert(1)'])
def test_a_colour_that_is_not_a_plain_colour_becomes_the_muted_grey(bad):
    got = legend.entries([dict(type="bar", name="x", marker=dict(color=bad))])
    assert got[0].color == COLORS["muted"]
    assert "example.invalid" not in legend.to_html(got) and "onclick" not in legend.to_html(got)


class _Parts(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags, self.text = [], ""

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, tuple(name for name, _ in attrs)))

    def handle_data(self, data):
        self.text += data


_OWN = [("div", ("class", "role", "aria-label")), ("span", ("class", "role")),
        ("span", ("class", "style", "aria-hidden"))]


@given(st.text(max_size=80) | st.sampled_from([
    "`x` [click](https://example.invalid)", "<img src=https://example.invalid/i.png>",
    "<a href='javascript:alert(1)'>x</a>", '"><script>alert(1)</script>', "a<br>b"]))
def test_no_name_becomes_markup(name):
    """Whatever a trace's name holds (a model name a reader pasted, say), the legend shows it as text:
    no element or attribute but the legend's own, and the name's text is what the reader reads."""
    items = legend.entries([dict(type="scatter", mode="lines", name=name)])
    parts = _Parts()
    parts.feed(legend.to_html(items))
    assert parts.tags == (_OWN if items else _OWN[:1])
    assert parts.text == (items[0].name if items else "")


def _pool_spec() -> Spec:
    return Spec([dict(TRACES[4]), dict(TRACES[1])], {"legend": {"y": -0.01}})


def test_chart_sends_the_figure_without_its_legend_and_keeps_the_entries(monkeypatch):
    drawn = []
    monkeypatch.setattr(ui.layout.st, "markdown", lambda body, **kw: drawn.append(("md", body, kw)))
    monkeypatch.setattr(ui.layout.st, "plotly_chart",
                        lambda fig, **kw: drawn.append(("chart", fig.to_dict(), kw)))
    fig = _pool_spec()
    for _ in range(2):  # a cached figure drawn again keeps its legend
        drawn.clear()
        ui.layout.chart(fig, key="paging_pool", alt="a pool", legend_at="below")
        kinds = [d[0] for d in drawn]
        assert kinds == ["chart", "md"]
        assert drawn[0][1]["layout"]["showlegend"] is False
        assert "Free" in drawn[1][1] and "k = 4 (yours)" in drawn[1][1]
        assert drawn[1][2] == {"unsafe_allow_html": True}
    with pytest.raises(ValueError):
        ui.layout.chart(_pool_spec(), key="x", alt="", legend_at="left")


def test_traces_that_were_only_legend_keys_are_not_sent(monkeypatch):
    """A legend drawn as text leaves the figure's key-only traces (x and y a lone None: a heatmap's
    colours) nothing to do, and Plotly still processes each one: they are not sent. A trace with data
    stays, and the keys stay in the text legend. The same for a go.Figure (the tests' validated one)."""
    import plotly.graph_objects as go

    sent = []
    monkeypatch.setattr(ui.layout.st, "markdown", lambda body, **kw: sent.append(("md", body)))
    monkeypatch.setattr(ui.layout.st, "plotly_chart", lambda fig, **kw: sent.append(("chart", fig.to_dict())))
    key = dict(type="scatter", x=[None], y=[None], mode="markers", name="Free",
               marker=dict(symbol="square", color="#aaaaaa"))
    line = dict(type="scatter", x=[1, 2], y=[3, 4], mode="lines", name="Data", line=dict(color="#000000"))
    heat = dict(type="heatmap", z=[[1, 2]])
    for fig in (Spec([heat, key, line], {}), go.Figure([heat, key, line])):
        sent.clear()
        ui.layout.chart(fig, key="paging_pool", alt="a pool", legend_at="below")
        (_, spec), (_, text) = sent
        assert [t["type"] for t in spec["data"]] == ["heatmap", "scatter"]
        assert spec["data"][1]["name"] == "Data"
        assert "Free" in text and "Data" in text
    assert not ui.layout._key_only(dict(type="scatter", x=[None, 1], y=[None, 2]))
    assert not ui.layout._key_only(dict(type="bar", x=[None], y=[None]))


@pytest.mark.parametrize(("page", "chart", "where", "first_entry"), [
    ("app_pages/batching.py", "batching_timeline", "above", "Request"),
    ("app_pages/paging.py", "paging_pool", "below", "Full page of tokens"),
    ("app_pages/speculative.py", "spec_alpha_chart", "below", "1/(1−α) ceiling"),
    ("app_pages/speculative.py", "spec_batch_chart", "below", "model, α"),
])
def test_each_page_draws_its_chart_legend_as_text_next_to_the_chart(page, chart, where, first_entry):
    at = open_app(page)
    assert not at.exception
    blocks = list(at.main)
    order = []

    def walk(node):
        for child in getattr(node, "children", {}).values():
            proto_id = getattr(getattr(child, "proto", None), "id", "") or ""
            if getattr(child, "type", "") == "plotly_chart" and proto_id.endswith(chart):
                order.append("chart")
                assert json.loads(child.proto.spec)["layout"]["showlegend"] is False
            elif getattr(child, "type", "") == "markdown" and 'class="gl-legend"' in child.value:
                order.append(("legend", child.value))
            walk(child)

    for b in blocks:
        walk(b)
    at_chart = order.index("chart")
    neighbour = order[at_chart - 1] if where == "above" else order[at_chart + 1]
    assert isinstance(neighbour, tuple), f"{chart}: no legend {where} it"
    names = re.findall(r"</span>([^<]+)</span>", neighbour[1])
    assert names and names[0].startswith(first_entry)
    assert re.search(r'aria-label="Legend: [^"]+"', neighbour[1])  # named after its chart


def test_a_measured_point_keeps_its_cross_in_a_legend_drawn_as_text():
    """Page 00's roofline draws its legend below the chart (inside the plot it covered the decode
    label on a phone): the measured engines' ✕ stays a cross there, not a square."""
    items = legend.entries([dict(type="scatter", mode="markers", name="Measured (engines)",
                                 marker=dict(symbol="x", color="#222222"))])
    assert [(e.kind, e.color) for e in items] == [("cross", "#222222")]
    parts = _Parts()
    parts.feed(legend.to_html(items))
    assert parts.text == "✕Measured (engines)"
