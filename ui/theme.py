"""One place for colours and chart styling.

The palette is Okabe & Ito's (2008) eight colours, chosen to stay distinct under the common forms of
colour-vision deficiency; each role below maps to one of them, and charts never rely on colour alone
(labels and hover text carry the same information).
"""

from __future__ import annotations

import copy
import functools

import plotly.graph_objects as go

OKABE_ITO = {
    "black": "#000000",
    "orange": "#E69F00",
    "sky_blue": "#56B4E9",
    "bluish_green": "#009E73",
    "yellow": "#F0E442",
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "reddish_purple": "#CC79A7",
}

#: Colour by role, shared by every page.
COLORS = {
    "prefill": OKABE_ITO["vermillion"],
    "decode": OKABE_ITO["blue"],
    "weights": OKABE_ITO["blue"],
    "kv": OKABE_ITO["sky_blue"],
    "compute": OKABE_ITO["orange"],
    "overhead": "#9AA3AD",
    "useful": OKABE_ITO["bluish_green"],
    "waste": OKABE_ITO["vermillion"],
    "reserved": OKABE_ITO["reddish_purple"],  # held but holding nothing, as padding on page 01
    "slack": OKABE_ITO["yellow"],
    "padding": OKABE_ITO["reddish_purple"],
    "idle": "#D9DEE4",
    "free": "#F3F5F8",
    "utilization": "#6B7682",
    "roofline": "#1B1F24",
    "grid": "#E3E7EC",
    "text": "#1B1F24",
    "muted": "#5B6570",
}

#: A qualitative cycle for "one colour per request" (timelines, page pools).
REQUEST_CYCLE = [
    OKABE_ITO[name]
    for name in ("blue", "orange", "bluish_green", "reddish_purple", "sky_blue", "vermillion", "yellow")
]

FONT = dict(family="Inter, 'Source Sans Pro', Arial, sans-serif", size=13, color=COLORS["text"])


def style(fig: go.Figure, *, height: int = 380, title: str | None = None) -> go.Figure:
    """Apply the house layout: light grid, compact margins, legend on top, optional title.

    One ``update_layout`` call, and no ``template=`` (assigning a template re-validates all of it,
    ~6 ms a figure; ``st.plotly_chart``'s Streamlit theme supplies the base look).
    """
    axis = dict(gridcolor=COLORS["grid"], zeroline=False)
    layout = dict(
        height=height,
        font=FONT,
        margin=dict(l=10, r=10, t=95 if title else 50, b=10),
        legend=dict(orientation="h", yanchor="bottom", y=1.02, xanchor="left", x=0),
        hoverlabel=dict(font_size=12),
        xaxis=axis,
        yaxis=axis,
    )
    if title:
        layout["title"] = dict(text=title, x=0.01, xanchor="left", y=0.985, yref="container",
                               yanchor="top", font=dict(size=15))
    fig.update_layout(layout)
    return fig


#: Build figures with plotly's full validation. Off in the app for speed; the test suite turns it on
#: (tests/conftest.py), so every figure every page draws under test is checked property by property.
VALIDATE_FIGURES = False


@functools.cache
def _house_layout(height: int, titled: bool) -> dict:
    """``style`` resolved once per (height, titled) as a plain layout dict."""
    return style(go.Figure(), height=height, title="-" if titled else None).to_dict()["layout"]


def merge(base: dict, extra: dict) -> dict:
    """``base`` updated in place with ``extra``, recursing into nested dicts; returns ``base``."""
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            merge(base[key], value)
        else:
            base[key] = value
    return base


#: A 0-100 % axis's ticks, the 100 % one included (its range should end a little past 100, or the
#: label at the edge is hidden on a phone). Written out: Plotly drops ``ticksuffix`` from ticks given
#: as ``tickvals``.
PERCENT_TICKS = dict(tickvals=[0, 25, 50, 75, 100], ticktext=["0%", "25%", "50%", "75%", "100%"])


class Spec:
    """A figure as the plain dicts Plotly.js draws (``data``: traces, ``layout``), for the app's own
    drawing: building a ``go.Figure``, even unvalidated, makes an object per trace and per layout
    part (~0.5 ms a figure, a tenth of a page's rerun). ``ui.layout.chart`` sends it exactly as it
    sends a ``go.Figure`` (tests/test_figures_sent.py compares the two on every page)."""

    __slots__ = ("_chart_title", "_data", "_layout", "_legend", "_sent")

    def __init__(self, data: list[dict], layout: dict) -> None:
        self._data, self._layout, self._chart_title, self._sent = data, layout, None, None
        self._legend = None


def figure(traces: list[dict], layout: dict | None = None, *, height: int = 380,
           title: str | None = None) -> go.Figure | Spec:
    """A house-styled figure from plain dicts (traces carry their ``type``), built in one call.

    Plotly validates every property as graph objects are built and updated: 10-20 ms a figure, most of
    a page's 50 ms rerun budget. Builders here write plain dicts over the house layout (``style``
    resolved once) and return them as a ``Spec``; under test, ``VALIDATE_FIGURES`` is on and they
    come back as a validated ``go.Figure``, so an invalid property fails the page's tests.
    """
    layout = dict(layout or {})
    for key, value in layout.items():  # unvalidated, plotly.js would drop a shorthand title="..."
        axis = key.startswith(("xaxis", "yaxis")) and isinstance(value, dict)
        if axis and isinstance(value.get("title"), str):
            layout[key] = {**value, "title": {"text": value["title"]}}
    merged = merge(copy.deepcopy(_house_layout(height, title is not None)), layout)
    if title is not None:
        merged["title"]["text"] = title
    if not VALIDATE_FIGURES:
        return Spec(list(traces), merged)
    return go.Figure(data=traces, layout=merged)


def validated(fig: go.Figure) -> go.Figure:
    """The same figure rebuilt with plotly's validation on (raises on any invalid property)."""
    return go.Figure(fig.to_dict())


#: Plotly config for every chart: no toolbar. Plotly's floats over the top right of a chart, where
#: titles and legends are, and on a touch screen it stays up once tapped; drag-to-zoom and
#: double-click-to-reset still work, and every chart's data is in the page's Data expander.
PLOTLY_CONFIG = {"displaylogo": False, "displayModeBar": False}
