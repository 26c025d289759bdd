"""Landing page: the thesis in a few lines, and the way through the sections."""

import streamlit as st

from sim.metrics import BUSY_UTILIZATION, PHASES_CONTEXT, PHASES_PROMPT
from sim.phases import two_phases
from ui import format as fmt
from ui.feasibility import fits_or_say
from ui.glossary import define
from ui.nav import SECTIONS, SOURCES
from ui.setup import current_setup

st.title("Where the GPU lies")
st.markdown("""
#### An interactive explainer of LLM inference serving

LLM generation is two workloads. **Prefill** runs the whole prompt in one pass and keeps the
tensor cores busy. **Decode** makes one token a step, and every step reads all the weights and the
KV cache: it is starved by memory, not compute.

The number every dashboard shows, **GPU utilization**, reads near 100% either way: it only counts
whether *a* kernel is running. The **useful work** done, and **goodput** (the output of the requests
that meet their latency targets), can differ several times over between two servers that look
identical on that dashboard. Each section below takes one serving technique, lets you flip it on
and off, and shows both. The Sources page has a glossary: every word means one thing on every page.
""")
setup = current_setup()
# The two numbers are page 00's first view (the same figures a reader finds there): one batch-1 decode
# step at its context, shown only where that request fits. A model that reads fewer positions than the
# prompt (GPT-J: 2,048) gets a prompt of half of them.
_HALF = max(1, (setup.model.max_positions or PHASES_PROMPT) // 2)
PROMPT_TOKENS, CONTEXT_TOKENS = min(PHASES_PROMPT, _HALF), min(PHASES_CONTEXT, _HALF)
if fits_or_say(setup, 1, max(PROMPT_TOKENS, CONTEXT_TOKENS + 1),
               f"One request ({fmt.a_count(PROMPT_TOKENS)}-token prompt) on this setup", levers=None):
    batch1 = two_phases(setup.gpu, setup.model, prompt_tokens=PROMPT_TOKENS, batch=1,
                        context_tokens=CONTEXT_TOKENS, assumptions=setup.assumptions)
    left, right = st.columns(2)
    util = batch1.decode_utilization_gpu
    left.metric("What the dashboard shows: nvidia-smi utilization",
                fmt.percent(util), border=True,
                help=define("GPU utilization (utilization.gpu)")
                + f" Here: batch-1 decode at {CONTEXT_TOKENS:,} tokens of context, page 00's first view: "
                     + ("a kernel is almost always running." if util >= BUSY_UTILIZATION else
                        "a kernel runs except in the host's time between steps (scheduling, sampling)."))
    right.metric("What the tensor cores deliver: MFU", fmt.percent(float(batch1.decode.mfu[0])), border=True,
                 help=define("MFU") + " Here: the same batch-1 decode, as page 00 shows it.")
    if util < BUSY_UTILIZATION:
        st.caption(f"Here the dashboard reads only {fmt.percent(util)}: {setup.model.name}'s decode steps "
                   f"on this setup take {fmt.seconds(batch1.decode_step_s)}, so the host's time between "
                   "them (scheduling, sampling) is a visible share. On larger models and slower cards a "
                   "kernel is running nearly all the time, and the reading sits near 100% whatever the "
                   "tensor cores do.")
st.caption(f"Every number is computed live for **{setup.label}**. Pick another GPU or model "
           "in the sidebar and every page follows. Copy the URL to share exactly what you see.")

st.subheader("The story, in order")
st.markdown("Each section builds on the one before; each ends with a link to the next.")
for section in SECTIONS:
    with st.container(border=True):
        st.page_link(section.path, label=section.label, icon=section.icon)
        st.caption(section.blurb)
st.page_link(SOURCES.path, label="Sources: where every figure comes from", icon=SOURCES.icon)
