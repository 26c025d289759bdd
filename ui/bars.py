"""Two small bar charts drawn as page HTML instead of Plotly: page 01's capacity breakdown and page
03's strip of Monte Carlo rounds.

Every Plotly chart that changes is a new Streamlit element, mounted afresh, and on a 2-core machine
a changing chart costs the browser about 80 ms wherever it sits on the page (docs/speed-log.md,
*Against a bare Streamlit page*, seventh run). These two charts change with their page's main
control and are drawn right after its main chart, while the browser is still drawing that one.
Neither needs an axis Plotly would scale or a zoom: one is two stacked bars of shares, the other a
grid of cells. As HTML each is one markdown element (title, legend, bars and axis together) that the
browser lays out in no time, and that wraps and shrinks with its column on a phone. Hovering a
segment or a cell shows what it is (a native tooltip, the element's ``title``), as Plotly's hover did.

They are drawn by ``st.markdown(..., unsafe_allow_html=True)``, which does not sanitise: escaping is
the only guard. Every text is escaped and every colour checked (``ui.legend``), although all of it is
the app's own (tests/test_bars.py).
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from dataclasses import dataclass

from ui import legend
from ui.theme import COLORS


@dataclass(frozen=True)
class Part:
    """One kind of segment: its name (legend and tooltip) and colour."""

    name: str
    color: str


def _luminance(color: str) -> float | None:
    """WCAG 2's relative luminance of a hex colour (None for anything else)."""
    c = color.lstrip("#")
    if len(c) == 3:
        c = "".join(ch * 2 for ch in c)
    if len(c) not in (6, 8):
        return None
    try:
        channels = [int(c[i:i + 2], 16) / 255 for i in (0, 2, 4)]
    except ValueError:
        return None
    r, g, b = (v / 12.92 if v <= 0.04045 else ((v + 0.055) / 1.055) ** 2.4 for v in channels)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: str, b: str) -> float:
    """WCAG 2's contrast ratio of two hex colours (1 to 21; 1 where either is not a hex colour)."""
    la, lb = _luminance(a), _luminance(b)
    if la is None or lb is None:
        return 1.0
    return (max(la, lb) + 0.05) / (min(la, lb) + 0.05)


def _text_color(color: str) -> str:
    """White or the house text colour, whichever contrasts more with ``color`` (WCAG 2's ratio;
    white on anything that is not a hex colour)."""
    return COLORS["text"] if contrast(COLORS["text"], color) > contrast("#FFFFFF", color) else "white"


def _t(text: str) -> str:
    """Text as HTML: escaped, its whitespace one space (a blank line would end the markdown's HTML
    block, and what follows would be read as markdown)."""
    return html.escape(" ".join(str(text).split()))


def _share(v: float) -> float:
    return min(100.0, max(0.0, v)) if math.isfinite(v) else 0.0


def _frame(title: str, parts: Sequence[Part], alt: str, body: str, kind: str) -> str:
    """Title, legend (``ui.legend``, as the Plotly charts' legends are drawn) and ``body`` in one
    element, named for a screen reader by ``alt``."""
    keys = [legend.Entry(" ".join(p.name.split()), "square", legend._color(p.color)) for p in parts]
    return (f'<div class="gl-bars gl-{kind}" role="figure" aria-label="{_t(alt)}">'
            f'<p class="gl-bars-title"><strong>{_t(title)}</strong></p>'
            f'{legend.to_html(keys, "Legend: " + " ".join(title.split()))}{body}</div>')


def stacked_bars_html(title: str, rows: Sequence[tuple[str, Sequence[float]]], parts: Sequence[Part], *,
                      axis_title: str, alt: str, unit: str = "%", min_label: float = 6.0) -> str:
    """Horizontal bars of shares that stack to 100 (``rows``: (name, one percent per part)), an axis
    from 0 to 100 under them. A segment is labelled with its share when it is at least ``min_label``
    points wide; its tooltip always says it."""
    if any(len(values) != len(parts) for _, values in rows):
        raise ValueError("every row needs one value per part")
    out = []
    for name, values in rows:
        segs, said = [], []
        for part, v in zip(parts, values, strict=True):
            v = _share(float(v))
            said.append(f"{part.name} {v:.1f}{unit}")
            if v <= 0:
                continue
            color = legend._color(part.color)
            tip = f"{name}: {part.name}, {v:.1f}{unit}"
            label = f"{v:.0f}{unit}" if v >= min_label else ""
            segs.append(f'<span class="gl-seg" style="width: {v:.3f}%; background: {color}; color: '
                        f'{_text_color(color)}" title="{_t(tip)}" data-part="{_t(part.name)}" '
                        f'data-value="{v:.3f}">{_t(label)}</span>')
        said_all = _t(f"{name}: {', '.join(said)}")
        out.append(f'<div class="gl-bars-row"><span class="gl-bars-name">{_t(name)}</span>'
                   f'<div class="gl-bars-track" role="img" aria-label="{said_all}">'
                   f'{"".join(segs)}</div></div>')
    ticks = "".join(f'<span style="left: {t}%">{t}{_t(unit)}</span>' for t in (0, 25, 50, 75, 100))
    out.append(f'<div class="gl-bars-row gl-bars-axis" aria-hidden="true"><span class="gl-bars-name">'
               f'</span><div class="gl-bars-ticks">{ticks}</div></div>'
               f'<div class="gl-bars-axis-title" aria-hidden="true">{_t(axis_title)}</div>')
    return _frame(title, parts, alt, "".join(out), "stacked")


@dataclass(frozen=True)
class Cell:
    """One kind of cell in a strip: its part (name, colour), the text in it and its tooltip."""

    part: Part
    text: str
    tip: str


def strip_html(title: str, rows: Sequence[str], codes: Sequence[Sequence[int]], cells: dict[int, Cell],
               last: Sequence[Cell], *, columns: Sequence[str], last_column: str, axis_title: str,
               alt: str) -> str:
    """A grid: one row per ``rows`` name, a cell per code of ``codes`` (drawn as ``cells[code]``), then
    after a gap the row's ``last`` cell. ``columns`` name the coded cells, ``last_column`` the last."""
    if len(rows) != len(codes) or len(rows) != len(last):
        raise ValueError("rows, codes and last must have one entry per row")
    shown: dict[str, Part] = {}
    for c in [*(cells[int(x)] for r in codes for x in r), *last]:
        shown.setdefault(c.part.name, c.part)
    order = [*(c.part for c in cells.values()), *(c.part for c in last)]
    parts = [p for p in dict.fromkeys(order) if p.name in shown] or order[:1]

    def cell(c: Cell, tip: str, extra: str = "") -> str:
        color = legend._color(c.part.color)
        return (f'<span class="gl-cell{extra}" style="background: {color}; color: {_text_color(color)}" '
                f'title="{_t(tip)}" data-part="{_t(c.part.name)}">{_t(c.text)}</span>')

    out = []
    for name, row, end in zip(rows, codes, last, strict=True):
        kinds = [cells[int(x)] for x in row]
        cs = "".join(cell(c, f"{name}, draft token {j + 1}: {c.tip}") for j, c in enumerate(kinds))
        said = _t(f"{name}: {', '.join(c.part.name for c in kinds)}; {end.tip}")
        out.append(f'<div class="gl-bars-row"><span class="gl-bars-name">{_t(name)}</span>'
                   f'<div class="gl-cells" role="img" aria-label="{said}">'
                   f'{cs}{cell(end, f"{name}: {end.tip}", " gl-cell-last")}</div></div>')
    heads = "".join(f"<span>{_t(c)}</span>" for c in columns)
    out.append(f'<div class="gl-bars-row gl-bars-axis" aria-hidden="true"><span class="gl-bars-name">'
               f'</span><div class="gl-cells gl-cells-heads">{heads}<span class="gl-cell-last">'
               f'{_t(last_column)}</span></div></div>'
               f'<div class="gl-bars-axis-title" aria-hidden="true">{_t(axis_title)}</div>')
    return _frame(title, parts, alt, "".join(out), "strip")
