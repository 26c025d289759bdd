"""``ui.layout.send_what_is_drawn``: a page's run pauses after its main chart so the server sends it
before the rest of the page, unless another reader's run waits for the page lock; the pages mark one
main chart each (page 01: its gauges when the toggle alone moved, its slot timeline when a setting did)."""

from __future__ import annotations

import ast
from pathlib import Path
from types import SimpleNamespace

import pytest
import streamlit as st

import ui.layout
from tests.conftest import ROOT, open_app


@pytest.fixture
def sleeps(monkeypatch):
    slept: list[float] = []
    monkeypatch.setattr(ui.layout.time, "sleep", slept.append)
    monkeypatch.setattr(ui.layout, "SEND_FIRST_S", 0.012)
    # a quiet server: no other reader's run just ended (an earlier test's AppTest run would count)
    monkeypatch.setattr(ui.layout.SCRIPT_LOCK, "busy", lambda: False)
    monkeypatch.setattr(ui.layout, "_redrawing_the_same_page", lambda: True)
    return slept


def test_pauses_when_nobody_waits(sleeps):
    ui.layout.send_what_is_drawn()
    assert sleeps == [0.012]


def test_no_pause_while_the_server_is_busy(sleeps, monkeypatch):
    monkeypatch.setattr(ui.layout.SCRIPT_LOCK, "busy", lambda: True)
    ui.layout.send_what_is_drawn()
    assert sleeps == []


def test_no_pause_when_turned_off(sleeps, monkeypatch):
    monkeypatch.setattr(ui.layout, "SEND_FIRST_S", 0.0)
    ui.layout.send_what_is_drawn()
    assert sleeps == []


def test_no_pause_on_a_pages_first_view(sleeps, monkeypatch):
    monkeypatch.setattr(ui.layout, "_redrawing_the_same_page", lambda: False)
    ui.layout.send_what_is_drawn()
    assert sleeps == []


def test_a_page_pauses_on_redraws_only(monkeypatch):
    """Through the app: a page switch is a first view (no pause), a change on the page a redraw."""
    slept: list[float] = []
    monkeypatch.setattr(ui.layout, "time", SimpleNamespace(sleep=slept.append))  # this module's only
    monkeypatch.setattr(ui.layout, "SEND_FIRST_S", 0.04)
    monkeypatch.setattr(ui.layout.SCRIPT_LOCK, "busy", lambda: False)
    at = open_app("app_pages/speculative.py")
    assert slept == []
    at.slider(key="spec_alpha").set_value(0.5).run()
    assert slept == [0.04]
    at.switch_page("app_pages/watch.py").run()
    assert slept == [0.04]
    at.slider(key="watch_ttft").set_value(2.0).run()
    assert slept == [0.04, 0.04]


def _send_first_charts(path: Path) -> list[str]:
    """Keys of the chart() calls in a page that pass send_first."""
    keys = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "chart":
            kw = {k.arg: k.value for k in node.keywords}
            if "send_first" in kw:
                keys.append((node.lineno, ast.unparse(kw["key"])))
    return [key for _, key in sorted(keys)]


@pytest.mark.parametrize("page, keys", [
    ("two_phases.py", ["'phases_roofline'"]),
    ("batching.py", ["'batching_timeline'"]),  # and its gauges (SVG, not a chart: the test below)
    ("paging.py", ["'paging_pool'"]),
    ("speculative.py", ["'spec_alpha_chart'"]),
    ("watch.py", ["'watch_bars'"]),
])
def test_each_page_sends_its_main_chart_first(page, keys):
    assert _send_first_charts(ROOT / "app_pages" / page) == keys


def test_batching_pauses_after_the_gauges_when_the_toggle_alone_moved_else_after_the_timeline(
        monkeypatch):
    paused_after: list[str] = []
    real_chart = ui.layout.chart

    def chart(fig, *, key, send_first=False, **kw):
        real_chart(fig, key=key, **kw)
        if send_first:
            paused_after.append(key)

    monkeypatch.setattr(ui.layout, "chart", chart)
    # the gauges are one SVG element (ui.gauge), followed by the page's own call of the pause
    monkeypatch.setattr(ui.layout, "send_what_is_drawn", lambda: paused_after.append("gauges"))
    at = open_app("app_pages/batching.py")  # a first run: both modes are computed anew
    assert paused_after == []
    at.toggle(key="batching_continuous").set_value(True).run()
    assert paused_after == ["gauges"]
    paused_after.clear()
    at.select_slider(key="batching_slots").set_value(32).run()
    assert paused_after == ["batching_timeline"]


def _in_page_order(node):
    """Every element under an AppTest block, in the order the page shows them."""
    children = getattr(node, "children", None)
    if children is None:
        yield node
        return
    for i in sorted(children):
        yield from _in_page_order(children[i])


def test_speculative_sends_its_main_chart_before_the_strip_above_it(monkeypatch):
    """Page 03 fills its containers out of order: the α chart is made (and sent) before the Monte
    Carlo strip (HTML, ui.bars), which the page still shows above it, and before the batch chart."""
    made: list[str] = []
    real_chart, real_markdown = ui.layout.chart, st.markdown

    def chart(fig, *, key, **kw):
        made.append(key)
        real_chart(fig, key=key, **kw)

    def markdown(body, *args, **kw):
        if 'class="gl-bars gl-strip"' in body:
            made.append("strip")
        return real_markdown(body, *args, **kw)

    monkeypatch.setattr(ui.layout, "chart", chart)
    monkeypatch.setattr(st, "markdown", markdown)
    at = open_app("app_pages/speculative.py")
    at.slider(key="spec_alpha").set_value(0.5).run()
    assert not at.exception
    assert made[-3:] == ["spec_alpha_chart", "strip", "spec_batch_chart"]
    shown = []
    for el in _in_page_order(at.main):
        if el.type == "plotly_chart":
            shown.append(el.proto.id.rsplit("-", 1)[-1])
        elif el.type == "markdown" and 'class="gl-bars gl-strip"' in el.value:
            shown.append("strip")
    assert [s for s in shown if s in ("strip", "spec_alpha_chart", "spec_batch_chart")] == [
        "strip", "spec_alpha_chart", "spec_batch_chart"]
