"""Page 02 through AppTest: every widget flips without an exception and the numbers move the way the
article says; URL parameters set the widgets; bad URL values fall back to the defaults."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from tests.conftest import metric, number, open_app, open_data, open_how

PAGE = "app_pages/paging.py"


def _seconds(text: str) -> float:
    """A displayed duration ('252 ms', '1.36 s', '900 µs') in seconds."""
    unit = text.split()[-1]
    return number(text) * {"s": 1.0, "ms": 1e-3, "µs": 1e-6}[unit]


def _ok(at) -> None:
    assert not at.exception, [e.value for e in at.exception]


@pytest.fixture(scope="module")
def at():
    return open_app(PAGE)


def test_defaults_tell_the_story(at):
    _ok(at)
    assert at.toggle(key="paging_paged").value is False
    assert at.select_slider(key="paging_step").value == 120
    reserved = number(metric(at, "Requests resident"))
    assert number(metric(at, "Preemptions so far")) == 0
    assert number(metric(at, "Token-state share")) < 35
    # The real card: paged fits several times more, and turns it into throughput.
    assert number(metric(at, "Fit, paged")) > 3 * number(metric(at, "Fit, reserved"))
    assert number(metric(at, "Decode throughput, paged")) > number(metric(at, "Decode throughput, reserved"))
    # Chunked prefill: the stall shrinks about tenfold at a small TTFT price.
    assert _seconds(metric(at, "Worst gap, unchunked")) > 8 * _seconds(metric(at, "Worst gap, chunked"))
    assert 0 < number(metric(at, "Prefill slowdown")) < 25
    assert reserved >= 1
    charts = at.get("plotly_chart")
    assert len(charts) == 5


def test_toggle_to_paged_fits_more_and_wastes_less(at):
    before = number(metric(at, "Requests resident"))
    share_before = number(metric(at, "Token-state share"))
    at.toggle(key="paging_paged").set_value(True).run()
    _ok(at)
    assert number(metric(at, "Requests resident")) > 2 * before
    assert number(metric(at, "Token-state share")) > share_before + 40
    assert number(metric(at, "Preemptions so far")) > 0
    at.toggle(key="paging_paged").set_value(False).run()
    _ok(at)
    assert number(metric(at, "Requests resident")) == before


def test_step_slider_scrubs_the_run(at):
    at.toggle(key="paging_paged").set_value(True).run()
    seen = set()
    preempted = []
    for step in (0, 60, 120, 239):
        at.select_slider(key="paging_step").set_value(step).run()
        _ok(at)
        seen.add(number(metric(at, "Requests resident")))
        preempted.append(number(metric(at, "Preemptions so far")))
    assert len(seen) > 1
    assert preempted == sorted(preempted) and preempted[-1] > preempted[0]
    at.select_slider(key="paging_step").set_value(120).run()
    at.toggle(key="paging_paged").set_value(False).run()


def test_max_output_and_page_size_move_the_reserved_pool(at):
    at.select_slider(key="paging_step").set_value(120).run()
    at.select_slider(key="paging_max_output").set_value(64).run()
    _ok(at)
    small = number(metric(at, "Requests resident"))
    at.select_slider(key="paging_max_output").set_value(1024).run()
    _ok(at)
    # A 1,024-token reservation does not fit a 1,024-token pool: the page warns, nothing resident.
    assert number(metric(at, "Requests resident")) == 0
    assert any("turned away" in w.value for w in at.warning)
    at.select_slider(key="paging_max_output").set_value(256).run()
    mid = number(metric(at, "Requests resident"))
    assert small > mid
    for size in (8, 32, 64):
        at.select_slider(key="paging_page_tokens").set_value(size).run()
        _ok(at)
    at.select_slider(key="paging_page_tokens").set_value(16).run()


def test_card_and_chunk_controls(at):
    fit = number(metric(at, "Fit, reserved"))
    at.select_slider(key="paging_card_max_output").set_value(8192).run()
    _ok(at)
    assert number(metric(at, "Fit, reserved")) < fit / 2
    at.select_slider(key="paging_card_max_output").set_value(2048).run()

    gap = _seconds(metric(at, "Worst gap, chunked"))
    at.select_slider(key="paging_chunk").set_value(2048).run()
    _ok(at)
    assert _seconds(metric(at, "Worst gap, chunked")) > gap
    stall = _seconds(metric(at, "Worst gap, unchunked"))
    at.select_slider(key="paging_prompt").set_value(32768).run()
    _ok(at)
    assert _seconds(metric(at, "Worst gap, unchunked")) > stall  # a longer prompt, a longer stall
    at.select_slider(key="paging_batch").set_value(256).run()
    _ok(at)


def test_url_parameters_set_the_widgets():
    at = open_app(PAGE, {"paging_paged": "true", "paging_step": "30", "paging_page_tokens": "32",
                         "paging_chunk": "128"})
    _ok(at)
    assert at.toggle(key="paging_paged").value is True
    assert at.select_slider(key="paging_step").value == 30
    assert at.select_slider(key="paging_page_tokens").value == 32
    assert at.select_slider(key="paging_chunk").value == 128


@pytest.mark.parametrize("params", [
    {"paging_step": "9999", "paging_page_tokens": "7", "paging_paged": "maybe", "paging_chunk": "-3",
     "paging_max_output": "1e9"},
    {"paging_step": "abc", "paging_page_tokens": "", "paging_chunk": "512.5", "paging_paged": "1"},
])
def test_malformed_url_values_fall_back_to_defaults(params):
    at = open_app(PAGE, params)
    _ok(at)
    assert at.select_slider(key="paging_step").value == 120
    assert at.select_slider(key="paging_page_tokens").value == 16
    assert at.toggle(key="paging_paged").value is False
    assert at.select_slider(key="paging_chunk").value == 512
    assert at.select_slider(key="paging_max_output").value == 256


def test_model_too_big_for_the_card_says_so():
    at = open_app(PAGE, {"model": "Llama-3.1-70B"})
    _ok(at)
    assert any("does not fit" in e.value for e in at.error)
    labels = [m.label for m in at.metric]
    assert "Fit, paged" not in labels and "Requests resident" in labels
    # the toy pool stays (it is the same for every setup), under a notice that says so at the top
    assert at.warning and "no number on this page is for this setup" in at.warning[0].value
    # memory in GiB, as the sidebar and the driver count it (it said "141 GB" beside "131.4 GiB")
    text = " ".join(e.value for e in at.error)
    assert "GiB" in text and " GB" not in text
    assert not open_app(PAGE).warning  # a setup that fits: no such notice


def test_weights_that_fit_but_leave_no_room_after_the_reserve_name_the_reserve():
    """gpt-oss-20b in BF16 on an L40S: its weights alone would fit in 0.9 of the card, the engine's
    start-up reserve on top does not; the message names both."""
    at = open_app(PAGE, {"model": "gpt-oss-20b", "weights": "bf16", "gpu": "L40S"})
    _ok(at)
    text = " ".join(e.value for e in at.error)
    assert "does not fit" in text and "start-up reserve" in text


# --- The figures, checked on the go.Figure (arrays do not survive AppTest's JSON) ------------------------

def test_pool_figure_draws_every_page_in_its_state():
    from sim.paging import FREE, FULL, PARTIAL, RESERVED_EMPTY, STRANDED, compare
    from ui.fig_paging import _CODE, _K, pool_figure

    c = compare()
    for run in (c.reserved, c.paged):
        fig = pool_figure(run, 120)
        heat = fig.data[0]
        assert heat.type == "heatmap" and np.shape(heat.z) == (8, 8)
        code = np.asarray(heat.z).ravel() - 0.5
        state = run.state[120]
        assert (code[state == FULL] < _K).all()
        for s in (PARTIAL, RESERVED_EMPTY, STRANDED, FREE):
            assert (code[state == s] == _CODE[s]).all()
        hover = np.asarray(heat.hovertext).ravel()
        assert all("slack" in h for h in hover[state == PARTIAL])
        assert all("reserved, still empty" in h for h in hover[state == RESERVED_EMPTY])
        assert all("unusable" in h for h in hover[state == STRANDED])
    # Reserved at the default step: reservations and stranded runs on screen; paged: neither.
    assert {RESERVED_EMPTY, STRANDED} <= set(c.reserved.state[120].tolist())
    assert not {RESERVED_EMPTY, STRANDED} & set(c.paged.state[120].tolist())


def test_the_pool_labels_are_one_image_with_every_page_label_in_its_contrast():
    """The cell labels are one SVG layout image over the heatmap (Plotly measured 64 texttemplate
    labels one by one: 8-10 ms of the toggle's redraw): every full page's 'R<request>·<block>' is in
    it, white on the dark blue and dark on the light cells, as Plotly's heatmap chose; the heatmap
    keeps the hover and sends no text."""
    import base64
    import re

    from sim.paging import FULL, PARTIAL, compare
    from ui.fig_paging import REQUEST_COLORS, _label_color, pool_figure

    assert _label_color(REQUEST_COLORS[0]) == "#fff" and _label_color("#F3F5F8") == "#444"
    c = compare(page_tokens=8)  # 128 pages: the dense labels
    for run in (compare().reserved, compare().paged, c.paged):
        fig = pool_figure(run, 120)
        heat = fig.data[0]
        assert heat.text is None and heat.texttemplate is None and heat.hovertext is not None
        (image,) = fig.layout.images
        svg = base64.b64decode(image.source.split(",", 1)[1]).decode()
        texts = re.findall(r'fill="(#[0-9a-f]+)">([^<]*)</text>', svg)
        owner, block, state = run.owner[120], run.block[120], run.state[120]
        labels = {t for _, t in texts}
        dense = run.n_pages > 64
        for page in np.flatnonzero(state == FULL):
            assert (f"R{owner[page]}" if dense else f"R{owner[page]}·{block[page]}") in labels
        for page in np.flatnonzero(state == PARTIAL):  # a last page says how full it is
            assert f"{run.fill[120][page]}/{run.page_tokens}" in labels
        assert {f for f, _ in texts} <= {"#fff", "#444"} and "#fff" in {f for f, _ in texts}
        assert (image.sizex, image.sizey) == (len(heat.z[0]), len(heat.z))
        # each label sits in its own page's cell (row-major from the top left, 100 units a cell):
        # a transposed or shifted grid fails here
        cols = len(heat.z[0])
        placed = re.findall(r'<text x="([\d.]+)" y="([\d.]+)" fill="#[0-9a-f]+">([^<]*)</text>', svg)
        for page in np.flatnonzero(state == FULL):
            want = f"R{owner[page]}" if dense else f"R{owner[page]}·{block[page]}"
            row, col = divmod(int(page), cols)
            assert any(t == want and float(x) == (col + 0.5) * 100 and row * 100 < float(y) < (row + 1) * 100
                       for x, y, t in placed), (page, want)


def test_ledger_and_chunked_figures_carry_the_numbers():
    from sim.chunked import chunked_prefill
    from sim.hardware import GPUS
    from sim.models import MODELS
    from sim.paging import compare
    from ui.fig_paging import chunked_figure, ledger_figure

    c = compare()
    fig = ledger_figure(c, 120)
    totals = np.sum([np.asarray(bar.x) for bar in fig.data], axis=0)
    np.testing.assert_allclose(totals, 100)
    assert fig.data[0].x[0] == pytest.approx(100 * c.reserved.token_share[120])
    cp = chunked_prefill(GPUS["H100 SXM"], MODELS["Llama-3.1-8B"])
    fig = chunked_figure(cp)
    tallest = max(max(np.asarray(bar.y), default=0) for bar in fig.data)
    assert tallest == pytest.approx(cp.unchunked.worst_gap_s * 1e3)
    assert fig.layout.yaxis.range == fig.layout.yaxis2.range  # same scale: the spike reads as a spike


def test_chunked_prefill_that_does_not_fit_says_so_instead_of_pricing_it():
    """On an L4, Llama-3.1-8B's weights leave ~3.5 GiB of KV cache: 32 users at 1k tokens and an
    8k-token prompt do not fit, so the chunked-prefill numbers are replaced by the notice."""
    at = open_app(PAGE, {"gpu": "L4"})
    _ok(at)
    labels = [m.label for m in at.metric]
    assert "Worst gap, unchunked" not in labels and "Fit, paged" in labels
    assert any("does not fit in memory" in e.value for e in at.error)
    # The notice is about this section's scenario: the setup's own numbers are on the page above it,
    # so it must not say the setup does not fit; the rest of the page (how it is computed) still runs.
    errors = " ".join(e.value for e in at.error)
    assert "This section's scenario does not fit" in errors and "This setup does not fit" not in errors
    assert any(e.label == "How this is computed" for e in at.expander)
    at = open_app(PAGE, {"model": "Llama-3.1-70B"})
    assert "Worst gap, unchunked" not in [m.label for m in at.metric]


def test_eight_gpus_say_why_chunking_costs_the_prompt_more_and_why_the_curve_dips():
    """On 8 GPUs a 512-token chunk with 32 decoders is a 544-token step, past the 512-token CUDA-graph
    capture size: the prompt comes 175 % later chunked, not 'a little later', and the card's curve
    dips past batch 512. The page says both; at the defaults (18 % later, no dip) it says neither."""
    at = open_app(PAGE, {"gpus": "8"})
    assert not at.exception
    captions = " ".join(c.value for c in at.caption)
    assert "later** chunked" in captions and "544 tokens is past the 512-token CUDA-graph" in captions
    assert "Past batch 512" in captions
    captions = " ".join(c.value for c in open_app(PAGE).caption)
    assert "later** chunked" not in captions and "Past batch 512" not in captions


def test_the_page_size_cuts_the_same_memory_into_more_or_fewer_pages():
    """The toy pool held 64 pages whatever their size, so 64-token pages had 4x the memory of 16-token
    ones and 'fitted' 3.8x the requests. It holds 1,024 token slots: 128 pages of 8 tokens, 16 of 64;
    paging's run average then falls as pages grow (more slack in each last page), as vLLM's block-size
    ablation has it, and the ledger's slots sum to the same 1,024 at every size."""
    from sim.paging import POOL_TOKENS, pool_pages

    resident = {}
    for size in (8, 16, 32, 64):
        at = open_app(PAGE, {"paging_paged": "true", "paging_page_tokens": str(size)})
        assert not at.exception
        assert pool_pages(size) * size == POOL_TOKENS == 1024
        assert f"the {pool_pages(size)}-page pool" in " ".join(m.value for m in at.markdown)
        box = next(i.value for i in at.info if i.value.startswith("**Same pool, same requests.**"))
        resident[size] = float(box.split("paging keeps **")[1].split("**")[0])
    assert resident[8] > resident[16] > resident[32] > resident[64]


def test_more_requests_than_max_num_seqs_decode_at_the_cap():
    """Llama-3.2-1B on 8 H100s fits 35,205 requests paged and 8,005 reserved, but vLLM decodes at most
    1,024 at once there: both throughputs are at batch 1,024 (paging buys 1.00x, not 4.4x), and the
    page says so; page 04's paged row decodes the same 1,024."""
    at = open_app(PAGE, {"model": "Llama-3.2-1B", "gpus": "8"})
    assert not at.exception
    assert metric(at, "Fit, paged") == "35,205"
    helps = [m.help for m in at.metric if m.label.startswith("Decode throughput")]
    assert len(helps) == 2 and all(h.startswith("Batch 1,024 (of the") for h in helps)
    assert any(c.value.startswith("**More fit than the engine runs.**") for c in at.caption)
    at = open_app(PAGE)  # 861 fit paged on one H100, under the cap: nothing said
    assert not any("More fit than the engine runs" in c.value for c in at.caption)


def test_a_split_model_that_does_not_fit_is_said_per_gpu():
    """Qwen2.5-72B on 2 H100s: 67.7 GiB is its share on each GPU; the notices said 'one H100 SXM'."""
    at = open_app(PAGE, {"model": "Qwen2.5-72B", "gpus": "2"})
    assert not at.exception
    text = " ".join(w.value for w in [*at.warning, *at.error])
    assert "does not fit on each of the 2 × H100 SXM" in text and "on one H100" not in text
    assert "a GPU (its share on 2 GPUs)" in text and "4 GPUs per replica" in text


def test_the_compute_bound_batch_is_compared_with_what_the_engine_runs():
    """Mistral-7B with FP8 weights and KV on one H100: decode turns compute-bound at 1,475 sequences,
    2,041 fit paged, but the engine decodes 1,024: the metric says the batch is past what runs, and the
    expander says the cap is applied (it said it was not)."""
    at = open_app(PAGE, {"model": "Mistral-7B", "weights": "fp8", "kv": "fp8"})
    assert metric(at, "Compute-bound from batch") == "1,475"
    m = next(x for x in at.metric if x.label == "Compute-bound from batch")
    assert m.delta == "past what runs, 1,024"
    text = " ".join(x.value for x in open_how(at).markdown)
    assert "max_num_seqs cap is not applied" not in text and "decodes at most its max_num_seqs (1,024" in text


def test_a_prompt_that_fits_one_chunk_is_not_said_to_shorten_the_gap():
    """A 1,024-token prompt in 2,048-token chunks runs as one chunk: both worst gaps are the same step,
    so the delta says so instead of '1.0× shorter'."""
    at = open_app(PAGE, {"paging_prompt": "1024", "paging_chunk": "2048"})
    _ok(at)
    gap = next(m for m in at.metric if m.label == "Worst gap, chunked")
    assert gap.value == metric(at, "Worst gap, unchunked")
    assert gap.proto.delta == "same: one chunk holds the prompt"
    at = open_app(PAGE)  # the defaults: an 8k prompt in chunks of 512
    assert next(m for m in at.metric if m.label == "Worst gap, chunked").proto.delta.endswith("× shorter")


def _card_caption(at) -> str:
    starts = ("**More fit", "**Only paging", "Paging fits", "The payoff compounds")
    return next(c.value for c in at.caption if c.value.startswith(starts))


def test_the_cap_is_blamed_only_where_raising_it_would_pay():
    """H200 + Llama-3.1-8B: 1,750 fit paged, vLLM decodes 1,024, but with all 1,750 decoding the
    compute-bound step gains ~1 %: no 'raise the cap'. Llama-3.2-1B on 8 H100s stays memory-bound far
    past the cap: there raising it would pay, and the page says by how much."""
    at = open_app(PAGE, {"gpu": "H200 SXM"})
    caption = _card_caption(at)
    assert "raise the cap" not in caption and "compute-bound" in caption and "would rise only" in caption
    # the gain with every fitting request decoding is against reserving, as the sentence's first one is
    uncapped = re.search(r"to (\d+\.\d+)× what reserving buys", caption)
    capped = re.search(r"buys only (\d+\.\d+)× the tokens per second", caption)
    assert uncapped and capped and float(uncapped[1]) >= float(capped[1])
    caption = _card_caption(open_app(PAGE, {"model": "Llama-3.2-1B", "gpus": "8"}))
    assert caption.startswith("**More fit than the engine runs.**") and "with all 35,205 decoding" in caption


def test_a_paged_batch_past_the_crossover_is_not_called_bound_by_the_weights():
    """MI300X + Llama-3.1-70B: paging decodes 244, the step is compute-bound from 143."""
    at = open_app(PAGE, {"gpu": "MI300X", "model": "Llama-3.1-70B"})
    caption = _card_caption(at)
    assert "bound by reading the weights once per step" not in caption
    assert "only up to about 143 sequences" in caption


def test_a_card_where_no_request_fits_reserved_says_so():
    """H100 + Llama-3.1-70B INT8: each reserved request needs 2,217 token slots, the cache holds
    1,070: no 'Batch 0: one decode step takes 0 µs', and the caption says only paging serves."""
    at = open_app(PAGE, {"model": "Llama-3.1-70B", "weights": "int8"})
    _ok(at)
    m = next(x for x in at.metric if x.label == "Decode throughput, reserved")
    assert m.value == "none fit" and "No request fits" in m.help and "0 µs" not in m.help
    assert _card_caption(at).startswith("**Only paging serves this card.**")


def test_a_pool_that_admits_no_reservation_does_not_describe_reservations():
    """At a max output of 1,024 every request's reservation exceeds the 1,024-token pool: nothing is
    reserved or stranded, the pool is empty; the box says that."""
    at = open_app(PAGE, {"paging_max_output": "1024"})
    box = next(i.value for i in at.info if i.value.startswith("**Same pool, same requests.**"))
    assert "admits no request at all" in box and "reserved for answers not yet written" not in box


def test_data_has_no_card_rows_for_a_model_the_card_cannot_hold():
    """The Data expander's "Real card" table (KV budget, resident requests, decode rate) is for a card
    the weights fit on; where they do not, the page says so and the table is left out (its budget
    would be negative)."""
    at = open_data(open_app(PAGE), "paging_data")
    assert not at.exception
    assert any(m.value == "**Real card**" for m in at.markdown)
    at = open_data(open_app(PAGE, {"gpu": "L4", "model": "DeepSeek-V3", "weights": "fp8"}), "paging_data")
    assert not at.exception
    assert not any(m.value == "**Real card**" for m in at.markdown)
    assert not any("kv_budget_bytes" in df.value.columns for df in at.dataframe)


def test_data_pool_table_leaves_a_free_pages_owner_blank():
    """A free page has no request or block: blank cells (and blank in its CSV), not a -1 that reads
    as a number; a held page names its request and block as whole numbers."""
    at = open_data(open_app(PAGE), "paging_data")
    pages = next(df.value for df in at.dataframe
                 if list(df.value.columns)[:3] == ["page", "request", "block"])
    free = pages["state"].str.startswith("free")
    assert free.any() and (~free).any()
    assert pages.loc[free, ["request", "block"]].isna().all().all()
    held = pages.loc[pages["request"].notna()]
    assert (held["request"] >= 0).all() and (held["block"] >= 0).all()
    assert str(held["request"].dtype) == "Int64"
    assert ",-1," not in pages.to_csv(index=False)


@pytest.mark.parametrize("gpu", ["H100 SXM", "H200 SXM", "A100 80GB SXM", "MI300X", "L40S"])
def test_the_card_chart_and_metric_name_the_same_compute_bound_batch(gpu):
    """The throughput chart's line and the "Compute-bound from batch" metric are the same crossover,
    the first whole batch at or past it (the chart had rounded 397.4 to 397 beside the metric's 398)."""
    at = open_app(PAGE, {"gpu": gpu})
    assert not at.exception
    chart = next(c for c in at.get("plotly_chart") if "paging_card" in c.proto.id)
    texts = [a.get("text", "").replace("<br>", " ") for a in
             json.loads(chart.proto.spec)["layout"].get("annotations", [])]
    notes = [t for t in texts if "compute-bound from batch" in t]
    if notes:
        assert notes[0].endswith(metric(at, "Compute-bound from batch"))


def test_the_card_charts_batch_axis_is_fixed_to_what_it_draws():
    """Plotly widens an autoranged axis until every annotation's text fits: on a phone the
    compute-bound label stretched the log batch axis of Llama-3.1-405B on 8 x MI300X to 10^12. The axis
    is fixed to the drawn batches (a small pad), every point inside it, and the label runs away from
    the nearer edge."""
    import math

    at = open_app(PAGE, {"gpu": "MI300X", "gpus": "8", "model": "Llama-3.1-405B"})
    assert not at.exception
    (spec,) = [json.loads(c.proto.spec) for c in at.get("plotly_chart")
               if "Decode batch" in json.dumps(json.loads(c.proto.spec)["layout"].get("xaxis", {}))]
    lo, hi = spec["layout"]["xaxis"]["range"]
    assert -0.2 < lo <= 0 and math.log10(2000) < hi < math.log10(20000)
    points = [x for t in spec["data"] if isinstance(t.get("x"), list) for x in t["x"]]
    assert points and all(lo <= math.log10(x) <= hi for x in points)
    (label,) = [a for a in spec["layout"]["annotations"] if "compute-bound" in a["text"]]
    assert label["xanchor"] == ("left" if label["x"] <= (lo + hi) / 2 else "right")
    # Short lines: on one line (about 215 px) it ran off a phone's chart for Llama-3.1-405B on 8 x H200,
    # where the line sits near the middle of a ~260-px plot.
    assert max(len(line) for line in label["text"].split("<br>")) <= 16


def test_a_step_spent_on_kv_reads_is_blamed_on_them_not_on_the_gemms():
    """A100 + Llama-2-7B (MHA, 512 KiB of KV a token): at the paged batch attention's KV reads are 42
    of a 62.4 ms step, so 4.5x the requests buying 1.44x is the KV reads' doing, not compute-bound GEMMs
    (the caption had blamed the GEMMs, with a clause that read "..., never: the card above)")."""
    caption = _card_caption(open_app(PAGE, {"gpu": "A100 80GB SXM", "model": "Llama-2-7B"}))
    assert "a decode step takes 62.4 ms, 42 ms (67%) of it attention reading each sequence's KV" in caption
    assert "never:" not in caption
    caption = _card_caption(open_app(PAGE, {"gpu": "H200 SXM"}))  # there the GEMMs do turn compute-bound
    assert "weight GEMMs turn compute-bound (the whole step, with attention's KV reads, only from" in caption


def test_a_card_where_every_request_is_too_long_names_the_shortest():
    """GPT-J-6B (2,048 positions) with room for 2,048 output tokens: every request is left out, and the
    2,050 tokens the notice gives are the shortest request's; it had called them the longest prompt."""
    at = open_app(PAGE, {"gpu": "A100 80GB SXM", "model": "GPT-J-6B"})
    _ok(at)
    notice = next(e.value for e in at.error if "positions" in e.value)
    assert "Even the workload's shortest prompt with room for 2,048 output tokens" in notice
    assert "2,050" in notice and "longest prompt" not in notice
