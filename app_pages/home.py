"""Landing page: the thesis in a few lines, and the way through the sections."""

import streamlit as st

from ui.nav import SECTIONS
from ui.setup import current_setup

st.title("Where the GPU lies")
st.markdown("""
#### An interactive explainer of LLM inference serving

LLM generation is two workloads. **Prefill** runs the whole prompt in one pass and keeps the
tensor cores busy. **Decode** makes one token a step, and every step reads all the weights and the
KV cache: it is starved by memory, not compute.

The number every dashboard shows, **GPU utilization**, reads near 100% either way: it only counts
whether *a* kernel is running. The useful work done, **goodput**, can differ several times over
between two servers that look identical on that dashboard. Each section below takes one serving
technique, lets you flip it on and off, and shows both numbers.
""")
st.caption(f"Every number is computed live for **{current_setup().label}**. Pick another GPU or model "
           "in the sidebar and every page follows. Copy the URL to share exactly what you see.")

for section in SECTIONS:
    with st.container(border=True):
        st.page_link(section.path, label=section.label, icon=section.icon)
        st.caption(section.blurb)
