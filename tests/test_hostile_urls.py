"""Hand-edited and hostile links: every page renders with valid values whatever the query string.

For each registered page, hypothesis generates query strings over the page's own widget keys and
the global ones (plus unknown keys) with hostile values: wrong types, huge, negative, NaN, empty,
unicode, repeated keys. The page must render without an exception, and each bound widget must show
either its default or exactly the value the link asked for: a malformed value is dropped, never
coerced into something else.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from tests.conftest import ALL_SECTIONS, open_app
from ui.nav import ALL_PAGES

WIDGET_KINDS = ("slider", "select_slider", "selectbox", "number_input", "toggle", "segmented_control",
                "radio", "checkbox", "pills", "multiselect", "text_input")
PAGES = [s.path for s in ALL_PAGES]


def bound_widgets(at: AppTest) -> dict[str, object]:
    """Keyed widgets on screen and their values."""
    found = {}
    for kind in WIDGET_KINDS:
        for widget in getattr(at, kind):
            if widget.key and not widget.key.startswith("$$"):
                found[widget.key] = widget.value
    return found


_defaults: dict[str, dict[str, object]] = {}


def defaults(page: str) -> dict[str, object]:
    if page not in _defaults:
        _defaults[page] = bound_widgets(open_app(page, ALL_SECTIONS.get(page)))  # every section's widgets
    return _defaults[page]


VALID = st.sampled_from(["Custom", "B200", "L4", "Llama-3.1-70B", "fp8", "int4", "8", "64", "4096",
                         "0.5", "true", "false", "static", "paged"])
HOSTILE = st.one_of(
    VALID,
    st.sampled_from(["", "NaN", "nan", "inf", "-inf", "1e309", "-1", "0", "-0", "999999999999999999999",
                     "0x10", "1,5", "true", "None", "null", "[]", "{}", "%00", "../../etc/passwd",
                     "<script>alert(1)</script>", "' OR 1=1 --", "H100 SXM ", "h100 sxm", "💥", "٣",
                     "1" * 5000]),
    st.integers(-10**12, 10**12).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.text(max_size=30),
)


def _matches(value: object, raw: str) -> bool:
    if isinstance(value, bool):
        return raw.lower() == str(value).lower()  # a toggle's "true" / "false"
    if str(value) == raw:
        return True
    if isinstance(value, str) and value.casefold() == str(raw).casefold():  # an option: "Custom", "custom"
        return True
    try:
        return math.isclose(float(raw), float(value))  # "8" and 8, "0.50" and 0.5
    except (TypeError, ValueError):
        return False


@pytest.mark.parametrize("page_path", PAGES)
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_hostile_query_strings_never_break_a_page(page_path, data):
    keys = [*sorted(defaults(page_path)), "unknown", "x" * 200, "🙂"]
    params = data.draw(st.dictionaries(
        st.sampled_from(keys), st.one_of(HOSTILE, st.lists(HOSTILE, min_size=2, max_size=3)),
        min_size=1, max_size=5,
    ))
    at = open_app(page_path, {**ALL_SECTIONS.get(page_path, {}), **params})
    assert not at.exception, (params, at.exception)
    shown = bound_widgets(at)
    for key, default in defaults(page_path).items():
        value = shown.get(key, default)
        asked = params.get(key)
        if value == default or (isinstance(value, float) and isinstance(default, float)
                                and math.isclose(value, default)):
            continue
        # a repeated key may take one of its values (Streamlit takes the last valid one)
        candidates = [asked] if isinstance(asked, str) else (asked or [])
        assert any(_matches(value, c) for c in candidates), (key, asked, value, default)
