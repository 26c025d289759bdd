"""03 · Speculative decoding: spend decode's idle tensor cores on verifying drafted tokens."""

import streamlit as st

from sim import speculative as spec
from sim.cost import gemm_ridge_batch
from sim.memory import engine_max_seqs
from sim.models import MODELS
from ui import format as fmt
from ui import sim_cache
from ui.feasibility import fits, fits_or_stop
from ui.fig_speculative import (
    alpha_figure,
    alpha_table,
    batch_figure,
    batch_table,
    k_table,
    rounds_html,
    rounds_table,
    summary_table,
)
from ui.layout import (
    chart,
    check_redraw_values,
    data_expander,
    header,
    how_computed,
    metric_slots,
    next_link,
    redraw_values,
)
from ui.setup import current_setup

BATCHES = [2**i for i in range(0, 11)]  # 1..1024, within spec.BATCH_RANGE
CONTEXTS = [2**i for i in range(7, 16)]  # 128..32768 cached tokens
ALPHA_SWEEP_KS = tuple(range(spec.K_RANGE[0], spec.K_RANGE[1] + 1))


def _apply_preset() -> None:
    """A new drafting method brings its own acceptance rate and draft length; the reader can move
    both sliders afterwards."""
    method = spec.METHODS[st.session_state["spec_method"]]
    st.session_state["spec_alpha"] = method.alpha
    st.session_state["spec_k"] = method.k


header("03", "Spending the idle headroom: speculative decoding", """
Decode leaves the tensor cores idle. A cheap **drafter** guesses the next *k* tokens and the target
checks them all in one pass, which on a dense model costs about one decode step. **Drag the
acceptance rate α**: the chance the target keeps each draft token (while the ones before it were
kept) decides almost everything.
""", prefix="spec", after_reset=_apply_preset)  # the default method's α and k


def _draft_size_note(target, method: spec.Method) -> str:
    """How much smaller the draft model is than the sidebar's target (none for a drafter that is not a
    separate model, or for the draft model itself, which the page warns about)."""
    if method.drafter != "model":
        return ""
    draft = spec.draft_model_for(target)
    if target.n_experts:  # what a step of a mixture reads and computes: its active parameters
        ratio = target.active_params / draft.n_params
        if ratio < 1.05:
            return (f" Here {draft.name} is about as large as the {target.active_params / 1e9:.1f} B "
                    f"parameters {target.name} runs a token through, so its steps cost about as much as "
                    "the target's.")
        return (f" Here {draft.name} has {ratio:.1f}x fewer parameters than the "
                f"{target.active_params / 1e9:.1f} B {target.name} runs a token through (the paper's pairs: "
                "about 14-180x).")
    ratio = target.n_params / draft.n_params
    if ratio < 1.05:
        return ""
    return (f" Here {draft.name} has {ratio:.1f}x fewer parameters than {target.name} (the paper's pairs: "
            "about 14-180x).")


def _alpha_chart(setup, method: spec.Method, alpha: float, k: int, batch: int, context: int,
                 cost_ratio: float | None):
    """The chart the α slider moves, drawn in ``left``; returns the run at this setting and the α sweep."""
    r = sim_cache.speculate(setup.gpu, setup.model, method, alpha, k, batch, context, setup.assumptions,
                            cost_ratio)
    by_alpha = sim_cache.speedup_vs_alpha(setup.gpu, setup.model, method, ALPHA_SWEEP_KS, batch, context,
                                          setup.assumptions, cost_ratio)
    with left:
        chart(
            alpha_figure(by_alpha, r), key="spec_alpha_chart", send_first=True, legend_at="below",
            alt=f"Speedup rises with acceptance for every draft length; at α = {alpha:.2f} and k = {k} it "
                f"is {r.speedup:.2f}×, and the best k here, {r.best_k}, gives {r.best_speedup:.2f}×.",
        )
    return r, by_alpha


setup = current_setup()
# Every container in reading order first, filled out of order: the method is read first (the sliders'
# presets come from it) but drawn below the headline numbers, and the chart the α slider moves is sent
# before the rest (on a redraw before the widgets, else right after the headline numbers;
# ui.layout.redraw_values and send_what_is_drawn; README, "Speed").
main = st.container()
headline = st.container()
settings = st.container()
body = st.container()
left, right = st.columns(2)
WIDGET_KEYS = ("spec_method", "spec_alpha", "spec_k", "spec_batch", "spec_context")
early = redraw_values(WIDGET_KEYS)
if early is not None and early["spec_method"] == spec.MANUAL:
    early = redraw_values((*WIDGET_KEYS, "spec_draft_cost"))
early_chart = None  # (run, α sweep) where the chart went out first
if early is not None and early["spec_method"] in spec.METHODS:
    e_method = spec.METHODS[early["spec_method"]]
    e_k = early["spec_k"]
    if fits(setup, early["spec_batch"], early["spec_context"] + int(e_method.verified_per_seq(e_k)),
            drafter=spec.drafter_held(setup.model, e_method, e_k)):  # the test fits_or_stop makes below
        early_chart = _alpha_chart(setup, e_method, early["spec_alpha"], early["spec_k"], early["spec_batch"],
                                   early["spec_context"], early.get("spec_draft_cost"))
# A radio, not a segmented control: a bound segmented control shows no selection for "?x=".
name = settings.radio(
    "Drafting method", list(spec.METHODS), index=list(spec.METHODS).index(spec.DEFAULT_METHOD),
    horizontal=True, key="spec_method", bind="query-params", on_change=_apply_preset,
    help="Each method sets the acceptance rate α and draft length k to published values; move the "
         "sliders to override them.",
)
method = spec.METHODS[name]

alpha = main.slider("Draft acceptance rate α: chance the target keeps each draft token",
                    *spec.ALPHA_RANGE, value=method.alpha, step=0.01, key="spec_alpha",
                    bind="query-params")
knobs = settings.container(horizontal=True, wrap=True, gap="medium")
# A select slider: a bound st.slider truncates a linked "2.5" to 2 without a word.
k = knobs.select_slider("Draft length k, tokens per round", list(range(spec.K_RANGE[0], spec.K_RANGE[1] + 1)),
                        value=method.k, key="spec_k", bind="query-params", width=230)
batch = knobs.select_slider("Batch size, sequences", BATCHES, value=1, key="spec_batch",
                            bind="query-params", width=230)
context = knobs.select_slider("Context, tokens cached", CONTEXTS, value=1024, key="spec_context",
                              bind="query-params", width=230)
cost_ratio = None
if name == spec.MANUAL:
    cost_ratio = settings.slider("Draft cost c: one draft step as a share of a target decode step",
                                 *spec.DRAFT_COST_RANGE, value=method.cost_ratio, step=0.01,
                                 key="spec_draft_cost", bind="query-params")

moved = [f"α from {method.alpha:.2f}" if abs(alpha - method.alpha) > 1e-9 else "",
         f"k from {method.k}" if k != method.k else ""]
moved_txt = " and ".join(m for m in moved if m)
settings.caption(f"**{name}** (preset α = {method.alpha:.2f}"
                 + (", an effective rate fitted to measured gains" if method.alpha_fitted else "")
                 + f", k = {method.k}"
                 + (f", derived from τ = {method.tau} tokens per pass" if method.tau else "") + "): "
                 + method.source + _draft_size_note(setup.model, method)
                 + (f" *You moved {moved_txt}.*" if moved_txt else ""))
if method.drafter == "model" and spec.draft_model_for(setup.model).name == setup.model.name:
    headline.warning(f"{setup.model.name} is the draft model itself: drafting for it with itself only "
                     "adds work. Pick a larger target in the sidebar.", icon=":material/content_copy:")
elif not spec.shares_vocab(setup.model, method):
    settings.warning(f"Llama-3.2-1B cannot draft for {setup.model.name}: a draft model must share the "
                     "target's vocabulary (vLLM spec-decode blog). Its cost stands in here for a small "
                     "draft of the target's own family.", icon=":material/translate:")


check_redraw_values(early, {"spec_method": name, "spec_alpha": alpha, "spec_k": k, "spec_batch": batch,
                            "spec_context": context, "spec_draft_cost": cost_ratio})

# Cached per process (ui/sim_cache.py): the four sim calls cost ~7 ms a rerun together.
verified = int(method.verified_per_seq(k))
drafter = spec.drafter_held(setup.model, method, k)
with settings:  # its last element: where a setting that does not fit is said, above the results
    fits_or_stop(setup, batch, context + verified,
                 f"{fmt.counted(batch, 'sequence')} at {context:,} cached tokens plus {verified} verified"
                 + (f", with {drafter.name} beside the target" if drafter is not None else ""),
                 drafter=drafter, levers="Lower the batch or the context on this page",
                 drafter_levers="Pick a drafter that holds no weights (n-gram lookup) on this page")
    max_seqs = engine_max_seqs(setup.gpu)
    if batch > max_seqs:  # fits in memory, but past what the engine decodes at once by default
        st.caption(f"Batch {batch:,} is past what vLLM decodes at once on the {setup.gpu.name} by default "
                   f"(max_num_seqs {max_seqs:,}, as page 00 counts it); a deployment can raise it, and "
                   "this page prices the batch as if it had.")
tree = method.verify_tokens is not None  # a tree: a depth is kept with p > α (Method.depth_acceptance)
by_batch = sim_cache.speedup_vs_batch(setup.gpu, setup.model, method, alpha, k, context, setup.assumptions,
                                 cost_ratio)
if early_chart is not None:
    r, by_alpha = early_chart
else:
    r = sim_cache.speculate(setup.gpu, setup.model, method, alpha, k, batch, context, setup.assumptions,
                            cost_ratio)
with headline:
    m = metric_slots(4)
    m[0].metric("Speedup", f"{r.speedup:.2f}×", border=True,
                delta=f"paper's E/(kc+1): {r.closed_form_speedup:.2f}×", delta_color="off",
                delta_arrow="off",
                help="Tokens per second with speculation over tokens per second of plain decode, same "
                     "batch and context.")
    fitted_note = (f" {method.name}'s preset α is an effective rate fitted to SGLang's measured gains: it "
                   "absorbs the engine's costs the model leaves out, so E at the preset is below the "
                   "acceptance length the papers report (EAGLE-3 Table 1)."
                   if method.alpha_fitted and abs(alpha - method.alpha) < 0.005 else "")
    c_d = method.candidates_per_depth
    e_help = ("E = (1 − α^(k+1)) / (1 − α): the accepted prefix plus the one token the target adds in every "
              "pass (Leviathan et al., Eq. 1)." if not tree else
              f"E = (1 − p^(k+1)) / (1 − p) with p = {r.depth_acceptance:.2f}, the chance a depth of the "
              f"tree is kept: any of its ~{c_d:.1f} candidates there, each kept with α = {alpha:.2f}, so "
              f"p = 1 − (1 − α)^{c_d:.1f}. The accepted prefix plus the one token the target adds in every "
              "pass (Leviathan et al., Eq. 1, per depth).")
    m[1].metric("Tokens per pass", f"{r.expected_tokens:.2f}", border=True, help=e_help + fitted_note)
    m[2].metric("Tokens/s, whole batch", fmt.rate(r.tokens_per_s, "").strip(), border=True,
                delta=fmt.signed(r.tokens_per_s - r.plain_tokens_per_s) + " vs plain")
    m[3].metric("Time per token", fmt.seconds(r.time_per_token_s), border=True,
                delta=("-" if r.time_per_token_s < r.decode_step_s else "+")
                + f"{fmt.seconds(abs(r.time_per_token_s - r.decode_step_s))} vs plain",
                delta_color="inverse", help="Round time / tokens per pass, for each sequence.")
if early_chart is None:
    r, by_alpha = _alpha_chart(setup, method, alpha, k, batch, context, cost_ratio)
with body:
    st.markdown("""
    Batching (01) fills the slots and paging (02) fits the requests, yet each decode step is still
    memory-bound: to make one token per sequence the model streams all its weights while the tensor
    cores mostly wait. The verify pass checks every drafted position (k + 1 in a chain, the tree's
    nodes in a tree) for about the price of that one step,
    because the step was paying for the weight reads anyway: every draft the target agrees with is a
    token for free.
    """)
    m = metric_slots(4)
    m[0].metric("Monte Carlo mean", f"{r.rounds.mean_tokens:.2f}", border=True,
                delta=f"± {r.rounds.std_error:.2f}, {r.rounds.tokens.size:,} rounds",
                delta_color="off", delta_arrow="off",
                help="Seeded simulation of the rounds; it must agree with E.")
    m[1].metric("Best k", f"k = {r.best_k}" if r.best_speedup > 1 else "none", border=True,
                delta=(f"{r.best_speedup:.2f}× at this α" if r.best_speedup > 1 else
                       f"k = {r.best_k} gives {r.best_speedup:.2f}×: plain decode is faster"),
                delta_color="off", delta_arrow="off",
                help=f"k from 1 to {spec.K_RANGE[1]} tried at this α, batch and context"
                     + (f" (the {method.name} preset's k = {method.k} is its source's setting, not tuned "
                        "to a batch)" if method.name != spec.MANUAL and r.best_k != method.k else "")
                     + ".")
    m[2].metric("Verify ÷ decode step", f"{r.verify_over_decode:.2f}×", border=True,
                delta=f"{'memory' if r.verify_memory_bound else 'compute'}-bound",
                delta_color="off", delta_arrow="off",
                help=f"The verify pass ({fmt.seconds(r.verify_s)}) checks {r.verified_tokens} tokens per "
                     f"sequence; a decode step ({fmt.seconds(r.decode_step_s)}) makes 1.")
    m[3].metric("Math per token", f"{r.flops_ratio:.2f}×", border=True,
                delta="FLOPs vs plain", delta_color="off", delta_arrow="off",
                help="Draft plus verify FLOPs per committed token, over a decode step's FLOPs per token: "
                     "the extra work the idle tensor cores absorb (Leviathan Thm 3.11).")

    # HTML cells, not a Plotly chart: drawn right after the α chart, a changing chart delayed it
    # (ui/bars.py)
    st.markdown(rounds_html(
        r.rounds,
        rate=(f"α = {alpha:.2f}" if not tree
              else f"each depth kept with p = {r.depth_acceptance:.2f}, from α = {alpha:.2f}"),
        alt=f"Eight simulated rounds at α = {alpha:.2f}"
            + ("" if not tree else f" (each depth of the tree kept with p = {r.depth_acceptance:.2f})")
            + f", k = {k}: each commits its accepted drafts plus one "
            f"token from the target; over {r.rounds.tokens.size:,} rounds the mean is "
            f"{r.rounds.mean_tokens:.2f} tokens per pass against E = {r.expected_tokens:.2f}.",
    ), unsafe_allow_html=True)
# The measurements are BF16 Llama-3.1-8B on one H100 (EAGLE-3 Table 3): shown only for that setup.
measured = (spec.MEASURED_BATCH_GAIN
            if (setup.gpu.name, setup.model.name) == spec.MEASURED_SETUP
            and (setup.model.weight_dtype, setup.model.kv_dtype, setup.model.tp) == ("bf16", "bf16", 1)
            else None)
modelled = sim_cache.modelled_batch_gain(setup.gpu, setup.model, setup.assumptions) if measured else None
break_even = by_batch.break_even_batch
with right:
    chart(
        batch_figure(by_batch, r, measured, modelled), key="spec_batch_chart", legend_at="below",
        alt=f"Speedup against batch size: {float(by_batch.speedup[0]):.2f}× at batch 1, "
            f"{float(by_batch.speedup[by_batch.last_fitting]):.2f}× at batch "
            f"{int(by_batch.batches[by_batch.last_fitting])}, the largest that fits; "
            + (f"it is first at or below 1 at batch {break_even:.0f}"
               + (" (past what fits)." if break_even > int(by_batch.batches[by_batch.last_fitting])
                  else ".") if break_even < 1e9
               else "it stays above 1 up to the largest batch."),
    )

if measured:
    e3, e1, b_m = measured["EAGLE-3"], measured["EAGLE"], measured["batches"]
    st.caption(
        ("" if method.name in ("EAGLE", "EAGLE-3") else
         f"The measured points are EAGLE's and EAGLE-3's, shown for reference: the curve is {method.name}'s "
         "(pick EAGLE or EAGLE-3 above to compare like with like). ")
        + f"Measured (SGLang, EAGLE-3 paper Table 3: a chain of 3 drafts, MT-bench lengths): EAGLE-3's "
        f"gain goes from {e3[0]:.2f}× at batch {b_m[0]} to {e3[-1]:.2f}× at {b_m[-1]}, EAGLE's from "
        f"{e1[0]:.2f}× to {e1[-1]:.2f}× (its lowest, {min(e1):.2f}×, at batch "
        f"{b_m[e1.index(min(e1))]}). The presets' α is fitted to these points; the model holds "
        "the gain flat while the verify pass costs what a decode step does, then drops faster than "
        "the measurements, which fall from batch 2 and level off past 24. The model's signed error "
        "at each point, "
        "in that setting: EAGLE-3 "
        + ", ".join(f"{m / e - 1:+.0%}" for m, e in zip(modelled["EAGLE-3"], e3, strict=True))
        + "; EAGLE " + ", ".join(f"{m / e - 1:+.0%}" for m, e in zip(modelled["EAGLE"], e1, strict=True))
        + " (hover a point).")
i_fit = by_batch.last_fitting
last_batch, last_speedup = int(by_batch.batches[i_fit]), float(by_batch.speedup[i_fit])
peak, peak_batch = by_batch.peak
fades = last_speedup < 0.95 * peak  # the gain falls under load from its best (batch 1, or later)
losses = by_batch.losing_ranges  # where speculation does not pay, among the batches that fit

def _rise_caption(setup, method: spec.Method, sweep, context: int) -> str:
    """Why a dense target's gain rises with the batch, where it does by more than 5 % (the MoE caption
    says it for a mixture): the target's KV reads grow with the batch, the drafter's much less, so a
    draft step becomes a smaller share of a target step. Empty where it does not rise, or where the
    drafter's share does not fall (a fixed ratio: then this is not the reason)."""
    m = setup.model
    if m.n_experts or sweep.rise_before_peak <= 0.05 or sweep.cost_ratio is None:
        return ""
    peak, peak_batch = sweep.peak
    c0, c_peak = float(sweep.cost_ratio[0]), float(sweep.cost_ratio[sweep.peak_index])
    if not c_peak < c0:
        return ""
    kv = float(m.kv_bytes_per_sequence(context))
    a_gpu = " a GPU" if m.tp > 1 else ""
    crossover = spec.kv_outweighs_weights_batch(m, context)
    to_the_end = sweep.peak_index == sweep.last_fitting
    head = ("**Here the gain rises with the batch"
            + (" up to the largest that fits**" if to_the_end else " before it falls**")
            + f", from {float(sweep.speedup[0]):.2f}× at batch 1 to {peak:.2f}× at batch {peak_batch:,}. ")
    a = setup.assumptions
    share = spec.decode_host_share(setup.gpu, m, [1, peak_batch], context, a)
    if crossover / 5 > peak_batch and share[1] > share[0]:  # not the KV reads: the host's share is
        return (head + f"The engine's host work for each sequence ({a.sequence_host_s * 1e6:.1f} µs a "
                "step, the model's fitted figure) grows with the batch; the model has plain decode pay "
                "it for every token and a speculative round once for all the tokens it makes (a "
                "scheduler's per-request work is per step). The host's time is "
                f"{float(share[0]):.0%} of a decode step at batch 1 and {float(share[1]):.0%} at batch "
                f"{peak_batch:,}, so a draft step falls from {c0:.2f} to {c_peak:.2f} of a target step. "
                f"{m.name}'s steps are short enough for that to show; the measured gains that fall with "
                f"the batch are {spec.MEASURED_SETUP[1]}'s.")
    notes = [f"each of its {m.n_heads} attention heads keeps its own keys and values"
             if m.n_kv_heads == m.n_heads and not m.is_mla else "",
             f"its windowed layers hold at most {m.sliding_window:,} tokens"
             if m.sliding_window and context > m.sliding_window else ""]
    notes = "; ".join(n for n in notes if n)
    weights = f"the {fmt.bytes_(m.weight_bytes)} of {m.weight_dtype.upper()} weights{a_gpu}"
    if crossover <= 1:
        outweighs = f"even one sequence's cache outweighs {weights}"
    elif crossover <= peak_batch:
        outweighs = f"from batch ~{crossover:,.0f} those reads outweigh {weights}"
    else:
        outweighs = (f"at batch {peak_batch:,} those reads are {peak_batch / crossover:.0%} of what it reads "
                     f"for {weights}")
    drafter = ("Medusa's heads read no KV cache" if method.held_heads else
               f"The draft model ({spec.draft_model_for(m).name}"
               + ("" if spec.shares_vocab(m, method) else ", standing in") + ") holds far less cache"
               if method.drafter == "model" else
               "The draft head keeps one layer of KV cache" if method.drafter == "head" else
               "The drafter reads no KV cache")
    measured, measured_model = spec.MEASURED_BATCH_GAIN["batches"], MODELS[spec.MEASURED_SETUP[1]]
    return (head + f"At {context:,} cached tokens a sequence holds {fmt.bytes_(kv)} of KV cache{a_gpu}"
            + (f" ({notes})" if notes else "")
            + f", which a target decode step reads to make one token; {outweighs}. "
            f"{drafter}, so a draft step falls from {c0:.2f} to {c_peak:.2f} of a target step, and the "
            "verify pass reads each sequence's cache once for all its drafted positions. MagicDec "
            "(Sadhukhan et al., 2024) measured gains that rise with the batch at long contexts; the gains "
            f"that fall with the batch in EAGLE-3's Table 3 (batch {measured[0]}-{measured[-1]}) were "
            f"measured on {spec.MEASURED_SETUP[1]}, whose {measured_model.n_kv_heads} KV heads keep the "
            "cache small, at short prompts.")


def _span(a: int, b: int) -> str:
    return (f"from batch {a:,} on" if b == last_batch and a != b else f"at batch {a:,}" if a == b
            else f"at batches {a:,}–{b:,}")


# The sweep stops at spec.BATCH_RANGE's top: say so where memory would hold more.
end_txt = "the most that fit" if i_fit < len(by_batch.batches) - 1 else "the largest swept"
if peak <= 1.0:
    fade = f"never pays: at most **{peak:.2f}×** (batch {peak_batch:,})"
else:
    fade = f"peaks at **{peak:.2f}×** (batch {peak_batch:,})"
    if fades and last_batch != peak_batch:
        fade += f" and is **{last_speedup:.2f}×** at batch {last_batch:,}, {end_txt}"
    elif last_batch != peak_batch:
        fade += f" and holds **{last_speedup:.2f}×** to batch {last_batch:,}, {end_txt}"
    if losses:
        fade += "; it loses (below 1×) " + ", ".join(_span(a, b) for a, b in losses)
    regained = by_batch.regained_past_graphs
    if regained:  # the CUDA-graph line: plain decode starts launching every kernel
        graph = f"{by_batch.decode_eager_batch - 1:,.0f}"
        fade += (f". Past batch {graph} it pays again (**{regained[1]:.2f}×** at batch {regained[0]:,}): a "
                 f"step of more than {graph} tokens runs without a CUDA graph (vLLM's largest capture size "
                 f"by default) and launches every kernel; the verify pass, {r.verified_tokens} tokens a "
                 f"sequence, crossed that line at batch {by_batch.verify_eager_batch:,.0f}, plain decode "
                 "only there")
drafting = k * r.cost_ratio  # the round's draft steps, in decode steps
if r.verify_memory_bound and r.verify_over_decode <= 1.3 and r.speedup <= 1.0:
    lead = (f"Checking {r.verified_tokens} tokens per sequence costs **{r.verify_over_decode:.2f}×** a "
            f"decode step at batch {batch} and commits **{r.expected_tokens:.2f}** tokens, but the drafter's "
            f"{k} steps add **{drafting:.2f}** decode steps' worth of time ({r.cost_ratio:.2f} each), more "
            f"than the {r.expected_tokens - 1:.2f} extra tokens are worth: at this batch speculation loses, "
            f"**{r.speedup:.2f}×**.")
elif r.verify_memory_bound and r.verify_over_decode <= 1.3:
    lead = (f"Checking {r.verified_tokens} tokens per sequence costs **{r.verify_over_decode:.2f}×** a "
            f"decode step at batch {batch}, yet commits **{r.expected_tokens:.2f}** tokens: the tensor "
            "cores were idle anyway.")
elif r.verify_memory_bound:
    why = sim_cache.verify_cost_reason(setup.gpu, setup.model, method, batch, k, context, setup.assumptions)
    lead = (f"Checking {r.verified_tokens} tokens per sequence costs **{r.verify_over_decode:.2f}×** a "
            f"decode step at batch {batch}: "
            + ({"experts": "still memory-bound, but it reads more than a decode step (the drafted tokens "
                           "route to experts one token does not reach)",
                "gemm": f"its weight GEMMs, at {batch * r.verified_tokens:,} tokens a pass, are past the "
                        "ridge, while the KV-cache reads keep the pass as a whole memory-bound",
                "other": "still memory-bound and reading about what a decode step reads; the rest is "
                         "attention over the drafted positions, sampling each, and the kernels' costs"}[why])
            + f". It commits **{r.expected_tokens:.2f}** tokens.")
else:
    lead = (f"At batch {batch} the verify pass is already compute-bound: checking {r.verified_tokens} "
            f"tokens per sequence costs **{r.verify_over_decode:.2f}×** a decode step, and only "
            f"**{r.expected_tokens:.2f}** of them are kept.")
if r.speedup <= 1.0 and "speculation loses" not in lead:
    lead += f" At this batch speculation loses: **{r.speedup:.2f}×**."
if by_batch.verify_compute_bound_batch <= last_batch and (peak <= 1.0 or (not fades and not losses)):
    load = ("Once the verify pass turns compute-bound (from batch "
            f"~{by_batch.verify_compute_bound_batch:.0f} here) every rejected draft costs real math; on "
            f"this setup the gain {fade}.")
elif by_batch.verify_compute_bound_batch <= last_batch:
    load = (f"The trick spends spare compute, so it fades under load: once the verify pass turns "
            f"compute-bound (from batch ~{by_batch.verify_compute_bound_batch:.0f} here) every rejected "
            f"draft costs real math, and the gain {fade}. That is why "
            + ("published gains are *typically 2–3×* at low load, and why "
               if peak_batch <= 4 and peak >= 1.8 else "")
            + "servers turn speculation down when busy.")
elif fades:
    gemm_b = gemm_ridge_batch(setup.gpu, setup.model, setup.assumptions) / r.verified_tokens
    gemms = "attention's projection GEMMs" if setup.model.n_experts else "weight GEMMs"
    c0, c_last = float(by_batch.cost_ratio[0]), float(by_batch.cost_ratio[i_fit])
    why = (f"yet its {gemms} pass their ridge from about batch {gemm_b:,.0f} ({r.verified_tokens} tokens a "
           "sequence) and stop being free, so" if gemm_b <= last_batch else
           f"and its GEMMs stay short of their ridge; the drafter's steps grow from {c0:.2f} to "
           f"{c_last:.2f} of a decode step, so" if c_last > 1.05 * c0 else "and still")
    load = (f"Here the verify pass as a whole stays memory-bound up to batch {last_batch:,}, {end_txt} "
            f"(the KV cache's reads outweigh its math), {why} the gain {fade}.")
else:
    load = (f"Here the verify pass stays memory-bound up to batch {last_batch:,}, {end_txt}: "
            "its reads (the weights' and the KV cache's) outweigh the math of every verified token, so "
            f"the spare compute never runs out, and the gain {fade}."
            + (" Shorten the context to see it fade under load, as measured gains do."
               if context > 1024 and peak > 1.0 else ""))
st.info(f"**The thesis, flipped into a feature.** {lead} {load}", icon=":material/lightbulb:")
if setup.model.n_experts:
    st.caption(
        f"**{setup.model.name} is a mixture of experts**, so the gain can *rise* with the batch first: "
        f"a decode step at batch 1 reads the {setup.model.experts_per_token} experts its token uses, "
        f"but verifying {r.verified_tokens} drafted tokens touches more of them (verify ÷ decode "
        f"{r.verify_over_decode:.2f}× here). Once plain decode touches every expert anyway, "
        "verification is nearly free again; only then does the gain fade under load.")

rises = _rise_caption(setup, method, by_batch, context)
if rises:
    st.caption(rises)

head_rise = by_batch.rise_before_peak  # over the batches that fit, as the rise caption counts it
how_computed(
    r"""
**Acceptance.** Each draft token is kept with probability $\alpha$, independently; a round stops at
the first rejection, and the target's pass always adds one token of its own (the correction, or a
bonus after $k$ accepts). Tokens per target pass (Leviathan et al., Eq. 1):

$$
E(\alpha,k) = \dfrac{1-\alpha^{k+1}}{1-\alpha}
$$

($k+1$ at $\alpha = 1$). The Monte Carlo draws a seeded $(\text{rounds}\times k)$ array of uniforms,
marks draws below $\alpha$ as accepted, and counts each row's accepted prefix.

**A tree** (EAGLE-3's preset: SGLang's default of 5 draft steps, 4 candidates a step, 8 tokens
verified) offers about $v/k$ candidates per depth, so a depth survives with
$p = 1-(1-\alpha)^{v/k}$ and $E = E(p, k)$; a chain has $p=\alpha$.

**Price of a round**, from the same operator-level step model as every page (batch $B$, context $c$):

$$
\begin{aligned}
t_\text{round} &= k\,t_\text{draft}(B,w,c)\\
&\quad + t_\text{verify}(B,\,v,\,c)\\
\text{speedup} &= \dfrac{E\;t_\text{decode}(B,c)}{t_\text{round}}
\end{aligned}
$$

where $t_\text{verify}(B, v, c)$ is one target step over the $v$ drafted positions of each sequence
($v = k+1$ for a chain, the tree's nodes for a tree), every one of them sampled, and
$t_\text{draft}$ one step of the drafter over $w$ tokens per sequence (1 for a chain, the tree's
width) with its kernels' costs but not the host's, which the round pays once (a manual cost ratio
$c$ prices a draft step as $c$ times a whole target step, host time included, as the closed form
below does). At batch 1 a dense model's verify pass reads the same weights as a decode step and
costs about the same (a mixture of experts reads every expert its $v$ tokens reach, more than one
token's); its FLOP grow
$v$-fold, which matters once $vB$ tokens per pass reach the GEMMs' ridge. The best $k$ is the
argmax over $k = 1..16$ of the same expression.

**The paper's closed form** (Thm 3.8) fixes $c = t_\text{draft}/t_\text{target}$ and lets the verify
pass cost one target step: speedup $= E/(kc+1)$, bounded by $1/(1-\alpha)$ for a free draft.
Arithmetic per token (Thm 3.11): $(k\hat c + k + 1)/E$. Here: """
    + f"c = {r.cost_ratio:.3f} at batch {batch}, closed form {r.closed_form_speedup:.2f}× against "
      f"{r.speedup:.2f}× from the roofline.",
    assumptions=[
        "Acceptance is i.i.d. per token with a fixed α (the paper's own simplification): real "
        "acceptance varies with the text, and is higher on input-grounded tasks.",
        "Medusa's and n-gram lookup's published mean acceptance length τ is mapped to the α of a "
        "chain of the preset's k by solving E(α, k) = τ (then rounded to the slider's 0.01 steps). "
        "EAGLE's and EAGLE-3's α are fitted to SGLang's measured gains (EAGLE-3 Tables 3 and 4; "
        "`sim.speculative.fit_alpha`, least squares on log speedup); a tree's candidates at one depth "
        "are treated as independent draws.",
        "Draft costs: Llama-3.2-1B is priced by the roofline at the target's precisions; an EAGLE "
        "head as one decoder layer of the target plus its LM head (EAGLE-3: a 32k-token draft "
        "head), without the small fusion layer; a Medusa head (one per draft token) as the target's own "
        "LM head plus a d × d block, in the same step model, so its share of a target step grows with "
        "the vocabulary; n-gram lookup as free.",
        "Every sequence in the batch drafts and verifies k tokens each round and accepts "
        "independently; rejected positions are not reused, and no padding or scheduling cost is "
        "added.",
        "The memory check counts the drafter beside the target: a draft model's weights and KV cache, an "
        "EAGLE head's decoder layer (dense), its KV cache and (EAGLE-3) its own LM head, Medusa's heads "
        "(one a draft), at the target's precisions; n-gram lookup holds nothing. The draft's prefill "
        "time is not counted; the draft's context is the target's.",
        "Measured gains (EAGLE-3 Table 3) fall from batch 2 and level off past 24; this model holds "
        "them flat until the verify pass reaches the GEMMs' ridge and then drops faster (its signed "
        "error at each measured point is under the batch chart, on the measured setup).",
        *([f"For a mixture of experts the gain rises with the batch first ({head_rise:.0%} at most on "
           "this setting's curve): at batch 1 verifying reaches more experts than one token's decode "
           "does, and once plain decode touches every expert the verify pass costs about a decode "
           "step again."] if setup.model.n_experts and head_rise > 0.01 else
          [f"For a dense target the speedup can rise with the batch before it fades ({head_rise:.0%} at "
           "most on this setting's curve): the target's KV-cache reads grow with every sequence, the "
           "drafter's far less (a small model's cache, a head's one layer, Medusa's heads none), so a "
           "draft step becomes a smaller share of the round (MagicDec's point). Most for targets whose "
           "cache outweighs their weights early: every head with its own keys and values (Llama-2-7B, "
           "GPT-J-6B), or 4-bit weights."]
          if (method.drafter != "ratio" or method.held_heads) and head_rise > 0.01 else []),
        "At long contexts (try 8k+) the KV-cache reads dominate both the decode step and the verify "
        "pass, the verify pass stays memory-bound, and in this model the gain survives large "
        "batches.",
    ],
    sources=[
        "Leviathan, Kalman, Matias, Fast Inference from Transformers via Speculative Decoding "
        "(ICML 2023, arXiv 2211.17192): Eq. 1, Thm 3.8, Thm 3.11, Tables 1 and 3 (REFERENCE.md §3.6).",
        "EAGLE-3 (arXiv 2503.01840): Table 1 mean acceptance lengths τ (PLD 1.80, Medusa 2.51, "
        "EAGLE 3.96, EAGLE-3 on LLaMA-3.1-8B 6.23) and Table 3 throughput gain against batch "
        "size on H100 (REFERENCE.md §3.7).",
        "Sadhukhan et al., MagicDec (arXiv 2408.11049): once the KV cache dominates a decode step, "
        "speculation's gain can rise with the batch (Llama-2-7B-32K and Llama-3.1-8B, batch 32-256, "
        "8 x A100).",
        "Medusa (arXiv 2401.10774), EAGLE (arXiv 2401.15077), prompt lookup decoding "
        "(apoorvumang/prompt-lookup-decoding) (REFERENCE.md §3.7).",
        "vLLM speculative decoding blog (2024-10-17): draft and target must share a vocabulary; "
        "1.4–1.8× slowdowns at high QPS (REFERENCE.md §3.7).",
        f"{setup.gpu.name}: {setup.gpu.source}. {setup.model.name}: {setup.model.source}.",
    ],
)
data_expander(lambda: {
    "This round": summary_table(r),
    "Speedup by draft length": k_table(r),
    "Speedup against batch size": batch_table(by_batch),
    "Speedup against acceptance": alpha_table(by_alpha),
    "Monte Carlo: accepted drafts per round": rounds_table(r.rounds),
}, key="spec_data", notes={"Speedup against acceptance":
                           ("free_ceiling: 1 / (1 − p), p the chance a depth of the tree is kept "
                            "(above α)" if tree else "free_ceiling: 1 / (1 − α)")
                           + ", the speedup of a draft that cost nothing and drafted without limit; "
                           "unbounded (inf) at α = 1."})
next_link(__file__)
