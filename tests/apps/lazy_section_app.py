"""A minimal app for testing ui.layout.lazy_section with the URL check: a section holding a bound
widget, opened by a link that sets that widget (tests/test_lazy_section.py)."""

import streamlit as st

from ui.layout import lazy_section
from ui.url_check import raw_params_on_first_run, show_rejected

raw = raw_params_on_first_run()
notice = st.container()
st.write("first screen")
box = lazy_section("Details", "demo_show", open_for=("demo_share",))
if box is not None:
    with box:
        st.select_slider("share", [0, 25, 50, 75], value=75, key="demo_share", bind="query-params")
        st.write("section body")
show_rejected(raw, notice)
