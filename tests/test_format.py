"""ui.format: the few text formats every page shares."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ui import format as fmt


@pytest.mark.parametrize(("value", "text"), [
    (0.4, "$0.400"), (0.687, "$0.687"), (12.3, "$12.3"), (1.0, "$1.00"), (99.99, "$100"), (123.4, "$123"),
    (1234.5, "$1,234"), (0.0123, "$0.0123"), (float("inf"), "n/a"),
])
def test_dollars_keep_three_significant_digits(value, text):
    """Costs side by side read alike: '$0.400' beside '$0.687', not '$0.4'."""
    assert fmt.dollars(value) == text


@pytest.mark.parametrize(("value", "text"), [
    (2**30, "1 GiB"), (141e9, "131 GiB"), (1.5 * 2**20, "1.5 MiB"), (512, "512 B"), (3 * 2**40, "3 TiB"),
])
def test_memory_is_in_binary_units(value, text):
    """One unit for memory on every page: GiB, as nvidia-smi, the engines and the sidebar count it."""
    assert fmt.bytes_(value) == text


@pytest.mark.parametrize(("label", "text"), [
    ("Paged KV cache", "paged KV cache"), ("KV cache", "KV cache"), ("Batch-1 decode", "batch-1 decode"),
    ("", ""),
])
def test_a_label_mid_sentence_keeps_its_acronyms(label, text):
    assert fmt.sentence_case(label) == text


def test_counted_is_singular_for_one():
    assert fmt.counted(1, "sequence") == "1 sequence"
    assert fmt.counted(1024, "slot") == "1,024 slots"


@pytest.mark.parametrize(("value", "text"), [
    (0.0123, "12.3 ms"), (1.234, "1.23 s"), (999.7, "1,000 s"), (1814.2, "1,814 s"), (0.99996e-3, "1 ms"),
    (0.9996, "1 s"), (3e-7, "0.3 µs"),
])
def test_seconds_never_use_exponent_notation(value, text):
    """'All done after 1.81e+03 s' was page 01's headline at one slot: 3 significant digits, then whole
    seconds with separators, and a unit that does not round to '1e+03 ms'."""
    assert fmt.seconds(value) == text


@given(st.floats(min_value=1e-6, max_value=1e9, allow_nan=False))
def test_no_time_rate_or_size_reads_in_exponent_notation(value):
    for text in (fmt.seconds(value), fmt.duration(value), fmt.rate(value), fmt.bytes_(value * 1e3),
                 fmt.sig(value * 1e3), fmt.sig(value, 2)):
        assert "e+" not in text and "e-" not in text, text


def test_long_waits_read_in_minutes_and_hours():
    assert fmt.duration(1814.2) == "30.2 min" and fmt.duration(5520) == "1.53 h"


def test_a_small_memory_shortfall_is_not_read_as_zero_gib():
    """gpt-oss-120b MXFP4 on one H100 misses the chat workload's longest request by a few MiB: the
    notice said '0.0 GiB short' (it is 152 KiB)."""
    from sim.hardware import GPUS
    from sim.memory import amount, describe, memory_plan
    from sim.models import MODELS

    assert amount(5 * 2**20) == "5 MiB" and amount(1.5 * 2**30) == "1.5 GiB" and amount(3000) == "3 KiB"
    m = MODELS["gpt-oss-120b"].with_precision("mxfp4", "bf16")
    plan = memory_plan(GPUS["H100 SXM"], m, 1, 16_457)
    assert not plan.fits and plan.weights_fit
    text = describe(plan)
    assert "0.0 GiB" not in text and "KiB short" in text  # 5 tokens of KV cache: 152 KiB


def test_the_sidebars_levers_name_only_changes_that_make_it_fit():
    """Each lever is checked alone with the memory plan: Llama-3.1-70B in BF16 on an L4 was offered
    "smaller weights (FP8 or INT4)", though its 4-bit weights (37 GiB) do not fit a 24 GB card either."""
    from sim.hardware import GPUS
    from sim.memory import fit_levers, memory_plan
    from sim.models import MODELS

    m70 = MODELS["Llama-3.1-70B"]
    assert fit_levers(GPUS["L4"], m70, 1, 2048) == (
        "a GPU with more memory (the B200 or MI300X), 8 GPUs per replica or a smaller model")
    assert not memory_plan(GPUS["L4"], m70.with_precision("int4", "bf16"), 1, 2048).fits  # why no weights
    assert fit_levers(GPUS["H100 SXM"], m70, 1, 2048) == (
        "4-bit weights, a GPU with more memory (the B200 or MI300X), 2 GPUs per replica or a smaller model")
    assert fit_levers(GPUS["H100 SXM"], m70, 1, 2048, counts=()) == (
        "4-bit weights, a GPU with more memory (the B200 or MI300X) or a smaller model")
    # a KV shortfall: the FP8 cache is what fits; 8-bit weights are named before 4-bit ones
    m8 = MODELS["Llama-3.1-8B"]
    assert fit_levers(GPUS["H100 SXM"], m8, 8, 65_536).startswith("an FP8 KV cache, a GPU with more memory "
                                                                  "(the H200 SXM, B200 or MI300X)")
    # 8-bit weights; more than three bigger GPUs: the smallest three "or larger"
    assert fit_levers(GPUS["L4"], m8, 1, 65_536).startswith(
        "8-bit weights (FP8 or INT8), a GPU with more memory (the L40S, H100 SXM, A100 80GB SXM or larger)")
    # weights already 4-bit (NVFP4) are offered no "4-bit weights"
    nvfp4 = MODELS["Qwen3-235B-A22B"].with_precision("nvfp4", "bf16")
    assert "weights" not in fit_levers(GPUS["H200 SXM"], nvfp4, 1, 2048)
    # nothing but another model: said so
    assert fit_levers(GPUS["L4"], MODELS["DeepSeek-V3"], 1, 2048, gpus={}) == (
        "a smaller model (no other single change in the sidebar makes it fit)")
    for text in (fit_levers(GPUS["L4"], m70.with_tp(8), 1, 2048),):
        assert "GPUs per replica" not in text  # eight is the most the sidebar offers


def test_signed_keeps_three_significant_digits_and_the_sign():
    assert [fmt.signed(v) for v in (124.3, -0.583, -1240.2, 0.0, -0.0004, 17600)] == [
        "+124", "-0.583", "-1,240", "+0", "-0.0004", "+17,600"]


@pytest.mark.parametrize("n, text", [(2048, "a 2,048"), (8192, "an 8,192"), (8, "an 8"), (80, "an 80"),
                                     (11, "an 11"), (18_000, "an 18,000"), (1, "a 1"), (110, "a 110"),
                                     (181, "a 181"), (800_000, "an 800,000")])
def test_a_count_takes_the_article_the_number_is_read_with(n, text):
    assert fmt.a_count(n) == text
