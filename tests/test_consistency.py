"""The article as a whole, through AppTest: a GPU or model chosen in the sidebar on one page reaches
every page, and the same quantity reads the same on the page that introduces it and on page 04's
scenario table."""

from __future__ import annotations

import re

import pytest

from sim.cost import DEFAULT_ASSUMPTIONS
from sim.hardware import GPUS
from sim.metrics import scenario_runs
from sim.models import MODELS
from tests.conftest import metric, number, open_app

WATCH, PHASES, BATCHING, PAGING, SPEC = ("app_pages/watch.py", "app_pages/two_phases.py",
                                         "app_pages/batching.py", "app_pages/paging.py",
                                         "app_pages/speculative.py")


def _ok(at) -> None:
    assert not at.exception, [e.value for e in at.exception]


def _row(at, name: str):
    table = at.dataframe[0].value.set_index("Scenario")
    return table.loc[name]


def _tokens(text: str) -> float:
    """'31,470', '158 tok/s', '2,066' -> tokens/s."""
    return number(text)


def _seconds(text: str) -> float:
    return number(text) * {"h": 3600.0, "min": 60.0, "s": 1.0, "ms": 1e-3, "µs": 1e-6}[text.split()[-1]]


def _switch(at, page: str):
    at.switch_page(page).run()
    _ok(at)
    return at


@pytest.mark.parametrize(("gpu", "model"), [("A100 80GB SXM", "Qwen2.5-7B"), ("H100 SXM", "Llama-3.1-8B")])
def test_one_sidebar_choice_reaches_every_page_and_the_numbers_agree(gpu, model):
    at = open_app(PHASES)
    default_decode = metric(at, "Decode throughput")
    at.selectbox(key="gpu").set_value(gpu)
    at.selectbox(key="model").set_value(model).run()
    _ok(at)
    decode = metric(at, "Decode throughput")
    if (gpu, model) != ("H100 SXM", "Llama-3.1-8B"):
        assert decode != default_decode

    # 04: the same setup, and batch-1 decode agrees with page 00
    _switch(at, WATCH)
    assert f"on {gpu}" in at.caption[0].value and model in at.caption[0].value
    batch1 = _row(at, "00 · Batch-1 decode")["Output tok/s"]
    assert _tokens(batch1) == pytest.approx(_tokens(decode), rel=0.01)
    watch = {name: _row(at, name) for name in ("02 · Paged KV cache", "02 · KV cache reserved for the max",
                                               "03 · Speculative decoding", "01 · Static batching",
                                               "01 · Continuous batching", "01 · High load")}

    # 02: what fits on the card and its throughput, per policy
    _switch(at, PAGING)
    for policy, name in (("paged", "02 · Paged KV cache"),
                         ("reserved", "02 · KV cache reserved for the max")):
        fit = metric(at, f"Fit, {policy}")
        what = watch[name]["What is happening"]  # what fits, or the engine's max_num_seqs of it
        assert f"Decoding the {fit} requests" in what or f"of the {fit} that fit" in what
        assert _tokens(watch[name]["Output tok/s"]) == pytest.approx(
            _tokens(metric(at, f"Decode throughput, {policy}")), rel=0.01)

    # 03: speculative decoding's tokens/s
    _switch(at, SPEC)
    assert _tokens(watch["03 · Speculative decoding"]["Output tok/s"]) == pytest.approx(
        _tokens(metric(at, "Tokens/s, whole batch")), rel=0.01)

    # 01: the arrival rates page 04 uses are page 01's choices, and its runs are page 01's runs
    runs = scenario_runs(GPUS[gpu], MODELS[model], DEFAULT_ASSUMPTIONS)
    _switch(at, BATCHING)
    at.radio(key="batching_load").set_value("poisson").run()
    for rate, rows in ((runs.moderate_rate_rps, (("01 · Static batching", False),
                                                 ("01 · Continuous batching", True))),
                       (runs.high_rate_rps, (("01 · High load", True),))):
        at.select_slider(key="batching_rate").set_value(int(rate) if rate >= 1 else rate)  # page 01's options
        for name, continuous in rows:
            at.toggle(key="batching_continuous").set_value(continuous).run()
            _ok(at)
            assert at.select_slider(key="batching_rate").value == rate
            assert _tokens(watch[name]["Output tok/s"]) == pytest.approx(
                _tokens(metric(at, "Output tok/s")), rel=0.01), name
            assert _seconds(watch[name]["TTFT p99"]) == pytest.approx(
                _seconds(metric(at, "TTFT p99")), rel=0.01), name

    # the landing page follows too
    _switch(at, "app_pages/home.py")
    assert any(gpu in c.value for c in at.caption)


def test_a_change_on_page_04_reaches_page_00():
    at = open_app(WATCH)
    at.selectbox(key="gpu").set_value("B200").run()
    _ok(at)
    batch1 = _row(at, "00 · Batch-1 decode")["Output tok/s"]
    _switch(at, PHASES)
    assert re.search("B200", at.caption[0].value)
    assert _tokens(metric(at, "Decode throughput")) == pytest.approx(_tokens(batch1), rel=0.01)


#: For each scenario row: (page 04's column, the metric its page shows for the same quantity, how to
#: read the metric's text). Every row is checked on at least its output and one latency or utilization.
_SAME_NUMBERS = {
    "batch1": [("Output tok/s", "Decode throughput", _tokens), ("TTFT p50", "Prefill time", _seconds),
               ("TPOT p50", "Decode step", _seconds), ("nvidia-smi util", "nvidia-smi util, decode", number),
               ("MFU (tensor)", "MFU, decode", number)],
    "static": [("Output tok/s", "Output tok/s", _tokens), ("TTFT p99", "TTFT p99", _seconds),
               ("TTFT p50", "TTFT p50", _seconds), ("TPOT p50", "TPOT p50", _seconds),
               ("nvidia-smi util", "GPU utilization", number)],
    "reserved": [("Output tok/s", "Decode throughput, reserved", _tokens)],
    "paged": [("Output tok/s", "Decode throughput, paged", _tokens)],
    "chunked": [("TTFT p50", "Prompt TTFT, chunked", _seconds)],
    "speculative": [("Output tok/s", "Tokens/s, whole batch", _tokens),
                    ("TPOT p50", "Time per token", _seconds)],
}
_SAME_NUMBERS["continuous"] = _SAME_NUMBERS["overload"] = _SAME_NUMBERS["static"]
_SAME_NUMBERS["plain"] = []  # page 03 shows plain decode as the delta of its tokens/s: checked below
_SAME_NUMBERS["unchunked"] = []  # page 02 shows its TTFT as the delta of the chunked TTFT: below


@pytest.mark.parametrize("gpu", ["H100 SXM", "L4"])
def test_every_scenario_row_opens_its_page_at_its_settings_with_the_same_numbers(gpu):
    """Page 04's "Open it" link of each row, opened through AppTest, shows the row's numbers."""
    from urllib.parse import parse_qsl, urlsplit

    from ui.nav import SECTIONS

    pages = {s.url_path: s.path for s in SECTIONS}
    at = open_app(WATCH, {"gpu": gpu})
    table = at.dataframe[0].value
    checked = set()
    for _, row in table.iterrows():
        name = row["Scenario"].removesuffix(" (does not fit)")  # the mark of a row that did not run
        key = next(k for k, v in _ROW_NAMES.items() if name.endswith(v))
        link = urlsplit(row["Open it"])
        params = dict(parse_qsl(link.query))
        assert params.get("gpu") == (gpu if gpu != "H100 SXM" else None)  # the reader's setup goes along
        page = open_app(pages[link.path], params)
        _ok(page)
        needed = [label for _, label, _ in _SAME_NUMBERS[key]] or (
            ["Tokens/s, whole batch"] if key == "plain" else ["Prompt TTFT, chunked"])
        shown_labels = {m.label for m in page.metric}
        if not all(label in shown_labels for label in needed):
            # the page refuses a setup that cannot exist (and says so): the row shows no numbers either
            assert any("does not fit" in e.value for e in page.error), key
            assert row["Output tok/s"] == "–" and row["nvidia-smi util"] == "–", key
            checked.add(key)
            continue
        for column, label, read in _SAME_NUMBERS[key]:
            shown = metric(page, label)
            assert read(row[column]) == pytest.approx(read(shown), rel=0.01), (key, column, shown)
        if key == "plain":  # tokens/s with speculation, and "+N vs plain": plain = tokens/s − N
            spec_row = next(m for m in page.metric if m.label == "Tokens/s, whole batch")
            plain = _tokens(spec_row.value) - float(spec_row.delta.split()[0].replace(",", ""))
            assert _tokens(row["Output tok/s"]) == pytest.approx(plain, rel=0.01, abs=0.6)
        if key == "unchunked":  # the page shows the unchunked TTFT as the chunked metric's delta
            delta = next(m.delta for m in page.metric if m.label == "Prompt TTFT, chunked")
            assert _seconds(row["TTFT p50"]) == pytest.approx(_seconds(delta.split(" ", 1)[1]), rel=0.01)
        checked.add(key)
    assert checked == set(_ROW_NAMES)
    # Section 01's 64 slots do not fit an L4 with Llama-3.1-8B: its rows run on the most that do
    # (a power of two page 01 offers) instead of showing nothing.
    for name in ("Static batching", "Continuous batching", "High load"):
        row = table[table["Scenario"].str.endswith(name)].iloc[0]
        assert row["Output tok/s"] != "–", (gpu, name)
        assert ("batching_slots=" in row["Open it"]) == (gpu == "L4"), (gpu, name)


_ROW_NAMES = {"batch1": "Batch-1 decode", "static": "Static batching", "continuous": "Continuous batching",
              "reserved": "KV cache reserved for the max", "paged": "Paged KV cache",
              "unchunked": "Long prompt, one prefill step", "chunked": "Long prompt, chunked prefill",
              "plain": "Decode, no speculation", "speculative": "Speculative decoding",
              "overload": "High load"}


@pytest.mark.parametrize("setup", [
    {"gpu": "B200", "model": "Llama-3.2-1B", "weights": "nvfp4"},  # rows at 256 and 512 requests/s
    {"gpu": "L40S", "model": "Llama-2-70B", "weights": "nvfp4"},  # rows at 1/8 and 1/2 request/s
], ids=["fast", "slow"])
def test_page04_rows_open_page01_at_their_own_numbers(setup):
    """Each page-01 row's "Open it" link sets page 01 to that row's run, whatever rate the setup's
    capacity gives it (its rates are powers of two; page 01 offers every one sim.batching allows)."""
    from urllib.parse import parse_qsl, urlsplit

    from ui.fig_watch import LINK_COLUMN

    at = open_app(WATCH, setup)
    _ok(at)
    table = at.dataframe[0].value.set_index("Scenario")
    rates = []
    for name in ("01 · Static batching", "01 · Continuous batching", "01 · High load"):
        link = urlsplit(table.loc[name, LINK_COLUMN])
        assert link.path == "continuous-batching"
        params = dict(parse_qsl(link.query))
        rates.append(float(params["batching_rate"]))
        page01 = open_app(BATCHING, params)
        _ok(page01)
        assert not any("could not be used" in w.value for w in page01.warning), name
        assert page01.select_slider(key="batching_rate").value == pytest.approx(rates[-1])
        assert _tokens(metric(page01, "Output tok/s")) == pytest.approx(  # page 01 shows whole tok/s
            _tokens(table.loc[name, "Output tok/s"]), rel=0.01, abs=0.5), name
        assert _seconds(metric(page01, "TTFT p50")) == pytest.approx(
            _seconds(table.loc[name, "TTFT p50"]), rel=0.01), name
    assert max(rates) > 64 or min(rates) < 0.5  # beyond page 01's first range of rates, 1/2 .. 64
