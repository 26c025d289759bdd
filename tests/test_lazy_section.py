"""ui.layout.lazy_section: a section sent only while open, whose open state is in the URL; a link
that sets a widget inside it opens it, and it stays open when the reader moves that widget."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from tests.conftest import ROOT


def run(params: dict[str, str]) -> AppTest:
    at = AppTest.from_file(str(ROOT / "tests/apps/lazy_section_app.py"), default_timeout=30)
    for key, value in params.items():
        at.query_params[key] = value
    return at.run()


def _body(at: AppTest) -> bool:
    return any(m.value == "section body" for m in at.markdown)


def test_closed_by_default_and_sends_nothing_inside():
    at = run({})
    assert not at.exception and not _body(at)
    assert not [s for s in at.select_slider if s.key == "demo_share"]


def test_a_link_to_a_setting_inside_opens_it_without_a_notice():
    at = run({"demo_share": "25"})
    assert not at.exception and _body(at)
    assert at.select_slider(key="demo_share").value == 25
    assert not at.warning  # the setting was used, not reported as ignored


def test_it_stays_open_when_the_setting_goes_back_to_its_default():
    """The URL then no longer holds the setting; the section must not close under the reader."""
    at = run({"demo_share": "25"})
    at.select_slider(key="demo_share").set_value(75).run()
    assert not at.exception and _body(at)
    at.query_params.pop("demo_share", None)  # as the browser does: a default value leaves the URL
    at.run()
    assert _body(at), "the section closed when its setting left the URL"
    at.select_slider(key="demo_share").set_value(50).run()
    assert _body(at) and at.select_slider(key="demo_share").value == 50


def test_its_open_state_is_in_the_link():
    at = run({"demo_show": "true"})
    assert not at.exception and _body(at)
    assert at.query_params.get("demo_show") in (["true"], "true")


def test_a_setting_of_a_section_the_link_closes_is_named_as_such():
    """A link that sets a widget inside a section and also closes the section: the setting is not
    used, and the notice says where it lives rather than that the page has no such setting."""
    at = run({"demo_share": "25", "demo_show": "false"})
    assert not at.exception and not _body(at)
    notice = "\n".join(c.value for c in at.code)
    assert "demo_share=25 (in the closed section 'Details': open it to use this setting)" in notice
    assert "not a setting of this page" not in notice
    assert "demo_show" not in notice  # "false" is the section's own (default) state, not an error
    at = run({"demo_typo": "1"})
    assert "demo_typo=1 (not a setting of this page)" in "\n".join(c.value for c in at.code)
