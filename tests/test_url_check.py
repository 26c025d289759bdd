"""ui.url_check: a link's unusable settings are named to the reader, valid ones pass silently."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from tests.conftest import ROOT, open_app


def run(params: dict[str, str]) -> AppTest:
    at = AppTest.from_file(str(ROOT / "tests/apps/url_check_app.py"), default_timeout=30)
    for key, value in params.items():
        at.query_params[key] = value
    return at.run()


@pytest.mark.parametrize("params", [{}, {"batch": "4"}, {"eff": "0.8"}, {"batch": "1"}, {"eff": "0.60"}])
def test_valid_or_default_values_give_no_notice(params):
    at = run(params)
    assert not at.exception and not at.warning


@pytest.mark.parametrize(("params", "named"), [
    ({"batch": "3"}, "batch=3"), ({"batch": "abc"}, "batch=abc"), ({"eff": "NaN"}, "eff=NaN"),
    ({"eff": "7"}, "eff=7"), ({"other": "1"}, "other=1"),
])
def test_unusable_values_are_named_and_defaults_used(params, named):
    at = run(params)
    assert not at.exception
    assert len(at.warning) == 1 and len(at.code) == 1 and named in at.code[0].value
    assert at.select_slider(key="batch").value == 1 and at.slider(key="eff").value == 0.6


def test_notice_only_on_the_first_run():
    at = run({"batch": "3"})
    at.select_slider(key="batch").set_value(8).run()
    assert not at.warning
    at.run()  # and it does not come back
    assert not at.warning


def test_a_rerun_nobody_asked_for_keeps_the_notice():
    """A full rerun with the view unchanged (the watchdog asks for one after a reconnect) shows the
    notice again; the reader's first change ends it."""
    at = run({"batch": "3", "eff": "0.8"})
    assert len(at.warning) == 1
    at.run()
    at.run()
    assert len(at.warning) == 1 and "batch=3" in at.code[0].value
    at.slider(key="eff").set_value(0.7).run()
    assert not at.warning


def test_in_the_app_too_and_another_page_ends_it():
    """The app's entrypoint (AppTest lands on the home page: it cannot deep-link)."""
    at = open_app(None, {"gpu": "TPU"})
    assert any("gpu=TPU" in c.value for c in at.code)
    at.run()
    at.run()
    assert any("gpu=TPU" in c.value for c in at.code)
    at.switch_page("app_pages/two_phases.py").run()
    assert not any("gpu=TPU" in c.value for c in at.code) and not at.exception


def test_a_first_run_cut_short_still_gets_its_notice():
    """The first run's parameters are kept until the notice has been worked out: a run stopped
    before the end (here by an exception in the page, as a rerun request would stop it) leaves the
    next run to name them."""
    at = AppTest.from_file(str(ROOT / "tests/apps/url_check_app.py"), default_timeout=30)
    at.query_params["batch"] = "3"
    at.session_state["_cut_short"] = True
    at.run()
    assert not at.warning
    at.session_state["_cut_short"] = False
    at.run()
    assert len(at.warning) == 1 and "batch=3" in at.code[0].value


def test_numbers_in_other_scripts_are_not_taken():
    """float("٣") is 3.0: a value written in non-ASCII digits is dropped and named, not read."""
    at = run({"eff": "٣", "batch": "\uff18"})  # Arabic-Indic three, full-width eight
    assert not at.exception
    assert at.slider(key="eff").value == 0.6 and at.select_slider(key="batch").value == 1
    assert "eff=٣" in at.code[0].value and "batch=\uff18" in at.code[0].value


INJECTIONS = [
    "x` [click](https://example.invalid) ![i](https://example.invalid/i.png) `",
    "<img src=https://example.invalid/i.png>", "<script>alert(1)</script>",
    "[a](javascript:alert(1))", "**bold** _it_ $x^2$ :material/home: :red[red]",
]


@pytest.mark.parametrize("text", INJECTIONS)
def test_link_text_is_shown_as_plain_text_only(text):
    """The notice's markdown is fixed; what the link carried appears only in a code block, verbatim
    (up to the length limit)."""
    at = run({"batch": text, text: "1"})
    assert not at.exception
    assert at.warning[0].value.startswith("This link had settings that could not be used")
    assert at.code[0].language in (None, "", "plaintext")
    assert text[:40] in at.code[0].value
    assert not at.markdown or all(text[:10] not in m.value for m in at.markdown)


def test_a_huge_link_is_shortened_and_counted():
    at = run({f"k{i}": "v" * 5000 for i in range(30)})
    first, rest = (c.value.splitlines() for c in at.code)  # three in view, the rest in an expander
    assert len(first) == 3 and at.expander[0].label == "27 more"
    lines = first + rest
    assert len(lines) == 11 and lines[-1] == "… and 20 more"
    assert max(map(len, lines)) < 200


def test_a_page_that_stopped_at_its_memory_notice_does_not_call_its_own_settings_unknown():
    """L4 + Llama-3.1-70B stops page 00 at its memory notice before the waterfall's Step radio: the
    link's phases_gap=Prefill was not refused (it stays in the link and applies once the setup fits),
    so the notice says the page stopped, not that it is no setting of this page."""
    at = open_app("app_pages/two_phases.py", {"gpu": "L4", "model": "Llama-3.1-70B", "phases_gap": "Prefill"})
    assert not at.exception and any("does not fit in memory" in e.value for e in at.error)
    listed = " ".join(c.value for c in at.code)
    assert "phases_gap=Prefill" in listed
    assert "not a setting of this page" not in listed and "the page stopped at its notice" in listed
    # A page that ran to its end still calls an unknown key what it is.
    at = open_app("app_pages/two_phases.py", {"phases_nonsense": "1"})
    assert "phases_nonsense=1 (not a setting of this page)" in " ".join(c.value for c in at.code)


def test_a_default_given_by_its_label_is_not_called_invalid():
    """A radio with a format_func is written in a link by its label: load_policy=Prefill-first is the
    default, dropped from the URL as defaults are, and must not read as 'not a valid value; using
    prefill-first'. A label that is no option still is named."""
    at = open_app("app_pages/load.py", {"load_policy": "Prefill-first"})
    assert not at.exception and not at.code
    at = open_app("app_pages/load.py", {"load_policy": "Nonsense"})
    assert "load_policy=Nonsense (not a valid value" in " ".join(c.value for c in at.code)


def test_a_setting_given_twice_is_named_with_the_value_used():
    """gpu=L4&gpu=MI300X: the widget took one of them and the reader was not told the other was
    ignored."""
    at = open_app("app_pages/two_phases.py", {"gpu": ["L4", "MI300X"]})
    assert not at.exception
    listed = " ".join(c.value for c in at.code)
    used = at.selectbox(key="gpu").value
    assert f"gpu=L4, MI300X (given 2 times; using {used})" in listed, listed


def test_a_refused_custom_model_link_says_why_and_what_is_used():
    """cfg= a spec past the loader's caps: the notice read '(not a valid value; using )', the reason
    only in the sidebar a phone reader never opens. A custom GPU's refused memory read 'using
    79.6474609375'."""
    from ui.custom_model import CUSTOM_MODEL, PARAM

    at = open_app("app_pages/two_phases.py", {"model": CUSTOM_MODEL, PARAM: "t.llama~L.99999999"})
    assert not at.exception
    listed = " ".join(c.value for c in at.code)
    assert "using the default)" in listed and "using )" not in listed
    assert "outside" in listed or "lacks" in listed, listed
    at = open_app("app_pages/two_phases.py", {"gpu": "Custom", "custom_gb": "-1"})
    listed = " ".join(c.value for c in at.code)
    assert "custom_gb=-1 (not a valid value; using " in listed and "79.6474609375" not in listed, listed
