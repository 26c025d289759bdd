"""ui.url_check: a link's unusable settings are named to the reader, valid ones pass silently."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from tests.conftest import ROOT


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
    assert len(at.warning) == 1 and named in at.warning[0].value
    assert at.select_slider(key="batch").value == 1 and at.slider(key="eff").value == 0.6


def test_notice_only_on_the_first_run():
    at = run({"batch": "3"})
    at.select_slider(key="batch").set_value(8).run()
    assert not at.warning
