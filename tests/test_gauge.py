"""``ui.gauge``: page 01's gauges as SVG. The band ends where the reading is, the tick sits at the other
mode's reading, the printed numbers and the difference match the readings, and nothing in a label
becomes markup."""

from __future__ import annotations

import math
import re
from html.parser import HTMLParser

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ui import gauge
from ui.gauge import Gauge, gauge_svg, gauges_html
from ui.theme import COLORS

CX, CY = gauge._CX, gauge._CY


def _angle(x: float, y: float) -> float:
    """The share of the half ring at point (x, y): 0 at the left end, 1 at the right."""
    return 1 - math.atan2(CY - y, x - CX) / math.pi


def _band_end(svg: str) -> float | None:
    paths = re.findall(r'<path d="M[^"]*A[\d.]+ [\d.]+ 0 0 1 ([\d.]+) ([\d.]+) ', svg)
    return _angle(float(paths[1][0]), float(paths[1][1])) if len(paths) > 1 else None


def _tick(svg: str) -> float:
    tick = r'<line x1="([\d.]+)" y1="([\d.]+)" x2="([\d.]+)" y2="([\d.]+)" stroke="[^"]+" stroke-width="3"'
    x1, y1, x2, y2 = map(float, re.findall(tick, svg)[0])
    assert _angle(x1, y1) == pytest.approx(_angle(x2, y2), abs=1e-3)  # radial
    return _angle(x1, y1)


@given(st.floats(0, 1), st.floats(0, 1))
def test_band_and_tick_sit_at_the_readings(value, reference):
    svg = gauge_svg(Gauge(value, reference, "GPU utilization", "what nvidia-smi shows", "#6B7682"))
    end = _band_end(svg)
    if value > 1e-3:
        assert end == pytest.approx(value, abs=2e-3)
    assert _tick(svg) == pytest.approx(reference, abs=2e-3)
    shown = re.search(r'<text class="number"[^>]*>([\d.]+)%</text>', svg).group(1)
    assert float(shown) == pytest.approx(100 * value, abs=0.051)
    assert f'data-value="{shown}"' in svg


@pytest.mark.parametrize(("value", "reference", "text", "color"), [
    (0.956, 0.963, "▼−0.7 pp", COLORS["waste"]),
    (1.0, 0.216, "▲+78.4 pp", COLORS["useful"]),
    (0.5, 0.5, "0.0 pp", COLORS["muted"]),
])
def test_the_difference_in_points_has_its_sign_and_colour(value, reference, text, color):
    svg = gauge_svg(Gauge(value, reference, "Useful work", "x", "#009E73"))
    assert f'fill="{color}">{text}</text>' in svg


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -0.5, 1.7])
def test_readings_outside_the_ring_are_clipped_not_drawn_outside(bad):
    svg = gauge_svg(Gauge(bad, bad, "t", "s", "#000000"))
    end = _band_end(svg)
    assert end is None or 0 <= end <= 1 + 1e-9
    assert 0 <= _tick(svg) <= 1 + 1e-9
    if not math.isfinite(bad):  # no "nan%" or "inf%" printed or read out
        assert "nan" not in svg.lower() and "inf" not in svg.lower()
        assert '<text class="number" x="150" y="153" text-anchor="middle" font-size="30" ' in svg
        assert re.search(r'<text class="number"[^>]*>–</text>', svg)


class _Tags(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags, self.text = set(), ""

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        self.attrs = getattr(self, "attrs", set()) | {name for name, _ in attrs}

    def handle_data(self, data):
        self.text += data


@given(st.text(max_size=40) | st.sampled_from(['<img src=x onerror="alert(1)">', "<b>s</b>",
                                              "[x](https://example.invalid)", '"><script>1</script>']))
def test_labels_are_text(label):
    """Whatever the labels hold, the drawing has only its own elements and attributes, and the labels
    are read as the text they are."""
    parts = _Tags()
    parts.feed(gauges_html((Gauge(0.5, 0.4, label, label, "#000000", label),), alt=label))
    assert parts.tags == {"div", "br", "span", "svg", "rect", "path", "line", "text"}
    assert parts.attrs == {"class", "role", "aria-label", "viewbox", "font-family", "data-value",
                           "data-reference", "data-title", "x", "y", "width", "height", "fill", "d",
                           "stroke", "stroke-width", "x1", "y1", "x2", "y2", "text-anchor", "font-size"}
    assert parts.text.startswith(label + label)  # the title and the grey line under it
