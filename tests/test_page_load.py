"""Page 05 through AppTest: the policy moves the p99 time between tokens and not the utilization,
every widget reruns cleanly and moves what it should, and bad URL values fall back to the defaults."""

from __future__ import annotations

import pytest

from tests.conftest import metric, ms, number, open_app, open_data, open_how

PAGE = "app_pages/load.py"
TBT, TTFT, UTIL = "p99 TBT", "p99 TTFT", "GPU utilization"
CAP, GOODPUT = "Capacity", "Goodput"


SECTIONS = ("load_show_curves", "load_show_prefix", "load_show_split")


def open_sections(at, keys=SECTIONS):
    """Open the page's lazy sections (a reader clicking them: each click reruns the page)."""
    for k in keys:
        at.session_state[k] = True
    return at.run()


@pytest.fixture(scope="module")
def at():
    return open_sections(open_app(PAGE))


def test_first_view_runs_only_the_headline():
    """A first view sends the headline and the timeline; the load curves, capacities, prefix and split
    searches wait until their section is opened (seconds of CPU a setup: README, "Many readers")."""
    at = open_app(PAGE)
    assert not at.exception
    assert at.radio(key="load_policy").value == "prefill-first"
    assert ms(metric(at, TBT)) > 100  # over the relaxed target at 60 % load
    assert 90 < number(metric(at, UTIL)) < 100
    assert len(at.get("plotly_chart")) == 1  # the timeline
    assert CAP not in [m.label for m in at.metric] and "Prefix hits" not in [m.label for m in at.metric]
    assert [e.label for e in at.expander][:3] == [
        "As the load rises: each policy's load curve and capacity", "Prefix caching",
        "Disaggregated prefill and decode"]
    open_sections(at, ("load_show_prefix",))
    assert not at.exception
    assert len(at.get("plotly_chart")) == 2 and "Prefix hits" in [m.label for m in at.metric]
    assert CAP not in [m.label for m in at.metric]
    open_data(at, "load_data")
    assert len(at.dataframe) == 3  # the headline's two tables and the open section's


def test_defaults_render_with_the_story(at):
    assert not at.exception
    assert number(metric(at, CAP)) > 0
    assert len(at.get("plotly_chart")) == 6  # timeline, two latency curves, dashboard, prefix, split
    assert len(at.dataframe) == 0  # the data expander's tables are built only when it opens
    open_data(at, "load_data")
    assert not at.exception
    assert len(at.dataframe) == 5  # requests, timeline tokens, load sweep, prefix hit rate, splits
    requests = next(df.value for df in at.dataframe if "prefix" in df.value.columns)
    # No shared prefix is a blank cell, not sim.load's -1 code.
    assert requests["prefix"].isna().all() and not (requests["prefix"] == -1).any()


def test_policy_moves_tbt_and_capacity_not_utilization(at):
    tbt, util, cap = ms(metric(at, TBT)), number(metric(at, UTIL)), number(metric(at, CAP))
    at.radio(key="load_policy").set_value("chunked").run()
    assert not at.exception
    assert ms(metric(at, TBT)) < tbt / 3
    assert abs(number(metric(at, UTIL)) - util) < 3
    assert number(metric(at, CAP)) > 1.5 * cap
    at.radio(key="load_policy").set_value("decode-first").run()
    assert not at.exception
    assert ms(metric(at, TTFT)) > 1000  # new prompts wait for the whole batch
    assert metric(at, CAP) == "none"
    at.radio(key="load_policy").set_value("prefill-first").run()
    assert ms(metric(at, TBT)) == pytest.approx(tbt)


def test_every_widget_reruns_cleanly_and_moves_its_number(at):
    def flip(kind, key, value):
        getattr(at, kind)(key=key).set_value(value).run()
        assert not at.exception, (key, value)

    tbt = ms(metric(at, TBT))
    flip("select_slider", "load_rate", 30)
    assert ms(metric(at, TBT)) < tbt  # less load, fewer prompts in the way
    flip("select_slider", "load_rate", 60)
    flip("select_slider", "load_requests", 500)
    flip("select_slider", "load_requests", 2000)
    cap = number(metric(at, CAP))
    flip("radio", "load_preset", "strict")
    assert number(metric(at, CAP)) < cap  # stricter targets, less load within them
    flip("radio", "load_preset", "custom")  # the sliders' defaults: the relaxed pair
    assert number(metric(at, CAP)) == pytest.approx(cap)
    at.select_slider(key="load_tbt").set_value(200)
    flip("select_slider", "load_ttft", 10.0)  # both targets edited, one rerun
    assert number(metric(at, CAP)) > cap
    flip("radio", "load_preset", "relaxed")
    assert number(metric(at, CAP)) == pytest.approx(cap)
    flip("radio", "load_policy", "chunked")
    tbt_c = ms(metric(at, TBT))
    flip("select_slider", "load_chunk", 2048)
    assert ms(metric(at, TBT)) > tbt_c  # a bigger budget: longer mixed steps
    flip("select_slider", "load_chunk", 512)
    hit = number(metric(at, "Prefix hits"))
    at.select_slider(key="load_prefix").set_value(512)
    flip("select_slider", "load_prefixes", 4096)  # both in one rerun: 4,096 x 512 tokens outgrow the cache
    assert number(metric(at, "Prefix hits")) < hit / 2  # thrashing
    at.select_slider(key="load_prefix").set_value(2048)
    flip("select_slider", "load_prefixes", 16)
    ttft_on = ms(metric(at, "p50 TTFT (prefix)"))
    flip("toggle", "load_caching", False)
    assert metric(at, "Prefix hits") == "off"
    assert ms(metric(at, "p50 TTFT (prefix)")) > ttft_on
    flip("toggle", "load_caching", True)
    flip("select_slider", "load_share", 0)
    assert metric(at, "Prefix hits") == "n/a"
    at.select_slider(key="load_share").set_value(75)
    flip("select_slider", "load_gpus", 8)
    assert " : " in metric(at, "Best split (P : D)")
    at.radio(key="load_policy").set_value("prefill-first")
    flip("radio", "load_workload", "fixed")


def test_bad_url_values_get_the_safe_defaults():
    at = open_app(PAGE, {"load_policy": "fastest", "load_rate": "1e9", "load_chunk": "-3", "load_tbt": "x",
                         "load_workload": "<script>", "load_gpus": "0"})
    assert not at.exception
    assert at.radio(key="load_policy").value == "prefill-first"
    assert at.select_slider(key="load_rate").value == 60
    assert at.select_slider(key="load_chunk").value == 512
    assert at.select_slider(key="load_tbt").value == 100
    assert at.radio(key="load_workload").value == "sharegpt"


def test_a_link_opens_the_sections_it_sets():
    """A shared link holds the open sections, and a link to a setting inside a closed section opens
    that section, so the setting shows (the notice and the URL's round trip: tests/test_lazy_section.py)."""
    at = open_app(PAGE, {"load_share": "50", "load_show_curves": "true"})
    assert not at.exception
    assert at.select_slider(key="load_share").value == 50
    assert number(metric(at, CAP)) > 0
    assert "Best split (P : D)" not in [m.label for m in at.metric]  # not asked for


def test_url_sets_the_policy():
    at = open_app(PAGE, {"load_policy": "Chunked prefill", "load_rate": "30"})
    assert not at.exception
    assert at.radio(key="load_policy").value == "chunked"
    assert at.select_slider(key="load_rate").value == 30


def test_distserve_example_runs_only_when_how_computed_is_opened(monkeypatch):
    """DistServe's example through the model (about 2 s of runs) is quoted only in "How this is
    computed": a reader who does not open it does not wait for it, one who does gets it."""
    from sim import load
    from ui import sim_cache

    cached = sim_cache._PAGE_CACHES.get("load._distserve_examples")  # once a process: empty it
    if cached is not None:
        cached[0].clear()
    runs = []
    real = load.distserve_example
    monkeypatch.setattr(load, "distserve_example", lambda a: runs.append(a) or real(a))
    at = open_app(PAGE)
    assert not at.exception and runs == []
    open_how(at)
    assert not at.exception
    assert runs == [load.DEFAULT_ASSUMPTIONS, load.DISTSERVE_ENGINE, load.DISTSERVE_ENGINE_HOST]
    assert any("REFERENCE V20" in m.value for m in at.markdown)


def test_how_computed_gives_v20_from_the_models_runs(at):
    """REFERENCE V20 on the page: the defaults' gain and the engine-matched prediction, as computed."""
    from sim import load

    open_how(at)
    text = " ".join(m.value for m in at.markdown if "REFERENCE V20" in m.value)
    matched = load.distserve_example(load.DISTSERVE_ENGINE)
    assert f"**{matched.colocated_per_gpu:.2f}** req/s (paper 1.6)" in text
    assert f"**{matched.gain:.2f}×** (paper 2.08×)" in text
    assert "pure C++ GPT implementation" in text


def test_the_split_counts_instances_and_rates_per_gpu_with_several_gpus_a_replica():
    """With 2 GPUs per replica each prefill or decode instance is 2 GPUs: the slider says instances,
    the rates are per GPU (half of one instance's), and the chart's axis counts instances."""
    at = open_app(PAGE, {"load_show_split": "true", "gpus": "2", "load_requests": "500"})
    assert not at.exception
    assert at.select_slider(key="load_gpus").label == "Instances of 2 GPUs"
    assert any("instance's rate / 2" in c.value for c in at.caption)
    one = open_app(PAGE, {"load_show_split": "true", "load_requests": "500"})
    assert one.select_slider(key="load_gpus").label == "GPUs"
    assert not any("instance's rate" in c.value for c in one.caption)



def test_a_policy_past_its_capacity_says_so():
    """gpt-oss-20b on an H100 at 60 % of the saturation estimate: chunked prefill in 512-token chunks
    is past what it serves (its queue grows, p99 TTFT ~22 s); the page says so and why."""
    at = open_app(PAGE, {"model": "gpt-oss-20b", "load_policy": "Chunked prefill"})
    assert not at.exception
    assert any("past what it serves" in c.value and "experts" in c.value for c in at.caption)
    assert not any("past what it serves" in c.value for c in open_app(PAGE).caption)
    big = open_app(PAGE, {"model": "gpt-oss-20b", "load_policy": "Chunked prefill", "load_chunk": "8192"})
    assert not any("past what it serves" in c.value for c in big.caption)  # 8,192-token chunks keep up


def test_low_utilization_is_put_down_to_what_left_the_gpu_idle():
    """At 10 % of saturation Qwen3-30B-A3B idles between arrivals; a 1B model on a B200 at the default
    load idles in the host's time between short steps. The load-curve box names the one that is."""
    light = open_app(PAGE, {"model": "Qwen3-30B-A3B", "load_rate": "10", "load_show_curves": "true"})
    fast = open_app(PAGE, {"model": "Llama-3.2-1B", "gpu": "B200", "load_show_curves": "true"})
    for at, want in ((light, "idles between arrivals"), (fast, "host's share")):
        (box,) = [i.value for i in at.info if "dashboard reads" in i.value]
        assert want in box


def test_a_role_at_its_throughput_bound_is_given_as_at_most():
    """The default setup's decode-only GPU stops at its throughput bound (43 req/s, not the 117 a short
    run above it met); the caption says 'at most' and that the split's figure is a ceiling."""
    at = open_app(PAGE, {"load_show_split": "true"})
    assert not at.exception
    (caption,) = [c.value for c in at.caption if c.value.startswith("A prefill-only GPU holds")]
    assert "a decode-only GPU holds at most 43.1 req/s" in caption and "a ceiling" in caption


def test_the_knee_is_a_bracket_and_a_slow_chunk_is_named():
    """The knee is the first sweep rate whose p99 TTFT doubles: a grid point, so the caption gives the
    two rates it lies between. On an L4 with INT4 Llama-3.1-8B one 512-token chunk step alone takes
    123 ms, past the 100 ms TBT target: that, not re-reading the weights, is why chunking holds less."""
    at = open_app(PAGE, {"load_show_curves": "true"})
    assert not at.exception
    assert any("lies between the sweep's rates 7.65 req/s and 11.5 req/s" in c.value for c in at.caption)
    at = open_app(PAGE, {"gpu": "L4", "weights": "int4", "load_show_curves": "true"})
    assert not at.exception
    box = next(i.value for i in at.info if "The dashboard reads" in i.value)
    assert "one 512-token chunk step alone takes 123 ms, past the 100 ms TBT target" in box
    assert "re-reads the weights" not in box


def test_a_capacity_is_confirmed_on_a_run_as_long_as_the_headlines():
    """Llama-3.2-1B, strict targets, chunked prefill in 4,096-token chunks: the 600-request runs met the
    targets at 136 req/s, but a 2,000-request run at 128 req/s (the headline at 120 %) grows its queue.
    The capacity is confirmed on a run of the headline's length, so it sits below that rate."""
    params = {"model": "Llama-3.2-1B", "load_preset": "450 ms / 40 ms", "load_policy": "Chunked prefill",
              "load_chunk": "4096"}
    at = open_app(PAGE, {**params, "load_show_curves": "true"})
    assert not at.exception
    capacity = number(metric(at, "Capacity"))
    at = open_app(PAGE, {**params, "load_rate": "120"})
    assert any("is past what it serves at this rate" in c.value for c in at.caption)
    rate = number(next(c.value for c in at.caption if "requests at **" in c.value).split("**")[1])
    assert capacity < rate


def test_no_rate_held_reads_none_everywhere_and_no_best_split_is_named():
    """A100, strict targets, chunked prefill in 4,096-token chunks: no rate meets the p99 targets for
    either policy or either role; the page says 'none' (not '0 req/s' beside it, nor a 'best' split of
    zeros)."""
    at = open_app(PAGE, {"gpu": "A100 80GB SXM", "load_preset": "450 ms / 40 ms",
                         "load_policy": "Chunked prefill", "load_chunk": "4096", "load_show_curves": "true",
                         "load_show_split": "true"})
    assert not at.exception
    values = {m.label: (m.value, m.proto.delta) for m in at.metric}
    assert values["Capacity"] == ("none", "prefill-first: none")
    assert values["Best split (P : D)"][0] == "none" and values["Per GPU, split"][0] == "none"
    text = " ".join([*(c.value for c in at.caption), *(i.value for i in at.info)])
    assert " 0 req/s" not in text and "≤ 0" not in text
    assert "meets the TTFT target at no rate here" in text


def test_counts_are_singular_for_one():
    at = open_app(PAGE, {"gpu": "A100 80GB SXM", "model": "Qwen3-30B-A3B"})
    text = " ".join(c.value for c in at.caption)
    assert "1 preemptions" not in text and "1 users" not in text and "0 users" not in text


def test_no_decoding_user_means_no_stall_chart_but_a_sentence():
    """L4 + Qwen3-30B-A3B INT4 at 10 % of saturation with fixed lengths: nobody decodes when the longest
    prompt arrives; the page says so instead of drawing 'the tokens of 0 users'."""
    at = open_app(PAGE, {"gpu": "L4", "model": "Qwen3-30B-A3B", "weights": "int4",
                         "load_workload": "Fixed 1,024 → 128", "load_rate": "10"})
    assert not at.exception
    assert any(c.value.startswith("At this rate no one is decoding") for c in at.caption)
    assert len(at.get("plotly_chart")) == 0  # the timeline is the only chart above the closed sections
    assert len(open_app(PAGE).get("plotly_chart")) == 1


def test_requests_table_names_a_shared_prefix_and_leaves_none_blank():
    """ui.fig_load.requests_frame: sim.load codes "no shared prefix" as -1; the table shows the
    prefix's number where there is one and a blank cell where there is none."""
    from types import SimpleNamespace

    import numpy as np

    from ui.fig_load import requests_frame

    n = 4
    stream = SimpleNamespace(n=n, arrival_s=np.zeros(n), prompt_tokens=np.ones(n, int),
                             output_tokens=np.ones(n, int), prefix_id=np.array([-1, 0, 3, -1]))
    run = SimpleNamespace(stream=stream, ttft_s=np.zeros(n), tpot_s=np.zeros(n), e2e_s=np.zeros(n),
                          cache_hit=np.zeros(n, bool), rejected=np.zeros(n, bool))
    prefix = requests_frame(run)["prefix"]
    assert prefix.isna().tolist() == [True, False, False, True]
    assert prefix.dropna().tolist() == [0, 3]


def test_with_no_shared_prefix_the_prefix_section_gives_the_headline_numbers():
    """At a 0 % share the prefix settings change nothing, so the prefix section's p99 TTFT and capacity
    are the headline's (the same run length, and the capacity confirmed on the same longer run); they
    were 600-request runs and an unconfirmed capacity, 496 ms against 393 and 10.3 req/s against 9.58."""
    at = open_app(PAGE, {"load_share": "0", "load_show_curves": "true", "load_show_prefix": "true"})
    assert not at.exception
    assert metric(at, "p99 TTFT (prefix)") == metric(at, TTFT)
    assert metric(at, "Capacity (prefix)") == metric(at, CAP)
    assert metric(at, "Prefix hits") == "n/a"


def test_a_capacity_below_the_swept_rates_gets_no_made_up_diamond():
    """A diamond sits on its policy's curve at the capacity; below the lowest rate swept the curve says
    nothing there, so no diamond is drawn (it used to take the first point's height, above both
    targets), and the caption gives the capacity instead."""
    from sim import load
    from sim.hardware import GPUS
    from sim.models import MODELS
    from ui.fig_load import latency_figure

    base = load.make_stream(200, 1.0, lengths="fixed", prompt_tokens=1024, output_tokens=128)
    gpu, model = GPUS["H100 SXM"], MODELS["Llama-3.1-8B"]
    sat = load.saturation_rate(gpu, model, base)
    sw = load.sweep(gpu, model, base, "chunked", [sat * f for f in (0.4, 0.8, 1.2)])
    low = float(sw.rate_per_s[0])

    def diamonds(cap):
        fig = latency_figure({"chunked": sw}, "ttft", 2.0, low, {"chunked": cap})
        return [t for t in fig.data if getattr(t.marker, "symbol", None) == "diamond"]

    (d,) = diamonds(1.5 * low)
    assert d.x[0] == 1.5 * low
    assert not diamonds(0.5 * low)
    at = open_app(PAGE, {"gpu": "MI300X", "gpus": "8", "model": "Llama-3.1-405B", "load_show_curves": "true"})
    assert not at.exception
    assert any("is below the lowest rate drawn" in c.value for c in at.caption)


def test_a_run_whose_queue_grows_is_drawn_hollow_on_the_load_curves():
    """Past saturation a run's p99 is its backlog's at the run's end, set by the run's length as much
    as by the rate, so a curve can dip there: those points are hollow, the steady ones filled."""
    from sim import load
    from sim.hardware import GPUS
    from sim.models import MODELS
    from ui.fig_load import latency_figure

    base = load.make_stream(300, 1.0, lengths="fixed", prompt_tokens=1024, output_tokens=128)
    gpu, model = GPUS["H100 SXM"], MODELS["Llama-3.1-8B"]
    sat = load.saturation_rate(gpu, model, base)
    sw = load.sweep(gpu, model, base, "prefill-first", [sat * f for f in (0.3, 2.0)])
    assert [r.steady() for r in sw.runs] == [True, False]
    fig = latency_figure({"prefill-first": sw}, "ttft", 2.0, float(sw.rate_per_s[0]), {})
    assert list(fig.data[0].marker.symbol) == ["circle", "circle-open"]


def test_the_prefix_hit_curve_passes_through_the_sections_hit_rate():
    """The hit-rate chart runs the section's own settings at each prefix count (the same runs), so at
    the page's 16 prefixes its LRU curve reads the "Prefix hits" metric: it was 600-request chunked
    runs, 96.5 % beside a 98.9 % metric."""
    import base64
    import json

    import numpy as np

    def values(a):
        return np.frombuffer(base64.b64decode(a["bdata"]), dtype=a["dtype"]) if isinstance(a, dict) else a

    at = open_app(PAGE, {"load_show_prefix": "true"})
    assert not at.exception
    (spec,) = [json.loads(c.proto.spec) for c in at.get("plotly_chart")
               if "distinct prefixes" in json.dumps(json.loads(c.proto.spec)["layout"].get("xaxis", {}))]
    (lru,) = [t for t in spec["data"] if t.get("name", "").startswith("LRU")]
    x, y = list(values(lru["x"])), values(lru["y"])
    assert at.select_slider(key="load_prefixes").value == 16
    assert f"{y[x.index(16)]:.1f}%" == metric(at, "Prefix hits")


def test_backlog_points_run_from_the_first_growing_queue_on_and_never_at_or_below_capacity():
    """A queue that grows at one rate grows at every higher one: a later run that reads steady (decode-
    first's TTFT is long from its first request) is past it too; the slack is meets' own; and a rate at
    or below the confirmed capacity is never called past what the policy serves."""
    from types import SimpleNamespace

    import numpy as np

    from ui.fig_load import backlog_points

    class Run:
        def __init__(self, grows_by):
            self.grows_by = grows_by

        def steady(self, slack_s=0.0):
            return self.grows_by <= slack_s

    sw = SimpleNamespace(rate_per_s=np.array([1.0, 2.0, 3.0, 4.0]),
                         runs=[Run(0.0), Run(0.05), Run(1.0), Run(0.0)])
    assert backlog_points(sw, 0.0, 0.0) == [False, True, True, True]
    assert backlog_points(sw, 0.1, 0.0) == [False, False, True, True]  # within the slack: steady
    assert backlog_points(sw, 0.0, 2.5) == [False, False, True, True]  # not at or below capacity


def test_the_capacity_is_not_below_a_rate_the_headline_run_holds():
    """Mixtral-8x7B on 8 H100s, chunked prefill: the 600-request runs had put the capacity at 35.4 req/s
    while the page's own 2,000-request run met both p99 targets at 41.2 (its diamond left of the
    dotted line it beat). The longer run's check now climbs too (``load.sustained_capacity``)."""
    params = {"model": "Mixtral-8x7B", "gpus": "8", "load_policy": "Chunked prefill",
              "load_show_curves": "true"}
    at = open_app(PAGE, params)  # the load curves' section only: its Capacity metric
    assert not at.exception
    assert ms(metric(at, TTFT)) <= 2000 and ms(metric(at, TBT)) <= 100  # the headline run meets them
    rate = next(float(c.value.split("at **")[1].split(" req/s")[0]) for c in at.caption
                if "requests at **" in c.value)
    assert number(metric(at, CAP)) >= rate


@pytest.mark.parametrize("gpus_per_instance", [1, 4])
def test_the_split_charts_axis_title_fits_a_phone(gpus_per_instance):
    """The P:D split chart's axis title names the instances; with several GPUs each, on one line
    ("8 instances of 4 GPUs split into prefill (P) and decode (D)") it ran past a phone's 330-px chart
    (scripts/visual_sweep.py): it breaks after the instances, each line at most 45 characters."""
    import json

    from sim.load import Disaggregation
    from ui.fig_load import disagg_figure
    from ui.theme import Spec

    d = Disaggregation(colocated_per_gpu=1.0, prefill_per_gpu=3.0, decode_per_gpu=1.5, n_gpus=8,
                       splits=((2, 6, 1.1), (4, 4, 1.2)), transfer_s_mean=0.01, link_bytes_per_s=4.5e11,
                       gpus_per_instance=gpus_per_instance)
    fig = disagg_figure(d)
    layout = fig._layout if isinstance(fig, Spec) else json.loads(fig.to_json())["layout"]
    title = layout["xaxis"]["title"]["text"]
    assert "split into prefill (P) and decode (D)" in title.replace("<br>", " ")
    assert max(len(line) for line in title.split("<br>")) <= 45


def test_a_capacity_that_is_only_a_lower_bound_says_so_in_both_sections():
    """H100 + Llama-3.2-1B, prefill-first, 10 s / 200 ms: the load curve's top rate still meets the
    targets, so the capacity is at least that rate. The prefix section (no shared prefix: the same
    search) showed it with '≥' and the load-curves section without."""
    at = open_app(PAGE, {"model": "Llama-3.2-1B", "load_share": "0"})
    at.radio(key="load_preset").set_value("custom").run()
    at.select_slider(key="load_tbt").set_value(200)
    at.select_slider(key="load_ttft").set_value(10.0)
    at = open_sections(at.run(), ("load_show_curves", "load_show_prefix"))
    assert not at.exception
    curves = next(m for m in at.metric if m.label == CAP)
    prefix = metric(at, "Capacity (prefix)")
    assert curves.value.startswith("≥ ") and prefix == curves.value, (curves.value, prefix)
    assert "≥" not in curves.proto.delta  # chunked prefill's own capacity here is exact


def test_requests_longer_than_the_model_reads_get_a_notice_not_numbers():
    """GPT-J-6B reads 2,048 positions: its chat-like stream is drawn within them (the headline runs),
    but an 8,192-token shared prefix makes every prefixed request longer than the model reads, which
    no redraw fixes: the prefix section says so with the limit named, and shows no numbers."""
    at = open_sections(open_app(PAGE, {"model": "GPT-J-6B", "load_prefix": "8192"}), ("load_show_prefix",))
    assert not at.exception
    errors = " ".join(e.value for e in at.error)
    assert "longer than the model reads" in errors and "2,048" in errors
    assert ms(metric(at, TBT)) > 0  # the headline, drawn within the positions, runs
    at = open_app(PAGE, {"model": "GPT-J-6B", "load_workload": "Fixed 1,024 → 128"})
    assert not at.exception and not at.error
    assert ms(metric(at, TBT)) > 0


def test_a_prefix_too_long_for_the_kv_cache_says_so_in_its_section():
    """A100 + Llama-3.1-70B FP8 with an 8,192-token prefix: a few prefixed requests need more KV cache
    than the card has, so every rate's run turns them away and the capacity read 'none' with no
    reason. The section now says what does not fit and shows no numbers; the headline still runs."""
    at = open_sections(open_app(PAGE, {"gpu": "A100 80GB SXM", "model": "Llama-3.1-70B", "weights": "fp8",
                                       "kv": "fp8", "load_prefix": "8192"}), ("load_show_prefix",))
    assert not at.exception
    assert any("This section's scenario does not fit in memory" in e.value for e in at.error)
    assert "Prefix hits" not in [m.label for m in at.metric] and ms(metric(at, TBT)) > 0


def test_a_setup_that_does_not_fit_says_so_under_the_main_control():
    """On a phone the settings fill more than a screen: the notice had come after all of them, a
    screen and a half down, with nothing where the result would be. It now takes the headline's place,
    between the policy and the settings."""
    at = open_app(PAGE, {"gpu": "L4", "model": "Llama-3.1-70B"})
    assert not at.exception

    def walk(node, out):
        for c in getattr(node, "children", {}).values():
            out.append((type(c).__name__, getattr(c, "key", None)))
            walk(c, out)
        return out

    kinds = ("Error", "Radio", "SelectSlider")
    order = [t if t == "Error" else k for t, k in walk(at.main, []) if t in kinds]
    assert order.index("load_policy") < order.index("Error") < order.index("load_rate"), order


def test_the_split_is_compared_with_the_better_colocated_policy():
    """On the defaults (H100 + Llama-3.1-8B, the page's policy prefill-first) the split was compared
    with prefill-first colocated only and read 1.8x better, while chunked prefill, colocated, held more
    a GPU than any split. It is now compared with the better of the two, named, whatever the page's
    policy."""
    at = open_sections(open_app(PAGE), ("load_show_split",))
    assert not at.exception
    colocated = next(m for m in at.metric if m.label == "Per GPU, colocated")
    assert "chunked" in colocated.proto.delta and "the better of two" in colocated.proto.delta
    split = number(metric(at, "Per GPU, split").lstrip("≤ "))
    assert number(colocated.value) >= split
    said = " ".join(m.value for m in at.markdown)
    assert "Against the better colocated policy" in said and "buys nothing" in said
    # The split's figure is a ceiling level with colocated (17.3 req/s): "no more", not "less".
    assert "serves **no more a GPU** (at most 1.00×)" in said and "less a GPU" not in said


def test_a_split_figure_that_is_a_ceiling_gives_its_gain_as_at_most():
    """Strict targets on the defaults: the split's per-GPU figure is a ceiling (a role met at its
    throughput bound, shown '≤'), so the gain over colocated is at most what the ratio says; the
    sentence had printed it plain ('serves 1.01× as much')."""
    at = open_app(PAGE, {"load_preset": "450 ms / 40 ms"})
    at = open_sections(at, ("load_show_split",))
    assert not at.exception
    assert metric(at, "Per GPU, split").startswith("≤ ")
    said = " ".join(m.value for m in at.markdown if "Against the better colocated policy" in m.value)
    assert "at most" in said, said


def test_the_chunk_budget_names_vllms_default_on_the_card():
    """The page's chunked default is Sarathi-Serve's strict 512; vLLM V1's API server chunks at its
    max_num_batched_tokens (8,192 on an H100, 2,048 on an A100), and the slider's help says which, as
    the policy's help says prefill-first is V0's default (a V1 user runs neither of them by default)."""
    for gpu, tokens in (("H100 SXM", "8,192"), ("A100 80GB SXM", "2,048")):
        at = open_app(PAGE, {"gpu": gpu})
        assert not at.exception
        chunk_help = at.select_slider(key="load_chunk").help
        assert f"vLLM V1's API server defaults to {tokens} on the {gpu}" in chunk_help
        assert "vLLM V0's default" in at.radio(key="load_policy").help


def test_weights_that_do_not_fit_are_not_blamed_on_the_pages_scenario():
    """L4 + Llama-3.1-70B: the weights alone do not fit, so the notice names them, not "The longest
    request of this workload: The weights of ..." (as if the request were what did not fit)."""
    at = open_app(PAGE, {"gpu": "L4", "model": "Llama-3.1-70B"})
    assert not at.exception
    notice = at.error[0].value
    assert "so no numbers are shown for it.** The weights of Llama-3.1-70B" in notice
    assert "longest request" not in notice


def test_a_short_context_model_runs_on_lengths_it_can_read():
    """GPT-J-6B reads 2,048 positions; the chat-like stream reaches 16k tokens. The page had stopped at
    its notice; it now draws the lengths within the model's positions, as vLLM's benchmark does, and
    says so (a long-context model's stream is untouched, and no such caption shows)."""
    at = open_app(PAGE, {"gpu": "A100 80GB SXM", "model": "GPT-J-6B"})
    assert not at.exception and not at.error
    assert ms(metric(at, "p99 TBT")) > 0
    assert any(c.value.startswith("Chat-like lengths drawn within the 2,048 positions GPT-J-6B reads")
               for c in at.caption)
    assert not any(c.value.startswith("Chat-like lengths drawn") for c in open_app(PAGE).caption)
