"""A minimal app for testing ui.url_check: two bound widgets and the notice."""

import streamlit as st

from ui.url_check import raw_params_on_first_run, show_rejected

raw = raw_params_on_first_run()
notice = st.container()
st.select_slider("batch", [1, 2, 4, 8], value=1, key="batch", bind="query-params")
st.slider("eff", 0.1, 1.0, 0.6, 0.05, key="eff", bind="query-params")
if st.session_state.get("_cut_short"):  # a run stopped before the notice (tests/test_url_check.py)
    st.stop()
show_rejected(raw, notice)
