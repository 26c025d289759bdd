"""AppTest: the app shell, the landing page and page 00 (two phases)."""

from __future__ import annotations

import dataclasses
import json

import pytest

from sim.cost import DEFAULT_ASSUMPTIONS, decode_step_cost
from sim.hardware import GPUS
from sim.models import MODELS
from tests.conftest import metric, ms, number, open_app, open_how
from ui.nav import ALL_PAGES

PAGE = "app_pages/two_phases.py"


def test_every_registered_page_renders():
    at = open_app()
    assert not at.exception
    assert at.title[0].value == "Where the GPU lies"
    for section in ALL_PAGES:
        at.switch_page(section.path).run()
        assert not at.exception, section.path


def test_page00_defaults_tell_the_thesis():
    at = open_app(PAGE)
    assert not at.exception
    decode_ms = ms(metric(at, "Decode step"))
    assert decode_ms == pytest.approx(6.32, rel=0.15)  # ms, V10's band (7.1)
    own = decode_step_cost(GPUS["H100 SXM"], MODELS["Llama-3.1-8B"], 1, 512).time_s  # page's context
    assert decode_ms == pytest.approx(float(own) * 1e3, abs=0.006)  # the model's own step
    assert number(metric(at, "nvidia-smi util, decode")) > 90
    assert number(metric(at, "MFU, decode")) < 1
    assert number(metric(at, "MFU, prefill")) > 40
    charts = at.get("plotly_chart")
    assert len(charts) == 5  # roofline, busy units, operators, TTFT vs prompt, the gap
    roofline = json.loads(charts[0].proto.spec)
    names = [trace.get("name", "") for trace in roofline["data"]]
    assert any(n.startswith("prefill") for n in names) and any(n.startswith("decode") for n in names)


def test_batch_slider_raises_throughput_and_mfu_not_utilization():
    at = open_app(PAGE)
    tps, mfu, util = (number(metric(at, k)) for k in
                      ("Decode throughput", "MFU, decode", "nvidia-smi util, decode"))
    at.select_slider(key="phases_batch").set_value(64).run()
    assert not at.exception
    assert number(metric(at, "Decode throughput")) > 30 * tps
    assert number(metric(at, "MFU, decode")) > 30 * mfu
    assert abs(number(metric(at, "nvidia-smi util, decode")) - util) < 5


def test_longer_prompt_takes_longer_and_context_slows_decode():
    at = open_app(PAGE)
    prefill, step = ms(metric(at, "Prefill time")), ms(metric(at, "Decode step"))
    at.select_slider(key="phases_prompt").set_value(8192).run()
    assert ms(metric(at, "Prefill time")) > 3.5 * prefill
    at.select_slider(key="phases_batch").set_value(8)
    at.select_slider(key="phases_context").set_value(32768).run()
    assert ms(metric(at, "Decode step")) > 2.5 * step  # 8 x 32k tokens of KV outweigh the weights
    assert metric(at, "Compute-bound from batch") == "never"


def test_setups_that_do_not_fit_say_so_and_show_no_numbers():
    """Batch 64 at 32k context needs ~275 GB of KV cache; 70B BF16 weights are bigger than an L4."""
    at = open_app(PAGE)
    at.select_slider(key="phases_batch").set_value(64)
    at.select_slider(key="phases_context").set_value(32768).run()
    assert not at.exception
    text = at.error[0].value
    assert "not fit in memory" in text and "GiB short" in text
    assert "The largest batch that fits at 32,769 tokens is 13." in text
    assert "cached tokens, each writing one more" in text  # why the check is at 32,769
    # The roofline stays (the batch slider reaching past what fits is a lesson), its decode point
    # hollow and labelled, with no number for it; the page's decode numbers stop there.
    decode = {m.label: m.value for m in at.metric if "decode" in m.label.lower()}
    assert decode and set(decode.values()) == {"does not fit"}, decode
    assert [m.label for m in at.metric if m.value != "does not fit"] == ["MFU, prefill"]
    import json

    (roof,) = [c for c in at.get("plotly_chart") if "phases_roofline" in c.proto.id]
    traces = json.loads(roof.proto.spec)["data"]
    hollow = [t for t in traces if t.get("name", "").endswith("does not fit")]
    assert len(hollow) == 1 and hollow[0]["marker"]["symbol"] == "circle-open"
    assert "no numbers" in hollow[0]["hovertemplate"] and len(at.get("plotly_chart")) == 1
    at = open_app(PAGE, {"gpu": "L4", "model": "Llama-3.1-70B"})
    text = at.error[0].value
    assert "does not fit on this card at all" in text
    # only what fits by itself: 4-bit weights (37 GiB) do not, on a 24 GB card
    assert "Pick a GPU with more memory (the B200 or MI300X) or a smaller model." in text
    assert "weights (" not in text
    assert "It fits on **8 x L4**" in " ".join(c.value for c in at.caption)
    assert not at.metric
    at = open_app(PAGE, {"model": "Llama-3.1-70B"})  # 131 GiB of BF16 weights on one H100
    assert "It fits on **2 x H100 SXM**" in " ".join(c.value for c in at.caption)


def test_global_setup_changes_page_numbers():
    at = open_app(PAGE)
    h100 = ms(metric(at, "Decode step"))
    at.selectbox(key="gpu").set_value("H200 SXM").run()
    assert ms(metric(at, "Decode step")) < h100  # 4.8 vs 3.35 TB/s
    at.selectbox(key="model").set_value("Llama-3.2-1B").run()
    assert ms(metric(at, "Decode step")) < 2
    at.radio(key="weights").set_value("fp8").run()
    at.slider(key="overhead_us").set_value(0).run()
    assert not at.exception


def test_custom_gpu_numbers_drive_the_model():
    # Without the fixed per-step and per-kernel costs, batch-1 decode is all memory time.
    at = open_app(PAGE, {"gpu": "Custom", "custom_tbps": "1.0", "overhead_us": "0", "seq_host_us": "0",
                         "graph_us": "0"})
    assert not at.exception
    slow = ms(metric(at, "Decode step"))
    at.number_input(key="custom_tbps").set_value(4.0).run()
    assert ms(metric(at, "Decode step")) == pytest.approx(slow / 4, rel=0.02)


def test_url_parameters_set_widgets():
    at = open_app(PAGE, {"gpu": "A100 80GB SXM", "model": "Qwen2.5-7B", "phases_batch": "32",
                         "phases_prompt": "8192", "compute_eff": "0.5", "kv": "fp8"})
    assert not at.exception
    assert at.selectbox(key="gpu").value == "A100 80GB SXM"
    assert at.selectbox(key="model").value == "Qwen2.5-7B"
    assert at.select_slider(key="phases_batch").value == 32
    assert at.select_slider(key="phases_prompt").value == 8192
    assert at.slider(key="compute_eff").value == 0.5
    assert at.radio(key="kv").value == "fp8"


@pytest.mark.parametrize("params", [
    {"phases_batch": "99999"}, {"phases_batch": "-3"}, {"phases_prompt": "abc"},
    {"gpu": "TPU v9"}, {"model": ""}, {"compute_eff": "NaN"}, {"memory_eff": "7"},
    {"overhead_us": "1e309"}, {"seq_host_us": "-4"}, {"seq_host_us": "nan"}, {"weights": "fp4"},
    {"gpu": "Custom", "custom_tflops": "-1"},
    {"gpu": "Custom", "custom_tbps": "inf"}, {"unknown": "1"}, {"phases_context": ["64", "128"]},
])
def test_malformed_or_out_of_range_url_renders_defaults(params):
    at = open_app(PAGE, params)
    assert not at.exception
    assert at.select_slider(key="phases_batch").value == 1
    assert at.select_slider(key="phases_prompt").value == 2048
    assert at.selectbox(key="gpu").value in ("H100 SXM", "Custom")
    assert at.selectbox(key="model").value == "Llama-3.1-8B"
    assert at.slider(key="compute_eff").value == DEFAULT_ASSUMPTIONS.compute_eff
    assert at.slider(key="memory_eff").value == DEFAULT_ASSUMPTIONS.memory_eff
    if at.selectbox(key="gpu").value == "Custom":
        assert at.number_input(key="custom_tflops").value == pytest.approx(989.4)
        assert at.number_input(key="custom_tbps").value == pytest.approx(3.35)


def test_landing_page_shows_the_thesis_live():
    at = open_app()
    util = number(metric(at, "What the dashboard shows: nvidia-smi utilization"))
    mfu = number(metric(at, "What the tensor cores deliver: MFU"))
    assert util > 90 and mfu < 1
    at.selectbox(key="model").set_value("Llama-3.2-1B").run()  # (Mistral-7B's rounds to the same 0.21 %)
    assert number(metric(at, "What the tensor cores deliver: MFU")) != mfu


@pytest.mark.parametrize("gpu", ["H100 SXM", "B200", "A100 80GB SXM", "L4"])
@pytest.mark.parametrize("weights", ["bf16", "fp8", "int4"])
def test_roofline_axes_keep_every_point_on_the_chart(gpu, weights):
    """The longest prompt and the extreme decode settings, at every precision: both points inside the
    axes (log10 ranges), whatever the axes had to widen to."""
    import math

    from sim.cost import DEFAULT_ASSUMPTIONS
    from sim.hardware import GPUS
    from sim.models import MODELS
    from sim.phases import two_phases
    from ui.fig_phases import roofline_figure

    model = MODELS["Llama-3.1-8B"].with_precision(weights, "fp8")
    for prompt, batch, context in ((131072, 1, 64), (64, 1024, 32768), (64, 1, 64), (32768, 1024, 64)):
        r = two_phases(GPUS[gpu], model, prompt, batch, context, DEFAULT_ASSUMPTIONS)
        fig = roofline_figure(r, GPUS[gpu], model, DEFAULT_ASSUMPTIONS)
        (x0, x1), (y0, y1) = fig.layout.xaxis.range, fig.layout.yaxis.range
        for trace in fig.data[2:]:
            x, y = math.log10(trace.x[0]), math.log10(trace.y[0])
            assert x0 < x < x1 and y0 < y < y1, (gpu, weights, prompt, batch, context, trace.name)


def _labels(spec: dict) -> list[str]:
    """The roofline's labels (ridge, knee, the two regimes): one text trace of the figure."""
    return [t for tr in spec["data"] if tr.get("mode") == "text" for t in tr["text"]]


def test_sidebar_and_chart_give_the_same_ridge_with_its_precision():
    at = open_app(PAGE, {"gpu": "B200", "weights": "fp8"})
    assert not at.exception
    sidebar = next(c.value for c in at.sidebar.caption if "ridge" in c.value)
    ridge_text = sidebar.split("ridge ")[1].split(" FLOP/B")[0]
    assert "FP8 math" in sidebar
    roofline = json.loads(at.get("plotly_chart")[0].proto.spec)
    notes = [t for t in _labels(roofline) if t.startswith("ridge")]
    assert notes == [f"ridge<br>{ridge_text} FLOP/B<br>(FP8)"]
    at.radio(key="weights").set_value("bf16").run()
    sidebar_bf16 = next(c.value for c in at.sidebar.caption if "ridge" in c.value)
    assert "BF16 math" in sidebar_bf16 and sidebar_bf16 != sidebar


def test_the_operator_chart_shows_where_the_step_goes():
    at = open_app(PAGE)
    charts = at.get("plotly_chart")
    fig = next(json.loads(c.proto.spec) for c in charts if "operator" in json.dumps(json.loads(c.proto.spec)))
    names = [t["name"] for t in fig["data"]]
    assert names[:6] == ["embedding", "QKV projection", "attention", "output projection", "MLP", "LM head"]
    assert names[-1] == "host (no kernel)"


def test_gpus_per_replica_make_a_70b_fit_on_h100s():
    """Llama-3.1-70B in BF16 does not fit one 80 GB card; on 4 it does, every figure per GPU."""
    one = open_app(PAGE, {"model": "Llama-3.1-70B"})
    assert "does not fit" in one.error[0].value and not one.metric
    four = open_app(PAGE, {"model": "Llama-3.1-70B", "gpus": "4"})
    assert not four.exception and not four.error
    step = ms(metric(four, "Decode step"))
    assert 15 < step < 30  # a quarter of the weights per GPU, plus 160 all-reduces
    assert any("4 x H100 SXM" in c.value for c in four.caption)
    eight = open_app(PAGE, {"model": "Llama-3.1-70B", "gpus": "8"})
    assert ms(metric(eight, "Decode step")) < step


def test_a_model_that_does_not_split_says_so_and_stays_on_one_gpu():
    at = open_app(PAGE, {"model": "Qwen2.5-7B", "gpus": "8"})
    assert not at.exception
    assert any("cannot be split across 8 GPUs" in w.value for w in at.warning)
    assert metric(at, "Decode step")


def test_a_mixture_of_experts_says_what_a_step_reads():
    at = open_app(PAGE, {"model": "Mixtral-8x7B", "gpus": "2"})
    assert not at.exception and not at.error
    text = " ".join(c.value for c in at.caption)
    assert "Mixture of experts" in text and "2.0 of 8 a layer at batch 1" in text
    at.select_slider(key="phases_batch").set_value(64).run()
    assert "8.0 of 8 a layer at batch 64" in " ".join(c.value for c in at.caption)


def _trace(at, key: str, name: str) -> dict | None:
    chart = next(c for c in at.get("plotly_chart") if c.proto.id.endswith(key) or key in c.proto.id)
    return next((t for t in json.loads(chart.proto.spec)["data"] if t.get("name") == name), None)


def test_measured_runs_on_this_setup_are_on_the_roofline_with_their_error():
    """H100 + Llama-3.1-8B BF16 has three measured runs (eag-01 static batch 1, t014-01 online at
    2 req/s, which has no concurrency and so no step to place); L4 has none, and says so."""
    at = open_app(PAGE)
    trace = _trace(at, "phases_roofline", "Measured (engines)")
    assert trace is not None and len(trace["x"]) >= 1
    assert any("eag-01" in h and "SGLang" in h and "%" in h for h in trace["hovertemplate"])
    assert any("roofline floor" in h and "measured 6.32 ms" in h for h in trace["hovertemplate"])
    # Short lines: a hover box wider than the chart is cut at its edge ("measured 6.3" had been)
    assert all(len(line) <= 80 for h in trace["hovertemplate"]
               for line in h.replace("<extra></extra>", "").split("<br>"))
    assert "eag-01" in " ".join(c.value for c in at.caption)
    at = open_app(PAGE, {"gpu": "L4"})
    assert _trace(at, "phases_roofline", "Measured (engines)") is None
    assert any("No measured run" in c.value for c in at.caption)


def test_the_gap_waterfall_sums_to_the_estimate_and_ends_on_the_measurement():
    at = open_app(PAGE)  # batch 1: eag-01 is at batch 1, so the waterfall explains it
    fall = _trace(at, "phases_gap_chart", "Model")
    assert fall["measure"][0] == "absolute" and fall["measure"][-1] == "total"
    assert sum(fall["x"][:-1]) == pytest.approx(fall["x"][-1], rel=1e-9)
    assert fall["x"][-1] == pytest.approx(ms(metric(at, "Decode step")), rel=0.15)  # at the run's context
    measured = _trace(at, "phases_gap_chart", "Measured")
    assert measured["x"][0] == pytest.approx(1e3 / 158.34, rel=1e-6)  # eag-01: 158.34 tok/s at batch 1
    at.select_slider(key="phases_batch").set_value(8).run()  # no run at batch 8
    assert _trace(at, "phases_gap_chart", "Measured") is None
    assert any("No measured run at these settings" in c.value for c in at.caption)
    at.radio(key="phases_gap").set_value("Prefill").run()
    assert not at.exception
    fall = _trace(at, "phases_gap_chart", "Model")
    assert max(zip(fall["x"][1:-1], fall["y"][1:-1], strict=True))[1].startswith("+ compute efficiency<br>")


def test_tensor_parallel_gap_has_an_all_reduce_bar():
    at = open_app(PAGE, {"model": "Llama-3.1-70B", "gpus": "4"})
    assert not at.exception
    fall = _trace(at, "phases_gap_chart", "Model")
    bars = {y.split("<br>")[0]: x for y, x in zip(fall["y"], fall["x"], strict=True)}
    assert bars["+ all-reduces (TP)"] > 80 * 2 * 0.01  # ms: 2 a layer, at least 10 us each


DEEPSEEK_8 = {"model": "DeepSeek-V3", "gpu": "H200 SXM", "gpus": "8", "weights": "fp8"}


def test_experts_whole_per_gpu_cost_latency_at_batch_1_and_say_why():
    """The sidebar's expert layout: spread whole (EP), the busiest GPU holds more of the batch's
    experts than its share, so batch-1 decode is slower; at a large batch both layouts read every
    expert. The caption compares the two layouts at the page's batch."""
    at = open_app(PAGE, DEEPSEEK_8)
    assert not at.exception and not at.error
    assert at.radio(key="experts").value == "split (TP)"
    caption = " ".join(c.value for c in at.caption)
    assert "1.0 experts' worth a layer" in caption
    slowest = float(caption.split("the slowest GPU reads ")[1].split(":")[0])
    assert 2.3 < slowest < 2.8  # 8 experts of 256 over 8 GPUs: the busiest holds ~2.6
    split = ms(metric(at, "Decode step"))
    at.radio(key="experts").set_value("whole (EP)").run()
    assert not at.exception
    assert ms(metric(at, "Decode step")) > 1.05 * split
    assert "experts whole per GPU" in " ".join(c.value for c in at.caption)  # the setup's label
    at.select_slider(key="phases_batch").set_value(1024).run()
    whole = ms(metric(at, "Decode step"))
    at.radio(key="experts").set_value("split (TP)").run()
    assert ms(metric(at, "Decode step")) == pytest.approx(whole, rel=0.01)


def test_the_expert_layout_travels_in_the_link_and_only_where_it_means_something():
    at = open_app(PAGE, {**DEEPSEEK_8, "experts": "whole (EP)"})
    assert not at.exception and at.radio(key="experts").value == "whole (EP)"
    dense = open_app(PAGE, {"model": "Llama-3.1-70B", "gpus": "4"})
    assert not dense.exception and "experts" not in [r.key for r in dense.radio]
    one = open_app(PAGE, {"model": "DeepSeek-V3", "gpu": "B200", "weights": "fp8"})
    assert "experts" not in [r.key for r in one.radio]  # one GPU: nothing to spread
    bad = open_app(PAGE, {**DEEPSEEK_8, "experts": "[x](https://example.invalid)"})
    assert not bad.exception and bad.radio(key="experts").value == "split (TP)"


def test_a_gpu_without_microbenchmarks_says_its_ceilings_are_assumed():
    """L4 has no GEMM or STREAM row in measured.csv, B200 no STREAM row: the sidebar says what they
    take instead; H100 has both and says nothing."""
    def note(at):
        return [c.value for c in at.sidebar.caption if "microbenchmark of this GPU" in c.value]

    assert note(open_app(PAGE)) == []
    l4 = note(open_app(PAGE, {"gpu": "L4"}))
    assert len(l4) == 1 and "No GEMM or STREAM" in l4[0] and "80%" in l4[0] and "87%" in l4[0]
    b200 = note(open_app(PAGE, {"gpu": "B200"}))
    assert len(b200) == 1 and "No STREAM microbenchmark" in b200[0] and "GEMM" not in b200[0]


def test_mi300x_names_the_published_runs_the_model_is_not_fitted_to():
    """On MI300X the sidebar says how the model compares with AMD's published vLLM table (computed
    from sim/data/published.csv, not typed in); on a card with none it says nothing."""
    from sim.measured import published_summary

    def note(at):
        return [c.value for c in at.sidebar.caption if c.value.startswith("Published runs")]

    assert note(open_app(PAGE)) == []
    shown = note(open_app(PAGE, {"gpu": "MI300X"}))
    s = published_summary("MI300X")
    assert len(shown) == 1
    assert f"within {s.small_max_abs_error:.0%} of each up to batch 8" in shown[0]
    lo, hi = s.large_error_range
    assert -0.05 < lo < -0.005  # 405B with 2,048-token prompts at batch 16, 3.5 % below
    assert f"{lo:+.0%} to {hi:+.0%} off them" in shown[0] and "-0%" not in shown[0]
    assert "Llama-3.1-70B at batch 128 with 128-token prompts" in shown[0]
    # A best run a hair below the engine is said as 0 %, never "-0%".
    from ui.setup import published_note

    hair = dataclasses.replace(s, large_error_range=(-0.003, hi))
    assert f"0% to {hi:.0%} above them" in published_note(hair) and "-0%" not in published_note(hair)


def test_routing_skew_is_a_sidebar_setting_for_mixtures_only():
    """Mixtral on 2 GPUs at batch 16: a skewed router touches fewer experts, so the decode step shrinks; the
    caption says which routing it assumes, the setup label says it, and a link with it reopens it."""
    def moe_caption(at):
        return next(c.value for c in at.caption if "Mixture of experts" in c.value)

    at = open_app(PAGE, {"model": "Mixtral-8x7B", "gpus": "2", "phases_batch": "16"})
    assert not at.exception
    assert "uniform routing" in moe_caption(at)
    uniform = ms(metric(at, "Decode step"))
    at.slider(key="skew").set_value(1.5).run()
    assert not at.exception
    assert "routing skew 1.5" in moe_caption(at) and "uniform" not in moe_caption(at)
    assert ms(metric(at, "Decode step")) < uniform
    assert "routing skew 1.5" in " ".join(c.value for c in at.caption)  # the setup label
    again = open_app(PAGE, {"model": "Mixtral-8x7B", "gpus": "2", "phases_batch": "16", "skew": "1.5"})
    assert ms(metric(again, "Decode step")) == ms(metric(at, "Decode step"))
    dense = open_app(PAGE)
    assert not [s for s in dense.slider if s.key == "skew"]


def test_how_this_is_computed_gives_the_expert_count_the_routing_uses():
    """With routing skew set, the step model's mixture row gives the skewed count the code prices
    (sum over experts of 1 - (1 - pi_r)^T), not the uniform E (1 - (1 - k/E)^T)."""
    def mixture_row(at):
        text = " ".join(m.value for e in at.expander for m in e.markdown)
        return next(line for line in text.splitlines() if "MLP of a mixture" in line)

    params = {"model": "Mixtral-8x7B", "gpus": "2", "phases_batch": "16"}
    uniform = mixture_row(open_how(open_app(PAGE, params)))
    assert r"E\,(1-(1-k/E)^T)" in uniform and "skew" not in uniform
    skewed = mixture_row(open_how(open_app(PAGE, {**params, "skew": "1.5"})))
    assert r"\sum_r 1-(1-\pi_r)^T" in skewed and "routing skew 1.5" in skewed and "r^{-1.5}" in skewed
    assert r"E\,(1-(1-k/E)^T)" not in skewed


def test_past_the_cuda_graph_size_the_page_says_what_the_launches_cost():
    """Batch 1,024 runs without CUDA graphs (vLLM captures up to 512 tokens): for a small model on a
    B200 the launches cost more than the batch gains, and throughput falls from batch 512; the page
    says so beside the number instead of leaving a falling curve unexplained."""
    at = open_app(PAGE, {"phases_batch": "1024", "gpu": "B200", "model": "Llama-3.2-1B", "weights": "nvfp4"})
    assert not at.exception
    (note,) = [c.value for c in at.caption if "capture size" in c.value]
    assert "costs more than the batch gains" in note
    assert not [c.value for c in open_app(PAGE, {"phases_batch": "512"}).caption if "capture size" in c.value]


def test_the_thesis_box_follows_the_bound_and_prefill_says_when_it_is_memory_bound():
    """At batch 1,024 and a short context decode is compute-bound: the box must not say it is
    'waiting on memory'. A 64-token prompt, or a mixture whose experts each see few of the prompt's
    tokens, leaves prefill memory-bound, and the page says why under its numbers."""
    at = open_app(PAGE, {"phases_batch": "1024", "phases_context": "64"})
    (box,) = [i.value for i in at.info if "thesis in miniature" in i.value]
    assert "waiting on memory" not in box and "compute-bound" in box
    assert "above all, compute efficiency" in box  # the waterfall's largest stage, not a fixed claim
    (box,) = [i.value for i in open_app(PAGE, {"phases_batch": "32", "phases_context": "8192"}).info
              if "thesis in miniature" in i.value]
    assert "KV cache's reads" in box and "claw" not in box  # batching does not share KV reads
    default = open_app(PAGE)
    (box,) = [i.value for i in default.info if "thesis in miniature" in i.value]
    assert "waiting on memory" in box
    assert not any("Here prefill is memory-bound" in c.value for c in default.caption)
    short = open_app(PAGE, {"phases_prompt": "64"})
    assert any("64-token prompt does too little math" in c.value for c in short.caption)


def test_a_crossover_past_what_fits_says_so_and_the_knee_is_drawn():
    """The default context puts the compute-bound batch at 3,296 (the first whole batch past it),
    while 846 sequences fit: the metric says the batch is past what fits. At 64 tokens of context
    (242) it fits and says nothing. The roofline draws the achievable knee (198 FLOP/B) beside the
    spec ridge (295)."""
    at = open_app("app_pages/two_phases.py")
    m = next(x for x in at.metric if x.label == "Compute-bound from batch")
    assert m.value == "3,296" and m.delta == "past what fits: ≤ 846"
    spec = json.loads(next(c for c in at.get("plotly_chart") if "phases_roofline" in c.proto.id).proto.spec)
    texts = _labels(spec)
    assert any(t.startswith("knee<br>198 FLOP/B") for t in texts) and any("295 FLOP/B" in t for t in texts)
    at = open_app("app_pages/two_phases.py", {"phases_context": "64", "phases_batch": "256"})
    m = next(x for x in at.metric if x.label == "Compute-bound from batch")
    assert m.value == "242" and not m.delta


def test_the_operator_table_shows_the_rows_this_model_uses():
    """The expander's table was the dense, single-GPU one for every model: Mixtral on 2 GPUs gets its
    experts' row and the all-reduces, DeepSeek-V3 its MLA attention too; the default gets neither."""
    def how(params):
        at = open_how(open_app(PAGE, params))
        assert not at.exception
        return " ".join(m.value for m in at.markdown)

    text = how({"model": "Mixtral-8x7B", "gpus": "2"})
    assert "MLP of a mixture" in text and "all-reduce (2 a layer, 2 GPUs)" in text and "MLA" not in text
    assert r"$2\,\alpha$ + $2\tfrac{1}{2}\,T\,d$ × 2 bytes / busbw" in text  # 2(n - 1) hops on 2 GPUs
    text = how({"model": "DeepSeek-V3", "weights": "fp8", "gpus": "8", "gpu": "H200 SXM"})
    assert "attention, MLA" in text and "shared experts" in text
    text = how({})
    assert "MLP of a mixture" not in text and "all-reduce (2 a layer" not in text


def _thesis_box(at) -> str:
    return next(i.value for i in at.info if i.value.startswith("**The thesis in miniature.**"))


def test_the_thesis_does_not_call_a_reading_below_100_percent_always_busy():
    """A100 at the defaults reads about 96 %: the host's few percent between steps are idle, so the box
    says 'almost always' and names that share, on the app's one 'busy' threshold (BUSY_UTILIZATION)."""
    at = open_app(PAGE, {"gpu": "A100 80GB SXM"})
    util = number(metric(at, "nvidia-smi util, decode"))
    assert 85 <= util < 100
    thesis = _thesis_box(at)
    assert "a kernel is always running" not in thesis
    assert "almost always running (all but the host's" in thesis


def test_at_the_engines_largest_batch_the_page_does_not_advise_more_batching():
    """Qwen3-30B-A3B at batch 1,024 (the H100's max_num_seqs) is still memory-bound: the larger batch
    beats batch 512 by spreading the experts' reads, not because 'the math outweighs' the launches,
    and the box points to what is left (smaller weights, experts over GPUs, speculation)."""
    at = open_app(PAGE, {"model": "Qwen3-30B-A3B", "phases_batch": "1024", "phases_context": "64"})
    assert not at.exception
    captions = " ".join(c.value for c in at.caption)
    assert "math still outweighs" not in captions
    assert "the larger batch still gains more than the launches cost" in captions
    thesis = _thesis_box(at)
    assert "waiting on memory" in thesis
    assert "Batching (next section)" not in thesis and "max_num_seqs" in thesis
    assert "experts spread over GPUs" in thesis
    # Below the engine's maximum the advice to batch stands.
    at = open_app(PAGE, {"model": "Qwen3-30B-A3B", "phases_batch": "64", "phases_context": "64"})
    assert "Batching (next section)" in _thesis_box(at)


@pytest.mark.parametrize("params", [{"phases_batch": "1024", "phases_context": "64"},
                                    {"gpu": "A100 80GB SXM", "phases_batch": "256", "phases_context": "64"}])
def test_the_compute_bound_thesis_closes_its_parentheses(params):
    at = open_app(PAGE, params)
    thesis = _thesis_box(at)
    assert "compute-bound" in thesis
    assert "))" not in thesis and thesis.count("(") == thesis.count(")")


def test_the_waterfalls_labels_never_read_in_exponent_notation():
    """A 32k-token prefill of Llama-3.1-70B on 8 L4s takes seconds: its bars read '17,6xx ms', not
    '1.76e+04 ms' (the labels carry the numbers, ui/fig_phases.gap_figure)."""
    at = open_app(PAGE, {"gpu": "L4", "model": "Llama-3.1-70B", "gpus": "8", "phases_gap": "Prefill",
                         "phases_prompt": "32768"})
    assert not at.exception
    gap = next(json.loads(c.proto.spec) for c in at.get("plotly_chart")
               if "Roofline floor" in json.dumps(json.loads(c.proto.spec).get("data", [])))
    labels = [y for trace in gap["data"] for y in trace.get("y", []) if isinstance(y, str)]
    assert labels and any(" ms" in y for y in labels)
    assert not any("e+" in y for y in labels), labels


def test_a_step_mostly_fixed_cost_is_not_said_to_wait_on_memory():
    """B200 + Llama-3.2-1B at batch 1: 70 % of the decode step is kernel and host costs, 30 % memory;
    the box names the fixed cost instead of 'waiting on memory'. With no host time at all it says a
    kernel is always running, not 'all but 0.0 %'."""
    thesis = _thesis_box(open_app(PAGE, {"gpu": "B200", "model": "Llama-3.2-1B"}))
    assert "waiting on memory" not in thesis and "most of it is fixed cost, not memory" in thesis
    assert "waiting on memory" in _thesis_box(open_app(PAGE))
    thesis = _thesis_box(open_app(PAGE, {"overhead_us": "0", "seq_host_us": "0"}))
    assert "host's 0.0%" not in thesis and "a kernel is always running (no host time" in thesis
    # The per-sequence host time alone (4.3 µs at batch 1): a sliver, said with its decimals.
    thesis = _thesis_box(open_app(PAGE, {"overhead_us": "0"}))
    assert "all but the host's 0.06% between steps" in thesis


def test_a_kv_led_step_does_not_offer_fewer_kv_heads_to_an_mla_model():
    """DeepSeek-V3's MLA cache is one latent a token for all heads: no 'fewer KV heads' lever there."""
    at = open_app(PAGE, {"gpu": "H200 SXM", "model": "DeepSeek-V3", "weights": "fp8", "gpus": "8",
                         "phases_batch": "16", "phases_context": "32768"})
    thesis = _thesis_box(at)
    assert "waits mostly on the KV cache's reads" in thesis
    assert "fewer KV heads" not in thesis and "one latent a token for all heads" in thesis
    thesis = _thesis_box(open_app(PAGE, {"phases_batch": "4", "phases_context": "32768"}))
    assert "a model with fewer KV heads: GQA or MLA" in thesis


def test_how_computed_names_the_math_this_gpu_runs_and_marks_each_changed_assumption():
    """FP8 weights on an A100 run BF16 math (no FP8 tensor cores): the expander says so for this setup.
    Changing only eta_m marks eta_m, not eta_c."""
    from ui.cost_text import assumption_lines

    at = open_how(open_app(PAGE, {"gpu": "A100 80GB SXM", "weights": "fp8"}))
    text = " ".join([*(m.value for m in at.markdown), *(c.value for c in at.caption)])
    assert "FP8 GEMMs run BF16 math on the A100 80GB SXM" in text
    line = assumption_lines(dataclasses.replace(DEFAULT_ASSUMPTIONS, memory_eff=0.5))[0]
    assert f"η_c = {DEFAULT_ASSUMPTIONS.compute_eff:.3g} of" in line
    assert f"η_m = 0.5 (fitted default {DEFAULT_ASSUMPTIONS.memory_eff:.3g})" in line
    assert "(the fitted defaults)" in assumption_lines()[0]
    (hops,) = [x for x in assumption_lines() if "hops" in x]
    assert ("2(n−1) hops of 1.6 µs plus the 3.0 µs every kernel pays, 25 µs on 8 GPUs and 6.2 on 2"
            in hops)
    (hops,) = [x for x in assumption_lines(dataclasses.replace(DEFAULT_ASSUMPTIONS, allreduce_hop_s=1.59e-6))
               if "hops" in x]
    assert "hops of 1.59 µs (fitted default 1.6 µs)" in hops and "25 µs on 8 GPUs" in hops


def test_a_custom_gpu_at_its_limits_reads_sensibly():
    """1 TFLOP/s with 50 TB/s: the ridge is 0.02 FLOP/B (not '0'), decode is compute-bound at batch 1
    (crossover 1, not 0) and the box does not ask to drag the batch back to 1; 20,000 TFLOP/s with
    0.05 TB/s at the longest prompt is not told to take a longer one; the prose calls it a custom GPU."""
    at = open_app(PAGE, {"gpu": "Custom", "custom_tflops": "1", "custom_tbps": "50", "custom_gb": "2000"})
    assert not at.exception
    assert metric(at, "Compute-bound from batch") == "1"
    thesis = _thesis_box(at)
    assert "Drag the batch back to 1" not in thesis and "compute-bound at every batch" in thesis
    assert any("ridge 0.02 FLOP/B" in c.value for c in at.caption)
    at = open_app(PAGE, {"gpu": "Custom", "custom_tflops": "20000", "custom_tbps": "0.05",
                         "custom_gb": "2000", "phases_prompt": "32768"})
    captions = " ".join(c.value for c in at.caption)
    assert "a longer prompt moves it" not in captions and "even the longest prompt here" in captions
    assert "2,000.0 GiB" in captions and "ridge 400,000 FLOP/B" in captions and "custom GPU" in captions


def test_the_gap_note_names_the_controls_that_reach_a_measured_run():
    """On the Prefill step the default setup's measured run is a decode: the note names the Step and
    the slider that reach it, not 'move the slider there'."""
    at = open_app(PAGE, {"phases_gap": "Prefill"})
    note = next(c.value for c in at.caption if "No measured run at these settings" in c.value)
    assert "move the slider there" not in note and "(Step: Decode, Decode batch 1)" in note


def test_a_prompt_longer_than_a_step_gives_its_chunked_prefill_beside_the_one_pass():
    """At 32,768 tokens the roofline's one pass and the TTFT chart's 8,192-token chunks differ (each
    chunk reads the weights again and pays its host time): the "Prefill time" metric shows the one
    pass and, as its delta, the chunked TTFT the chart draws; a prompt within one step has no delta."""
    from sim.phases import ttft_curve, two_phases
    from ui import format as fmt

    at = open_app(PAGE, {"phases_prompt": "32768"})
    assert not at.exception
    (m,) = [m for m in at.metric if m.label == "Prefill time"]
    ttft = ttft_curve(GPUS["H100 SXM"], MODELS["Llama-3.1-8B"], [32768]).ttft_at(32768)
    one_pass = two_phases(GPUS["H100 SXM"], MODELS["Llama-3.1-8B"], 32768, 1, 512).prefill_time_s
    assert m.value == fmt.seconds(one_pass) and ttft > one_pass
    # Both round to 1.46 s here: the delta says by how much the chunks are slower, not the same number.
    assert m.value == fmt.seconds(ttft) == "1.46 s"
    assert m.delta == f"in 8,192-token chunks: 1.46 s (+{fmt.seconds(ttft - one_pass)})"
    (m,) = [m for m in open_app(PAGE, {"phases_prompt": "32768", "gpu": "A100 80GB SXM"}).metric
            if m.label == "Prefill time"]
    assert "(+" not in m.delta and ms(m.delta.split(": ")[1]) > ms(m.value)  # apart when rounded
    (m,) = [m for m in open_app(PAGE).metric if m.label == "Prefill time"]
    assert not m.delta


@pytest.mark.parametrize("params", [{"model": "Mixtral-8x7B", "gpus": "2"},
                                    {"model": "gpt-oss-120b", "weights": "int4"},
                                    {"model": "Qwen3-30B-A3B", "gpu": "H200 SXM", "weights": "int4",
                                     "skew": "2", "phases_context": "128"}])
def test_the_mixture_caption_compares_with_the_steps_own_compute_bound_batch(params):
    """'Nearly all experts read long before ...': against the batch the page's metric gives for the
    whole step, not a GEMM's ridge, which 4-bit experts reach before they are all touched (gpt-oss-120b
    at INT4 on an H100: 95 % touched at batch ~95, its weight GEMMs' ridge at ~53)."""
    at = open_app(PAGE, params)
    assert not at.exception
    text = next(c.value for c in at.caption if "Mixture of experts" in c.value)
    assert "ridge point" not in text
    crossover = metric(at, "Compute-bound from batch")
    assert f"compute-bound (batch {crossover})." in text
    touched = float(text.split("by batch ~")[1].split(" ")[0].replace(",", ""))
    if touched > 1.5 * float(crossover.replace(",", "")):  # Qwen3-30B-A3B, skewed: 1,222 against 522
        assert "only after the step has turned compute-bound" in text
    else:
        assert "only after" not in text


def test_the_roofline_says_per_gpu_under_tensor_parallelism():
    """Under tensor parallelism the points are one GPU's rates: the axis says so (a reader comparing a
    whole 8-GPU node's figure would misread it eightfold); on one GPU it needs no qualifier."""
    from sim.cost import DEFAULT_ASSUMPTIONS
    from sim.hardware import GPUS
    from sim.models import MODELS
    from sim.phases import two_phases
    from ui.fig_phases import roofline_figure

    for tp, title in ((1, "Achieved TFLOP/s"), (8, "Achieved TFLOP/s per GPU")):
        model = MODELS["Llama-3.1-70B"].with_tp(tp)
        r = two_phases(GPUS["H200 SXM"], model, 2048, 1, 512, DEFAULT_ASSUMPTIONS)
        fig = roofline_figure(r, GPUS["H200 SXM"], model, DEFAULT_ASSUMPTIONS)
        assert fig.layout.yaxis.title.text == title
