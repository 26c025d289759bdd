"""``ui.bars``: page 01's breakdown and page 03's Monte Carlo strip as HTML. Each segment is as wide as
its share, labelled only where it has room, the strip has one cell per draft and its colour by fate,
and nothing in a text or a colour becomes markup or ends the markdown's HTML block."""

from __future__ import annotations

import math
import re
from html import unescape
from html.parser import HTMLParser

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sim.speculative import simulate_rounds
from ui import bars
from ui.bars import Cell, Part, stacked_bars_html, strip_html
from ui.fig_speculative import STRIP_ROUNDS, rounds_html
from ui.theme import COLORS

PARTS = [Part("a", "#009E73"), Part("b", "#CC79A7"), Part("c", COLORS["idle"])]


def _segments(html: str) -> list[list[tuple[str, float, str]]]:
    """Per bar: (part, width %, label) of each segment."""
    rows = re.findall(r'<div class="gl-bars-track"[^>]*>(.*?)</div>', html)
    return [[(p, float(w), label) for w, p, label in re.findall(
        r'style="width: ([0-9.]+)%;[^"]*"[^>]*data-part="([^"]*)" data-value="[0-9.]+">([^<]*)</span>', row)]
        for row in rows]


@given(st.lists(st.floats(0, 100), min_size=3, max_size=3))
def test_segments_are_as_wide_as_their_share(values):
    (bar,) = _segments(stacked_bars_html("t", [("row", values)], PARTS, axis_title="x", alt="x"))
    shown = {p: (w, label) for p, w, label in bar}
    for part, v in zip(PARTS, values, strict=True):
        if v <= 0:
            assert part.name not in shown
            continue
        w, label = shown[part.name]
        assert w == pytest.approx(v, abs=1e-3)
        assert label == (f"{v:.0f}%" if v >= 6 else "")


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -3.0, 250.0])
def test_shares_outside_0_100_are_clipped_or_dropped(bad):
    """A share over 100 is drawn as 100; a negative or non-finite one is not drawn."""
    html = stacked_bars_html("t", [("row", [bad, 10, 10])], PARTS, axis_title="x", alt="x")
    (bar,) = _segments(html)
    assert all(0 < w <= 100 for _, w, _ in bar)
    assert "nan" not in html.lower() and "inf" not in html.lower()


def test_a_row_needs_one_value_per_part():
    with pytest.raises(ValueError):
        stacked_bars_html("t", [("row", [1, 2])], PARTS, axis_title="x", alt="x")


@pytest.mark.parametrize("name", sorted(COLORS))
def test_text_on_a_segment_is_the_colour_that_contrasts_more(name):
    """Against every colour of the theme: the text colour chosen has the higher WCAG contrast."""
    color = COLORS[name]
    chosen = bars._text_color(color)
    other = "white" if chosen == COLORS["text"] else COLORS["text"]
    as_hex = {"white": "#FFFFFF"}
    assert bars.contrast(as_hex.get(chosen, chosen), color) >= bars.contrast(as_hex.get(other, other), color)


def test_contrast_is_wcags_ratio():
    assert bars.contrast("#000000", "#FFFFFF") == pytest.approx(21.0)
    assert bars.contrast("#777777", "#FFFFFF") == pytest.approx(4.48, abs=0.01)
    assert bars.contrast("red", "#FFFFFF") == 1.0  # not a hex colour: no claim
    assert bars._text_color("red") == "white"


@pytest.mark.parametrize("alpha", [0.0, 0.35, 0.8, 1.0])
@pytest.mark.parametrize("k", [1, 4, 16])
def test_the_strip_has_a_cell_per_draft_coloured_by_its_fate(alpha, k):
    rounds = simulate_rounds(alpha, k)
    html = rounds_html(rounds, alt="x")
    rows = re.findall(r'<div class="gl-cells" role="img"[^>]*>(.*?)</div>', html)
    assert len(rows) == STRIP_ROUNDS
    for row, accepted in zip(rows, rounds.accepted[:STRIP_ROUNDS], strict=True):
        fates = [unescape(f) for f in re.findall(r'data-part="([^"]+)"', row)]
        assert len(fates) == k + 1
        expected = ["accepted draft"] * int(accepted) + (["rejected draft"] if accepted < k else [])
        expected += ["not reached"] * (k - len(expected))
        assert fates == [*expected, "target's token (bonus or correction)"]
        tip = unescape(re.findall(r'title="([^"]+)"', row)[-1])
        assert tip.split(" = ", 1)[1].split(": ", 1)[1].startswith("bonus" if accepted == k else "correction")
    assert html.count("✓") == int(rounds.accepted[:STRIP_ROUNDS].sum())
    # the legend names only the fates that occur, in a fixed order
    legend = [unescape(n) for n in
              re.findall(r'<span class="gl-item"[^>]*><span[^>]*></span>([^<]+)</span>', html)]
    order = ["accepted draft", "rejected draft", "not reached", "target's token (bonus or correction)"]
    assert legend == [name for name in order if name in legend]
    assert legend[-1] == order[-1]
    assert ("accepted draft" in legend) == bool(rounds.accepted[:STRIP_ROUNDS].any())


def test_the_strip_needs_one_entry_per_row():
    cell = Cell(Part("p", "#000000"), "x", "tip")
    with pytest.raises(ValueError):
        strip_html("t", ["r1", "r2"], [[1]], {1: cell}, [cell, cell], columns=["1"], last_column="t",
                   axis_title="x", alt="x")


class _Tags(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags, self.attrs, self.styles = set(), set(), []

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        self.attrs |= {name for name, _ in attrs}
        self.styles += [value for name, value in attrs if name == "style"]


_HOSTILE = st.text(max_size=30) | st.sampled_from([
    '<img src=x onerror="alert(1)">', "<b>s</b>", "[x](https://example.invalid)", '"><script>1</script>',
    "a\n\n<img src=x>", "`code`", "javascript:alert(1)"])


@given(_HOSTILE, _HOSTILE)
def test_texts_and_colours_are_never_markup(text, color):
    """Whatever the texts and colours hold, the HTML has only its own elements and attributes, no blank
    line (which would end the markdown's HTML block), and every style is one the module writes."""
    part = Part(text, color)
    cell = Cell(part, text, text)
    for html in (stacked_bars_html(text, [(text, [50, 50])], [part, part], axis_title=text, alt=text,
                                   unit=text),
                 strip_html(text, [text], [[1]], {1: cell}, [cell], columns=[text], last_column=text,
                            axis_title=text, alt=text)):
        assert len(html.splitlines()) == 1  # no line break of any kind
        parts = _Tags()
        parts.feed(html)
        assert parts.tags <= {"div", "p", "strong", "span"}
        assert parts.attrs <= {"class", "role", "aria-label", "aria-hidden", "style", "title", "data-part",
                               "data-value"}
        for style in parts.styles:
            assert re.fullmatch(r"(width: [0-9.]+%; )?background: [^;<>\"]+; color: [^;<>\"]+"
                                r"|left: \d+%|border-top: [^;]+|background: [^;<>\"]+", style), style
            assert "url(" not in style.lower() and "expression" not in style.lower()


def test_no_label_is_shown_for_a_share_too_thin_to_hold_it():
    html = stacked_bars_html("t", [("row", [94.5, 5.5, 0])], PARTS, axis_title="x", alt="x")
    (bar,) = _segments(html)
    assert [label for _, _, label in bar] == ["94%", ""]  # 94.5 rounds half to even
    assert math.isclose(sum(w for _, w, _ in bar), 100)
