"""benchmarks/bare_compare.py's pages: the bare page, and the bare page drawing the app's own figures
(``--real-figures``). The benchmark's timing runs a real browser and is not part of the suite; what is
tested here is that the pages it times draw what it says."""

import json

from streamlit.testing.v1 import AppTest

from benchmarks.bare_compare import BARE_APP, MAIN, NOT_A_FIGURE, REAL_APP, key_chart, real_figures
from benchmarks.figure_redraw import CHANGES


def _figure(tag: str) -> dict:
    return {"data": [{"type": "scatter", "x": [0, 1], "y": [1, 2], "name": tag}], "layout": {}}


def _names(at: AppTest) -> dict[str, str]:
    """{chart key: the name of its first trace}."""
    out = {}
    for chart in at.get("plotly_chart"):
        spec = json.loads(chart.proto.spec)
        out[chart.proto.id.rsplit("-", 1)[-1]] = spec["data"][0].get("name")
    return out


def test_every_main_control_has_a_figure_to_capture():
    """--real-figures captures each control's figures through benchmarks.figure_redraw's changes."""
    for _, control in MAIN:
        assert control.key in CHANGES, control.key
    assert {control.chart for _, control in MAIN} >= NOT_A_FIGURE
    assert key_chart("batching_continuous") == "batching_gauges"


def test_real_figures_are_captured_for_every_watched_chart_but_page_01s_gauges(monkeypatch):
    import ui.layout
    import ui.sim_cache
    import ui.theme

    # real_figures() turns validation and the pause off for the benchmark: restored after this test
    monkeypatch.setattr(ui.theme, "VALIDATE_FIGURES", ui.theme.VALIDATE_FIGURES)
    monkeypatch.setattr(ui.layout, "SEND_FIRST_S", ui.layout.SEND_FIRST_S)
    # The pages cache their figures process-wide: emptied before, so the capture builds its own, and
    # after, so no later test in this worker draws one built without validation.
    ui.sim_cache.clear_all()
    try:
        got = real_figures()
    finally:
        ui.sim_cache.clear_all()
    assert set(got) == {control.chart for _, control in MAIN} - NOT_A_FIGURE
    for chart, (a, b) in got.items():
        assert a != b, chart  # the control changes its figure


def test_bare_page_runs(tmp_path):
    script = tmp_path / "bare.py"
    script.write_text(BARE_APP)
    at = AppTest.from_file(str(script)).run()
    assert not at.exception
    assert set(_names(at)) == {control.chart for _, control in MAIN}


def test_real_figures_page_alternates_the_apps_figures(tmp_path):
    """Each watched chart is the captured figure for the control's first value, and the other one once
    the control moves; moving it back brings the first again."""
    figures = tmp_path / "figures.json"
    figures.write_text(json.dumps({control.chart: [_figure(f"{control.key} a"), _figure(f"{control.key} b")]
                                   for _, control in MAIN}))
    script = tmp_path / "real.py"
    script.write_text(REAL_APP.replace("FIGURES_JSON", repr(str(figures))))
    at = AppTest.from_file(str(script)).run()
    assert not at.exception
    assert _names(at) == {control.chart: f"{control.key} a" for _, control in MAIN}
    at.toggle(key="paging_paged").set_value(True).run()
    assert _names(at)["paging_pool"] == "paging_paged b"
    assert _names(at)["spec_alpha_chart"] == "spec_alpha a"  # the other charts stay
    at.toggle(key="paging_paged").set_value(False).run()
    assert _names(at)["paging_pool"] == "paging_paged a"


def test_real_figures_page_draws_the_bare_chart_where_the_app_has_no_figure(tmp_path):
    figures = tmp_path / "figures.json"
    figures.write_text(json.dumps({control.chart: [_figure("a"), _figure("b")] for _, control in MAIN
                                   if control.chart not in NOT_A_FIGURE}))
    script = tmp_path / "real.py"
    script.write_text(REAL_APP.replace("FIGURES_JSON", repr(str(figures))))
    at = AppTest.from_file(str(script)).run()
    assert not at.exception
    assert _names(at)["batching_gauges"] is None  # the bare page's unnamed three-point line


def test_sidebar_page_draws_the_apps_own_sidebar(tmp_path):
    """--sidebar's page: the bare page's charts, and in its sidebar every widget of the app's setup
    (the same keys), the GPU among them, which still drives its chart."""
    from benchmarks.bare_compare import SIDEBAR_APP

    assert SIDEBAR_APP != BARE_APP
    script = tmp_path / "sidebar.py"
    script.write_text(SIDEBAR_APP)
    at = AppTest.from_file(str(script)).run()
    assert not at.exception, [e.value for e in at.exception]
    assert set(_names(at)) == {control.chart for _, control in MAIN}
    keys = {w.key for kind in ("selectbox", "radio", "slider", "number_input", "button")
            for w in at.sidebar.get(kind)}
    assert {"gpu", "model", "weights", "kv", "gpus", "price", "compute_eff", "memory_eff",
            "overhead_us", "seq_host_us", "graph_us", "launch_us", "setup_reset"} <= keys
    before = json.loads(at.get("plotly_chart")[-1].proto.spec)["data"][0]["y"]
    at.selectbox(key="gpu").set_value("A100 80GB SXM").run()
    assert not at.exception
    assert json.loads(at.get("plotly_chart")[-1].proto.spec)["data"][0]["y"] != before
