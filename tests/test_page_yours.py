"""AppTest: "Your numbers" (paste a benchmark, see the model's error, fit, apply to every page)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sim.cost import DEFAULT_ASSUMPTIONS
from tests.conftest import metric, ms, number, open_app, open_data
from ui.yours import MAX_PASTE_CHARS

PAGE = "app_pages/yours.py"
TWO_PHASES = "app_pages/two_phases.py"
FIXTURES = Path(__file__).parent / "fixtures" / "bench"
SLIDERS = ("compute_eff", "memory_eff", "overhead_us", "seq_host_us", "graph_us", "launch_us")


def test_empty_page_says_what_to_paste():
    at = open_app(PAGE)
    assert not at.exception
    assert "Nothing pasted yet" in at.info[0].value
    assert not at.metric


def test_example_is_read_priced_fitted_and_applied_to_every_page():
    at = open_app(PAGE)
    decode_before = None
    at.button(key="yours_example").click().run()
    assert not at.exception
    assert metric(at, "Rows read") == "4"
    assert not at.warning and not any(c.value.startswith("At a bound") for c in at.caption)
    before, after = number(metric(at, "Model's median |error| now")), number(metric(at, "After the fit"))
    assert after < before
    assert any(c.proto.id and "yours_errors" in c.proto.id for c in at.get("plotly_chart"))
    d = DEFAULT_ASSUMPTIONS
    assert [at.session_state[k] for k in SLIDERS] == pytest.approx(  # the defaults
        [d.compute_eff, d.memory_eff, d.host_overhead_s * 1e6, d.sequence_host_s * 1e6,
         d.graph_kernel_s * 1e6, d.kernel_launch_s * 1e6])
    at.switch_page(TWO_PHASES).run()
    decode_before = ms(metric(at, "Decode step"))
    at.switch_page(PAGE).run()
    at.button(key="yours_apply").click().run()
    assert not at.exception
    moved = {k: at.session_state[k] for k in SLIDERS}
    defaults = {"memory_eff": DEFAULT_ASSUMPTIONS.memory_eff,
                "overhead_us": DEFAULT_ASSUMPTIONS.host_overhead_s * 1e6}
    assert any(moved[k] != pytest.approx(v) for k, v in defaults.items())
    assert "Every page now uses these assumptions" in at.success[0].value
    for key, value in moved.items():  # the URL carries what moved, so a copied link has it
        if key in defaults and value != pytest.approx(defaults[key]):
            raw = at.query_params[key]
            assert float(raw if isinstance(raw, str) else raw[0]) == pytest.approx(value)
    at.switch_page(TWO_PHASES).run()
    assert not at.exception
    assert ms(metric(at, "Decode step")) != pytest.approx(decode_before, rel=1e-3)


def test_a_link_with_the_fitted_assumptions_reopens_calibrated():
    """What "Apply" leaves in the URL reproduces the calibrated numbers on a fresh session."""
    at = open_app(TWO_PHASES, {"memory_eff": "0.8", "overhead_us": "430"})
    calibrated = ms(metric(at, "Decode step"))
    assert calibrated > ms(metric(open_app(TWO_PHASES), "Decode step"))
    assert at.slider(key="memory_eff").value == pytest.approx(0.8)


@pytest.mark.parametrize("fixture", ["vllm_serve_summary.txt", "sglang_bench_serving.txt",
                                     "trtllm_bench_v0.17.txt", "vllm_serve_result.json"])
def test_engine_outputs_are_read(fixture):
    at = open_app(PAGE)
    at.text_area(key="yours_text").set_value((FIXTURES / fixture).read_text(encoding="utf-8")).run()
    assert not at.exception
    assert number(metric(at, "Rows read")) >= 1
    assert not at.error


@pytest.mark.parametrize("text", ["not a benchmark at all", "Mean TTFT (ms): nan\n", "{\"a\": [[[[[[",
                                  "id,kind\nx,tpot_ms\n", "\x00\x01\x02" * 50])
def test_bad_pastes_get_a_message_not_a_traceback(text):
    at = open_app(PAGE)
    at.text_area(key="yours_text").set_value(text).run()
    assert not at.exception
    assert at.error and "Could not read the text box" in at.error[0].value
    assert not at.metric


def test_runs_on_a_setup_the_model_cannot_price_say_why():
    at = open_app(PAGE)
    at.text_area(key="yours_text").set_value(
        "id,gpu,gpus,model,weights,kv,kind,value,prompt_tokens,output_tokens\n"
        "a,TPU v9,1,Llama-3.1-8B,bf16,bf16,ttft_ms,10,128,1\n").run()
    assert not at.exception
    assert "cannot price any of these runs" in at.warning[0].value
    assert any("not a preset" in c.value for c in at.code)


def test_pasted_markup_is_shown_as_plain_text_only():
    """Ids, engine names and GPU names from a paste reach the page only in code blocks and escaped
    hover text, never as markdown or HTML."""
    evil = "<b>x</b>[click](https://evil.example):red[r]"
    at = open_app(PAGE)
    at.text_area(key="yours_text").set_value(
        "id,gpu,gpus,model,weights,kv,engine,kind,value,prompt_tokens,output_tokens,batch\n"
        f"\"{evil}\",,1,,bf16,bf16,\"{evil}\",static_batch_tok_s,150,128,256,1\n"
        f"z,\"{evil}\",1,Llama-3.1-8B,bf16,bf16,e,ttft_ms,10,128,1,\n").run()
    assert not at.exception
    for element in (*at.markdown, *at.caption, *at.warning, *at.error, *at.info, *at.success):
        assert "evil.example" not in element.value, element.value
    spec = json.loads(next(c for c in at.get("plotly_chart") if "yours_errors" in c.proto.id).proto.spec)
    assert all("<b>x</b>" not in y for t in spec["data"] for y in t["y"])
    assert all("<b>x</b>" not in h for t in spec["data"] for h in t["hovertemplate"])
    # A table shows text as written (a dataframe renders no HTML): the engine reads as pasted, not as
    # '&lt;b&gt;x...' (it was escaped for Plotly and shown escaped there).
    open_data(at, "yours_data")
    (table,) = [d.value for d in at.dataframe if "conditions" in d.value.columns]
    assert any(c.startswith(evil + ";") for c in table["conditions"]), list(table["conditions"])


@pytest.mark.parametrize("row", [
    "a,,1,,bf16,bf16,e,static_batch_tok_s,100,0,0,1,,",
    "a,,1,,bf16,bf16,e,ttft_ms,10,0,1,,,",
    "a,,1,,bf16,bf16,e,offline_tok_s,100,0,0,,,1000",
    "a,,1,,bf16,bf16,e,tpot_ms,10,512,128,,1000000000000,",
    "a,,1,,bf16,bf16,e,tpot_ms,1e-320,512,128,4,,",
    "a,H100 SXM,1,Llama-3.1-405B,bf16,bf16,e,tpot_ms,50,512,128,4,,",
])
def test_runs_that_cannot_be_priced_say_why_never_a_traceback(row):
    """Zero lengths, absurd loads, values that are not measurements, a model bigger than the card."""
    at = open_app(PAGE)
    at.text_area(key="yours_text").set_value(
        "id,gpu,gpus,model,weights,kv,engine,kind,value,prompt_tokens,output_tokens,concurrency,qps,"
        "requests\n" + row + "\n").run()
    assert not at.exception
    assert "cannot price any of these runs" in at.warning[0].value
    assert any("a:" in c.value for c in at.code)


def test_apply_twice_does_not_drift():
    at = open_app(PAGE)
    at.button(key="yours_example").click().run()
    at.button(key="yours_apply").click().run()
    first = {k: at.session_state[k] for k in SLIDERS}
    at.button(key="yours_apply").click().run()
    assert {k: at.session_state[k] for k in SLIDERS} == first
    assert "Every page now uses these assumptions" in at.success[0].value


def test_a_fitted_value_on_a_bound_is_named_and_the_table_is_rounded():
    """Runs faster than the model allows (TensorRT-LLM's FP8 offline runs on an H100, SGLang's batch-1
    decode): the fit puts the bandwidth efficiency at 1, this GPU's measured ceiling. The table says so
    per row and a caption says what it means; the fitted numbers are rounded (it showed 379.2419)."""
    from sim.measured import shipped_csv

    at = open_app(PAGE)
    at.text_area(key="yours_text").set_value(shipped_csv(("eag-01", "tpo-01", "t017-01"))).run()
    table = at.dataframe[0].value.set_index("assumption")
    assert table.loc["Bandwidth efficiency", "note"] == "at its upper bound"
    assert all(len(f"{v:g}".replace(".", "").lstrip("0")) <= 4 for v in table["fitted"])
    assert any(c.value.startswith("At a bound: ") and "measured ceiling" in c.value for c in at.caption)


def test_a_fit_with_as_many_assumptions_as_rows_says_so():
    """One TPOT row: 'After the fit' read 0.05 % against 59 % before, in-sample. The fit frees one
    assumption by default (fewer than the rows, at least one), and the metric says how many it had on
    how many rows, and its help why that is no evidence."""
    at = open_app(PAGE)
    at.text_area(key="yours_text").set_value(
        (FIXTURES / "vllm_serve_summary.txt").read_text(encoding="utf-8")).run()
    assert not at.exception
    m = next(x for x in at.metric if x.label == "After the fit")
    assert metric(at, "Rows read") == "1"
    assert m.delta == "1 assumption on 1 row" and "no evidence" in m.help


def test_a_paste_over_the_cap_is_named_not_dropped():
    """No max_chars on the text area (Streamlit drops a longer paste whole, silently): the page reads
    the length and says what the cap is and what to do."""
    at = open_app(PAGE)
    assert not at.text_area(key="yours_text").proto.max_chars
    block = (FIXTURES / "vllm_serve_summary.txt").read_text()
    at.text_area(key="yours_text").set_value(block * (MAX_PASTE_CHARS // len(block) + 1)).run()
    assert not at.exception
    assert at.error and f"at most {MAX_PASTE_CHARS:,} are read" in at.error[0].value
    assert "Upload it as a file" in at.error[0].value
    assert not at.metric
    # Not kept: it would travel to the browser and back on every rerun, and come back with the page.
    assert at.text_area(key="yours_text").value == ""
    assert not at.session_state["_yours_saved_text"]
    at.run()
    assert at.error and "so it was not kept" in at.error[0].value  # still said on the next rerun
    at.text_area(key="yours_text").set_value(block).run()  # under the cap: read
    assert not at.exception and not at.error
    assert metric(at, "Rows read")
