"""A page whose run takes a while after its first element (tests/browser/test_wait_idle_browser.py):
a run for a slider value above 0 draws "started N" at once, then sleeps, then draws "value N"."""

import time

import streamlit as st

st.title("Slow run")
n = st.slider("n", 0, 10, 0, key="n")
st.markdown(f"started {n}")
if n:
    time.sleep(1.5)  # a long run in progress: the previous run's "value" is stale (greyed out) meanwhile
st.markdown(f"value {n}")
