"""scripts/hostile_inputs.py's pasted inputs: what it generates, and how it tells live markup from text
shown as text (the long run's and CI's sample's verdicts rest on these)."""

from __future__ import annotations

import json
import random
from urllib.parse import parse_qsl

import pytest
from streamlit.proto.Code_pb2 import Code
from streamlit.proto.Markdown_pb2 import Markdown
from streamlit.proto.PlotlyChart_pb2 import PlotlyChart
from streamlit.proto.TextArea_pb2 import TextArea

from calib.parsers import BenchmarkParseError, parse_benchmark
from scripts.hostile_inputs import (
    CONFIG_LINK,
    MARK,
    generate_paste,
    hostile_benchmark,
    hostile_config,
    live_markup,
)
from scripts.st_client import _element_value, encode
from sim.configs import ConfigError, load_text
from ui.custom_model import CUSTOM_MODEL, TEXT_KEY


def _chart(text: str) -> bytes:
    spec = {"data": [{"type": "bar", "y": [text], "x": [1]}], "layout": {}}
    return PlotlyChart(spec=json.dumps(spec)).SerializeToString()


def test_markup_is_told_from_text_shown_as_text():
    link = f"[click](https://{MARK}/a)"
    assert live_markup("markdown", Markdown(body=link).SerializeToString())
    assert live_markup("alert", Markdown(body=link).SerializeToString())  # any other kind counts
    assert not live_markup("code", Code(code_text=link).SerializeToString())
    assert not live_markup("markdown", Markdown(body="no marker").SerializeToString())
    # In a chart: escaped text is text; a tag Plotly would draw is not.
    assert not live_markup("plotly_chart", _chart(f"&lt;a href=https://{MARK}&gt;x&lt;/a&gt;"))
    assert not live_markup("plotly_chart", _chart(f"run https://{MARK} ok"))
    assert live_markup("plotly_chart", _chart(f"<a href='https://{MARK}'>x</a>"))
    assert live_markup("plotly_chart", _chart(f"<img src=https://{MARK}/i.png>"))
    assert live_markup("plotly_chart", _chart("<b id=pwned>x</b>"))  # an injected element, no host
    assert live_markup("markdown", Markdown(body="<b id=pwned>x</b>").SerializeToString())
    # A text area shows its own value as text; its label and help are markdown.
    assert not live_markup("text_area", TextArea(label="config.json", value=link).SerializeToString())
    assert not live_markup("text_area", TextArea(label="config.json", default=link).SerializeToString())
    assert live_markup("text_area", TextArea(label="config.json", help=link).SerializeToString())
    assert not live_markup("dataframe", b"any bytes " + MARK.encode())


def test_pastes_are_reproducible_and_of_both_kinds():
    assert generate_paste(random.Random(7)) == generate_paste(random.Random(7))
    assert parse_qsl(CONFIG_LINK) == [("model", CUSTOM_MODEL)]  # the sidebar's custom model, by link
    rng = random.Random(0)
    cases = [generate_paste(rng) for _ in range(200)]
    assert {key for _, _, key, _ in cases} == {TEXT_KEY, "yours_text"}
    for path, link, key, _ in cases:
        if key == TEXT_KEY:  # a config.json, on any page
            assert link == CONFIG_LINK
        else:  # a benchmark, on Your numbers
            assert (path, link) == ("your-numbers", "")
    assert len({path for path, _, key, _ in cases if key == TEXT_KEY}) > 3


def test_generated_configs_are_both_read_and_refused():
    """A generator whose inputs were all refused would never test the page past its error message."""
    rng = random.Random(0)
    read = refused = 0
    for _ in range(300):
        try:
            load_text(hostile_config(rng), name="x")
            read += 1
        except ConfigError:
            refused += 1
    assert read >= 20 and refused >= 100, (read, refused)


def test_generated_benchmarks_are_both_read_and_refused_and_carry_the_marker():
    rng = random.Random(0)
    read = refused = 0
    for _ in range(300):
        text = hostile_benchmark(rng)
        assert MARK in text
        try:
            parse_benchmark(text)
            read += 1
        except BenchmarkParseError:
            refused += 1
    assert read >= 20 and refused >= 100, (read, refused)


def test_a_text_area_is_set_as_a_browser_would():
    el = TextArea(id="$$ID-abc-yours_text", label="Benchmark output or rows", max_chars=5, default="")
    assert _element_value("text_area", el).string_value == ""
    state, _ = encode("text_area", el, "abcde")
    assert state.string_value == "abcde"
    with pytest.raises(ValueError, match="max_chars"):  # the frontend drops a longer paste whole
        encode("text_area", el, "abcdef")
    el = TextArea(id="$$ID-abc-x", label="x")  # no default, nothing typed: nothing sent
    assert _element_value("text_area", el) is None
