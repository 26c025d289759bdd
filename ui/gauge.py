"""Page 01's two gauges as one inline SVG instead of two Plotly charts.

A Plotly chart that changes is a new Streamlit element, mounted afresh: on a 2-core machine two small
charts changing before a page's watched chart cost it about 80 ms each (a bare page: 186 → 346 ms;
the same two drawn as inline SVG: 166 ms; docs/speed-log.md, *Against a bare Streamlit page*,
seventh run). The gauges are drawn before the slot timeline on every change of page 01's settings, so they
are drawn here as SVG: the same look as Plotly's ``indicator`` gauge (a half ring, the reading as a
coloured band, the other mode's reading as a black tick, the value and the difference in points),
no hover (the indicator had none either).

It is drawn by ``st.markdown(..., unsafe_allow_html=True)``, which does not sanitise (``st.html``
does, and drops SVG): escaping is the only guard. Everything written into the SVG is the app's own
(constant labels, formatted floats), and every text is escaped all the same (tests/test_gauge.py).
The drawing has its own white background, as the Plotly gauges had, so its fixed colours stay
readable under Streamlit's dark theme.
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass

from ui.theme import COLORS, FONT

_W, _H = 300, 200  # the drawing's box, px
_TOP = 45  # the box's top rows hold nothing (the title is above the SVG): the viewBox starts here
_CX, _CY = 150, 178  # centre of the half ring
_R_OUT, _R_IN = 125.0, 79.0  # the ring's background
_BAND = 0.7  # the reading's band: this share of the ring's thickness (Plotly's gauge.bar.thickness)
_TICK = 0.85  # the other mode's tick: this share of the thickness (Plotly's threshold.thickness)


@dataclass(frozen=True)
class Gauge:
    """One gauge: a reading and the other mode's reading (shares in [0, 1]), its title, the grey line
    under the title, and the band's colour."""

    value: float
    reference: float
    title: str
    subtitle: str
    color: str
    other: str = "the other mode"  # what the reference is, for a screen reader


def _point(r: float, share: float) -> tuple[float, float]:
    """The point at radius ``r`` for a share in [0, 1] (0: the left end, 1: the right end)."""
    theta = math.pi * (1.0 - share)
    return _CX + r * math.cos(theta), _CY - r * math.sin(theta)


def _sector(r_out: float, r_in: float, share: float) -> str:
    """SVG path of the ring between ``r_in`` and ``r_out`` from share 0 to ``share``."""
    (x0, y0), (x1, y1) = _point(r_out, 0.0), _point(r_out, share)
    (x2, y2), (x3, y3) = _point(r_in, share), _point(r_in, 0.0)
    return (f"M{x0:.2f} {y0:.2f} A{r_out:.2f} {r_out:.2f} 0 0 1 {x1:.2f} {y1:.2f} "
            f"L{x2:.2f} {y2:.2f} A{r_in:.2f} {r_in:.2f} 0 0 0 {x3:.2f} {y3:.2f} Z")


def _clip(share: float) -> float:
    return min(1.0, max(0.0, share)) if math.isfinite(share) else 0.0


def gauge_svg(g: Gauge) -> str:
    """One gauge: its title as text, then the ring as an ``<svg>`` that scales down to its width."""
    value, reference = _clip(g.value), _clip(g.reference)
    mid, thick = (_R_OUT + _R_IN) / 2, _R_OUT - _R_IN
    band = _BAND * thick / 2
    parts = [f'<rect x="0" y="{_TOP}" width="{_W}" height="{_H - _TOP}" fill="white"/>',
             f'<path d="{_sector(_R_OUT, _R_IN, 1.0)}" fill="{COLORS["free"]}" stroke="{COLORS["grid"]}" '
             'stroke-width="1"/>']
    if value > 1e-4:
        parts.append(f'<path d="{_sector(mid + band, mid - band, value)}" fill="{g.color}"/>')
    for share in (0.0, 0.5, 1.0):  # Plotly's tick marks at 0, 50 and 100
        (x0, y0), (x1, y1) = _point(_R_OUT, share), _point(_R_OUT + 6, share)
        parts.append(f'<line x1="{x0:.2f}" y1="{y0:.2f}" x2="{x1:.2f}" y2="{y1:.2f}" '
                     f'stroke="{COLORS["muted"]}" stroke-width="1"/>')
    half = _TICK * thick / 2
    (x0, y0), (x1, y1) = _point(mid - half, reference), _point(mid + half, reference)
    parts.append(f'<line x1="{x0:.2f}" y1="{y0:.2f}" x2="{x1:.2f}" y2="{y1:.2f}" stroke="{COLORS["text"]}" '
                 'stroke-width="3"/>')
    known = math.isfinite(g.value) and math.isfinite(g.reference)
    shown, ref_shown = round(100 * g.value, 1), round(100 * g.reference, 1)
    delta = round(shown - ref_shown, 1) if known else 0.0
    if not known:  # never shown by the app: the page stops before a run it cannot price
        delta_text, delta_color = "", COLORS["muted"]
    elif delta > 0:
        delta_text, delta_color = f"▲+{delta:.1f} pp", COLORS["useful"]
    elif delta < 0:
        delta_text, delta_color = f"▼−{-delta:.1f} pp", COLORS["waste"]
    else:
        delta_text, delta_color = "0.0 pp", COLORS["muted"]
    value_text = f"{shown:.1f}%" if math.isfinite(g.value) else "–"
    ref_text = f"{ref_shown:.1f}%" if math.isfinite(g.reference) else "–"
    text = html.escape
    parts += [
        f'<text class="number" x="{_CX}" y="153" text-anchor="middle" font-size="30" '
        f'fill="{COLORS["text"]}">{value_text}</text>',
        f'<text x="{_CX}" y="176" text-anchor="middle" font-size="18" fill="{delta_color}">'
        f"{text(delta_text)}</text>",
    ]
    # The title is page text above the ring, so it keeps its size on a phone, where the ring shrinks.
    return (f'<div class="gl-gauge"><div class="gl-gauge-title">{text(g.title)}<br>'
            f'<span>{text(g.subtitle)}</span></div>'
            f'<svg viewBox="0 {_TOP} {_W} {_H - _TOP}" role="img" font-family="{text(FONT["family"])}" '
            f'aria-label="{text(g.title)}: {value_text} ({text(g.other)}: {ref_text})" '
            f'data-value="{value_text.rstrip("%")}" data-reference="{ref_text.rstrip("%")}" '
            f'data-title="{text(g.title)}">{"".join(parts)}</svg></div>')


def gauges_html(gauges: tuple[Gauge, ...], alt: str) -> str:
    """The gauges side by side in one element (they stay side by side on a phone), described for a
    screen reader by ``alt``."""
    return (f'<div class="gl-gauges" role="group" aria-label="{html.escape(alt)}">'
            + "".join(gauge_svg(g) for g in gauges) + "</div>")
