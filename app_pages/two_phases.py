"""00 · Two phases: prefill is compute-bound, decode is memory-bound."""

import math

import streamlit as st

from sim.cost import (
    CALIBRATION_GPU,
    CALIBRATION_MEASURED_S,
    CALIBRATION_MODEL,
    calibration_step_s,
    decode_step_cost,
)
from sim.gap import explain_decode
from sim.hardware import GiB
from sim.memory import (
    LARGE_GPU_BYTES,
    MAX_BATCHED_TOKENS,
    MAX_BATCHED_TOKENS_DEFAULT,
    engine_max_batched_tokens,
    engine_max_seqs,
    memory_plan,
)
from sim.metrics import BUSY_UTILIZATION
from sim.phases import TTFT_PROMPT_TOKENS, ttft_curve, two_phases
from ui import format as fmt
from ui.cost_text import assumption_lines, step_model_md
from ui.feasibility import fits, fits_or_say, fits_or_stop
from ui.fig_phases import busy_figure, gap_figure, operator_figure, phases_table, roofline_figure, ttft_figure
from ui.glossary import define
from ui.layout import chart, data_expander, header, how_computed, metric_row, next_link, stop_page
from ui.measured import explain_gap, predictions, roofline_points, roofline_trace, summary, ttft_trace
from ui.setup import current_setup
from ui.sim_cache import page_cache

POW2 = [2**i for i in range(0, 16)]


# The step model's results and the figures drawn from them, once per setup and setting, as pages 01-04
# keep theirs: a reader moving a control back and forth, or many opening the same link, ask for the
# same ones again (about a third of this page's run). Only what the main chart needs is computed
# before it is sent; the rest after. Shared by every reader: the results are frozen and the lists
# tuples, and ``ui.layout.chart`` only sets a figure's margins and encoding, under its lock.
@page_cache("phases._main", 32)
def _main(_setup, setup_key: str, batch: int, prompt: int, context: int) -> tuple:
    """The two phases at this batch, prompt and context on one setup (``setup_key`` stands for the
    unhashed ``_setup``), the measured runs on the setup, and the roofline figure."""
    r = two_phases(_setup.gpu, _setup.model, prompt, batch, context, _setup.assumptions)
    measured = tuple(roofline_points(_setup))
    why_not = ("does not fit in memory" if _setup.model.reads(context + 1) else
               f"longer than the {_setup.model.max_positions:,} positions the model reads")
    return r, measured, roofline_figure(r, _setup.gpu, _setup.model, _setup.assumptions,
                                        roofline_trace(list(measured)),
                                        decode_fits=fits(_setup, batch, context + 1), why_not=why_not)


@page_cache("phases._steps", 32)
def _step_figures(_r, setup_key: str, batch: int, prompt: int, context: int) -> tuple:
    """Which unit works, and the operators' shares, for ``_main``'s result at the same key."""
    return busy_figure(_r), operator_figure(_r)


@page_cache("phases._ttft", 16)
def _ttft(_setup, setup_key: str, prompt: int) -> tuple:
    """One prompt's TTFT curve on an idle server, the value at ``prompt``, the setup's measured TTFT
    runs, and the figure."""
    # Only prompts the model reads: past its positions an engine refuses them (GPT-J: 2,048).
    prompts = sorted(p for p in {*TTFT_PROMPT_TOKENS, prompt} if _setup.model.reads(p))
    curve = ttft_curve(_setup.gpu, _setup.model, prompts, _setup.assumptions)
    ttft_here = curve.ttft_at(prompt)
    runs = tuple(predictions(_setup, ("ttft_ms",)))
    return curve, ttft_here, runs, ttft_figure(curve, prompt, ttft_here, ttft_trace(list(runs)))


@page_cache("phases._gap", 32)
def _gap(_setup, setup_key: str, phase: str, batch: int, prompt: int, context: int, _measured) -> tuple:
    """The waterfall from the roofline floor to the estimate (``ui.measured.explain_gap``) and its
    figure; ``_measured`` are the setup's measured points, which ``setup_key`` stands for."""
    ex = explain_gap(_setup, phase, batch=batch, context=context, prompt=prompt, points=list(_measured))
    return ex, gap_figure(ex.gap, ex.measured_s, f"Measured ({ex.row.id})" if ex.row else "Measured")


header("00", "Two phases, two very different machines", """
**Prefill** keeps the tensor cores busy; **decode** reads every weight to make one token a step, and
they wait on memory. Move the batch and watch the two points.
""", prefix="phases")

setup = current_setup()
# One row that does not stack on a phone (st.columns would put the chart a screen lower there).
with st.container(horizontal=True, gap="small", key="phases_controls"):
    batch = st.select_slider("Decode batch", POW2[:11], value=1, key="phases_batch", bind="query-params",
                             help="Sequences decoding together: one token each per step.")
    prompt = st.select_slider("Prompt, tokens", [p for p in POW2 if p >= 64], value=2048,
                              key="phases_prompt", bind="query-params",
                              help="Prompt length: the tokens one prefill pass processes.")
    context = st.select_slider("Context, tokens", [p for p in POW2 if p >= 64], value=512,
                               key="phases_context", bind="query-params",
                               help="Tokens already cached for each decoding sequence.")

fits_or_stop(setup, 1, prompt, f"Prefill of one {prompt:,}-token prompt",
             levers="Shorten the prompt on this page")
# A decode batch that does not fit (the batch slider reaches past what fits: that is a lesson) keeps
# the roofline, its point hollow and labelled, under the notice; the page's numbers for it stop there.
decode_fits = fits_or_say(setup, batch, context + 1,
                          f"Decode of {fmt.counted(batch, 'sequence')} at {context:,} cached tokens, each "
                          "writing one more", levers="Lower the batch or the context on this page")
setup_key = repr(setup)
r, measured, roofline = _main(setup, setup_key, batch, prompt, context)
# The first whole batch at or past the crossover (256.2 read "256" beside "past what runs, 256"); at
# least 1; inf: never.
crossover = max(math.ceil(r.compute_bound_batch), 1) if math.isfinite(r.compute_bound_batch) else math.inf

# The roofline beside its headline numbers (a phone stacks them: the chart comes first).
left, right = st.columns([1.7, 1], vertical_alignment="center")
with left:
    chart(
        roofline, key="phases_roofline", send_first=True, legend_at="below",
        title=f"Roofline of the {setup.gpu.name}: where each phase lands",
        alt=f"Roofline of the {setup.gpu.name}: prefill at {float(r.prefill.intensity[0]):.0f} FLOP/B "
            f"reaches {float(r.prefill.mfu[0]):.0%} of peak; "
            + (f"decode at {fmt.sig(float(r.decode.intensity[0]))} FLOP/B reaches "
               f"{float(r.decode.mfu[0]):.2%}" if decode_fits else
               f"decode at batch {batch:,} "
               + ("does not fit in memory" if setup.model.reads(context + 1)
                  else "is longer than the model reads") + " (drawn hollow, where it would sit)")
            + f"; ridge at {r.ridge_point:.0f} FLOP/B "
            f"({setup.gpu.math_precision(setup.model.compute_precision).upper()} math)"
            + (f"; {fmt.counted(len(measured), 'measured engine run')} drawn as crosses." if measured
               else "."),
    )
    st.caption(
        f"✕ = an engine's measured run on this setup ({', '.join(sorted({p.row.id for p in measured}))}; "
        "hover for its conditions and the model's error)." if measured else
        "No measured run in measured.csv matches this setup (GPU, model, precisions, GPU count).")
with right, metric_row():
    no_fit = "does not fit"
    st.metric("nvidia-smi util, decode", fmt.percent(r.decode_utilization_gpu) if decode_fits else no_fit,
              border=True, help=define("GPU utilization (utilization.gpu)"))
    st.metric("MFU, decode", fmt.percent(float(r.decode.mfu[0])) if decode_fits else no_fit, border=True,
              help=define("MFU"))
    st.metric("Decode throughput", fmt.rate(r.decode_tokens_per_s) if decode_fits else no_fit, border=True,
              help="Output tokens per second of the whole batch (one per sequence per step).")
    st.metric("MFU, prefill", fmt.percent(float(r.prefill.mfu[0])), border=True)
if not decode_fits:
    stop_page()
graph_max = setup.assumptions.cuda_graph_max_tokens
if setup.assumptions.cuda_graphs and batch > graph_max:  # past the capture size each kernel pays its launch
    at_max = graph_max / float(decode_step_cost(setup.gpu, setup.model, graph_max, context,
                                                 setup.assumptions).time_s[()])
    st.caption(
        f"Batch {batch:,} is past the {graph_max}-token CUDA-graph capture size (vLLM's default): the step "
        f"launches its kernels one by one, each at least {setup.assumptions.kernel_launch_s * 1e6:.0f} µs of "
        "CPU time the graph hid. "
        + (f"Here that costs more than the batch gains: {fmt.rate(r.decode_tokens_per_s)} against "
           f"{fmt.rate(at_max)} at batch {graph_max} (a larger capture size, or a smaller batch, avoids it)."
           if r.decode_tokens_per_s < at_max else
           f"Here the larger batch still gains more than the launches cost: "
           f"{fmt.rate(r.decode_tokens_per_s)} against {fmt.rate(at_max)} at batch {graph_max}."))

st.markdown("""
Generating from an LLM is two workloads wearing one costume. Prefill pushes the whole prompt through
in one pass: a fat matmul that keeps the tensor cores busy (*compute-bound*, right of the ridge).
Decode then makes one token per step, and every step reads all the weights and the whole KV cache
to do it (*memory-bound*, left of the ridge). Batching more sequences into a decode step reuses each
weight read for more tokens and slides the decode point right, until the KV cache's own reads catch up.
""" + ("The dashed line is what the GPU achieves: it flattens at its own knee, left of the spec "
        "sheet's ridge here, so a step between the two is already compute-bound."
        if r.knee_apart < 0 else
        "The dashed line is what the GPU achieves with the sidebar's efficiencies: the page's "
        "compute-bound verdicts are against its knee."))
with metric_row():
    chunk = engine_max_batched_tokens(setup.gpu)
    chunked = prompt > chunk
    in_chunks = _ttft(setup, setup_key, prompt)[1] if chunked else None
    extra = ("" if not chunked or fmt.seconds(in_chunks) != fmt.seconds(r.prefill_time_s)
             else f" (+{fmt.seconds(in_chunks - r.prefill_time_s)})")  # the same when rounded: by how much
    st.metric("Prefill time", fmt.seconds(r.prefill_time_s), border=True,
              delta=f"in {chunk:,}-token chunks: {fmt.seconds(in_chunks)}{extra}"
              if chunked else None, delta_color="off", delta_arrow="off",
              help=f"One pass over the {prompt:,}-token prompt, as the roofline's prefill point prices it; "
                   f"bound by {'memory' if r.prefill.memory_bound[0] else 'compute'}."
                   + (f" An engine runs a prompt this long in steps of at most {chunk:,} tokens (vLLM's "
                      f"max_num_batched_tokens on the {setup.gpu.name}), each reading the weights again and "
                      "paying its host time: the delta, one request's TTFT on an idle server, as the TTFT "
                      "chart below draws it." if chunked else ""))
    st.metric("Decode step", fmt.seconds(r.decode_step_s), border=True,
              help="One token for each of the batch's sequences.")
    st.metric("MBU, decode", fmt.percent(float(r.decode.mbu[0])), border=True, help=define("MBU"))
    fit_max = memory_plan(setup.gpu, setup.model, 1, context + 1).max_batch
    runs_max = min(fit_max, engine_max_seqs(setup.gpu))  # the engine runs at most its max_num_seqs
    past_fit = math.isfinite(crossover) and crossover > runs_max
    st.metric("Compute-bound from batch", fmt.count(crossover),
              border=True, delta=(f"past what fits: ≤ {fmt.count(fit_max)}" if runs_max == fit_max else
                                  f"past what runs: ≤ {fmt.count(runs_max)}") if past_fit else None,
              delta_color="off", delta_arrow="off",
              help=f"At {context:,} cached tokens per sequence: where the decode step's math "
                   "time reaches its HBM time (weights, KV cache, each operator's activations in and out "
                   "and, for a mixture of experts, the experts the batch's tokens reach; all-reduces are "
                   "the link's time)"
                   + ((f"; at this context at most {fmt.count(fit_max)} sequences fit on the card"
                       if runs_max == fit_max else
                       f"; the engine decodes at most {fmt.count(runs_max)} at once (its max_num_seqs)")
                      + ", so here decode stays memory-bound at every batch that can run" if past_fit else "")
                   + ". 'never': each extra sequence brings more KV-cache bytes than math, so memory "
                     "stays the limit.")
if r.prefill.memory_bound[0]:
    m = setup.model
    share = prompt * m.experts_per_token / m.n_experts if m.n_experts else 0.0
    st.caption(
        "**Here prefill is memory-bound**: "
        + (f"each of {m.name}'s {m.n_experts} experts sees about {share:,.0f} of the prompt's tokens, "
           "too few to reuse its weights' reads" if m.n_experts else
           f"{fmt.a_count(prompt)}-token prompt does too little math per weight read")
        + ("; a longer prompt moves it right of the ridge." if prompt < POW2[-1] else
           f": even the longest prompt here ({prompt:,} tokens) stays left of this GPU's ridge."))


def _expert_layouts(setup, batch: int, context: int) -> str:
    """The two ways of laying the experts over the GPUs, compared at this batch (sidebar control)."""
    m = setup.model
    try:
        split, whole = m.with_tp(m.tp, False), m.with_tp(m.tp, True)
        steps = {x.expert_parallel: float(decode_step_cost(setup.gpu, x, batch, context,
                                                           setup.assumptions).time_s)
                 for x in (split, whole)}
    except ValueError:  # the experts, or their width, do not divide over these GPUs: one layout
        return ""
    reads = {x.expert_parallel: float(x.expert_reads(batch)) / m.tp for x in (split, whole)}
    now = "whole (EP)" if m.expert_parallel else "split (TP)"
    return (f"On {m.tp} GPUs, split by width (TP) each GPU reads its 1/{m.tp} of every touched expert, "
            f"{reads[False]:.1f} experts' worth a layer; spread whole (EP) the slowest GPU reads "
            f"{reads[True]:.1f}: a decode step of {fmt.seconds(steps[True])} against "
            f"{fmt.seconds(steps[False])} split. Shown: {now}.")


model = setup.model
if model.n_experts:
    touched = float(model.experts_touched(batch))
    nearly_all = model.tokens_to_touch(0.95)
    # Against the step's own compute-bound batch (the metric above), not one GEMM's ridge: with 4-bit
    # experts the weight GEMMs can reach their ridge before the experts are all touched.
    before = ("while its steps stay memory-bound at every batch" if not math.isfinite(crossover) else
              "long before the step turns compute-bound" if nearly_all < crossover / 2 else
              "before the step turns compute-bound" if nearly_all < crossover else
              "and the step turns compute-bound about then" if nearly_all <= 1.5 * crossover else
              "only after the step has turned compute-bound")
    routing = ("uniform routing, E(1 − (1 − k/E)^B)" if not model.routing_skew else
               f"routing skew {model.routing_skew:g}: the r-th most popular expert's share ∝ r^−"
               f"{model.routing_skew:g}, Σ_e 1 − (1 − π_e)^B")
    st.caption(
        f"**Mixture of experts.** Each token runs {model.experts_per_token} of {model.n_experts} "
        f"experts, but a step reads every expert its tokens touch: {touched:.1f} of "
        f"{model.n_experts} a layer at batch {batch} ({routing}). Batch-1 "
        "decode reads only the active experts; by batch "
        f"~{fmt.count(nearly_all)} it reads nearly all of them (95 %), so the model stops looking like "
        f"its active size {before}"
        + (f" (batch {fmt.count(crossover)})." if math.isfinite(crossover) else ".")
        + (" " + _expert_layouts(setup, batch, context) if model.tp > 1 else ""))

busy, operators = _step_figures(r, setup_key, batch, prompt, context)
chart(
    busy, key="phases_busy", title="Which unit works: tensor cores vs memory, per step",
    alt=f"Prefill keeps the tensor cores busy {float(r.prefill.compute_time_s[0] / r.prefill.time_s[0]):.0%} "
        f"of its step; decode keeps them busy "
        f"{float(r.decode.compute_time_s[0] / r.decode.time_s[0]):.1%} and the memory "
        f"{float(r.decode.memory_time_s[0] / r.decode.time_s[0]):.0%}.",
)
st.caption(f"A unit's share here is its work at the rate kernels achieve (the sidebar's efficiencies) over "
           f"the step's time. MFU and MBU divide the same work by the spec sheet's peak, so they read "
           f"lower: prefill's tensor cores work "
           f"{float(r.prefill.compute_time_s[0] / r.prefill.time_s[0]):.0%} of its step at "
           f"{fmt.percent(float(r.prefill.mfu[0]))} MFU, decode's memory "
           f"{float(r.decode.memory_time_s[0] / r.decode.time_s[0]):.0%} at "
           f"{fmt.percent(float(r.decode.mbu[0]))} MBU. nvidia-smi's utilization is neither: a kernel "
           "running at all.")

dec, pre = r.operator_shares("decode"), r.operator_shares("prefill")
chart(
    operators, key="phases_operators", title="Where each step's time goes, operator by operator",
    alt=f"Decode at batch {batch}: the MLP takes {dec['mlp']:.0%} of the step, attention "
        f"{dec['attention']:.0%}, the LM head {dec['lm_head']:.0%}; in prefill the MLP takes "
        f"{pre['mlp']:.0%} and attention {pre['attention']:.0%}.",
)

curve, ttft_here, ttft_runs, ttft_fig = _ttft(setup, setup_key, prompt)
chart(
    ttft_fig, key="phases_ttft",
    title="Time to first token as the prompt grows",
    alt=f"Time to first token of one prompt on an idle {setup.gpu.name}: {fmt.seconds(ttft_here)} at "
        f"{prompt:,} tokens, from {fmt.seconds(float(curve.ttft_s[0]))} at {int(curve.prompt_tokens[0]):,} "
        f"to {fmt.seconds(float(curve.ttft_s[-1]))} at {int(curve.prompt_tokens[-1]):,}"
        + (f"; {fmt.counted(len(ttft_runs), 'measured run')} drawn as crosses." if ttft_runs else "."),
)
st.caption(
    f"One request on an idle server: its prefill, in steps of at most {curve.chunk_tokens:,} tokens "
    f"(vLLM's default max_num_batched_tokens on the {setup.gpu.name}: {MAX_BATCHED_TOKENS:,} on cards "
    f"of {LARGE_GPU_BYTES / GiB:.0f} GiB or more but the A100, {MAX_BATCHED_TOKENS_DEFAULT:,} on the rest), "
    "each paying "
    "its host time. A short prompt costs about one "
    "read of the weights its tokens use (for a mixture of experts, every expert they touch, so several "
    "decode steps' worth); past the ridge TTFT grows with the prompt, and its attention with the prompt "
    "squared. Under load a request also waits in the queue: that is section 05. "
    + summary(ttft_runs, "TTFT measurement"))

st.markdown("#### The gap, explained")
# A radio, not a segmented control: a segmented control can be left with nothing selected (a click
# on the chosen segment, or a link with ``phases_gap=``), and the waterfall always explains one step.
gap_phase = st.radio("Step", ["Decode", "Prefill"], index=0, horizontal=True, key="phases_gap",
                     bind="query-params", help="Which step the waterfall explains.")
ex, gap_fig = _gap(setup, setup_key, gap_phase, batch, prompt, context, measured)
g = ex.gap
top_stage = max(g.steps_s, key=g.steps_s.get)
chart(
    gap_fig, key="phases_gap_chart",
    title=f"From the roofline floor to the estimate: {gap_phase.lower()}, {ex.where}",
    alt=f"Waterfall: the roofline floor {fmt.seconds(g.floor_s)}, the model's estimate "
        f"{fmt.seconds(g.estimate_s)}; the largest step is {top_stage} "
        f"({g.shares()[top_stage]:.0%} of the gap)"
        + (f"; measured {fmt.seconds(ex.measured_s)}." if ex.measured_s else "."),
)
st.caption("Each bar is one named assumption, added in the order the model applies them; they sum to "
           f"the estimate. {ex.note}")

dgap = explain_decode(setup.gpu, setup.model, batch, context, setup.assumptions)
dtop = max(dgap.steps_s, key=dgap.steps_s.get)  # the assumption adding the most to the decode step
dshare = dgap.shares()[dtop]
kv_led = float(r.decode.kv_time_s[0]) > float(r.decode.weight_time_s[0])
idle = fmt.percent(1 - r.decode_utilization_gpu)  # the host's share of the step: no kernel runs
running = ("a kernel is always running (no host time between steps at these settings)"
           if r.decode_utilization_gpu >= 0.9995 else
           f"a kernel is almost always running (all but the host's {idle} between steps)"
           if r.decode_utilization_gpu >= BUSY_UTILIZATION else
           f"a kernel is running except in the host's time between steps ({idle} of it)")
# At the engine's largest batch (its max_num_seqs) more batching is not on offer.
at_engine_max = batch >= engine_max_seqs(setup.gpu)
fixed_s = dgap.steps_s["kernel and host costs"]  # launches, each kernel's fixed cost, the host's time
fixed_share = fixed_s / dgap.estimate_s if dgap.estimate_s > 0 else 0.0
if r.decode.memory_bound[0] and fixed_share >= 0.5:  # a tiny step: mostly fixed costs, not memory
    thesis = (f"**The thesis in miniature.** During decode `nvidia-smi` would read "
              f"**{fmt.percent(r.decode_utilization_gpu)}** busy, while the tensor cores deliver "
              f"**{fmt.percent(float(r.decode.mfu[0]))}** of what they could: {running}. This step is so "
              "small that most of it is fixed cost, not memory: the kernels' fixed costs and the host's time "
              f"take {fmt.seconds(fixed_s)} of its {fmt.seconds(dgap.estimate_s)} ({fixed_share:.0%}; the "
              "waterfall's kernel and host costs), the weight and KV reads most of the rest. "
              + ("Batching (next section) spreads both over more tokens." if not at_engine_max else
                 f"Batch {batch:,} is already the most the engine runs at once, so a larger model per GPU or "
                 "fewer GPUs would use the card better."))
elif r.decode.memory_bound[0] and not kv_led:
    thesis = (f"**The thesis in miniature.** During decode `nvidia-smi` would read "
              f"**{fmt.percent(r.decode_utilization_gpu)}** busy, while the tensor cores deliver "
              f"**{fmt.percent(float(r.decode.mfu[0]))}** of what they could. Both numbers are true: "
              f"{running}, and it is waiting on memory. "
              + ("Batching (next section) is how servers claw the difference back." if not at_engine_max
                 else f"Batch {batch:,} is already the most the engine runs at once (vLLM's max_num_seqs "
                      f"on this card), so more batching is not on offer: fewer bytes a step are (smaller "
                      "weights"
                      + (", experts spread over GPUs" if setup.model.n_experts else "")
                      + "), or more tokens a pass (speculative decoding, section 03)."))
elif r.decode.memory_bound[0]:
    thesis = (f"**The thesis in miniature.** During decode `nvidia-smi` would read "
              f"**{fmt.percent(r.decode_utilization_gpu)}** busy, while the tensor cores deliver "
              f"**{fmt.percent(float(r.decode.mfu[0]))}** of what they could: {running}, waiting on "
              f"memory. At batch {batch:,} and {context:,} tokens of context it waits mostly on the KV "
              "cache's reads; each sequence has its own, so a bigger batch does not share them. "
              + (("Shorter contexts or an FP8 KV cache shrink them" if setup.model.kv_dtype != "fp8" else
                  "Shorter contexts shrink them") + "; MLA already stores one latent a token for all heads."
                 if setup.model.kv_lora_rank else
                 "Shorter contexts or a smaller KV cache shrink them ("
                 + ("an FP8 KV cache, or " if setup.model.kv_dtype != "fp8" else "")
                 + "a model with fewer KV heads: GQA or MLA)."))
else:
    thesis = (f"**The thesis in miniature.** During decode `nvidia-smi` would read "
              f"**{fmt.percent(r.decode_utilization_gpu)}** busy, and at batch {batch:,} the tensor cores "
              f"deliver **{fmt.percent(float(r.decode.mfu[0]))}** of their peak: past the crossover (batch "
              f"{fmt.count(crossover)} here) decode is compute-bound. What keeps it from the peak is, "
              f"above all, {dtop} ({dshare:.0%} of the way from the roofline floor to this step"
              + (", the waterfall above" if gap_phase == "Decode" else "; the waterfall's Decode step")
              + (("). Drag the batch back to 1 to see the two numbers part: that gap, memory "
                  "waits under a busy reading, is what batching (next section) claws back.")
                 if crossover > 1 else
                 "). On this GPU decode is compute-bound at every batch, one sequence included: its "
                 "bandwidth outruns its math."))
st.info(thesis, icon=":material/lightbulb:")

how_computed(
    step_model_md(setup.model) + r"""
Prefill is one step with $q$ = the prompt length, $c = 0$, sampling once; decode is $q = 1$ per
sequence. The arithmetic intensity is FLOP / bytes; the ridge point is $F_\text{spec}/B_\text{spec}$,
the spec sheet's peaks; the achievable line's knee is the achieved GEMM rate over the achieved
bandwidth, and the page's compute-bound verdicts (a step's math time against its memory time) are
against it.
""",
    assumptions=[
        *assumption_lines(setup.assumptions),
        f"They give {CALIBRATION_MODEL} at batch 1 on {CALIBRATION_GPU} "
        f"{fmt.seconds(calibration_step_s(setup.assumptions))} a token; SGLang measured "
        f"{fmt.seconds(CALIBRATION_MEASURED_S)}.",
        f"Here the weights' {setup.model.weight_dtype.upper()} GEMMs run "
        f"{setup.gpu.math_precision(setup.model.compute_precision).upper()} math on the {setup.gpu.name}: "
        "FP8 and FP4 weights run their own math where the GPU has tensor cores for it, else weight-only "
        "(BF16 math), as INT8 and INT4 always do; the embedding and LM head stay BF16.",
        "Sliding-window and chunked-attention layers (Mistral-7B, gpt-oss, Llama 4) read and hold at most "
        "their window's KV: past it, their share of the step stops growing with the context.",
        "Tensor parallelism (the sidebar's GPUs per replica) splits weights and KV heads and adds two "
        "all-reduces a layer; memory, MFU, MBU and utilization are per GPU. A setup that does not fit "
        "is refused with the numbers of what is missing.",
        "Measured points: the rows of measured.csv run on exactly this setup, placed as the step the "
        "model counts (a static batch at its mean context), at the FLOP/s the engine's time gives; on "
        "the TTFT chart, measured TTFTs at their prompt length.",
        f"TTFT: one request on an idle server, its prefill in steps of at most {curve.chunk_tokens:,} "
        "tokens, each step with its kernel and host costs (no queueing: under load that is section 05).",
    ],
    sources=[
        f"{setup.gpu.name}: {setup.gpu.source}.",
        f"{setup.model.name}: {setup.model.source}.",
        "Measured decode latency: EAGLE-3 paper (arXiv 2503.01840), Table 4: Llama-3.1-8B on H100, "
        "SGLang, 158.34 tok/s.",
        "utilization.gpu definition: NVML API reference, nvmlUtilization_t.",
    ],
)
data_expander(lambda: {"Prefill vs decode step": phases_table(r)}, key="phases_data")
next_link(__file__)
