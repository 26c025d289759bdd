"""Page 04 through AppTest: the scenario table's utilization column is flat while output is not, the
latency targets move goodput (what counts), URL parameters set the widgets and bad ones fall back, and
the figures are valid Plotly."""

from __future__ import annotations

import numpy as np
import pytest

from sim.cost import DEFAULT_ASSUMPTIONS
from sim.hardware import GPUS
from sim.metrics import SLO, dashboard_day, measure, scenario_runs
from sim.models import MODELS
from tests.conftest import metric, open_app, open_data
from ui.fig_watch import day_figure, scenario_figure
from ui.theme import validated

PAGE = "app_pages/watch.py"
UTIL, GOOD = "nvidia-smi util", "Output tok/s"


def _ok(at) -> None:
    assert not at.exception, [e.value for e in at.exception]


def _table(at):
    return at.dataframe[0].value.set_index("Scenario")


def _percent(text: str) -> float:
    return float(text.rstrip("%"))


def _hours_missing(at) -> int:
    return int(metric(at, "Hours missing the SLO").split()[0])


def _slo_goodput(at) -> tuple[float, float]:
    """(continuous, static) goodput in requests/s, as the headline metrics show them."""
    return tuple(float(metric(at, f"Goodput, {mode}").split()[0]) for mode in ("continuous", "static"))


@pytest.fixture(scope="module")
def at():
    at = open_app(PAGE)
    _ok(at)
    return at


def test_defaults_utilization_flat_output_orders_of_magnitude_apart(at):
    table = _table(at)
    assert len(table) == 10
    util = table[UTIL].map(_percent)
    good = table[GOOD].map(lambda s: float(s.replace(",", "")))
    assert util.max() - util.min() < 15 and util.min() > 85
    assert good.max() / good.min() > 100
    assert metric(at, "nvidia-smi utilization") == "90–98%"
    cont, static = _slo_goodput(at)
    assert cont > 50 * static  # on the same arrivals, static batching misses the targets
    # goodput only where requests are modelled, and never above what was delivered
    assert table.loc["00 · Batch-1 decode", "Goodput, tok/s"] == "–"
    for name in ("01 · Static batching", "01 · Continuous batching", "01 · High load"):
        delivered = float(table.loc[name, GOOD].replace(",", ""))
        assert float(table.loc[name, "Goodput, tok/s"].replace(",", "")) <= delivered
    assert table.loc["02 · Paged KV cache", "KV cache holding tokens"] == "98.6%"
    assert table.loc["00 · Batch-1 decode", "Queue"] == "–"  # not modelled: shown as a dash
    assert len(at.get("plotly_chart")) == 2
    assert len(at.table[0].value) == 7  # one row per failure
    assert at.slider(key="watch_ttft").value == pytest.approx(1.0)
    assert at.slider(key="watch_tpot").value == pytest.approx(50.0)
    assert _hours_missing(at) == 11


def test_latency_targets_move_what_counts_not_what_runs(at):
    util_before = _table(at)[UTIL].tolist()
    cont, static = _slo_goodput(at)
    missing = _hours_missing(at)
    at.slider(key="watch_ttft").set_value(10.0).run()
    _ok(at)
    assert _table(at)[UTIL].tolist() == util_before
    assert _slo_goodput(at)[1] > static  # some queued static requests now count
    assert _hours_missing(at) < missing
    at.slider(key="watch_tpot").set_value(10.0).run()
    _ok(at)
    assert _slo_goodput(at)[0] < cont  # a 10 ms time-per-token target fails continuous batching too
    assert "p99 > 10 ms" in at.table[0].value.loc[3, "Alert"]
    at.slider(key="watch_ttft").set_value(1.0)
    at.slider(key="watch_tpot").set_value(50.0).run()
    assert _slo_goodput(at) == (cont, static)


def test_gpu_choice_changes_the_numbers():
    at = open_app(PAGE)
    before = _table(at)[GOOD].tolist()
    at.selectbox(key="gpu").set_value("L4").run()
    _ok(at)
    assert _table(at)[GOOD].tolist() != before
    assert "L4" in at.caption[0].value


def test_a_model_that_does_not_fit_says_so_instead_of_blank_rows():
    at = open_app(PAGE, {"model": "Llama-3.1-70B"})
    assert not at.exception
    assert "does not fit on this card at all" in at.error[0].value
    assert not at.metric and not at.dataframe


def test_url_parameters_set_the_widgets():
    at = open_app(PAGE, {"watch_ttft": "2.5", "watch_tpot": "100"})
    _ok(at)
    assert at.slider(key="watch_ttft").value == pytest.approx(2.5)
    assert at.slider(key="watch_tpot").value == pytest.approx(100.0)


@pytest.mark.parametrize("params", [
    {"watch_ttft": "0"}, {"watch_ttft": "1e9"}, {"watch_ttft": "abc"}, {"watch_ttft": "nan"},
    {"watch_tpot": "-5"}, {"watch_tpot": "5000"}, {"watch_tpot": ""},
])
def test_bad_url_values_fall_back_to_defaults(params):
    at = open_app(PAGE, params)
    _ok(at)
    assert at.slider(key="watch_ttft").value == pytest.approx(1.0)
    assert at.slider(key="watch_tpot").value == pytest.approx(50.0)
    assert _hours_missing(at) == 11


def test_figures_are_valid_plotly():
    g, m = GPUS["H100 SXM"], MODELS["Llama-3.1-8B"]
    runs = scenario_runs(g, m, DEFAULT_ASSUMPTIONS)
    day = dashboard_day(g, m, flat_out=runs.flat_out)
    bars = validated(scenario_figure(measure(runs)))
    assert len(bars.data) == 2 and len(bars.data[0].y) == 10
    fig = day_figure(day, SLO())
    assert len(validated(fig).data) == 6
    # the queued hours shaded as one path, a rectangle an hour (13 at these settings)
    (shade,) = [sh for sh in fig.layout.shapes if sh.type == "path"]
    assert shade.path.count("Z") == int((day.queue_depth > 1).sum()) > 0
    util = fig.data[0].y  # (arrays come back encoded from a validated copy: read the original)
    assert util.max() - util.min() < 5  # utilization, %: flat all day
    # a model that does not fit: the bars say so instead of failing, beside the empty utilization bar
    # (text on a NaN bar is not drawn: the output panel's bar is NaN)
    none_fit = validated(scenario_figure(measure(scenario_runs(g, MODELS["Llama-3.1-70B"]))))
    util_trace = none_fit.data[0]
    assert "does not fit" in util_trace.text  # short: a longer text ran past a phone's chart
    assert next(p for t, p in zip(util_trace.text, util_trace.textposition, strict=True)
                if t.startswith("does not fit")) == "outside"


def test_the_day_keeps_its_queue_and_its_capacity_line_above_what_it_delivers():
    g, m = GPUS["H100 SXM"], MODELS["Llama-3.1-8B"]
    day = dashboard_day(g, m)
    assert day.flat_out_tok_s >= day.output_tok_s.max()
    assert np.all(day.goodput_tok_s(SLO()) <= day.output_tok_s * (1 + 1e-9))
    # one run: the queue the peak builds is still there an hour later, and grows while load > 1
    over = np.flatnonzero(day.load > 1)
    assert over.size >= 3 and np.all(np.diff(day.queue_depth[over[:3]]) > 0)
    # in real hours the same overload queues for far longer than the compressed windows show
    assert day.real_time_worst_wait_s > 100 * day.worst_ttft_p99_s
    backlog = day.real_time_backlog
    assert backlog[over[-1]] == backlog.max() and backlog[day.load < 1][0] == 0


def test_a_setup_whose_batching_does_not_fit_says_so_and_shows_no_day():
    """Llama-3.1-70B FP8 on one H100 leaves about 0.3 GiB of KV cache: not even one slot holds
    section 01's longest request, so the batching goodput is n/a with the reason, the ratios that need
    it say n/a (never "infinite"), and the simulated day is replaced by what does not fit."""
    at = open_app(PAGE, {"model": "Llama-3.1-70B", "weights": "fp8", "gpu": "H100 SXM"})
    _ok(at)
    assert metric(at, "Goodput, continuous") == "n/a"
    assert any(c.value.startswith("**Goodput n/a:**") for c in at.caption)
    info = " ".join(i.value for i in at.info)
    assert "∞" not in info and "n/a" not in info and "section 01's batching" in info
    assert "did not fit on this card" in info or "None of the like-for-like comparisons fits" in info
    assert any("does not fit in memory" in e.value and "continuous-batching slots" in e.value
               for e in at.error)
    # Numbers for this setup are shown above the day: the notice is the section's, not the setup's.
    assert not any("This setup does not fit" in e.value for e in at.error)
    labels = [m.label for m in at.metric]
    assert "Hours missing the SLO" not in labels and "Utilization, by hour" not in labels
    # On two GPUs everything fits: the day and both goodputs are back.
    at = open_app(PAGE, {"model": "Llama-3.1-70B", "weights": "fp8", "gpu": "H100 SXM", "gpus": "2"})
    _ok(at)
    assert not at.error and _hours_missing(at) >= 0
    assert all(v > 0 for v in _slo_goodput(at))


def test_an_alert_whose_scenario_did_not_run_is_not_called_quiet():
    """Where a scenario does not fit (Llama-3.1-70B FP8 on one H100: static and continuous batching),
    its alert has no reading: the failures table says it did not run instead of "quiet"."""
    at = open_app(PAGE, {"model": "Llama-3.1-70B", "weights": "fp8", "gpu": "H100 SXM"})
    _ok(at)
    table = at.table[0].value.set_index("Alert")
    padding = next(v for k, v in table["Value in the scenario"].items() if "useful share" in k)
    assert "not run: it does not fit on this card" in padding and "quiet" not in padding
    at = open_app(PAGE)
    assert "not run" not in " ".join(at.table[0].value["Value in the scenario"])


def test_the_page_says_where_its_starting_thresholds_miss_and_where_a_fix_is_none():
    """On two GPUs batch-1 decode's MBU per GPU falls under the memory-starved rule's 50 %: the rule is
    quiet in its own failure, and the page says so. On Llama-3.2-1B speculative decoding is slower
    than plain decode (it drafts for itself), and the closing box does not list it as a fix."""
    at = open_app(PAGE, {"gpus": "2"})
    assert not at.exception
    assert any("thresholds miss" in c.value and "quiet where it shows" in c.value for c in at.caption)
    default = open_app(PAGE)
    assert not any("thresholds miss" in c.value for c in default.caption)
    (box,) = [i.value for i in open_app(PAGE, {"model": "Llama-3.2-1B"}).info
              if "Why monitoring has to look past it" in i.value]
    assert "is no fix here" in box
    (box,) = [i.value for i in default.info if "Why monitoring has to look past it" in i.value]
    assert "is no fix here" not in box and "nearly always yes" in box
    # the tensor-parallel reason only where the memory-starved rule is the one that missed
    at = open_app(PAGE, {"gpu": "L4", "model": "Llama-3.1-70B", "gpus": "8"})
    caption = next(c.value for c in at.caption if "thresholds miss" in c.value)
    assert "all-reduces" not in caption and "still firing after the fix" in caption


def test_the_phone_labels_of_the_failures_table_are_its_columns():
    """On a phone the failures table stacks its cells, each under a label the house CSS writes
    (ui.layout.PAGE_CSS); the labels must be the table's own column names, in order."""
    import re

    from ui.layout import PAGE_CSS

    at = open_app(PAGE)
    columns = list(at.table[0].value.columns)
    rule = r"watch_failures td:nth-of-type\((\d)\)::before \{ content: \"([^\"]+)\""
    labels = dict(re.findall(rule, PAGE_CSS))
    assert [labels[str(i)] for i in range(2, len(columns) + 1)] == columns[1:]


def test_the_batching_comparison_says_when_static_cannot_keep_up():
    """At page 04's moderate rate (16 requests/s on the default setup) static batching's queue grows for
    the whole run, so its goodput is the few requests that beat the queue and a ratio to it measured the
    run's length (156x here, 1,256x on an L4): the box says static cannot keep up instead."""
    for params in ({}, {"gpu": "L4", "weights": "int4"}):
        at = open_app("app_pages/watch.py", params)
        assert not at.exception
        box = next(i.value for i in at.info if i.value.startswith("**Why monitoring has to look past it"))
        assert "static cannot keep up with" in box and "goodput **1," not in box and "goodput **15" not in box


def test_a_low_utilization_reading_is_not_called_near_100():
    """Llama-3.2-1B in NVFP4 on a B200: 1.1 ms decode steps, and the host's time between them leaves
    utilization at 55 %; the landing page and page 04 said it reads near 100 %. They say why it
    does not here; the default setup keeps the general sentence."""
    params = {"gpu": "B200", "model": "Llama-3.2-1B", "weights": "nvfp4"}
    home = open_app(None, params)
    assert not home.exception
    assert any(c.value.startswith("Here the dashboard reads only 55.3%") for c in home.caption)
    watch = open_app("app_pages/watch.py", params)
    text = " ".join(m.value for m in watch.markdown)
    assert "reads close to 100% whether" not in text and "a visible share" in text
    assert "reads close to 100% whether" in " ".join(m.value for m in open_app("app_pages/watch.py").markdown)
    assert not any("dashboard reads only" in c.value for c in open_app(None).caption)


def test_batching_that_fits_on_fewer_slots_runs_there_and_says_so():
    """gpt-oss-120b MXFP4 on one H100 holds 8 of section 01's slots, not 64: the goodputs and the day
    run on 8, the caption says why, and the rows' Open links carry the slots to page 01."""
    at = open_app(PAGE, {"model": "gpt-oss-120b", "weights": "mxfp4", "gpu": "H100 SXM"})
    _ok(at)
    assert all(v > 0 for v in _slo_goodput(at)) and not at.error
    assert any("8 slots (section 01's 64 do not fit on this card" in c.value for c in at.caption)
    assert all("batching_slots=8" in link for link in at.dataframe[0].value["Open it"]
               if "continuous-batching" in link)


def test_a_tpot_target_below_one_decode_step_is_named_as_the_reason_goodput_is_near_zero():
    """Llama-3.1-8B BF16 on an L4 takes ~67 ms a decode step even for one user: under the 50 ms TPOT
    target no request with more than one token counts, and the page says so with the way out."""
    at = open_app(PAGE, {"gpu": "L4"})
    _ok(at)
    (note,) = [c.value for c in at.caption if c.value.startswith("**No request can meet the 50 ms TPOT")]
    assert "Raise the TPOT target past" in note
    at = open_app(PAGE, {"gpu": "L4", "watch_tpot": "100"})
    assert not any("No request can meet" in c.value for c in at.caption)
    assert not any("No request can meet" in c.value for c in open_app(PAGE).caption)


def _box(at) -> str:
    return next(i.value for i in at.info if "Why monitoring has to look past it" in i.value)


def test_the_closing_box_calls_no_fix_a_fix_and_leaves_out_what_did_not_run():
    """On an L4 with Llama-3.1-8B BF16 continuous batching meets the targets for about 1 % of its
    requests: it is no fix there, whatever static does; rows that did not fit are named once at the
    end, never as 'n/a' mid-sentence; and a rate of one request a second reads as such."""
    at = open_app(PAGE, {"gpu": "L4"})
    _ok(at)
    box = _box(at)
    assert "is no fix for these targets" in box and "within the targets" not in box
    assert "n/a" not in box and "(section 02's long prompt did not fit on this card)" in box
    assert "1 requests" not in box
    caption = next(c.value for c in at.caption if c.value.startswith("Both goodput figures"))
    assert "continuous and" in caption and "static." in caption  # the metrics' order, labelled
    day = " ".join(m.value for m in at.markdown if "A queue grows for" in m.value)
    assert "its waits stay seconds" not in day and "the worst hour's p99 TTFT" in day


def test_an_alert_the_wrong_way_round_is_named_once_and_not_said_to_move_right():
    """gpt-oss-120b MXFP4 on one H100: the memory-starved alert is quiet in its failure and fires
    after the fix (a bigger batch touches more experts); one mention, and no claim that the metrics
    move the right way."""
    at = open_app(PAGE, {"model": "gpt-oss-120b", "weights": "mxfp4"})
    _ok(at)
    (note,) = [c.value for c in at.caption if c.value.startswith("On this setup the starting thresholds")]
    assert "the wrong way round" in note and note.count("decode starved by memory") == 1
    assert "move the right way" not in note and "touches more of its experts" in note


def test_data_says_what_a_blank_cell_means():
    """The scenarios' Data table has blank cells (NaN: a metric a run does not give, such as a
    steady step's queue); the line under it says so, where the CSV would otherwise leave a reader
    guessing."""
    at = open_data(open_app(PAGE), "watch_data")
    assert not at.exception
    frames = [df.value for df in at.dataframe if "goodput_rps" in df.value.columns]
    assert frames and frames[0].isna().any().any()
    assert any(c.value.startswith("A blank cell:") for c in at.caption)


def test_rows_that_do_not_fit_are_marked_so_not_as_unmodelled():
    """Llama-3.1-8B on an L4: the two long-prompt rows do not fit. The table marks them "does not fit"
    and its note says what that means (the dash alone read as "the run does not model it"), and the
    chart's title counts the rows that ran and the rest."""
    at = open_app(PAGE, {"gpu": "L4"})
    assert not at.exception
    names = list(at.dataframe[0].value["Scenario"])
    marked = [n for n in names if n.endswith(" (does not fit)")]
    assert len(marked) == 2 and all("Long prompt" in n for n in marked)
    assert any(c.value.startswith("A row marked “does not fit” did not run") for c in at.caption)
    assert all(not n.endswith("(does not fit)") for n in open_app(PAGE).dataframe[0].value["Scenario"])


def test_idle_tensor_cores_after_speculation_get_their_verdict_without_a_false_alarm():
    """The idle-tensor row's fix (speculative decoding) had a value but no verdict; by the row's own
    rule it still fires at low load (MFU well under 10 %), which the row's note calls an opportunity,
    so the page's caption does not list it as a threshold that misses."""
    at = open_app(PAGE)
    (row,) = [r for r in at.table[0].value.to_dict("records") if "Tensor cores idle" in r["Failure"]]
    assert "(with speculative decoding) → **fires**" in row["Value in the scenario"]
    assert not any("still firing after the fix, *Tensor cores idle" in c.value for c in at.caption)


def test_each_goodput_names_the_rate_it_was_offered():
    """Goodput cannot exceed the offered rate, a power of two under each setup's capacity: H200 read
    16.1 req/s beside H100's 15.9 on the same 16/s offered, so each metric says what it was offered."""
    for params, offered in (({}, "16"), ({"gpu": "H100 SXM", "weights": "fp8"}, "32")):
        at = open_app(PAGE, params)
        _ok(at)
        for label in ("Goodput, continuous", "Goodput, static"):
            m = next(x for x in at.metric if x.label == label)
            assert m.proto.delta.startswith(f"{offered}/s offered · "), (params, m.proto.delta)
        assert any("goodput as a share of what each was offered" in c.value for c in at.caption)


def test_the_real_hours_wait_says_it_is_the_same_on_every_setup():
    """The day's load is a share of each setup's own flat-out rate, so the fluid wait follows from the
    day's shape alone: the metric says so where it is shown, not only in its help."""
    waits = set()
    for params in ({}, {"gpu": "L4"}, {"gpu": "A100 80GB SXM", "model": "Llama-2-7B"}):
        at = open_app(PAGE, params)
        m = next(x for x in at.metric if x.label == "Longest wait, real hours")
        assert m.proto.delta == "the day's shape: any setup"
        waits.add(m.value)
    assert len(waits) == 1


def test_rows_refused_for_the_models_positions_say_so_not_that_they_do_not_fit():
    """GPT-J-6B on an A100 80GB: 11 GiB of weights fit easily; what stops section 02's rows is the
    model's 2,048 positions. The table, the chart and the closing box had all said 'does not fit'."""
    at = open_app(PAGE, {"gpu": "A100 80GB SXM", "model": "GPT-J-6B"})
    _ok(at)
    names = at.dataframe[0].value["Scenario"].tolist()
    assert "02 · Paged KV cache (too long)" in names
    assert not any(n.endswith("(does not fit)") for n in names)
    box = next(i.value for i in at.info if "Compared like for like" in i.value)
    assert "asked for more than the 2,048 positions GPT-J-6B reads" in box and "did not fit" not in box
    bars = next(c for c in at.get("plotly_chart") if "too long" in c.proto.spec)
    assert "does not fit" not in bars.proto.spec
    # On an L4 the long prompt's row is refused for memory, and says so.
    box = next(i.value for i in open_app(PAGE, {"gpu": "L4"}).info if "Compared like for like" in i.value)
    assert "(section 02's long prompt did not fit on this card)" in box


def test_a_range_whose_low_end_needs_decimals_reads_as_two_numbers():
    """Page 04's MFU spans 0.21 % to 41 %: '0.21–41%' read as one garbled number (and '0.22% to 42%'
    wrapped on a phone and pushed the metric row onto two lines on a desktop)."""
    from ui.fig_watch import percent_range

    assert percent_range(0.93, 0.99) == "93–99%" and percent_range(0.5, 0.5) == "50%"
    assert percent_range(0.0022, 0.42) == "0.22%–42%"
    assert metric(open_app(PAGE), "MFU") == "0.21%–41%"
