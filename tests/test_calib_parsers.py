"""calib.parsers: each engine's output (fixtures built from its format strings) to measured.csv rows;
hostile inputs give BenchmarkParseError with a useful message and never another exception."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from calib.parsers import (
    FORMATS,
    MAX_BYTES,
    BenchmarkParseError,
    Parsed,
    detect_format,
    gpu_preset,
    model_preset,
    parse_benchmark,
    rows_to_csv,
    with_setup,
)
from sim.measured import DATA as MEASURED_DATA
from sim.truth import COLUMNS, parse_rows, predict

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "bench"


def text(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def parse_error(src: str, *, fmt: str | None = None) -> str:
    with pytest.raises(BenchmarkParseError) as info:
        parse_benchmark(src, fmt=fmt)
    message = str(info.value)
    assert "internal error" not in message
    return message


# (fixture, format, rows as {column: value} of the columns that matter)
EXPECTED = {
    "vllm_serve_summary.txt": ("vllm-summary", [
        dict(id="vllm-s-01-tpot", kind="tpot_ms", value="28.31", unit="ms", qps="", concurrency="64",
             requests="640", prompt_tokens="1024", output_tokens="128", workload="random", model="", gpu="",
             engine="vLLM (vllm bench serve)"),
    ]),
    "vllm_benchmark_serving_c1.txt": ("vllm-summary", [
        dict(kind="ttft_ms", value="121.4", concurrency="1", qps="", requests="32", prompt_tokens="2048",
             output_tokens="256", model="Llama-3.1-8B"),
        dict(kind="tpot_ms", value="7.45", concurrency="1", qps="", requests="32", prompt_tokens="2048",
             output_tokens="256", model="Llama-3.1-8B"),
    ]),
    "vllm_serve_result.json": ("vllm-json", [
        dict(kind="tpot_ms", value="9.8125", qps="4", concurrency="", requests="400", prompt_tokens="512",
             output_tokens="256", model="Llama-3.1-8B", engine="vLLM (vllm bench serve, backend openai)"),
    ]),
    "vllm_benchmark_serving_detailed.json": ("vllm-json", [
        dict(kind="offline_tok_s", value="320", unit="tok/s", qps="inf", concurrency="", requests="8",
             prompt_tokens="512", output_tokens="64", workload="fixed", model="Qwen2.5-7B"),
    ]),
    "sglang_bench_serving.txt": ("sglang-summary", [
        dict(kind="tpot_ms", value="14.02", qps="8", concurrency="", requests="1000", prompt_tokens="221",
             output_tokens="194", workload="sharegpt", model="Llama-3.1-8B",
             engine="SGLang (sglang.bench_serving, backend sglang)"),
    ]),
    "sglang_bench_serving.jsonl": ("sglang-jsonl", [
        dict(kind="tpot_ms", value="14.5", qps="", concurrency="32", requests="320", prompt_tokens="1024",
             output_tokens="256", workload="fixed", source="sglang-jsonl, record 1 (line 1)"),
        dict(kind="tpot_ms", value="11", qps="4", concurrency="", requests="200", prompt_tokens="1024",
             output_tokens="256", workload="fixed", source="sglang-jsonl, record 2 (line 2)"),
    ]),
    "trtllm_bench_pytorch.txt": ("trtllm-bench", [
        dict(kind="offline_tok_s", value="20480", qps="inf", requests="3000", prompt_tokens="1024",
             output_tokens="1024", gpu="H200 SXM", gpus="1", model="Llama-3.1-8B", weights="fp8", kv="fp8",
             engine="TensorRT-LLM 1.1.0 (trtllm-bench throughput, PyTorch backend)"),
    ]),
    "trtllm_bench_v0.17.txt": ("trtllm-bench", [
        dict(kind="offline_tok_s", value="28390.4265", qps="inf", requests="3000", prompt_tokens="128",
             output_tokens="128", gpu="", gpus="1", model="Llama-3.1-8B", weights="fp8", kv="fp8",
             engine="TensorRT-LLM 0.17.0 (trtllm-bench throughput, TRT engine)"),
    ]),
    "typed.csv": ("csv", [
        dict(id="my-01", kind="tpot_ms", value="12.9", concurrency="16", gpu="", model=""),
        dict(id="my-02", kind="ttft_ms", value="265.0", concurrency="1", prompt_tokens="4096"),
        dict(id="my-03", kind="offline_tok_s", value="28390.4", qps="inf", gpu="H100 SXM",
             model="Llama-3.1-8B", notes="trtllm-bench, FP8"),
    ]),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_parses_to_the_expected_rows(name):
    fmt, expected = EXPECTED[name]
    parsed = parse_benchmark(text(name))
    assert isinstance(parsed, Parsed)
    assert parsed.fmt == fmt
    assert len(parsed.rows) == len(expected)
    for row, want in zip(parsed.rows, expected, strict=True):
        assert tuple(row) == COLUMNS
        assert all(isinstance(v, str) for v in row.values())
        assert {k: row[k] for k in want} == want
    assert parsed.notes and all(isinstance(n, str) for n in parsed.notes)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_rows_round_trip_through_parse_rows(name):
    parsed = parse_benchmark(text(name))
    rows = parse_rows(rows_to_csv(parsed.rows))
    assert [r.id for r in rows] == [r["id"] for r in parsed.rows]
    assert [r.value for r in rows] == [float(r["value"]) for r in parsed.rows]
    for r in rows:
        predict(r)  # the model reads every row (or says why it cannot)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_detection_and_forcing(name):
    fmt = EXPECTED[name][0]
    assert detect_format(text(name)) == fmt
    assert parse_benchmark(text(name), fmt=fmt) == parse_benchmark(text(name))


def test_rows_with_the_setup_filled_predict():
    """Rows that name GPU and model predict; the others get the sidebar's setup from the app."""
    trt = parse_rows(rows_to_csv(parse_benchmark(text("trtllm_bench_pytorch.txt")).rows))[0]
    assert predict(trt).model_value is not None
    row = dict(parse_benchmark(text("vllm_serve_summary.txt")).rows[0], gpu="H100 SXM", model="Llama-3.1-8B")
    assert predict(parse_rows(rows_to_csv([row]))[0]).model_value is not None


def test_with_setup_fills_only_blank_cells():
    rows = parse_benchmark(text("trtllm_bench_v0.17.txt")).rows + parse_benchmark(
        text("vllm_serve_summary.txt")).rows
    filled = with_setup(rows, gpu="H100 SXM", model="Mistral-7B", weights="bf16", kv="bf16", gpus=2)
    assert [(r["gpu"], r["model"], r["weights"], r["kv"], r["gpus"]) for r in filled] == [
        ("H100 SXM", "Llama-3.1-8B", "fp8", "fp8", "1"), ("H100 SXM", "Mistral-7B", "bf16", "bf16", "2")]
    assert all(p.model_value is not None for p in map(predict, parse_rows(rows_to_csv(filled))))
    assert rows[1]["gpu"] == ""  # the parsed rows are not changed


def test_notes_say_what_was_not_used():
    notes = " | ".join(parse_benchmark(text("vllm_serve_summary.txt")).notes)
    assert "TTFT not used" in notes and "queueing" in notes
    assert "Peak output token throughput" in notes  # an unknown line, listed as ignored
    notes = " | ".join(parse_benchmark(text("sglang_bench_serving.txt")).notes)
    assert "mean ITL" in notes
    notes = " | ".join(parse_benchmark(text("trtllm_bench_pytorch.txt")).notes)
    assert "streaming TTFT/TPOT not used" in notes


def test_row_notes_hold_the_raw_numbers():
    row = parse_benchmark(text("vllm_serve_summary.txt")).rows[0]
    assert "Mean TPOT (ms) 28.31" in row["notes"] and "Total input tokens 655360" in row["notes"]
    assert row["source"] == "vllm-summary, block at line 8"


def test_a_sweep_of_blocks_gives_a_row_each():
    sweep = text("vllm_serve_summary.txt") + text("vllm_serve_summary.txt").replace(
        "Maximum request concurrency: 64", "Maximum request concurrency: 8").replace(
        "Maximum request concurrency:             64", "Maximum request concurrency:             8")
    rows = parse_benchmark(sweep).rows
    assert [r["concurrency"] for r in rows] == ["64", "8"]
    assert len({r["id"] for r in rows}) == 2


def test_block_only_paste_of_new_vllm_reads_the_load_inside_the_block():
    block = text("vllm_serve_summary.txt").split("100%|##########| 640/640 [00:50<00:00, 12.80it/s]\n")[1]
    row = parse_benchmark(block).rows[0]
    assert (row["kind"], row["concurrency"], row["qps"]) == ("tpot_ms", "64", "")


def test_old_vllm_block_without_the_load_lines_gives_no_tpot_row():
    block = text("vllm_benchmark_serving_c1.txt").split("Maximum request concurrency: 1\n")[1]
    parsed = parse_benchmark(block)
    assert parsed.rows == ()
    assert any("load is not in the text" in n for n in parsed.notes)


def test_single_request_is_an_idle_server():
    rec = json.loads(text("vllm_serve_result.json"))
    rec |= {"completed": 1, "total_input_tokens": 2000, "total_output_tokens": 100, "request_rate": "inf"}
    kinds = [r["kind"] for r in parse_benchmark(json.dumps(rec)).rows]
    assert kinds == ["ttft_ms", "tpot_ms"]


def test_extra_and_duplicated_json_fields_are_noted():
    raw = text("vllm_serve_result.json")
    raw = raw[:-1] + ', "my_field": 3, "completed": 400}'
    parsed = parse_benchmark(raw)
    notes = " | ".join(parsed.notes)
    assert "my_field" in notes and "duplicated keys" in notes
    assert parsed.rows[0]["value"] == "9.8125"


def test_missing_optional_json_fields_are_fine():
    rec = json.loads(text("vllm_serve_result.json"))
    for key in ("date", "model_id", "tokenizer_id", "burstiness", "std_tpot_ms", "p99_ttft_ms"):
        del rec[key]
    row = parse_benchmark(json.dumps(rec)).rows[0]
    assert (row["kind"], row["model"]) == ("tpot_ms", "")


def test_presets():
    assert model_preset("meta-llama/Llama-3.1-8B-Instruct") == "Llama-3.1-8B"
    assert model_preset("meta-llama/Meta-Llama-3.1-70B-Instruct") == "Llama-3.1-70B"
    assert model_preset("mistralai/Mistral-7B-Instruct-v0.3") == "Mistral-7B"
    assert model_preset("Qwen/Qwen2.5-72B-Instruct") == "Qwen2.5-72B"
    assert model_preset("deepseek-ai/DeepSeek-R1") == "DeepSeek-V3"  # its shapes (MEASURED.md), noted
    assert gpu_preset("NVIDIA H200") == "H200 SXM"
    assert gpu_preset("NVIDIA H100 80GB HBM3") == "H100 SXM"
    assert gpu_preset("NVIDIA H100 PCIe") == ""
    assert gpu_preset("NVIDIA A100-SXM4-80GB") == "A100 80GB SXM"
    assert gpu_preset("NVIDIA L4") == "L4"
    assert gpu_preset("CPU") == ""


# ---- hostile inputs ----


def test_truncated_summary_block():
    src = text("vllm_serve_summary.txt")
    message = parse_error(src[: src.index("Mean TPOT")])
    assert "line 8" in message and "no closing" in message


def test_truncated_value():
    src = text("sglang_bench_serving.txt").replace("Successful requests:                     1000",
                                                    "Successful requests:")
    assert "'Successful requests' has no value" in parse_error(src)


def test_truncated_json():
    src = text("vllm_serve_result.json")
    message = parse_error(src[: len(src) // 2])
    assert "not valid JSON" in message and "line" in message


def test_truncated_trtllm_report():
    src = text("trtllm_bench_pytorch.txt")
    message = parse_error(src[: src.index("Total Output Throughput")])
    assert "Total Output Throughput (tokens/sec)" in message and "truncated" in message


def test_wrong_units():
    src = text("vllm_serve_summary.txt").replace("Mean TTFT (ms):", "Mean TTFT (s):")
    message = parse_error(src)
    assert "line 21" in message and "'Mean TTFT (s)'" in message and "ms" in message
    src = text("vllm_serve_summary.txt").replace("Benchmark duration (s):", "Benchmark duration (ms):")
    assert "Benchmark duration (s)" in parse_error(src)
    src = text("trtllm_bench_pytorch.txt").replace("Total Output Throughput (tokens/sec)",
                                                   "Total Output Throughput (tokens/ms)")
    assert "wrong unit" in parse_error(src)
    row = text("typed.csv").replace("12.9,ms", "12.9,s")
    assert "line 2" in parse_error(row) and "unit" in parse_error(row)


@pytest.mark.parametrize("bad", ["nan", "NaN", "inf", "-inf", "-3.5", "1e999", "twelve", "0x1f"])
def test_non_finite_or_negative_values_in_text(bad):
    src = text("vllm_serve_summary.txt").replace("28.31     ", f"{bad}     ")
    message = parse_error(src)
    assert "line 25" in message and "Mean TPOT" in message


@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity", "-1.0"])
def test_non_finite_or_negative_values_in_json(value):
    rec = text("vllm_serve_result.json").replace('"mean_tpot_ms": 9.8125', f'"mean_tpot_ms": {value}')
    message = parse_error(rec)
    assert "'mean_tpot_ms'" in message


@pytest.mark.parametrize(("field", "value", "expect"), [
    ("completed", '"400"', "'completed' is a string"),
    ("completed", "400.5", "not a whole number"),
    ("completed", "true", "'completed' is a boolean"),
    ("mean_tpot_ms", '"9.8"', "'mean_tpot_ms' is a string"),
    ("mean_tpot_ms", "[9.8]", "'mean_tpot_ms' is a list"),
    ("max_concurrency", "1.5", "'max_concurrency'"),
    ("request_rate", "true", "'request_rate'"),
    ("model_id", "42", "'model_id' is a integer"),
])
def test_wrong_json_types(field, value, expect):
    rec = json.loads(text("vllm_serve_result.json"))
    raw = json.dumps(rec).replace(f'"{field}": {json.dumps(rec[field])}', f'"{field}": {value}')
    assert raw != json.dumps(rec)
    assert expect in parse_error(raw)


def test_missing_required_json_fields():
    rec = json.loads(text("vllm_serve_result.json"))
    for key in ("completed", "total_output_tokens", "mean_ttft_ms", "output_throughput"):
        broken = {k: v for k, v in rec.items() if k != key}
        assert f"required field {key!r} is missing" in parse_error(json.dumps(broken))
    broken = {k: v for k, v in rec.items() if k not in ("mean_tpot_ms", "mean_itl_ms")}
    assert "mean_tpot_ms" in parse_error(json.dumps(broken))


def test_missing_required_summary_line():
    src = "\n".join(line for line in text("vllm_serve_summary.txt").split("\n")
                    if not line.startswith("Total generated tokens"))
    assert "'Total generated tokens' is missing" in parse_error(src)


def test_deeply_nested_json():
    message = parse_error('{"a": ' * 5000 + "1" + "}" * 5000)
    assert "nested deeper" in message
    message = parse_error('{"completed": ' + "[" * 100_000)
    assert "nested deeper" in message


def test_json_that_is_not_an_object():
    assert "list" in parse_error("[1, 2, 3]")
    assert "list" in parse_error('{"a": 1}\n[1]\n')
    assert "mix vLLM and SGLang" in parse_error(
        text("vllm_serve_result.json") + "\n" + text("sglang_bench_serving.jsonl"))


def test_ten_megabytes():
    message = parse_error("x" * 10_000_000)
    assert f"{MAX_BYTES:,}" in message
    message = parse_error(text("vllm_serve_summary.txt") + " " * MAX_BYTES)
    assert "larger than" in message


def test_multibyte_size_counts_bytes():
    assert "larger than" in parse_error("é" * (MAX_BYTES // 2 + 10))


@pytest.mark.parametrize("src", ["", "   \n\t\n", "hello world", "a,b,c\n1,2,3\n", "{}", "{\"x\": 1}",
                                 "\x00\x01\x02binary", "Mean TPOT (ms): 12"])
def test_empty_unknown_or_binary(src):
    message = parse_error(src)
    assert message


def test_unknown_format_lists_the_formats():
    message = parse_error("this is not a benchmark")
    for fmt in FORMATS:
        assert fmt in message
    assert "`" not in message  # the page shows it as plain text: a backtick would show as one


def test_result_lines_without_their_title_say_what_is_missing():
    """People copy the numbers and leave the "==== Serving Benchmark Result ====" title behind; the
    message says that line is what tells the formats apart, not just 'unknown format'."""
    for name in ("vllm_serve_summary.txt", "sglang_bench_serving.txt"):
        src = "\n".join(line for line in text(name).splitlines() if "Serving Benchmark Result" not in line)
        message = parse_error(src)
        assert "result lines without their title line" in message and "unknown format" not in message


def test_forced_wrong_format():
    assert parse_error(text("vllm_serve_result.json"), fmt="trtllm-bench")
    assert parse_error(text("vllm_serve_summary.txt"), fmt="vllm-json")
    assert parse_error(text("typed.csv"), fmt="sglang-summary")
    assert "not one of" in parse_error(text("typed.csv"), fmt="excel")


def test_not_text():
    assert "expected text" in parse_error(b"Successful requests: 3")  # type: ignore[arg-type]


def test_csv_errors():
    assert "header" in parse_error("kind\ntpot_ms\n", fmt="csv")
    message = parse_error("kind,value,batch\nstatic_batch_tok_s,100,many\n")
    assert "line 2: row csv-01: batch = 'many'" in message
    assert "line 3" in parse_error("kind,value\ntpot_ms,12\ntpot_ms,nan\n")
    assert "is not one of" in parse_error("kind,value\nlatency,12\n")
    assert "cells" in parse_error("kind,value\ntpot_ms,12,13\n")
    assert "no rows" in parse_error("kind,value\n")
    parsed = parse_benchmark("kind,value,colour,qps,prompt_tokens,output_tokens\ntpot_ms,12,blue,2,100,50\n")
    assert parsed.rows[0]["qps"] == "2" and parsed.rows[0]["id"] == "csv-01"
    assert any("colour" in n for n in parsed.notes)


def _check_contract(src: str) -> None:
    try:
        parsed = parse_benchmark(src)
    except BenchmarkParseError as exc:
        assert "internal error" not in str(exc), str(exc)
        return
    assert parsed.fmt in FORMATS
    parse_rows(rows_to_csv(parsed.rows))


@given(st.text(max_size=400))
def test_arbitrary_text_only_raises_parse_errors(src):
    _check_contract(src)


@given(st.binary(max_size=400))
def test_arbitrary_bytes_only_raise_parse_errors(data):
    _check_contract(data.decode("utf-8", "replace"))
    _check_contract(data.decode("latin-1"))


_SOURCES = [text(name) for name in sorted(EXPECTED)]


@given(st.sampled_from(_SOURCES), st.integers(0, 10_000), st.integers(0, 200), st.text(max_size=30))
def test_mutated_fixtures_only_raise_parse_errors(src, at, cut, insert):
    at %= len(src) + 1
    _check_contract(src[:at] + insert + src[at + cut:])


def test_ramp_up_runs_give_no_load_dependent_rows():
    src = text("vllm_serve_summary.txt").replace(
        "Traffic request rate: inf", "Traffic ramp-up strategy: linear.\n"
        "Will increase RPS from 1 to 20 RPS over the duration of the benchmark.")
    src = src.replace("Maximum request concurrency:             64        \n", "")
    src = src.replace("Maximum request concurrency: 64", "Maximum request concurrency: None")
    parsed = parse_benchmark(src)
    assert parsed.rows == ()
    assert any("ramp-up" in n for n in parsed.notes)
    rec = json.loads(text("vllm_serve_result.json")) | {"ramp_up_strategy": "linear", "request_rate": "inf"}
    assert parse_benchmark(json.dumps(rec)).rows == ()


@pytest.mark.parametrize("prefix", ["# ", "INFO: ", "> "])
def test_a_prefix_before_every_line_is_removed(prefix):
    src = "".join(prefix + line + "\n" for line in text("vllm_serve_summary.txt").splitlines())
    parsed = parse_benchmark(src)
    assert [r["value"] for r in parsed.rows] == ["28.31"]
    assert any(repr(prefix) in n for n in parsed.notes)
    src = "".join(prefix + line + "\n" for line in text("sglang_bench_serving.txt").splitlines())
    assert parse_benchmark(src).fmt == "sglang-summary"


def test_newer_sglang_records_server_info_and_traces():
    """Newer sglang.bench_serving adds tag, server_info (the server's arguments), vision-token
    counts and peak figures, and writes request_rate "trace" when it replays a trace."""
    rec = json.loads(text("sglang_bench_serving.jsonl").splitlines()[1])
    rec |= {"tag": None, "total_input_text_tokens": rec["total_input_tokens"],
            "total_input_vision_tokens": 0, "max_output_tokens_per_s": 1200.0, "max_concurrent_requests": 40,
            "server_info": {"model_path": "meta-llama/Llama-3.1-8B-Instruct", "tp_size": 2,
                            "quantization": "fp8", "kv_cache_dtype": "fp8_e4m3", "version": "0.5.4",
                            "internal_states": [{"avg_spec_accept_length": None}]}}
    parsed = parse_benchmark(json.dumps(rec))
    row = parsed.rows[0]
    assert (row["model"], row["gpus"], row["weights"], row["kv"]) == ("Llama-3.1-8B", "2", "fp8", "fp8")
    assert row["engine"] == "SGLang 0.5.4 (sglang.bench_serving, backend sglang)"
    assert not any("ignored fields" in n for n in parsed.notes)
    rec["request_rate"] = "trace"
    parsed = parse_benchmark(json.dumps(rec))
    assert parsed.rows == () and any("trace" in n for n in parsed.notes)
    src = text("sglang_bench_serving.txt").replace("Traffic request rate:                    8.0",
                                                   "Traffic request rate:                    trace")
    parsed = parse_benchmark(src)
    assert parsed.rows == () and any("trace" in n for n in parsed.notes)


def test_the_measured_csv_reads_as_typed_rows():
    """The project's measured.csv (the app's copy of ../shared's, the same bytes: tests/test_sim_truth.py)."""
    src = MEASURED_DATA.read_text(encoding="utf-8")
    parsed = parse_benchmark(src)
    assert parsed.fmt == "csv"
    assert [r["id"] for r in parsed.rows] == [r.id for r in parse_rows(src)]


def test_a_carriage_return_in_a_benchmark_text_is_a_parse_error_or_a_row():
    """Found by hypothesis: a lone "\\r" inside a value reached the CSV round trip unquoted and raised
    csv.Error instead of a parse error."""
    src = text("trtllm_bench_pytorch.txt")
    at = src.index("Llama") + 3
    _check_contract(src[:at] + "0\r" + src[at:])


def test_a_quantised_checkpoint_is_priced_at_its_own_precision():
    """A RedHatAI '-FP8' model id and an SGLang record whose server_info says quantization 'mxfp4' were
    priced at the sidebar's BF16 (+75 %; gpt-oss-120b 'does not fit' on the H100 it ran on). The id's
    suffix and the server's quantization set the weights, and the notes say where they came from."""
    from calib.parsers import id_weights, parse_benchmark
    from calib.reader import price, reader_rows
    from sim.cost import DEFAULT_ASSUMPTIONS
    from sim.hardware import GPUS
    from sim.models import MODELS

    assert id_weights("RedHatAI/Meta-Llama-3.1-8B-Instruct-FP8") == "fp8"
    assert id_weights("hugging-quants/Meta-Llama-3.1-70B-Instruct-AWQ-INT4") == "int4"
    assert id_weights("meta-llama/Llama-3.1-8B-Instruct") == ""
    path = FIXTURES / "sglang_bench_serving.jsonl"
    record = json.loads(path.read_text(encoding="utf-8").splitlines()[0].replace("Infinity", "1e999"))
    record.update(max_concurrency=1, request_rate=1e999,
                  server_info={"model_path": "openai/gpt-oss-120b", "tp_size": 1, "quantization": "mxfp4",
                               "kv_cache_dtype": "auto", "version": "0.5.4"})
    parsed = parse_benchmark(json.dumps(record).replace("1e999", "Infinity"))
    assert parsed.rows and all(r["weights"] == "mxfp4" and r["model"] == "gpt-oss-120b" for r in parsed.rows)
    got = reader_rows(parsed.rows, GPUS["H100 SXM"], MODELS["Llama-3.1-8B"])
    assert all(p.model_value is not None for p in price(got, DEFAULT_ASSUMPTIONS))
    # A row naming another preset without weights takes that checkpoint's (gpt-oss: MXFP4), and says so.
    rows = [dict(r, weights="") for r in parsed.rows]
    got = reader_rows(rows, GPUS["H100 SXM"], MODELS["Llama-3.1-8B"])
    assert all(r.weights == "mxfp4" for r in got.rows)
    assert any("as that model's checkpoint ships" in n for n in got.notes)


def test_a_speculative_run_gives_no_plain_decode_rows():
    """SGLang prints 'Accept length' for a run with speculative decoding: its TPOT (2.65 ms for EAGLE-3
    on Llama-3.1-8B, below the plain-decode floor) was fitted as plain decode. Its TPOT and throughput
    rows are left out, with a note; the same run without the line keeps them."""
    from calib.parsers import parse_benchmark

    text = (FIXTURES / "sglang_bench_serving.txt").read_text(encoding="utf-8")
    plain = parse_benchmark(text)
    assert any(r["kind"] == "tpot_ms" for r in plain.rows)
    spec = parse_benchmark(text.replace("Concurrency:                             21.77     ",
                                        "Concurrency:                             21.77     \n"
                                        "Accept length:                           3.41      ", 1))
    assert not any(r["kind"] in ("tpot_ms", "offline_tok_s") for r in spec.rows)
    assert any("speculative decoding (accept length 3.41" in n for n in spec.notes)


@pytest.mark.parametrize(("name", "preset"), [
    ("deepseek-ai/DeepSeek-V2", ""), ("deepseek-ai/DeepSeek-V2.5", ""),
    ("deepseek-ai/DeepSeek-V3", "DeepSeek-V3"),
    ("deepseek-ai/DeepSeek-R1", "DeepSeek-V3"), ("mistralai/Mistral-7B-Instruct-v0.3", "Mistral-7B"),
])
def test_model_ids_map_to_their_own_preset_only(name, preset):
    """Every DeepSeek-V* id collapsed to DeepSeek-V3 (V2 and V2.5 priced as a 671B model); R1, which
    has V3's shapes, mapped to nothing."""
    from calib.parsers import model_preset

    assert model_preset(name) == preset


@pytest.mark.parametrize("name", ["NVIDIA GH200 480GB", "NVIDIA GB200", "NVIDIA H100 PCIe"])
def test_other_gpus_than_the_presets_are_not_mapped_to_one(name):
    """A GH200 (96 GB at ~4 TB/s) was priced as an H200 SXM (141 GB, 4.8 TB/s), a GB200 as a B200."""
    from calib.parsers import gpu_preset

    assert gpu_preset(name) == ""


SPEC_VLLM = """
---------------Speculative Decoding---------------
Acceptance rate (%):                     62.50
Acceptance length:                       2.88
Drafts:                                  100
Draft tokens:                            300
Accepted tokens:                         188
Per-position acceptance (%):
  Position 0:                            80.00
==================================================
"""


def test_speculative_runs_of_vllm_and_trtllm_keep_only_their_ttft():
    """vllm bench serve prints an 'Acceptance length' in its Speculative Decoding section (and
    spec_decode_acceptance_length in --save-result); trtllm-bench a DECODING STATISTICS section. Their
    TPOT and throughput are not plain decode's: like SGLang's 'Accept length', only the TTFT is used."""
    import json

    from calib.parsers import parse_benchmark

    text = (FIXTURES / "vllm_benchmark_serving_c1.txt").read_text(encoding="utf-8")
    plain = parse_benchmark(text)
    assert {r["kind"] for r in plain.rows} >= {"ttft_ms", "tpot_ms"}
    end = text.rindex("=" * 50)
    spec = parse_benchmark(text[:end] + SPEC_VLLM.lstrip("\n") + text[end + 50:])
    assert [r["kind"] for r in spec.rows] == ["ttft_ms"]
    assert any("speculative decoding (accept length 2.88" in n for n in spec.notes)

    record = json.loads((FIXTURES / "vllm_serve_result.json").read_text(encoding="utf-8"))
    record["spec_decode_acceptance_length"] = 2.88
    spec = parse_benchmark(json.dumps(record))
    assert not any(r["kind"] in ("tpot_ms", "offline_tok_s") for r in spec.rows)
    assert not any("spec_decode" in n and "ignored" in n for n in spec.notes)

    report = (FIXTURES / "trtllm_bench_pytorch.txt").read_text(encoding="utf-8")
    assert any(r["kind"] == "offline_tok_s" for r in parse_benchmark(report).rows)
    mtp = report + ("\n===========================================================\n"
                    "= DECODING STATISTICS (MTP)\n"
                    "===========================================================\n"
                    "-- Acceptance Length Details --------------------------------\n"
                    "[AL] MINIMUM: 1.00\n[AL] MAXIMUM: 4.00\n[AL] AVERAGE: 2.91\n")
    spec = parse_benchmark(mtp)
    assert not spec.rows
    assert any("DECODING STATISTICS (MTP)" in n and "accept length 2.91" in n for n in spec.notes)


@pytest.mark.parametrize(("name", "preset", "weights"), [
    ("meta-llama/Llama-4-Scout-17B-16E-Instruct", "Llama-4-Scout", ""),
    ("Qwen/Qwen3-235B-A22B-Instruct-2507", "Qwen3-235B-A22B", ""),
    ("Qwen/Qwen3-30B-A3B-Thinking-2507", "Qwen3-30B-A3B", ""),
    ("deepseek-ai/DeepSeek-R1-0528", "DeepSeek-V3", ""),
    ("deepseek-ai/DeepSeek-V3-0324", "DeepSeek-V3", ""),
    ("nvidia/DeepSeek-R1-FP4", "DeepSeek-V3", "nvfp4"),
    ("deepseek-ai/DeepSeek-V2", "", ""),
])
def test_official_model_ids_map_to_their_presets(name, preset, weights):
    """Release dates (-0528, -2507), Meta's -17B-16E and NVIDIA's -FP4 (NVFP4) no longer send a run to
    the sidebar's model; DeepSeek-V2 is still not V3."""
    from calib.parsers import id_weights, model_preset

    assert model_preset(name) == preset and id_weights(name) == weights


def test_uploads_in_utf16_or_with_a_bom_are_read():
    """A --save-result JSON re-saved with a UTF-8 byte-order mark, and a summary redirected by
    Windows PowerShell 5.1 (UTF-16 with or without its mark, CRLF): read, not refused."""
    from calib.parsers import decode_bytes, parse_benchmark

    summary = (FIXTURES / "vllm_serve_summary.txt").read_text(encoding="utf-8").replace("\n", "\r\n")
    expected = [r["kind"] for r in parse_benchmark(summary).rows]
    for data in (summary.encode("utf-16"), summary.encode("utf-16-le"), summary.encode("utf-8-sig"),
                 summary.encode("utf-32")):
        assert [r["kind"] for r in parse_benchmark(decode_bytes(data)).rows] == expected
    record = (FIXTURES / "vllm_serve_result.json").read_text(encoding="utf-8")
    assert parse_benchmark("\ufeff" + record).rows == parse_benchmark(record).rows
