"""Page 01 through AppTest: the toggle moves useful work by tens of points and utilization by a few, a
lightly loaded server reads as healthy, every widget reruns cleanly, URL parameters set the widgets,
bad URL values fall back to defaults, and the page keeps and resets its settings."""

from __future__ import annotations

import re

import pytest

from tests.conftest import metric, number, open_app, open_data

PAGE = "app_pages/batching.py"


def gauges(at) -> tuple[float, float]:
    """(utilization %, useful work %) as the two gauges show them (ui.gauge: one SVG element; each
    gauge's value is its data-value and the number it prints)."""
    (html,) = [m.value for m in at.markdown if 'class="gl-gauges"' in m.value]
    found = re.findall(r'data-value="([0-9.]+)".*?data-title="([^"]+)".*?<text class="number"[^>]*>'
                       r'([0-9.]+)%</text>', html)
    assert [title for _, title, _ in found] == ["GPU utilization", "Useful work"]
    assert all(value == shown for value, _, shown in found)
    return float(found[0][0]), float(found[1][0])


def seconds(text: str) -> float:
    value, unit = number(text), text.split()[1]
    return value * {"µs": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0, "h": 3600.0}[unit]


@pytest.fixture(scope="module")
def at():
    return open_app(PAGE)


def test_defaults_render_static_with_both_gauges(at):
    assert not at.exception
    assert at.toggle(key="batching_continuous").value is False
    util, good = gauges(at)
    assert util == pytest.approx(93.4, abs=0.5)
    assert good == pytest.approx(21.6, abs=1.0)
    assert number(metric(at, "GPU utilization")) == pytest.approx(util, abs=0.05)
    assert number(metric(at, "Useful work")) == pytest.approx(good, abs=0.05)
    assert len(at.get("plotly_chart")) == 1  # the timeline (the gauges and the breakdown are HTML)
    before = len(at.dataframe)  # the data expander's tables are built only when it opens
    open_data(at, "batching_data")
    assert len(at.dataframe) == before + 2
    table = at.table[0].value
    assert table.columns.tolist() == ["Static", "Continuous"]
    assert table.loc["Utilization", "Static"] == metric(at, "GPU utilization")
    assert table.loc["Useful work (of capacity in demand)", "Static"] == metric(at, "Useful work")
    assert table.loc["Output tok/s", "Static"] == metric(at, "Output tok/s")


@pytest.mark.parametrize("workload", ["anyscale", "anyscale_latency", "chat", "fixed"])
@pytest.mark.parametrize("load", ["burst", "poisson"])
def test_table_and_breakdown_agree_with_the_metrics_on_every_workload_and_load(workload, load):
    """Not only the defaults: on every workload, queued or arriving, the table shows what the metrics
    show for the mode on screen, and each mode's breakdown adds up to its whole capacity."""
    at = open_app(PAGE)
    at.selectbox(key="batching_workload").set_value(workload).run()
    at.radio(key="batching_load").set_value(load).run()
    for continuous in (False, True):
        at.toggle(key="batching_continuous").set_value(continuous).run()
        assert not at.exception
        table, mode = at.table[0].value, "Continuous" if continuous else "Static"
        assert table.loc["Utilization", mode] == metric(at, "GPU utilization")
        assert table.loc["Useful work (of capacity in demand)", mode] == metric(at, "Useful work")
        assert table.loc["Output tok/s", mode] == metric(at, "Output tok/s")
        assert table.loc["Tok/s incl. padding", mode] == metric(at, "Tok/s incl. padding")
        for bar in breakdown(at):
            assert sum(bar.values()) == pytest.approx(100, abs=0.01)
        # The table's capacity split is the chart's and adds up too (it had shown Useful work, a share
        # of the capacity in demand, beside the others: 116 % for continuous batching).
        for col in ("Static", "Continuous"):
            split = [number(table.loc[row, col]) for row in
                     ("Requested tokens", "Padding", "Empty, requests waiting", "Unused, no demand")]
            assert sum(split) == pytest.approx(100, abs=0.3), (col, split)


def breakdown(at) -> list[dict[str, float]]:
    """Each mode's bar of the capacity breakdown (ui.bars: one HTML element), {part: share %}."""
    (html,) = [m.value for m in at.markdown if 'class="gl-bars gl-stacked"' in m.value]
    rows = re.findall(r'<div class="gl-bars-track"[^>]*>(.*?)</div>', html)
    return [{p: float(v) for p, v in re.findall(r'data-part="([^"]+)" data-value="([0-9.]+)"', row)}
            for row in rows]


def test_breakdown_adds_up_and_shows_both_modes_whatever_the_toggle():
    """The breakdown shows both modes whatever the toggle says; each bar adds up to the capacity, and
    continuous batching spends a larger share on requested tokens with no padding."""
    at = open_app(PAGE)
    static, cont = breakdown(at)
    assert sum(static.values()) == pytest.approx(100, abs=0.01)
    assert sum(cont.values()) == pytest.approx(100, abs=0.01)
    assert "Padding" in static and "Padding" not in cont
    assert cont["Requested tokens"] > static["Requested tokens"] + 30
    at.select_slider(key="batching_slots").set_value(8).run()
    static8, cont8 = breakdown(at)
    assert static8 != static and cont8 != cont
    at.toggle(key="batching_continuous").set_value(True).run()
    assert breakdown(at) == [static8, cont8]


def test_toggle_moves_useful_work_by_tens_of_points_and_utilization_by_a_few(at):
    util_s, good_s = gauges(at)
    tok_s = number(metric(at, "Output tok/s"))
    done_s = seconds(metric(at, "All done after"))
    at.toggle(key="batching_continuous").set_value(True).run()
    assert not at.exception
    util_c, good_c = gauges(at)
    assert abs(util_c - util_s) < 3
    assert good_c - good_s > 40
    assert number(metric(at, "Output tok/s")) > 2.5 * tok_s
    assert seconds(metric(at, "All done after")) < 0.5 * done_s
    # the padding counter only exists in static: with continuous, generated = output tokens/s
    assert metric(at, "Tok/s incl. padding") == metric(at, "Output tok/s")
    at.toggle(key="batching_continuous").set_value(False).run()
    assert gauges(at) == (util_s, good_s)


@pytest.mark.parametrize(("kind", "key", "values"), [
    ("select_slider", "batching_slots", [1, 8, 256]),
    ("selectbox", "batching_workload", ["anyscale_latency", "chat", "fixed"]),
    ("select_slider", "batching_requests", [50, 2000]),
])
def test_every_widget_reruns_cleanly(kind, key, values):
    at = open_app(PAGE)
    for value in values:
        for continuous in (False, True):
            at.toggle(key="batching_continuous").set_value(continuous)
            getattr(at, kind)(key=key).set_value(value).run()
            assert not at.exception, (key, value)
            util, good = gauges(at)
            assert 0 <= good <= 100 and 0 <= util <= 100


def test_equal_lengths_control_makes_the_modes_equal():
    at = open_app(PAGE, {"batching_workload": "Equal lengths (control)"})
    static = gauges(at)
    at.toggle(key="batching_continuous").set_value(True).run()
    assert gauges(at) == pytest.approx(static, abs=0.01)


def test_poisson_arrivals_show_the_latency_difference():
    at = open_app(PAGE)
    assert at.select_slider(key="batching_rate").disabled
    at.radio(key="batching_load").set_value("poisson").run()
    assert not at.select_slider(key="batching_rate").disabled
    at.select_slider(key="batching_rate").set_value(4).run()
    assert not at.exception
    ttft_static = seconds(metric(at, "TTFT p50"))
    at.toggle(key="batching_continuous").set_value(True).run()
    ttft_cont = seconds(metric(at, "TTFT p50"))
    assert ttft_cont < 0.5 * ttft_static


def test_a_lightly_loaded_server_reads_healthy_not_failing():
    """8 requests/s: continuous batching does all the work asked of it (useful work 100%) while most of
    its capacity is unused for lack of demand; static batching's waste still shows."""
    at = open_app(PAGE, {"batching_load": "Poisson arrivals", "batching_continuous": "true"})
    assert not at.exception
    assert gauges(at)[1] == pytest.approx(100, abs=0.5)
    assert number(metric(at, "Unused: no demand")) > 50
    at.toggle(key="batching_continuous").set_value(False).run()
    assert gauges(at)[1] < 40


def test_settings_survive_a_visit_to_another_page_and_reset_restores_defaults():
    at = open_app(PAGE)
    at.select_slider(key="batching_slots").set_value(16)
    at.toggle(key="batching_continuous").set_value(True).run()
    at.switch_page("app_pages/two_phases.py").run()
    assert not at.exception
    at.switch_page(PAGE).run()
    assert at.select_slider(key="batching_slots").value == 16
    assert at.toggle(key="batching_continuous").value is True
    at.button(key="batching_reset").click().run()
    assert not at.exception
    assert at.select_slider(key="batching_slots").value == 64
    assert at.toggle(key="batching_continuous").value is False
    at.switch_page("app_pages/two_phases.py").run()
    at.switch_page(PAGE).run()
    assert at.select_slider(key="batching_slots").value == 64  # forgotten, not restored


def test_url_parameters_set_the_widgets():
    at = open_app(PAGE, {"batching_continuous": "true", "batching_slots": "16",
                         "batching_workload": "Chat-like", "batching_requests": "200",
                         "batching_load": "Poisson arrivals", "batching_rate": "4"})
    assert not at.exception
    assert at.toggle(key="batching_continuous").value is True
    assert at.select_slider(key="batching_slots").value == 16
    assert at.selectbox(key="batching_workload").value == "chat"
    assert at.select_slider(key="batching_requests").value == 200
    assert at.radio(key="batching_load").value == "poisson"
    assert at.select_slider(key="batching_rate").value == 4


@pytest.mark.parametrize("params", [
    {"batching_slots": "3"}, {"batching_slots": "100000"}, {"batching_slots": "abc"},
    {"batching_requests": "0"}, {"batching_requests": "99999"}, {"batching_rate": "-1"},
    {"batching_rate": "1e9"}, {"batching_workload": "sharegpt"}, {"batching_load": "closed"},
    {"batching_continuous": "maybe"},
])
def test_bad_url_values_fall_back_to_defaults(params):
    at = open_app(PAGE, params)
    assert not at.exception
    assert at.select_slider(key="batching_slots").value == 64
    assert at.select_slider(key="batching_requests").value == 1000
    assert at.select_slider(key="batching_rate").value == 8
    assert at.selectbox(key="batching_workload").value == "anyscale"
    assert at.radio(key="batching_load").value == "burst"
    assert at.toggle(key="batching_continuous").value is False
    assert gauges(at)[1] == pytest.approx(21.6, abs=1.0)


def _walk(node, out=None) -> list:
    """The elements under ``node`` in page order."""
    out = [] if out is None else out
    for child in getattr(node, "children", {}).values():
        out.append(child)
        _walk(child, out)
    return out


def test_slots_that_do_not_fit_say_so_and_show_no_gauges():
    """64 slots of Anyscale requests need ~5 GiB of KV cache at the fullest step; an L4 serving
    Llama-3.1-8B has ~3.5 GiB left after the weights."""
    at = open_app(PAGE, {"gpu": "L4"})
    assert not at.exception
    assert "not fit in memory" in at.error[0].value
    assert not at.metric and not at.get("plotly_chart")
    # The notice sits where the gauges would, under the toggle and above the settings (on a phone the
    # settings fill the rest of the first screen).
    kinds = ("Toggle", "Error", "SelectSlider")
    order = [type(e).__name__ for e in _walk(at.main) if type(e).__name__ in kinds]
    assert order[:3] == ["Toggle", "Error", "SelectSlider"], order
    at.select_slider(key="batching_slots").set_value(8).run()
    assert not at.exception and at.metric  # 8 slots fit


def test_light_load_does_not_claim_a_kernel_is_always_running():
    """At 1 request a second both modes idle between arrivals (utilization 58-68 %): the box says so,
    and that the requests set the rate, instead of 'a kernel is running either way'. The control
    workload pads nothing, and the box says that instead of 'busy, and useless'."""
    at = open_app(PAGE, {"batching_load": "Poisson arrivals", "batching_rate": "1"})
    assert not at.exception
    (box,) = [i.value for i in at.info if "thesis in one widget" in i.value]
    assert "either way" not in box and "idle part of the time" in box and "requests set the rate" in box
    (box,) = [i.value for i in open_app(PAGE).info if "thesis in one widget" in i.value]
    assert "a kernel is running either way" in box and "busy, and useless" in box
    at = open_app(PAGE, {"batching_workload": "Equal lengths (control)"})
    (box,) = [i.value for i in at.info if "thesis in one widget" in i.value]
    assert "useless" not in box and "this is the control" in box


def test_one_slot_is_not_called_the_control_and_a_growing_queue_is_named():
    """With one slot nothing pads because there is one slot, not because lengths are equal; at 8
    requests a second one slot falls behind (median TTFT ~390 s), and the caption says so instead of
    calling the capacity unused for lack of demand."""
    at = open_app(PAGE, {"batching_slots": "1", "batching_load": "Poisson arrivals"})
    assert not at.exception
    (box,) = [i.value for i in at.info if "thesis in one widget" in i.value]
    assert "this is the control" not in box and "With one slot nothing pads" in box
    assert "both modes keep up" not in box
    caption = next(c.value for c in at.caption if c.value.startswith("Under arrivals"))
    assert "queues grow" in caption and "lack of demand" not in caption


def test_a_tie_in_time_to_first_token_is_not_called_a_win():
    """Poisson 0.5/s: both modes' median TTFT read 15.6 ms; the caption said continuous batching's win
    shows in it. A win needs a clear margin (5 %)."""
    at = open_app("app_pages/batching.py", {"batching_load": "Poisson arrivals", "batching_rate": "0.5",
                                            "batching_continuous": "true"})
    assert not at.exception
    text = " ".join(c.value for c in at.caption)
    assert "win shows in the time to first token" not in text and "not clearly shorter" in text


def test_long_runs_read_in_minutes_not_exponents():
    """One slot and 2,000 requests take half an hour: 'All done after 30.2 min', never '1.81e+03 s'."""
    at = open_app(PAGE, {"batching_slots": "1", "batching_requests": "2000"})
    assert not at.exception
    values = {m.label: m.value for m in at.metric}
    assert values["All done after"].endswith(" min")
    assert not any("e+" in v for v in values.values()), values


CONTROL = {"batching_workload": "Equal lengths (control)", "batching_load": "Poisson arrivals"}


def _caption(at, start: str) -> str:
    return next(c.value for c in at.caption if c.value.startswith(start))


def _thesis(at) -> str:
    return next(i.value for i in at.info if i.value.startswith("**The thesis in one widget.**"))


def test_static_is_behind_wherever_continuous_is_and_finishes_no_sooner():
    """At 64 requests/s of equal lengths on 256 slots neither mode keeps up (8,192 output tok/s asked
    for, about 5,200 and 5,800 delivered): static, whose waits are long from the start, must not read
    as keeping up while continuous does not (sim.batching.Comparison.behind)."""
    at = open_app(PAGE, {**CONTROL, "batching_rate": "64", "batching_slots": "256"})
    assert not at.exception
    caption = _caption(at, "Under arrivals")
    assert "here static and continuous cannot" in caption and "goes unused" not in caption
    # Empty slots while requests wait are static's loss in the control: named, not 'nothing wasted'.
    assert "of the capacity in demand in empty slots while requests wait" in _thesis(at)


def test_a_light_load_does_not_say_arrivals_queue_behind_busy_slots():
    """At 0.5 requests/s 98 % of the slots are unused: both modes admit each arrival at once."""
    at = open_app(PAGE, {**CONTROL, "batching_rate": "0.5"})
    caption = _caption(at, "Under arrivals")
    assert "every slot busy" not in caption and "behind the same queue" not in caption
    assert "with slots to spare both modes admit each arrival at once" in caption
    assert "as they should" not in _thesis(at)  # static's useful work is 82 %, continuous's 100 %


def test_a_later_first_token_under_continuous_batching_is_said_and_explained():
    """Qwen3-30B-A3B on 8 slots: continuous batching's median TTFT is ~15 % longer than static's
    (each arrival prefilled in its own step); the page says so instead of 'not clearly shorter'."""
    at = open_app(PAGE, {**CONTROL, "model": "Qwen3-30B-A3B", "batching_slots": "8", "batching_rate": "8"})
    caption = _caption(at, "Under arrivals")
    assert "continuous batching's first token comes later" in caption
    assert "not clearly shorter" not in caption


def test_a_notice_blames_the_pages_settings_where_they_are_what_does_not_fit():
    """B200 + Llama-3.1-70B holds the model and a batch, but not 64 static slots of this workload: the
    page's own settings are what does not fit, so the lead says so; an L4 cannot hold the weights at
    all, and there the setup does not fit."""
    at = open_app(PAGE, {"gpu": "B200", "model": "Llama-3.1-70B"})
    lead = at.error[0].value
    assert lead.startswith("**These settings do not fit in memory") and "This setup" not in lead
    at = open_app(PAGE, {"gpu": "L4", "model": "Llama-3.1-70B"})
    assert at.error[0].value.startswith("**This setup does not fit in memory")


def test_where_continuous_batching_reads_lower_the_box_says_why():
    """Llama-3.2-1B on a B200, chat lengths, 256 slots: static's padded steps (~7 ms) hide the host's
    0.5 ms a step, continuous batching's short ones (~1.4 ms) do not, so the gauge reads ~19 points
    lower for the mode that delivers ~11x the tokens. The box says so and why; at the defaults it does
    not."""
    at = open_app(PAGE, {"gpu": "B200", "model": "Llama-3.2-1B", "batching_workload": "Chat-like",
                         "batching_slots": "256", "batching_continuous": "true"})
    assert not at.exception
    util_continuous, _ = gauges(at)
    (box,) = [i.value for i in at.info if "thesis in one widget" in i.value]
    assert "reads **lower** for continuous batching" in box
    assert "time between steps (500 µs a step and 4.3 µs a sequence)" in box
    static = open_app(PAGE, {"gpu": "B200", "model": "Llama-3.2-1B", "batching_workload": "Chat-like",
                             "batching_slots": "256"})
    assert gauges(static)[0] - util_continuous > 10
    (box,) = [i.value for i in open_app(PAGE).info if "thesis in one widget" in i.value]
    assert "lower" not in box
    # Under light Poisson arrivals continuous batching also reads lower, but for another reason: it
    # finishes each request sooner and waits for the next (its host share is the smaller one).
    at = open_app(PAGE, {"batching_load": "Poisson arrivals", "batching_rate": "1",
                         "batching_workload": "Anyscale benchmark"})
    (box,) = [i.value for i in at.info if "thesis in one widget" in i.value]
    assert "reads **lower** for continuous batching: it gets each request done sooner" in box
    assert "between steps, when the GPU waits" not in box and "the mode that delivers more" not in box


def test_where_continuous_batching_delivers_less_the_box_says_why():
    """gpt-oss-120b on two H200s, equal lengths, Poisson arrivals at 8 a second, 16 slots: each
    arrival's prefill is a step that reads every expert, so continuous batching delivers less than
    static (0.89x). The box names the ratio and that reason."""
    at = open_app(PAGE, {"gpu": "H200 SXM", "gpus": "2", "model": "gpt-oss-120b",
                         "batching_workload": "Equal lengths (control)",
                         "batching_load": "Poisson arrivals", "batching_rate": "8", "batching_slots": "16"})
    assert not at.exception
    (box,) = [i.value for i in at.info if "thesis in one widget" in i.value]
    ratio = re.search(r"continuous batching delivers \*\*([0-9.]+)×\*\*", box)
    assert ratio and float(ratio.group(1)) < 0.95
    assert "reads all the experts' weights" in box


def test_a_bigger_card_that_holds_the_weights_but_not_the_slots_is_named():
    """L4 + Llama-3.1-70B: page 00 sends the reader to the B200 or MI300X; page 01's 64 slots fit only
    on the MI300X, and the notice says why the B200 is not offered (it holds the weights, not the
    slots' KV cache), instead of leaving the two pages' advice to disagree unexplained."""
    at = open_app(PAGE, {"gpu": "L4", "model": "Llama-3.1-70B"})
    assert not at.exception
    notice = at.error[0].value
    assert ("a GPU with more memory (the MI300X; the B200 holds the weights but not this batch's KV "
            "cache)") in notice
    from sim.memory import _listed

    # Several such cards are all of them, not a choice: "the B200 and MI300X hold ..."
    assert _listed(["B200", "MI300X"], "and") == "B200 and MI300X"
    assert _listed(["B200", "MI300X"]) == "B200 or MI300X"


def test_the_per_sequence_host_time_moves_the_gauge():
    """The sidebar's host time per sequence (4.3 µs by default, fitted) is part of each step's idle
    host time: at 0 the utilization gauge reads higher, at 40 µs lower, and the URL carries it."""
    util = {}
    for value in ("0", "4.2", "40"):
        at = open_app(PAGE, {"seq_host_us": value})
        assert not at.exception
        assert at.sidebar.slider(key="seq_host_us").value == pytest.approx(float(value))
        util[value] = gauges(at)[0]
    assert util["0"] > util["4.2"] > util["40"]
