"""Say so on the page when a setup cannot exist on the chosen card (``sim.memory``)."""

from __future__ import annotations

import streamlit as st

from sim.memory import describe, memory_plan, smallest_gpu_count
from ui.layout import stop_page


def fits_or_stop(setup, batch: int, context_tokens: int, what: str) -> None:
    """If ``batch`` sequences of ``context_tokens`` tokens do not fit on the setup's GPU, say what
    does not fit, by how much and the largest batch that does, and stop the page there: no number
    for a setup that cannot exist is shown as if it were real."""
    plan = memory_plan(setup.gpu, setup.model, int(batch), int(context_tokens))
    if plan.fits:
        return
    st.error(f"**This setup does not fit in memory, so no numbers are shown for it.** {what}: "
             + describe(plan), icon=":material/memory_alt:")
    n = smallest_gpu_count(setup.gpu, setup.model, int(batch), int(context_tokens))
    split = (f"It fits on **{n} x {setup.gpu.name}** (GPUs per replica in the sidebar). "
             if n and n > setup.model.tp else "")
    st.caption(split + "Lower the batch or the context on this page, or pick a larger GPU, smaller "
               "weights or a smaller model in the sidebar.")
    stop_page()
