"""A chart's legend drawn as page text beside the chart instead of by Plotly.

Streamlit mounts every changed chart afresh (its element id hashes the figure), so Plotly lays its
legend out again on every change of a control: it measures each entry's text in the SVG, one forced
layout after another. On a 2-core machine that was 10-20 ms of each drawing of page 01's slot
timeline, page 02's pool and page 03's α chart (``newPlot`` 48-55 ms with the legend, 29-38 without:
docs/speed-log.md, *Against a bare Streamlit page*, seventh run). Drawn as text, the legend is one markdown
element, which the browser redraws only when its text changes (page 03's load chart names the
reader's α and k in it; the timeline's gains or loses "Padding" with page 01's toggle).

The entries are read from the figure's own traces (``entries``): the figure builders keep their legend
as Plotly would draw it (its names, colours, line dashes and marker symbols, all tested), and
``ui.layout.chart(..., legend_at="below")`` decides where it is drawn. What is lost: a click on an
entry no longer hides its trace (page 03's draft lengths, and its load chart's measured points and
the part past the card's memory; the timeline's and the pool's entries are keys of one raster or
heatmap and never hid anything).

Names and colours are written into HTML: every name is escaped, and a colour that is not a plain hex,
``rgb()``/``rgba()`` or CSS colour name is replaced by the muted grey, so nothing in a figure (a model
name a reader pasted, say) can become markup.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

from ui.theme import COLORS

_COLOR = re.compile(r"#[0-9a-fA-F]{3,8}|rgba?\(\s*[0-9.]+\s*(,\s*[0-9.]+\s*){2,3}\)|[a-zA-Z]{3,20}")
_BREAK = re.compile(r"<br\s*/?>", re.IGNORECASE)
_TAG = re.compile(r"<[^>]*>")
_DASH = {"solid": "solid", "dot": "dotted", "dash": "dashed", "longdash": "dashed", "dashdot": "dashed",
         "longdashdot": "dashed"}
_SHAPE = {"square": "square", "diamond": "diamond", "circle": "circle", "x": "cross", "x-thin": "cross"}


@dataclass(frozen=True)
class Entry:
    """One legend entry: its text and its key (``kind`` "line", "square", "diamond", "circle" or
    "cross", a measured point's ✕)."""

    name: str
    kind: str
    color: str
    dash: str = "solid"  # a line's CSS border style
    width: float = 2.0  # a line's width, px


def _color(value, default: str = COLORS["muted"]) -> str:
    return value.strip() if isinstance(value, str) and _COLOR.fullmatch(value.strip()) else default


def entries(traces: list[dict]) -> list[Entry]:
    """The entries Plotly would show for ``traces`` (trace dicts, as sent), in their order: every
    scatter or bar trace with a name whose ``showlegend`` is not false (heatmaps and images show none
    by default). A name's Plotly markup (``<b>``, ``<br>``) is dropped to its text."""
    out = []
    for trace in traces:
        kind = trace.get("type", "scatter")
        name = trace.get("name")
        if kind not in ("scatter", "bar") or not name or trace.get("showlegend") is False:
            continue
        name = " ".join(html.unescape(_TAG.sub("", _BREAK.sub(" ", str(name)))).split())
        if not name:
            continue
        marker = trace.get("marker") or {}
        line = trace.get("line") or {}
        mode = trace.get("mode", "lines")
        if kind == "scatter" and "lines" in mode:
            out.append(Entry(name, "line", _color(line.get("color")), _DASH.get(line.get("dash"), "solid"),
                             min(4.0, max(1.0, float(line.get("width") or 2.0)))))
        else:
            shape = _SHAPE.get(str(marker.get("symbol", "square" if kind == "bar" else "circle")), "square")
            color = marker.get("color")
            out.append(Entry(name, shape, _color(color if isinstance(color, str) else None)))
    return out


def to_html(items: list[Entry], label: str = "Legend") -> str:
    """The legend as one line of keys and names that wraps (``.gl-legend`` in ``ui.layout.PAGE_CSS``);
    a screen reader hears it as a list named ``label``."""
    parts = []
    for e in items:
        if e.kind == "line":
            style = f"border-top: {e.width:.1f}px {e.dash} {e.color}"
        elif e.kind == "cross":
            style = f"color: {e.color}"
        else:
            style = f"background: {e.color}"
        glyph = "✕" if e.kind == "cross" else ""
        parts.append(f'<span class="gl-item" role="listitem"><span class="gl-key gl-{e.kind}" '
                     f'style="{html.escape(style)}" aria-hidden="true">{glyph}</span>'
                     f'{html.escape(e.name)}</span>')
    return (f'<div class="gl-legend" role="list" aria-label="{html.escape(label)}">'
            f'{"".join(parts)}</div>')
