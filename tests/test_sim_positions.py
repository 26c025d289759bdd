"""A model reads at most its config's positions (``Model.max_positions``): a request longer than that
cannot exist on any card, and no page prices one as if it could (review of 2026-12-05: page 05 ran
GPT-J-6B on a chat workload whose requests reach 16k tokens, page 04 priced an 8,192-token prompt on
it, and the landing page decoded at its 2,049th position)."""

from __future__ import annotations

import pytest

from sim import configs, truth
from sim.batching import compare
from sim.hardware import GPUS
from sim.metrics import batching_fits, longest_request_tokens, measure, scenario_runs
from sim.models import ALL_MODELS
from sim.paging import card_fit
from tests.conftest import open_app

#: What each preset's config.json gives (GPT-J's n_positions, the others' max_position_embeddings).
POSITIONS = {"GPT-J-6B": 2048, "Llama-2-7B": 4096, "Llama-2-70B": 4096, "Mistral-7B": 32768,
             "Mixtral-8x7B": 32768, "Qwen3-8B": 40960, "Qwen3-30B-A3B": 40960, "Llama-3.1-8B": 131072,
             "DeepSeek-V3": 163840, "Qwen3-235B-A22B": 262144, "Llama-4-Scout": 10485760}


@pytest.mark.parametrize("name", sorted(ALL_MODELS))
def test_every_preset_knows_its_positions(name):
    model = ALL_MODELS[name]
    assert model.max_positions is not None and model.max_positions >= 2048
    if name in POSITIONS:
        assert model.max_positions == POSITIONS[name]
    # Precision, tensor parallelism and the rest keep it.
    assert model.with_tp(2).max_positions == model.max_positions
    assert model.reads(model.max_positions) and not model.reads(model.max_positions + 1)


def test_a_pasted_config_carries_its_positions_through_a_link():
    cfg = configs.preset_config("Llama-2-7B")
    model, spec = configs.load_text(__import__("json").dumps(cfg))
    assert model.max_positions == 4096
    back = configs.model_from_spec(configs.decode_spec(configs.encode_spec(spec)))
    assert back.max_positions == 4096 and "mp.4096" in configs.encode_spec(spec)
    del cfg["max_position_embeddings"]  # a config that does not say: no limit is made up
    assert configs.load_text(__import__("json").dumps(cfg))[0].max_positions is None
    with pytest.raises(configs.ConfigError, match="max_position_embeddings"):
        configs.load_text(__import__("json").dumps(dict(cfg, max_position_embeddings=-5)))


def test_runs_longer_than_the_model_reads_are_not_run():
    h100, gptj, llama = GPUS["H100 SXM"], ALL_MODELS["GPT-J-6B"], ALL_MODELS["Llama-3.1-8B"]
    chat = compare(h100, gptj, slots=64, workload="chat", n_requests=1000).continuous
    assert longest_request_tokens(chat) > 2048 and not batching_fits(chat, h100, gptj)
    longer = compare(h100, llama, slots=64, workload="chat", n_requests=1000).continuous
    assert batching_fits(longer, h100, llama)
    # Section 02's card: a prompt with room reserved for 2,048 output tokens
    fit = card_fit(h100, gptj, max_output=2048)
    assert fit.fits and fit.longest_request_tokens > 2048
    # Page 04's rows: those whose page would refuse the setup do not run on GPT-J-6B
    rows = {r.key: r for r in measure(scenario_runs(h100, gptj))}
    assert not rows["chunked"].metrics.ran  # an 8,192-token prompt
    assert not rows["paged"].metrics.ran and not rows["reserved"].metrics.ran
    assert rows["batch1"].metrics.ran  # a 2,048-token prompt and a 512-token context run
    assert all(r.metrics.ran for r in measure(scenario_runs(h100, llama)))


def test_a_measured_row_longer_than_the_model_reads_says_so():
    head = ",".join(truth.COLUMNS) + "\n"
    row = dict.fromkeys(truth.COLUMNS, "") | dict(
        id="long", gpu="H100 SXM", gpus="1", model="GPT-J-6B", weights="bf16", kv="bf16", engine="e",
        kind="static_batch_tok_s", batch="1", prompt_tokens="2000", output_tokens="100", value="100",
        unit="tok/s", workload="fixed")
    (r,) = truth.parse_rows(head + ",".join(row[c] for c in truth.COLUMNS) + "\n")
    p = truth.predict(r)
    assert p.model_value is None and "2,100 tokens" in p.reason and "2,048" in p.reason
    ok = dict(row, output_tokens="48")
    (r,) = truth.parse_rows(head + ",".join(ok[c] for c in truth.COLUMNS) + "\n")
    assert truth.predict(r).model_value > 0


@pytest.mark.parametrize(("page", "params", "said"), [
    ("app_pages/batching.py", {"model": "GPT-J-6B", "batching_workload": "Chat-like"}, "longest request"),
    ("app_pages/two_phases.py", {"model": "GPT-J-6B", "phases_context": "4096"}, "longer than the model"),
    ("app_pages/paging.py", {"model": "GPT-J-6B"}, "shortest prompt with room"),
])
def test_pages_say_so_and_show_no_number(page, params, said):
    at = open_app(page, params)
    assert not at.exception
    errors = " ".join(e.value for e in at.error)
    assert "longer than the model reads" in errors and said in errors and "2,048" in errors, errors


def test_your_numbers_names_the_limit_for_a_run_longer_than_the_model_reads():
    from calib.reader import price, reader_rows
    from sim.cost import DEFAULT_ASSUMPTIONS

    row = dict.fromkeys(truth.COLUMNS, "") | dict(
        id="long", kind="tpot_ms", value="20", unit="ms", concurrency="4", prompt_tokens="4000",
        output_tokens="500", engine="vLLM")
    (pred,) = price(reader_rows([row], GPUS["H100 SXM"], ALL_MODELS["Llama-2-7B"]), DEFAULT_ASSUMPTIONS)
    assert pred.model_value is None and "4,096 positions" in pred.reason


@pytest.mark.parametrize("positions", [64, 512, 1024])
def test_a_model_of_very_few_positions_gets_notices_not_a_traceback(positions):
    """A pasted or linked config with max_position_embeddings of 1,024 or less refuses every scenario
    page 04 runs (its `min` over the rows that ran met an empty list), and made the landing page price
    a 0-token prompt at 1 position. Below 64 a link is refused with the reason."""
    from ui.custom_model import CUSTOM_MODEL, PARAM

    spec = f"t.llama~L.16~d.2048~H.32~kv.8~hd.64~ff.8192~V.128256~tie.1~mp.{positions}"
    for page in ("app_pages/watch.py", "app_pages/home.py", "app_pages/load.py", "app_pages/batching.py",
                 "app_pages/two_phases.py", "app_pages/paging.py", "app_pages/speculative.py"):
        at = open_app(page, {"model": CUSTOM_MODEL, PARAM: spec})
        assert not at.exception, (page, at.exception)
    at = open_app("app_pages/watch.py", {"model": CUSTOM_MODEL, PARAM: spec})
    if positions <= 1024:
        assert any("None of this page's scenarios can run" in e.value for e in at.error)
    one = spec.replace(f"mp.{positions}", "mp.1")
    at = open_app("app_pages/home.py", {"model": CUSTOM_MODEL, PARAM: one})
    assert not at.exception
    assert "max_position_embeddings (GPT-J: n_positions) = 1 is outside 64" in " ".join(
        c.value for c in at.code)


def test_can_run_is_memory_and_positions_each_alone():
    """sim.memory.can_run, every page's check: false where the batch does not fit in memory, false
    where the context passes the model's positions though memory holds it, true where both hold."""
    from sim.hardware import GPUS
    from sim.memory import can_run, memory_plan
    from sim.models import ALL_MODELS

    h100, gptj = GPUS["H100 SXM"], ALL_MODELS["GPT-J-6B"]
    assert gptj.max_positions == 2048
    assert can_run(h100, gptj, 1, 2048)
    assert memory_plan(h100, gptj, 1, 2049).fits and not can_run(h100, gptj, 1, 2049)  # positions alone
    assert gptj.reads(2048) and not memory_plan(h100, gptj, 4096, 2048).fits
    assert not can_run(h100, gptj, 4096, 2048)  # memory alone
