"""AppTest: the sidebar's pasted config.json, the link that carries it, and the big deployments
(DeepSeek-V3 on 8 x H200, Llama-3.1-70B on 4 x H100) on every page."""

from __future__ import annotations

import json

import pytest

from sim import configs
from tests.conftest import metric, ms, open_app
from ui.custom_model import CUSTOM_MODEL, PARAM, TEXT_KEY
from ui.nav import SECTIONS

PAGE = "app_pages/two_phases.py"


def _config(name: str, **changes) -> str:
    c = configs.preset_config(name)
    c.update(changes)
    return json.dumps(c)


def _sidebar_text(at) -> str:
    return " ".join(str(e.value) for e in (*at.sidebar.caption, *at.sidebar.code, *at.sidebar.error,
                                           *at.sidebar.info, *at.sidebar.warning))


def test_a_pasted_config_changes_the_numbers_and_goes_into_the_link():
    at = open_app(PAGE)
    step_8b = ms(metric(at, "Decode step"))
    at.sidebar.selectbox(key="model").set_value(CUSTOM_MODEL).run()
    assert not at.exception
    assert "default model is shown" in _sidebar_text(at)
    assert ms(metric(at, "Decode step")) == pytest.approx(step_8b)  # the default until a config is read
    at.sidebar.text_area(key=TEXT_KEY).input(_config("Qwen3-8B")).run()
    assert not at.exception
    assert ms(metric(at, "Decode step")) > step_8b  # 8.19 B params against 8.03 B
    encoded = at.query_params[PARAM]
    encoded = encoded[0] if isinstance(encoded, list) else encoded
    assert encoded.startswith("t.qwen3~")
    assert "Read as Custom model (qwen3), 36 layers" in _sidebar_text(at)
    assert "8.19 B params" in _sidebar_text(at)


def test_the_link_carries_the_custom_model():
    spec = configs.spec_from_config(configs.preset_config("Qwen3-8B"))
    at = open_app(PAGE, {"model": CUSTOM_MODEL, PARAM: configs.encode_spec(spec)})
    assert not at.exception
    assert "From the link: Custom model (qwen3), 36 layers" in _sidebar_text(at)
    baseline = open_app(PAGE)
    assert ms(metric(at, "Decode step")) > ms(metric(baseline, "Decode step"))
    assert not any("could not be used" in w.value for w in at.warning)  # the URL check took cfg


@pytest.mark.parametrize(("text", "says"), [
    ("{not json", "not valid JSON"),
    (_config("Llama-3.1-8B", model_type="qwen3_next"), "hybrid linear attention"),
    (_config("Llama-3.1-8B", hidden_size=-1), "hidden_size = -1"),
    ('{"model_type": "<b>x</b>"}', "not one this loader knows"),
    # Over the cap: refused with a word (a max_chars on the text area would drop the paste silently).
    (_config("Llama-3.1-8B") + " " * 70_000, "at most 65,536 are read"),
])
def test_a_bad_config_is_refused_and_the_default_model_shown(text, says):
    at = open_app(PAGE)
    step_8b = ms(metric(at, "Decode step"))
    at.sidebar.selectbox(key="model").set_value(CUSTOM_MODEL).run()
    at.sidebar.text_area(key=TEXT_KEY).input(text).run()
    assert not at.exception
    assert says in " ".join(c.value for c in at.sidebar.code)  # the reason, as plain text
    assert ms(metric(at, "Decode step")) == pytest.approx(step_8b)
    assert PARAM not in at.query_params


def test_a_bad_link_is_named_and_the_default_model_shown():
    at = open_app(PAGE, {"model": CUSTOM_MODEL, PARAM: "t.llama~L.99999999"})
    assert not at.exception
    assert "cannot be used" in _sidebar_text(at)
    assert ms(metric(at, "Decode step")) == pytest.approx(ms(metric(open_app(PAGE), "Decode step")))


@pytest.mark.parametrize(("setup", "weights"), [
    ({"gpu": "H200 SXM", "model": "DeepSeek-V3", "gpus": "8", "weights": "fp8"}, "fp8"),
    ({"gpu": "H100 SXM", "model": "Llama-3.1-70B", "gpus": "4"}, "bf16"),
])
def test_big_deployments_run_on_every_page(setup, weights):
    """Every page either shows numbers for the setup (it fits per GPU) or says what does not fit."""
    at = open_app(None, setup)
    label = " ".join(c.value for c in at.sidebar.caption)
    assert "per GPU" in label
    for section in SECTIONS:
        at.switch_page(section.path).run()
        assert not at.exception, section.path
        if at.error:  # the memory check refused the page's own setup: it says why
            assert any("does not fit" in e.value for e in at.error), section.path
        else:
            assert at.metric, section.path


def _dollars(text: str) -> float:
    return float(text.lstrip("$").replace(",", ""))


def test_cost_per_token_follows_the_price():
    at = open_app("app_pages/batching.py")
    assert not at.exception
    label = "$ per M output tokens"
    typical = _dollars(metric(at, label))  # the H100's typical $2.95 an hour
    at.sidebar.number_input(key="price").set_value(5.90).run()
    assert not at.exception
    assert _dollars(metric(at, label)) == pytest.approx(2 * typical, rel=0.01)


def _cost_caption(at) -> str:
    return next(c.value for c in at.caption if c.value.startswith("**Cost per million output tokens**"))


def test_page04_prices_both_batching_modes():
    at = open_app("app_pages/watch.py", {"gpus": "2"})
    assert not at.exception
    text = _cost_caption(at)
    assert "2 GPUs at $2.95 per GPU-hour ($5.90/h a replica)" in text
    assert "with continuous batching" in text and "with static batching" in text


def test_the_price_travels_in_the_link():
    at = open_app("app_pages/batching.py", {"price": "5.9"})
    assert "$5.90 per GPU-hour" in _sidebar_text(at)
    assert not any("could not be used" in w.value for w in at.warning)


def test_markup_in_a_link_or_a_config_is_shown_as_plain_text_only():
    evil = "t.llama~L.32~[x](https://example.invalid)<img src=x onerror=alert(1)>"
    at = open_app(PAGE, {"model": CUSTOM_MODEL, PARAM: evil})
    assert not at.exception
    markdown = " ".join(str(m.value) for m in (*at.markdown, *at.caption, *at.error, *at.warning))
    assert "example.invalid" not in markdown and "onerror" not in markdown
    assert any("example.invalid" in c.value for c in at.code)  # named, as plain text
    at.sidebar.text_area(key=TEXT_KEY).input('{"model_type": "llama", "[y](https://example.invalid)": 1, '
                                             '"hidden_size": "<b>4096</b>"}').run()
    markdown = " ".join(str(m.value) for m in (*at.markdown, *at.caption, *at.error, *at.warning))
    assert "example.invalid" not in markdown and "<b>" not in markdown


def test_whole_experts_that_do_not_divide_fall_back_to_split_ones_with_a_word():
    """A pasted mixture of 60 experts on 8 GPUs: whole experts cannot be spread (60 / 8), split ones
    can (their width divides): the sidebar says so and shows the split layout, not one GPU."""
    cfg = configs.preset_config("Qwen3-30B-A3B")
    cfg["num_experts"] = 60
    spec = configs.spec_from_config(cfg)
    at = open_app("app_pages/two_phases.py", {"model": CUSTOM_MODEL, PARAM: configs.encode_spec(spec),
                                              "gpus": "8", "experts": "whole (EP)"})
    assert not at.exception
    said = " ".join(w.value for w in at.warning)
    assert "60 experts cannot be spread whole over 8 GPUs" in said and "split (TP)" in said
    assert "Showing 1 GPU" not in said
    assert "8 x H100 SXM" in " ".join(c.value for c in at.caption)  # still 8 GPUs, experts split


def test_leaving_the_custom_model_takes_its_config_out_of_page_04s_links():
    """Page 04 is drawn before the sidebar on a rerun, and its "Open it" links carry the URL's setup:
    the custom model's parameter must be gone from the URL before the page reads it."""
    spec = configs.spec_from_config(configs.preset_config("Qwen3-8B"))
    at = open_app("app_pages/watch.py", {"model": CUSTOM_MODEL, PARAM: configs.encode_spec(spec)})
    assert any(f"{PARAM}=" in link for link in at.dataframe[0].value["Open it"])
    at.sidebar.selectbox(key="model").set_value("Llama-3.1-8B").run()
    assert not at.exception
    assert not any(f"{PARAM}=" in link for link in at.dataframe[0].value["Open it"])


def test_the_config_box_takes_any_length_so_the_cap_can_be_named():
    """Streamlit's text area drops a paste longer than its max_chars whole, without a word (seen in
    Chromium: scripts/hostile_inputs.py); the loader's own cap says what it is instead."""
    at = open_app(PAGE)
    at.sidebar.selectbox(key="model").set_value(CUSTOM_MODEL).run()
    assert not at.sidebar.text_area(key=TEXT_KEY).proto.max_chars


def test_a_config_over_the_cap_is_not_kept():
    """Refused with its size, and emptied from the box: otherwise it would travel to the browser and
    back on every rerun and be refused again on every page."""
    at = open_app(PAGE)
    at.sidebar.selectbox(key="model").set_value(CUSTOM_MODEL).run()
    at.sidebar.text_area(key=TEXT_KEY).input(_config("Llama-3.1-8B") + " " * 70_000).run()
    assert not at.exception
    assert at.sidebar.text_area(key=TEXT_KEY).value == ""
    assert "at most 65,536 are read" in " ".join(c.value for c in at.sidebar.code)
    at.sidebar.selectbox(key="model").set_value("Llama-3.1-8B").run()  # away and back: afresh
    at.sidebar.selectbox(key="model").set_value(CUSTOM_MODEL).run()
    assert not at.exception
    assert "at most 65,536" not in " ".join(c.value for c in at.sidebar.code)
    at.sidebar.text_area(key=TEXT_KEY).input(_config("Qwen3-8B")).run()  # a real one: read
    assert not at.exception
    assert "at most 65,536" not in " ".join(c.value for c in at.sidebar.code)
    assert PARAM in at.query_params
