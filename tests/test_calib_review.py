"""What a review of the "Your numbers" page with real benchmark formats found (2026-12-05), each
fixed and pinned here: fixtures in tests/fixtures/bench/review/ (their README says where each is from)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from calib.parsers import model_preset, parse_benchmark, rows_to_csv
from calib.reader import price, reader_rows
from sim import truth
from sim.cost import DEFAULT_ASSUMPTIONS
from sim.hardware import GPUS
from sim.models import MODELS
from tests.conftest import open_app

FIX = Path(__file__).parent / "fixtures" / "bench"
H100, LLAMA8 = GPUS["H100 SXM"], MODELS["Llama-3.1-8B"]


def _read(name: str):
    return parse_benchmark((FIX / "review" / name).read_text())


def _kinds(parsed) -> dict[str, dict[str, str]]:
    return {r["kind"]: r for r in parsed.rows}


def test_trtllm_docs_report_units_are_read_and_its_batch_cap_prices_the_offline_row():
    """TensorRT-LLM's own docs print 'Per User Output Throughput (tokens/sec/user)'; the page refused the
    whole report ('has the wrong unit'). Its Max Runtime Batch Size 4 is the offline row's batch: the
    model priced it at the batch the KV cache holds, several times faster."""
    p = _read("trtllm_docs_report.txt")
    (row,) = p.rows
    assert row["kind"] == "offline_tok_s" and row["batch"] == "4"
    got = reader_rows(p.rows, H100, LLAMA8)
    (capped,) = price(got, DEFAULT_ASSUMPTIONS)
    uncapped = truth.offline_tokens_per_s(H100, LLAMA8, 412, 129, 10)
    assert capped.model_value == pytest.approx(truth.offline_tokens_per_s(H100, LLAMA8, 412, 129, 10,
                                                                           max_seqs=4))
    assert capped.model_value < 0.6 * uncapped


def test_a_trtllm_run_one_request_at_a_time_gives_idle_server_rows_not_an_offline_one():
    """`--concurrency 1 --max_batch_size 1` (NVIDIA's min-latency recipe) was priced as every request
    queued at once: +736 %, and a fit to the efficiencies' lower bounds."""
    p = _read("trtllm_concurrency_1.txt")
    rows = _kinds(p)
    assert set(rows) == {"ttft_ms", "tpot_ms"} and rows["tpot_ms"]["concurrency"] == "1"
    assert any("one request at a time" in n for n in p.notes)
    errors = [pr.error for pr in price(reader_rows(p.rows, H100, LLAMA8), DEFAULT_ASSUMPTIONS)]
    assert all(abs(e) < 0.15 for e in errors)


@pytest.mark.parametrize("name", ["sglang_2024_rate_inf.txt", "vllm_mid2024_rate_inf.txt"])
def test_a_version_before_the_concurrency_cap_at_rate_inf_is_an_offline_run(name):
    """Benchmarks of 2024 had no --max-concurrency: at rate inf every request went at t = 0. The page
    gave no row and a note that they were 'not all queued at t = 0'."""
    p = _read(name)
    assert "offline_tok_s" in _kinds(p)
    assert _kinds(p)["offline_tok_s"]["qps"] == "inf"
    assert any("predates it" in n for n in p.notes)
    assert not any("not all queued" in n for n in p.notes)


def test_vllm_2024_output_is_read_as_vllm():
    assert _read("vllm_2024_rate_4.txt").fmt == "vllm-summary"
    assert _read("vllm_2024_save_result.json").fmt == "vllm-json"


def test_a_named_gpu_or_model_the_app_has_no_preset_for_is_not_priced_as_the_sidebars():
    """A trtllm-bench run of Qwen3-32B on an H100 PCIe was priced as Llama-3.1-8B on an H100 SXM and
    fitted. It is shown, not priced, unless the sidebar's is Custom (the reader gave its shapes)."""
    text = (FIX / "trtllm_bench_pytorch.txt").read_text()
    qwen = text.replace("meta-llama/Llama-3.1-8B-Instruct", "Qwen/Qwen3-32B")
    pcie = text.replace("NVIDIA H200, memory 139.81 GB", "NVIDIA H100 PCIe, memory 79.19 GB")
    for pasted, what in ((qwen, "model 'Qwen/Qwen3-32B'"), (pcie, "GPU 'NVIDIA H100 PCIe'")):
        got = reader_rows(parse_benchmark(pasted).rows, H100, LLAMA8)
        (reason,) = got.reasons.values()
        assert reason.startswith(what) and "Custom" in reason
        assert all(pr.model_value is None for pr in price(got, DEFAULT_ASSUMPTIONS))
    # A custom model in the sidebar stands for the one named (its config was pasted)
    import dataclasses
    custom = dataclasses.replace(MODELS["Qwen2.5-72B"], name="Custom model (qwen2)")
    got = reader_rows(parse_benchmark(qwen).rows, GPUS["H200 SXM"], custom)
    assert not got.reasons and any("priced as the sidebar's Custom model" in n for n in got.notes)
    # RedHatAI's quantized ids name a preset
    assert model_preset("RedHatAI/Meta-Llama-3.1-70B-Instruct-quantized.w4a16") == "Llama-3.1-70B"
    assert model_preset("RedHatAI/Llama-3.1-8B-Instruct-quantized.w8a8") == "Llama-3.1-8B"


def test_an_online_rate_past_what_the_server_sustains_runs_at_its_cap():
    """A vLLM sweep at 20 and 30 req/s (1,024 in, 256 out, Llama-3.1-8B on an H100) was priced at
    5,790 ms and 1.9e41 ms a token: the fixed point had no solution. Now TPOT rises with the rate and,
    past what the server sustains, is the closed loop's at the batch the KV cache holds; a
    concurrency-capped run is a closed loop at the cap once the rate outruns it."""
    rates = [1, 5, 10, 15, 18, 18.8, 19, 30, 100]
    tpot = [truth.online_tpot_s(H100, LLAMA8, 1024, 256, qps=q) for q in rates]
    assert all(math.isfinite(t) for t in tpot) and tpot == sorted(tpot)
    top = truth.online_max_qps(H100, LLAMA8, 1024, 256)
    cap = truth.online_cap(H100, LLAMA8, 1024, 256)
    assert 15 < top < 25 and cap == truth.offline_batch(H100, LLAMA8, 1024, 256, 10**9)
    full = truth.online_tpot_s(H100, LLAMA8, 1024, 256, concurrency=cap)
    assert tpot[-1] == pytest.approx(full) and tpot[-2] == pytest.approx(full)
    assert truth.online_tpot_s(H100, LLAMA8, 1024, 256, qps=50, concurrency=8) == pytest.approx(
        truth.online_tpot_s(H100, LLAMA8, 1024, 256, concurrency=8))
    # the closed loop itself rises with the batch (iterating it oscillated past ~100 in flight)
    loop = [truth.online_tpot_s(H100, LLAMA8, 1024, 256, concurrency=n) for n in (1, 8, 64, 128, 256, 512)]
    assert loop == sorted(loop)
    # the page says so
    row = dict.fromkeys(truth.COLUMNS, "") | dict(
        id="sweep", kind="tpot_ms", value="40", unit="ms", qps="30", prompt_tokens="1024",
        output_tokens="256", engine="vLLM")
    got = reader_rows([row], H100, LLAMA8)
    assert any("saturated" in n and "339 requests running at once" in n for n in got.notes)
    # the note is at the assumptions the row is priced with: the sidebar's, where the page passes them
    import dataclasses
    faster = dataclasses.replace(DEFAULT_ASSUMPTIONS, compute_eff=0.9, memory_eff=1.0)
    (note,) = [n for n in reader_rows([row], H100, LLAMA8, faster).notes if "saturated" in n]
    (default,) = [n for n in got.notes if "saturated" in n]
    assert "sidebar's assumptions" in note and "default assumptions" in default and note != default


def test_a_fit_that_raises_the_median_error_is_said_and_not_offered():
    """Two TPOT rows at the same conditions, 7 and 14 ms: the fit (least squares on log time) moved the
    median |error| from 26 % to 35 % and offered to apply itself to every page."""
    head = "id,gpu,gpus,model,weights,kv,engine,kind,value,prompt_tokens,output_tokens,concurrency\n"
    text = head + ("a,H100 SXM,1,Llama-3.1-8B,bf16,bf16,vLLM,tpot_ms,7.0,1024,256,1\n"
                   "b,H100 SXM,1,Llama-3.1-8B,bf16,bf16,vLLM,tpot_ms,14.0,1024,256,1\n")
    at = open_app("app_pages/yours.py")
    at.text_area(key="yours_text").set_value(text).run()
    assert not at.exception
    assert any(w.value.startswith("**The fit did not help.**") for w in at.warning)
    assert not [b for b in at.button if b.key == "yours_apply"]
    one = open_app("app_pages/yours.py")
    one.text_area(key="yours_text").set_value(head + "a,H100 SXM,1,Llama-3.1-8B,bf16,bf16,vLLM,tpot_ms,7.0,"
                                                     "1024,256,1\n").run()
    assert [b for b in one.button if b.key == "yours_apply"]
    assert not any("did not help" in w.value for w in one.warning)


def test_small_things_the_review_found():
    """A classic Mac's CR line endings and a terminal colour code before the title gave 'unknown
    format'; trtllm-bench's EP Size was a note only, so the experts were priced split, not whole; a
    host time fitted to 0 read 1.731e-08 µs; 70B BF16 on one H100 was said not to hold 'one request
    at full length' when its weights alone do not fit."""
    from calib.parsers import detect_format
    from ui.yours import _sig

    text = (FIX / "vllm_serve_summary.txt").read_text()
    for variant in (text.replace("\n", "\r"), "\x1b[32m" + text.replace("Successful", "\x1b[0mSuccessful")):
        assert parse_benchmark(variant).rows == parse_benchmark(text).rows
    assert detect_format(text) == "vllm-summary"
    report = (FIX / "trtllm_bench_pytorch.txt").read_text()
    ep = report.replace("EP Size:                None", "EP Size:                8").replace(
        "TP Size:                1", "TP Size:                8").replace(
        "meta-llama/Llama-3.1-8B-Instruct", "deepseek-ai/DeepSeek-R1")
    (row,) = parse_benchmark(ep).rows
    assert row["engine"].endswith(", EP 8") and row["gpus"] == "8"
    (parsed,) = truth.parse_rows(rows_to_csv([row]))
    assert truth.row_setup(parsed)[1].expert_parallel  # a named preset: priced as sim.truth prices it
    blank = dict(row, model="", gpu="")  # on the sidebar's setup: the reader's own path
    _, served = reader_rows([blank], GPUS["B200"], MODELS["DeepSeek-V3"]).setups[row["id"]]
    assert served.expert_parallel and served.tp == 8
    assert _sig(1.731e-08) == 0.0 and _sig(379.2419) == 379.2
    assert truth.offline_batch(H100, MODELS["Llama-3.1-70B"], 1024, 128, 100).startswith("the weights")


def test_what_a_second_review_found_in_the_online_and_trtllm_fixes():
    """(1) Long prompts, short outputs: TPOT jumped at the saturation rate (289 ms at 0.99x, 858 at
    1.0x), the Poisson branch's floor on 1 - prefill share not the closed loop's. (2) A concurrency cap
    above what the server runs was the batch (4,096 on an H100 with a 1B model, where vLLM runs
    1,024), and a cap above what fits was refused as 'does not fit'. (3) A run with --max_batch_size 1
    and no --concurrency (average concurrency 63.8: every request queued) was read as one request at
    a time. (4) One output token: no TPOT, and a closed loop's rate is the prefills' one after another."""
    rates = [0.9, 0.99, 0.999, 0.9999, 1.0, 1.5]
    top = truth.online_max_qps(H100, LLAMA8, 4096, 16)
    tpot = [truth.online_tpot_s(H100, LLAMA8, 4096, 16, qps=f * top) for f in rates]
    assert tpot == sorted(tpot) and tpot[3] > 0.95 * tpot[4]  # continuous into saturation
    one_b = MODELS["Llama-3.2-1B"]
    held = truth.online_cap(H100, one_b, 128, 128)
    assert truth.online_cap(H100, one_b, 128, 128, concurrency=4096) == held < 4096
    assert truth.online_cap(H100, one_b, 128, 128, concurrency=8) == 8
    row = dict.fromkeys(truth.COLUMNS, "") | dict(
        id="cap", kind="tpot_ms", value="200", unit="ms", concurrency="64", qps="4", prompt_tokens="1024",
        output_tokens="256", engine="vLLM")
    got = reader_rows([row], GPUS["L4"], LLAMA8)  # 64 in flight do not fit on an L4; one does
    assert not got.reasons and got.setups
    report = (FIX / "review" / "trtllm_concurrency_1.txt").read_text().replace(
        "Number of concurrent requests:  1.0000", "Number of concurrent requests:  63.8000")
    p = parse_benchmark(report)
    assert [r["kind"] for r in p.rows] == ["offline_tok_s"] and p.rows[0]["batch"] == "1"
    single = dict(row, qps="", concurrency="1", output_tokens="1", value="5")
    (pred,) = price(reader_rows([single], H100, LLAMA8), DEFAULT_ASSUMPTIONS)
    assert pred.model_value is None and "at least 2 output tokens" in pred.reason
    _, rate = truth._closed_loop(H100, LLAMA8, 128, 1, 64.0, DEFAULT_ASSUMPTIONS)
    assert rate <= 1.0 / (truth.prefill_time_s(H100, LLAMA8, 128) - DEFAULT_ASSUMPTIONS.host_overhead_s)


def test_a_closed_loop_beyond_what_the_kv_cache_holds_decodes_at_the_cap():
    """``vllm bench serve --max-concurrency 256`` with 8,000-token prompts on one H100 + Llama-3.1-8B:
    the KV cache holds 51 such requests, so the engine decodes 51 and queues the rest. The model
    priced all 256 decoding at once (241 ms a token against 53 ms at the cap) and refused a measured
    30 ms as 'below the floor'."""
    cap = truth.online_cap(H100, LLAMA8, 8000, 500)
    assert 40 < cap < 64
    at_cap = truth.online_tpot_s(H100, LLAMA8, 8000, 500, concurrency=cap)
    for c in (64, 256, 4096):
        assert truth.online_tpot_s(H100, LLAMA8, 8000, 500, concurrency=c) == pytest.approx(at_cap)
    assert truth.online_tpot_s(H100, LLAMA8, 8000, 500, concurrency=cap - 8) < at_cap
    row = dict.fromkeys(truth.COLUMNS, "") | dict(
        id="c256", kind="tpot_ms", value="30", unit="ms", concurrency="256", prompt_tokens="8000",
        output_tokens="500", engine="vLLM")
    (pred,) = price(reader_rows([row], H100, LLAMA8), DEFAULT_ASSUMPTIONS)
    assert pred.model_value == pytest.approx(1e3 * at_cap) and pred.model_value < 60
