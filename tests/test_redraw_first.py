"""On a redraw, pages 01 (after a setting moved), 03 and 04 send the chart their main control moves
before their widgets and headline numbers (``ui.layout.redraw_values``), and the page they draw is the
one a reader opening the same link gets in reading order: the same chart, numbers and text."""

from __future__ import annotations

import json

import pytest
from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

import ui.layout
from sim import speculative as spec
from sim.batching import WORKLOADS
from tests.conftest import open_app


def _page(at) -> dict:
    """What a reader sees: every chart's figure by key, every metric, the page's text."""
    return {
        "charts": {c.proto.id.split("-")[-1]: json.loads(c.proto.spec) for c in at.get("plotly_chart")},
        "metrics": [(m.label, m.value, m.proto.delta) for m in at.metric],
        "text": [m.value for m in at.markdown] + [c.value for c in at.caption] + [i.value for i in at.info]
        + [e.value for e in at.error] + [w.value for w in at.warning],
    }


@pytest.fixture
def sent_first(monkeypatch):
    """{chart key: the widget keys this run had drawn when that chart went out}, per run."""
    seen: dict[str, set[str]] = {}
    chart = ui.layout.chart

    def recording_chart(fig, *, key, **kwargs):
        ctx = get_script_run_ctx()
        seen[key] = {wid.rsplit("-", 1)[-1] for wid in ctx.shared.widget_ids_this_run.snapshot()}
        return chart(fig, key=key, **kwargs)

    monkeypatch.setattr(ui.layout, "chart", recording_chart)
    return seen


#: (page, its main chart, the page's widgets it must go out before, a reader's change, that change's link)
CASES = [
    ("app_pages/speculative.py", "spec_alpha_chart", {"spec_alpha", "spec_k", "spec_method"},
     lambda at: at.slider(key="spec_alpha").set_value(0.55), {"spec_alpha": "0.55"}),
    ("app_pages/speculative.py", "spec_alpha_chart", {"spec_alpha", "spec_k", "spec_method"},
     lambda at: at.select_slider(key="spec_batch").set_value(64), {"spec_batch": "64"}),
    ("app_pages/speculative.py", "spec_alpha_chart", {"spec_alpha", "spec_k", "spec_method"},
     lambda at: at.radio(key="spec_method").set_value("Medusa"), {"spec_method": "Medusa"}),
    ("app_pages/speculative.py", "spec_alpha_chart", {"spec_alpha", "spec_k", "spec_method"},
     lambda at: at.radio(key="spec_method").set_value("Manual").run()
     .slider(key="spec_draft_cost").set_value(0.2),
     {"spec_method": "Manual", "spec_draft_cost": "0.2"}),
    ("app_pages/watch.py", "watch_bars", {"watch_ttft", "watch_tpot"},
     lambda at: at.selectbox(key="gpu").set_value("A100 80GB SXM"), {"gpu": "A100 80GB SXM"}),
    ("app_pages/watch.py", "watch_bars", {"watch_ttft", "watch_tpot"},
     lambda at: at.slider(key="watch_tpot").set_value(80.0), {"watch_tpot": "80"}),
    ("app_pages/batching.py", "batching_timeline", {"batching_slots", "batching_continuous"},
     lambda at: at.select_slider(key="batching_slots").set_value(32), {"batching_slots": "32"}),
    ("app_pages/batching.py", "batching_timeline", {"batching_slots", "batching_continuous"},
     lambda at: at.toggle(key="batching_continuous").set_value(True).run()
     .select_slider(key="batching_requests").set_value(200),
     {"batching_continuous": "true", "batching_requests": "200"}),
    ("app_pages/batching.py", "batching_timeline", {"batching_slots", "batching_continuous"},
     lambda at: at.radio(key="batching_load").set_value("poisson").run()
     .select_slider(key="batching_rate").set_value(4),
     {"batching_load": "Poisson arrivals", "batching_rate": "4"}),  # a link names the option's label
    ("app_pages/batching.py", "batching_timeline", {"batching_slots", "batching_continuous"},
     lambda at: at.selectbox(key="batching_workload").set_value("fixed"),
     {"batching_workload": WORKLOADS["fixed"].label}),
]


@pytest.mark.parametrize(("page", "chart", "widgets", "change", "link"), CASES,
                         ids=[f"{p.split('/')[-1][:-3]}-{'-'.join(link)}" for p, _, _, _, link in CASES])
def test_redraw_sends_the_chart_first_and_draws_the_linked_page(sent_first, page, chart, widgets, change,
                                                                link):
    at = open_app(page)
    assert not at.exception
    assert widgets <= sent_first[chart], "a first view keeps the reading order"
    change(at).run()
    assert not at.exception
    assert not widgets & sent_first[chart], f"the redraw sent {chart} after {widgets & sent_first[chart]}"
    fresh = open_app(page, link)
    assert not fresh.exception
    assert _page(at) == _page(fresh)


def test_an_early_chart_for_other_values_reruns_in_reading_order(monkeypatch):
    """Should the widgets ever return other values than the state the early chart used, the page runs
    again in reading order, so it never keeps a chart for another setting."""
    at = open_app("app_pages/speculative.py")
    real = ui.layout.redraw_values
    calls = []

    def stale(keys):
        values = real(keys)
        calls.append(values is not None)
        return values if values is None else {**values, "spec_alpha": 0.31}

    monkeypatch.setattr(ui.layout, "redraw_values", stale)
    at.slider(key="spec_alpha").set_value(0.55).run()
    assert not at.exception
    assert calls[:2] == [True, False], "the early chart was found wrong, and the rerun drew in reading order"
    assert _page(at) == _page(open_app("app_pages/speculative.py", {"spec_alpha": "0.55"}))


def test_a_slider_drawn_for_the_first_time_keeps_the_reading_order(sent_first):
    """Manual's draft-cost slider has no value before its first draw: that run is in reading order."""
    at = open_app("app_pages/speculative.py")
    at.radio(key="spec_method").set_value("Manual").run()
    assert not at.exception
    assert "spec_alpha" in sent_first["spec_alpha_chart"]
    assert _page(at) == _page(open_app("app_pages/speculative.py", {"spec_method": "Manual"}))


def test_a_setting_that_does_not_fit_sends_no_early_chart(sent_first):
    """Where the page's settings do not fit, no chart goes out before the notice that says so."""
    at = open_app("app_pages/speculative.py")
    at.select_slider(key="spec_batch").set_value(1024)
    at.select_slider(key="spec_context").set_value(32768)
    sent_first.clear()
    at.run()
    assert not at.exception
    assert "spec_alpha_chart" not in sent_first and not at.get("plotly_chart")
    assert "do not fit in memory" in at.error[0].value


@pytest.mark.parametrize("method", list(spec.METHODS))
def test_every_drafting_method_redraws_as_its_link(sent_first, method):
    """Each method's preset, then a move of α: the early chart and the page equal the link's."""
    at = open_app("app_pages/speculative.py", {"gpu": "A100 80GB SXM", "model": "Qwen3-30B-A3B"})
    at.radio(key="spec_method").set_value(method).run()
    if method == "Manual":  # its draft-cost slider is drawn for the first time in that run
        at.run()
    at.slider(key="spec_alpha").set_value(0.62).run()
    assert not at.exception
    assert "spec_alpha" not in sent_first["spec_alpha_chart"]
    link = {"gpu": "A100 80GB SXM", "model": "Qwen3-30B-A3B", "spec_method": method, "spec_alpha": "0.62"}
    assert _page(at) == _page(open_app("app_pages/speculative.py", link))


def test_page04_setup_whose_weights_do_not_fit_sends_no_chart(sent_first):
    """A sidebar change to a card the weights do not fit: the page stops at its notice, early or not."""
    at = open_app("app_pages/watch.py")
    at.selectbox(key="model").set_value("Llama-3.1-70B").run()
    sent_first.clear()
    at.selectbox(key="gpu").set_value("L4").run()
    assert not at.exception
    assert not sent_first and not at.get("plotly_chart")
    assert "does not fit in memory" in at.error[0].value


def test_back_and_forward_keep_the_reading_order(sent_first, monkeypatch):
    """On a Back or Forward the widgets take the URL's values as they are drawn while the session still
    holds the ones the reader left: no early chart then (it would be for the setting left), no rerun,
    and the page equals the link; the next change is early again."""
    from streamlit.runtime.scriptrunner_utils.script_run_context import ScriptRunContext

    at = open_app("app_pages/speculative.py")
    at.slider(key="spec_alpha").set_value(0.55).run()
    at.slider(key="spec_alpha").set_value(0.70).run()
    history = {"on": True}
    reset = ScriptRunContext.reset

    def navigating(self, *args, **kwargs):  # the run the browser's Back asks for (Streamlit 1.67's flag)
        if history["on"]:
            kwargs["is_history_navigation"] = True
        return reset(self, *args, **kwargs)

    def no_early_chart(early, drawn):
        assert early is None, f"an early chart for {early} on Back, where the URL says {drawn}"

    monkeypatch.setattr(ScriptRunContext, "reset", navigating)
    monkeypatch.setattr(ui.layout, "check_redraw_values", no_early_chart)
    at.query_params["spec_alpha"] = "0.55"  # Back: the URL of the run before
    sent_first.clear()
    at.run()
    assert not at.exception
    assert "spec_alpha" in sent_first["spec_alpha_chart"], "Back draws in reading order"
    assert at.slider(key="spec_alpha").value == pytest.approx(0.55)
    assert _page(at) == _page(open_app("app_pages/speculative.py", {"spec_alpha": "0.55"}))
    history["on"] = False
    monkeypatch.setattr(ui.layout, "check_redraw_values", lambda early, drawn: None)
    at.slider(key="spec_alpha").set_value(0.6).run()
    assert not at.exception and "spec_alpha" not in sent_first["spec_alpha_chart"]


def test_page01_toggle_alone_keeps_the_reading_order_with_its_gauges_first(sent_first):
    """The toggle moves no setting of the run: the gauges, above the timeline, go out first (the
    page's own send order) and the timeline follows the widgets, as on a first view."""
    at = open_app("app_pages/batching.py")
    at.select_slider(key="batching_slots").set_value(32).run()
    at.toggle(key="batching_continuous").set_value(True).run()
    assert not at.exception
    assert {"batching_slots", "batching_continuous"} <= sent_first["batching_timeline"]
    link = {"batching_slots": "32", "batching_continuous": "true"}
    assert _page(at) == _page(open_app("app_pages/batching.py", link))


def test_page01_settings_that_do_not_fit_send_no_early_timeline(sent_first):
    """Slots past what the card holds for that workload stop the page at its notice, before any chart."""
    at = open_app("app_pages/batching.py", {"gpu": "L4", "model": "Llama-3.1-8B"})
    sent_first.clear()
    at.select_slider(key="batching_slots").set_value(256).run()
    assert not at.exception
    assert "batching_timeline" not in sent_first and not at.get("plotly_chart")
    assert "do not fit" in at.error[0].value
    # The controls were drawn before the page stopped (a control not drawn would lose its value).
    assert at.select_slider(key="batching_slots").value == 256
    assert at.toggle(key="batching_continuous").value is False
    # So is the workload's lengths, which the notice's "pick a workload" needs.
    assert any(c.value.startswith(f"{WORKLOADS['anyscale'].label}: prompts") for c in at.caption)
