"""Say so on the page when a setup cannot exist: it does not fit on the chosen card (``sim.memory``), or
its sequences are longer than the model reads (``Model.max_positions``)."""

from __future__ import annotations

import streamlit as st

from sim.memory import can_run, describe, fit_levers, memory_plan, smallest_gpu_count
from ui.layout import stop_page


def fits(setup, batch: int, context_tokens: int, *, drafter=None) -> bool:
    """Whether ``batch`` sequences of ``context_tokens`` tokens fit on the setup's GPU (with a
    speculative ``drafter`` beside the model) and within the model's positions: ``fits_or_say``'s
    test, saying nothing."""
    return can_run(setup.gpu, setup.model, batch, context_tokens, drafter=drafter)


def positions_text(model, tokens: int) -> str:
    """Why a sequence of ``tokens`` tokens cannot run, after what it is: 'runs to N tokens, more than...'."""
    return (f"runs to {int(tokens):,} tokens, more than the {model.max_positions:,} positions {model.name} "
            "reads (the limit its config.json gives): an engine serves it no longer by default and refuses "
            "a longer request")


def reads_or_say(setup, tokens: int, what: str, *, levers: str | None = None, section: bool = False) -> bool:
    """Whether a sequence of ``tokens`` tokens (prompt and output together) is within the model's
    positions; where it is not, say so (what, how long, the model's limit, what the page offers) so
    that the caller shows no number for it. ``section`` as in ``fits_or_say``."""
    if setup.model.reads(int(tokens)):
        return True
    if section:
        lead = ("This section's scenario is longer than the model reads, so the section shows no numbers "
                "for it.")
    else:
        lead = "These settings are longer than the model reads, so no numbers are shown for them."
    st.error(f"**{lead}** {what} {positions_text(setup.model, tokens)}.", icon=":material/straighten:")
    st.caption((f"{levers}, or pick" if levers else "Pick") + " a model with a longer context in the "
               "sidebar.")
    return False


def fits_or_say(setup, batch: int, context_tokens: int, what: str, *, drafter=None,
                levers: str | None = "Lower the batch or the context on this page",
                drafter_levers: str | None = None, section: bool = False) -> bool:
    """Whether ``batch`` sequences of ``context_tokens`` tokens fit on the setup's GPU (with a
    speculative ``drafter`` beside the model, ``sim.memory.memory_plan``) and within the model's
    positions (``reads_or_say``, checked once the weights fit: where they do not, no length helps,
    and the memory notice says so); where they do not, say what
    does not fit, by how much, the largest batch that does and the fewest GPUs on which it would, so
    that the caller shows no number for it. ``levers``: what this page offers to make it fit (None:
    nothing on the page; not offered where the weights alone do not fit, which no batch fixes);
    ``drafter_levers``: what it offers instead of the drafter, said where the drafter is what does
    not fit. ``section``: the check is one section's scenario further down a page that has shown
    numbers for the setup already, so the notice says the section shows none, not the setup."""
    plan = memory_plan(setup.gpu, setup.model, int(batch), int(context_tokens), drafter=drafter)
    if plan.weights_fit and not reads_or_say(setup, context_tokens, what, levers=levers, section=section):
        return False
    if plan.fits:
        return True
    # what the sidebar offers that fits, each change alone (more GPUs: the sentence below says how many)
    sidebar = fit_levers(setup.gpu, setup.model, int(batch), int(context_tokens), drafter=drafter, counts=())
    if section:
        lead = ("This section's scenario does not fit in memory on this setup, so the section shows no "
                "numbers for it.")
    elif plan.weights_fit and levers:  # the page's own settings ask for too much, not the sidebar's setup
        lead = "These settings do not fit in memory on this setup, so no numbers are shown for them."
    else:
        lead = "This setup does not fit in memory, so no numbers are shown for it."
    # Where the weights alone do not fit, the page's own scenario (``what``) is not what fails: the
    # sentence names the weights ("The longest request of this workload: The weights of ..." had read
    # as if the request were too big).
    target_fits = plan.weights_fit or (drafter is not None and memory_plan(
        setup.gpu, setup.model, int(batch), int(context_tokens)).weights_fit)
    st.error(f"**{lead}** " + (f"{what}: " if target_fits else "") + describe(plan, sidebar),
             icon=":material/memory_alt:")
    n = smallest_gpu_count(setup.gpu, setup.model, int(batch), int(context_tokens), drafter=drafter)
    split = (f"It fits on **{n} x {setup.gpu.name}** (GPUs per replica in the sidebar). "
             if n and n > setup.model.tp else "")
    if not plan.weights_fit and drafter is not None and memory_plan(
            setup.gpu, setup.model, int(batch), int(context_tokens)).weights_fit:
        advice = ("The target alone fits: the drafter's weights are what does not. "
                  + (f"{drafter_levers}." if drafter_levers else ""))
    elif not plan.weights_fit:  # the sentence above names the sidebar's choices; no batch helps
        advice = ""
    elif levers:
        advice = f"{levers}, or pick {sidebar} in the sidebar."
    else:
        advice = f"Pick {sidebar} in the sidebar."
    if split or advice:
        st.caption(split + advice)
    return False


def fits_or_stop(setup, batch: int, context_tokens: int, what: str, *, drafter=None,
                 levers: str | None = "Lower the batch or the context on this page",
                 drafter_levers: str | None = None, section: bool = False) -> None:
    """``fits_or_say``, and where the setup does not fit, stop the page there: no number for a setup
    that cannot exist is shown as if it were real."""
    if not fits_or_say(setup, batch, context_tokens, what, drafter=drafter, levers=levers,
                       drafter_levers=drafter_levers, section=section):
        stop_page()


def windowed_layers_note(setup, scope: str) -> None:
    """Where a section counts a model's sliding-window / chunked layers at every token (its token
    pool, its scheduler), say so for a model that has them: ``scope`` says what that section counts."""
    m = setup.model
    if not m.window_layers:
        return
    st.caption(f"{m.name}: {m.window_layers} of its {m.n_layers} layers attend over a "
               f"{m.sliding_window:,}-token window, and hold at most that much KV cache; the cost model "
               f"and the memory check cap them there. {scope}",
               help="Sliding-window layers (Mistral, gpt-oss) and chunked-attention layers (Llama 4) "
                    "attend over at most the window's tokens; vLLM's hybrid KV-cache manager keeps their "
                    "pages apart and frees the ones that slide out of the window.")
