"""02 · PagedAttention: reserved vs paged KV cache on a 64-page pool, and chunked prefill."""

import math

import streamlit as st

from sim.chunked import DEFAULT_CONTEXT_TOKENS as CHUNK_CONTEXT
from sim.cost import decode_step_cost, gemm_ridge_batch
from sim.memory import fit_levers, memory_plan
from sim.paging import (
    CARD_N_REQUESTS,
    DEFAULT_MEMORY_UTILIZATION,
    DEFAULT_N_PAGES,
    DEFAULT_N_REQUESTS,
    DEFAULT_N_STEPS,
    DEFAULT_PAGE_TOKENS,
    POOL_TOKENS,
    WORKLOADS,
)
from ui import format as fmt
from ui import sim_cache
from ui.feasibility import fits_or_say, reads_or_say, windowed_layers_note
from ui.fig_paging import (
    card_figure,
    card_table,
    chunked_figure,
    chunked_table,
    ledger_figure,
    pages_table,
    pool_figure,
    pool_title,
    resident_figure,
    steps_table,
)
from ui.layout import chart, data_expander, header, how_computed, metric_slots, next_link
from ui.measured import batch_trace, offline_points, offline_traces, predictions, summary
from ui.setup import current_setup
from ui.sim_cache import view

PAGE_SIZES = [8, 16, 32, 64]
MAX_OUTPUTS = [64, 128, 256, 512, 1024]
CARD_MAX_OUTPUTS = [512, 1024, 2048, 4096, 8192]
PROMPTS = [1024, 2048, 4096, 8192, 16384, 32768]
BATCHES = [1, 2, 4, 8, 16, 32, 64, 128, 256]
CHUNKS = [64, 128, 256, 512, 1024, 2048, 4096, 8192]
DEFAULT_STEP = 120  # mid-run: the start-up burst has settled and the queue is still full


header("02", "Fitting more requests: PagedAttention", """
The KV cache limits the batch. Reserving each request's cache for its longest possible answer leaves
most of it empty; **PagedAttention** (vLLM) hands out small pages as tokens arrive. Flip it and watch
the pool.
""", prefix="paging")

setup = current_setup()
if not memory_plan(setup.gpu, setup.model, 0, 0).weights_fit:  # the pool is a toy; the card is not
    where = memory_plan(setup.gpu, setup.model, 0, 0).where
    st.warning(f"**{setup.model.name} does not fit on {where}**, so no number on this page is "
               f"for this setup. The pool just below is a toy, the same for every GPU "
               "and model; "
               "*On a real card* further down says by how much the model does not fit.",
               icon=":material/memory_alt:")
# One row that does not stack on a phone: the switch, the step and the pool on one screen.
controls = st.container(horizontal=True, wrap=False, vertical_alignment="center", gap="medium")
paged = controls.toggle("PagedAttention", value=False, key="paging_paged", bind="query-params",
                  help="Off: each request reserves contiguous pages for its prompt plus the maximum "
                       "output length. On: pages are handed out as tokens arrive.", width="content")
# Integer sliders are select sliders: a bound st.slider truncates a linked "2.5" to 2 without a word.
step = controls.select_slider("Step of the run", list(range(DEFAULT_N_STEPS)), value=DEFAULT_STEP,
                        key="paging_step", bind="query-params")
# The pool's own knobs sit below it: the containers are placed first, filled after the knobs are read.
left, right = st.columns([1.1, 1])
settings = st.container(horizontal=True, wrap=True, gap="medium")
page_tokens = settings.select_slider("Page size, tokens", PAGE_SIZES, value=16, key="paging_page_tokens",
                                     bind="query-params", width=260)
max_output = settings.select_slider("Max output length, tokens", MAX_OUTPUTS, value=256,
                                    key="paging_max_output", bind="query-params", width=300,
                                    help="What the reserved policy must set aside for every request.")

cmp = sim_cache.paging_compare(page_tokens, max_output)  # cached per process
pool_key = (page_tokens, max_output, step)
policy, other = ("paged", "reserved") if paged else ("reserved", "paged")
run, alt = cmp.run(policy), cmp.run(other)

with left:
    chart(
        view("pool", (*pool_key, policy), lambda: pool_figure(run, step)), key="paging_pool", send_first=True,
        legend_at="below",
        title=pool_title(run, step),
        alt=f"The {run.n_pages}-page pool under the {policy} policy at step {step}: "
            f"{int(run.resident[step])} requests resident, {float(run.token_share[step]):.0%} of the slots "
            f"hold tokens.",
    )
with right:
    m = metric_slots(4)
    m[0].metric("Requests resident", f"{int(run.resident[step])}", border=True,
                delta=f"{int(run.resident[step]) - int(alt.resident[step]):+d} vs {other}", delta_color="off",
                help=f"Requests holding cache pages at step {step}. Run average: {run.mean_resident:.1f} "
                     f"({other}: {alt.mean_resident:.1f}).")
    m[1].metric("Token-state share", fmt.percent(float(run.token_share[step])), border=True,
                delta=f"{100 * float(run.token_share[step] - alt.token_share[step]):+.0f} pp vs {other}",
                delta_color="off",
                help="Share of the pool's token slots that hold a cached token at this step: the rest is "
                     "reserved and still empty, slack in last pages, or free.")
    m[2].metric("Requests waiting", f"{int(run.waiting[step])}", border=True,
                help="Queued behind the head of the line (the whole backlog arrives at step 0).")
    m[3].metric("Preemptions so far", f"{int(run.preempted[: step + 1].sum())}", border=True,
                help="Paged only: when a sequence needs a page and none is free, the most recently "
                     "admitted request gives up its pages and goes back to the queue (its cache is "
                     "recomputed).")
    share = {p: cmp.run(p).mean_token_share for p in ("reserved", "paged")}
    chart(
        view("ledger", pool_key, lambda: ledger_figure(cmp, step)), key="paging_ledger", legend_at="above",
        alt=f"Ledger of the pool. Over the run, token states fill {share['reserved']:.0%} of it under "
            f"reserved and {share['paged']:.0%} under paged.",
    )
rejected = int(cmp.reserved.rejected.sum())
if rejected:
    st.warning(f"{rejected} of {cmp.reserved.rejected.size} requests need a reservation larger than the "
               f"whole pool ({run.n_pages} × {page_tokens} tokens) and are turned away by the reserved "
               "policy. Paged serves them.", icon=":material/block:")
chart(
    view("resident", pool_key, lambda: resident_figure(cmp, step)), key="paging_resident",
    alt=f"Requests resident over the run: {cmp.reserved.mean_resident:.1f} on average under reserved, "
        f"{cmp.paged.mean_resident:.1f} under paged.",
)
st.markdown("""
The old way gave each request one contiguous slab of cache sized for the *longest* answer it might
give: most of it sat empty, and the gaps between slabs were too short for the next request.
PagedAttention does what an operating system does with virtual memory: the cache is cut into small
pages, handed out as tokens arrive and found through a page table.
""")

r_res, p_res = cmp.reserved.mean_resident, cmp.paged.mean_resident
ratio = f" (**{p_res / r_res:.1f}×**)" if r_res > 0 else ""
st.info(
    (f"**Same pool, same requests.** Reserving for the maximum keeps **{r_res:.1f}** requests resident on "
     f"average; paging keeps **{p_res:.1f}**{ratio}. Under reservation only "
     f"**{fmt.percent(share['reserved'], 0)}** of the memory holds tokens: the rest is reserved for answers "
     f"not yet written (or never), free but stranded between reservations, or free but too little for "
     f"the next one. " if r_res > 0 else
     f"**Same pool, same requests.** Reserving for the maximum admits no request at all: each needs room "
     f"for its prompt and {max_output:,} output tokens in contiguous pages, more than the whole "
     f"{POOL_TOKENS:,}-token pool, so the pool stays empty while paging keeps **{p_res:.1f}** resident. ")
    + f"Paged memory is **{fmt.percent(share['paged'], 0)}** tokens; the remainder is mostly "
    "the unfilled end of each sequence's last page, and the price is preemption when the pool runs dry.",
    icon=":material/lightbulb:",
)

st.subheader("On a real card")
card_max = st.select_slider("Max output length on the card, tokens", CARD_MAX_OUTPUTS, value=2048,
                            key="paging_card_max_output", bind="query-params")
fit = sim_cache.card_fit(setup.gpu, setup.model, page_tokens, card_max, setup.assumptions)
st.markdown(
    f"The same two policies on {setup.on} serving {setup.model.name}, with ShareGPT-like "
    f"requests (prompts of {WORKLOADS['sharegpt'].prompt_mean:.0f} tokens on average, answers of "
    f"{WORKLOADS['sharegpt'].output_mean:.0f}) and {page_tokens}-token pages. The KV cache gets what "
    f"the weights and the engine's start-up reserve leave of {DEFAULT_MEMORY_UTILIZATION:.0%} of the "
    "card's memory."
    + (f" {fit.dropped_requests:,} of the workload's requests are left out: with room for {card_max:,} "
       f"output tokens they are longer than the {setup.model.max_positions:,} positions "
       f"{setup.model.name} reads, and an engine refuses them."
       if fit.dropped_requests and setup.model.reads(fit.longest_request_tokens) else ""))
# The weights first (no length helps where they do not fit), then the model's positions.
card_reads = not fit.fits or reads_or_say(
    # Said only where no request is left (card_fit leaves out the longer ones): the shortest one's length.
    setup, fit.longest_request_tokens, f"Even the workload's shortest prompt with room for {card_max:,} "
    "output tokens",
    levers="Lower the max output length on this section", section=True)
if not card_reads:
    pass  # said above; no numbers
elif not fit.fits:
    st.error(
        f"**{setup.model.name} does not fit.** Its weights take {fmt.bytes_(fit.weight_bytes)}"
        + (f" a GPU (its share on {setup.model.tp} GPUs)" if setup.model.tp > 1 else "") + " and the "
        f"engine's start-up reserve (activations, the sampler's warm-up, CUDA context) "
        f"{fmt.bytes_(fit.reserve_bytes)}, more together than the {fmt.bytes_(fit.memory_bytes)} the "
        f"engine may use on {'the' if setup.model.tp == 1 else 'each'} {setup.gpu.name} "
        f"({DEFAULT_MEMORY_UTILIZATION:.0%} of {fmt.bytes_(setup.gpu.hbm_bytes)}): no room is left for a KV "
        f"cache. Pick {fit_levers(setup.gpu, setup.model, 1, page_tokens)} in the sidebar.",
        icon=":material/memory:",
    )
else:
    m = metric_slots(3)
    m[0].metric("KV-cache budget", fmt.bytes_(fit.kv_budget_bytes), border=True,
                help=f"{fmt.bytes_(fit.memory_bytes)} usable − {fmt.bytes_(fit.weight_bytes)} of weights − "
                     f"{fmt.bytes_(fit.reserve_bytes)} of start-up reserve = {fit.kv_budget_tokens:,.0f} "
                     f"tokens at {fit.kv_bytes_per_token / 1024:.0f} KiB each.")
    m[1].metric("Fit, reserved", fmt.count(fit.batch["reserved"]), border=True,
                help=f"Each holds {fit.slots_per_request['reserved']:,.0f} token slots for its whole life.")
    m[2].metric("Fit, paged", fmt.count(fit.batch["paged"]), border=True,
                delta=f"{fit.batch_gain:.1f}×" if fit.batch["reserved"] else None, delta_color="off",
                help=f"Each holds {fit.slots_per_request['paged']:,.0f} token slots on average over "
                     "its life.")
    m = metric_slots(3)
    def _batch_help(policy: str) -> str:
        n, b = fit.batch[policy], fit.run_batch[policy]
        if not b:
            return (f"No request fits: each holds {fit.slots_per_request[policy]:,.0f} token slots, the KV "
                    f"cache {fit.kv_budget_tokens:,.0f}.")
        return (f"Batch {b:,}" + (f" (of the {n:,} that fit: vLLM runs at most {fit.max_seqs:,} at once, its "
                                  "max_num_seqs on this GPU)" if b < n else "")
                + f": one decode step takes {fmt.seconds(fit.step_s[policy])}.")

    m[0].metric("Decode throughput, reserved",
                fmt.rate(fit.tokens_per_s["reserved"]) if fit.batch["reserved"] else "none fit", border=True,
                help=_batch_help("reserved"))
    m[1].metric("Decode throughput, paged", fmt.rate(fit.tokens_per_s["paged"]), border=True,
                delta=f"{fit.throughput_gain:.2f}×" if fit.batch["reserved"] else None, delta_color="off",
                help=_batch_help("paged"))
    # The first whole batch at or past the crossover (256.2 read "256" beside "past what runs, 256").
    cb = max(math.ceil(fit.compute_bound_batch), 1) if math.isfinite(fit.compute_bound_batch) else math.inf
    ridge = gemm_ridge_batch(setup.gpu, setup.model, setup.assumptions)
    runs_max = fit.run_batch["paged"]  # what fits paged, at most the engine's max_num_seqs
    past_fit = math.isfinite(cb) and cb > runs_max
    m[2].metric("Compute-bound from batch", fmt.count(cb), border=True,
                delta=(f"past what runs, {fmt.count(runs_max)}" if fit.capped else
                       f"past the paged fit, {fmt.count(runs_max)}") if past_fit else None,
                delta_color="off", delta_arrow="off",
                help=f"The whole decode step, at the mean context of {fit.context_tokens:,.0f} tokens: where "
                     "its math time reaches its memory time (section 00's figure at this context)"
                     + ((f"; more sequences than the {fmt.count(runs_max)} the engine decodes at once (its "
                         "max_num_seqs), so here decode stays memory-bound" if fit.capped else
                         f"; more sequences than the {fmt.count(runs_max)} that fit paged, so on this card "
                         "decode stays memory-bound") if past_fit else "") + ". "
                     + (f"The weight GEMMs get there first, from about {ridge:,.0f} sequences: there the "
                        "curve bends, and each extra sequence adds math as well as KV reads; "
                        if not setup.model.n_experts else "Attention's projections, which every token runs, "
                        "get there first (each expert sees only its share of the tokens); ")
                     + ("attention's KV reads stay memory-bound at any batch, which holds the whole step "
                        "back to this larger batch." if math.isfinite(cb) else
                        "attention's KV reads stay memory-bound at any batch, and at this context they keep "
                        "the whole step memory-bound at every batch."))
    windowed_layers_note(setup, "This section's pool counts a token of every layer a token slot, so "
                         "for this model it fits fewer requests than an engine whose cache keeps the "
                         "windowed layers apart: the fits shown are a lower bound.")
    runs = predictions(setup, ("static_batch_tok_s", "offline_tok_s", "tpot_ms"))
    offline = offline_points(setup, runs)
    chart(
        view("card", (repr(setup), page_tokens, card_max),
              lambda: card_figure(fit, batch_trace(runs), offline_traces(offline), setup.on)),
        key="paging_card",
        alt=f"Decode throughput against batch size on {setup.on}: reserved fits "
            f"{fit.batch['reserved']:,} requests for {fit.tokens_per_s['reserved']:,.0f} tok/s, paged "
            f"{fit.batch['paged']:,} for {fit.tokens_per_s['paged']:,.0f} tok/s"
            + (f" (at most {fit.max_seqs:,} decoding at once)." if fit.capped else "."),
    )
    st.caption(summary(runs) + (" ✕ = a static batch (prefill included, so below the decode-only "
                                "curve at short outputs)." if batch_trace(runs) else "")
               + (" An offline run (every request queued at once, prompts prefilled between decode "
                  "steps) is drawn at the batch the model runs it at (a ShareGPT-length run: its mean "
                  "batch, which shrinks as the long outputs finish): ✕ measured, ○ the model's value "
                  "for the same run (both include the prompts' prefill, which the decode-only curve "
                  "leaves out)." if offline else "")
               + (" TensorRT-LLM sizes its KV cache from the memory left after the weights "
                  f"(kv_cache_free_gpu_mem_fraction {DEFAULT_MEMORY_UTILIZATION:g}), not from "
                  f"{DEFAULT_MEMORY_UTILIZATION:.0%} of the card as this chart's budget does, so its "
                  "runs can sit past the shaded limit."
                  if any(pt.batch > fit.batch["paged"] for pt in offline) else ""))
    ys = fit.curve_tokens_per_s.tolist()
    dips = [x for x, y0, y1 in zip(fit.curve_batch.tolist()[1:], ys, ys[1:], strict=False) if y1 < y0]
    if setup.assumptions.cuda_graphs and dips and min(dips) > setup.assumptions.cuda_graph_max_tokens:
        st.caption(f"Past batch {setup.assumptions.cuda_graph_max_tokens} (vLLM's default CUDA-graph capture "
                   "size) a decode step runs without graphs and every kernel pays its launch: where that "
                   "costs more than the larger batch gains, the curve dips (section 00 shows the same).")
    ridge = gemm_ridge_batch(setup.gpu, setup.model, setup.assumptions)
    uncapped_gain = fit.uncapped_paged_tokens_per_s / fit.tokens_per_s["paged"]
    if not fit.batch["reserved"]:
        st.caption(f"**Only paging serves this card.** Reserving for the maximum fits no request: each "
                   f"reserves {fit.slots_per_request['reserved']:,.0f} token slots, and the KV cache holds "
                   f"{fit.kv_budget_tokens:,.0f}. Paged, {fmt.counted(fit.batch['paged'], 'request')} fit "
                   f"and decode at {fmt.rate(fit.tokens_per_s['paged'])}.")
    elif fit.capped and uncapped_gain >= 1.1:
        st.caption(f"**More fit than the engine runs.** Paging fits {fmt.count(fit.batch['paged'])} requests "
                   f"here and reserving {fmt.count(fit.batch['reserved'])}, but vLLM decodes at most "
                   f"{fit.max_seqs:,} at once (its max_num_seqs on this GPU): the rest wait in memory, so "
                   f"paging buys {fit.throughput_gain:.2f}× the tokens per second, not "
                   f"{fit.batch_gain:.1f}×. A deployment can raise the cap: with all "
                   f"{fmt.count(fit.batch['paged'])} decoding, {fmt.rate(fit.uncapped_paged_tokens_per_s)}.")
    elif fit.batch["paged"] > min(ridge, cb) and fit.throughput_gain < 1.5:
        # Where the paged batch's decode step goes: attention reading every sequence's KV cache, or the
        # weight GEMMs (read once a step, their math growing with the batch).
        paged_step = decode_step_cost(setup.gpu, setup.model, runs_max, fit.context_tokens, setup.assumptions)
        kv_s = float(paged_step.operators["attention"].time_s)
        gemm_s = sum(float(paged_step.operators[name].time_s) for name in ("qkv", "o_proj", "mlp", "lm_head"))
        step_s = float(paged_step.time_s)
        if kv_s >= gemm_s:
            why = (f"at its batch of {fmt.count(runs_max)} a decode step takes {fmt.seconds(step_s)}, "
                   f"{fmt.seconds(kv_s)} ({fmt.percent(kv_s / step_s, 0)}) of it attention reading each "
                   "sequence's KV cache, a cost every added sequence brings again, while the weights are "
                   "read once a step whatever the batch"
                   + (f"; past about {ridge:,.0f} sequences the weight GEMMs turn compute-bound too"
                      if ridge < runs_max else ""))
        else:
            why = (f"past about {min(ridge, cb):,.0f} sequences the "
                   + ("weight GEMMs turn compute-bound (the whole step, with attention's KV reads, "
                      + (f"only from batch {fmt.count(cb)}, the card above)" if math.isfinite(cb)
                         else "never does)") if ridge < cb
                      else "decode step turns compute-bound")
                   + ", and each extra sequence brings its own math and its own KV reads")
        st.caption(f"Paging fits {fit.batch_gain:.1f}× the requests but buys only "
                   f"{fit.throughput_gain:.2f}× the tokens per second here: " + why
                   + (f" (vLLM also decodes at most {fit.max_seqs:,} at once, but with all "
                      f"{fmt.count(fit.batch['paged'])} decoding paging's rate would rise only "
                      f"{fmt.percent(uncapped_gain - 1, 0)}, to "
                      f"{fit.uncapped_paged_tokens_per_s / fit.tokens_per_s['reserved']:.2f}× what "
                      "reserving buys)"
                      if fit.capped else "")
                   + ". Paging pays where the KV budget is tight: a bigger model, a smaller card, longer "
                   "requests.")
    elif fit.run_batch["paged"] > cb:
        st.caption(f"The payoff compounds with section 01: paging lets more requests be resident and "
                   f"continuous batching keeps their slots full. Here {fit.batch_gain:.1f}× the requests "
                   f"buy {fit.throughput_gain:.2f}× the tokens per second: decode is bound by reading the "
                   f"weights only up to about {cb:,.0f} sequences at this context, and past that each "
                   "extra sequence brings its own math.")
    else:
        st.caption("The payoff compounds with section 01: paging lets more requests be resident, "
                   "continuous batching keeps their slots full, and decode, bound by reading the weights "
                   "once per step, turns the bigger batch into more tokens per second.")

st.subheader("Chunked prefill: a long prompt without the stall")
st.markdown("""
Batching prefill with decode has a catch. When a long prompt arrives, the step that prefills it is
far longer than a decode step, and every user mid-answer waits for it. **Chunked prefill**
(Sarathi-Serve) slices the prompt into chunks that ride along with the decodes, one chunk a step:
the decoders' gaps stay short, and the prompt's own first token comes later, by what its extra
steps cost (Sarathi-Serve measured at most ~25 % at chunks of 512).
""")
# One row of three, as the pool's own knobs above (a row of columns is six more elements for the
# browser to render on every change on this page: README, "Speed").
chunk_knobs = st.container(horizontal=True, wrap=True, gap="medium")
prompt = chunk_knobs.select_slider("Long prompt, tokens", PROMPTS, value=8192, key="paging_prompt",
                                   bind="query-params")
batch = chunk_knobs.select_slider("Decode batch, sequences", BATCHES, value=32, key="paging_batch",
                                  bind="query-params")
chunk = chunk_knobs.select_slider("Chunk size, tokens", CHUNKS, value=512, key="paging_chunk",
                                  bind="query-params")
# A scenario of this section only: the pool and the card above keep their numbers where it does not fit.
chunk_fits = fits_or_say(
    setup, batch + 1, CHUNK_CONTEXT + prompt // (batch + 1) + 1,
    f"{fmt.counted(batch, 'sequence')} at {CHUNK_CONTEXT:,} tokens and {fmt.a_count(prompt)}-token prompt",
    levers="Lower the decode batch or the long prompt on this page", section=True,
) and reads_or_say(  # the decoders' 1,024 tokens are within every model's positions
    setup, max(prompt, CHUNK_CONTEXT) + 1, "The long prompt with its first token",
    levers="Shorten the long prompt on this page", section=True)
if chunk_fits:
    cp = sim_cache.chunked_prefill(setup.gpu, setup.model, prompt, batch, chunk,
                                   assumptions=setup.assumptions)

    m = metric_slots(4)
    m[0].metric("Worst gap, unchunked", fmt.seconds(cp.unchunked.worst_gap_s), border=True,
                help=f"The longest wait between two tokens of a decoding user. A decode-only step takes "
                     f"{fmt.seconds(cp.unchunked.decode_only_step_s)}.")
    m[1].metric("Worst gap, chunked", fmt.seconds(cp.chunked.worst_gap_s), border=True,
                delta=("same: one chunk holds the prompt" if cp.n_chunks == 1 else
                       f"{cp.gap_reduction:.1f}× shorter" if cp.gap_reduction >= 1.05 else
                       f"{1 / cp.gap_reduction:.1f}× longer" if cp.gap_reduction <= 1 / 1.05 else
                       "about the same"),
                delta_color="off", delta_arrow="off")
    m[2].metric("Prompt TTFT, chunked", fmt.seconds(cp.chunked.ttft_s), border=True,
                delta=f"unchunked {fmt.seconds(cp.unchunked.ttft_s)}", delta_color="off",
                help="From the prompt's first step to the end of its last prefill step.")
    m[3].metric("Prefill slowdown", fmt.percent(cp.prefill_slowdown), border=True,
                help=(f"How much longer the long prompt's first token takes chunked: {cp.n_chunks} steps "
                      "instead of one, each re-reading the weights and the cached prefix."
                      if cp.n_chunks > 1 else
                      "The prompt fits one chunk here, so chunking costs it nothing."))
    chart(
        view("chunked", (repr(setup), prompt, batch, chunk), lambda: chunked_figure(cp)),
        key="paging_chunked",
        alt=f"Step times around {fmt.a_count(prompt)}-token prompt with {batch} sequences decoding: "
            "unchunked, one "
            f"{cp.unchunked.worst_gap_s * 1e3:.0f} ms step stalls every decoder; in chunks of {chunk:,}, the "
            f"worst step is {cp.chunked.worst_gap_s * 1e3:.1f} ms and the prompt's first token comes "
            f"{cp.prefill_slowdown:.0%} later.",
    )
    graph_max = setup.assumptions.cuda_graph_max_tokens
    if cp.prefill_slowdown >= 0.35:
        st.caption(
            f"Here the prompt's first token comes **{cp.prefill_slowdown:.0%} later** chunked: each of its "
            f"{cp.n_chunks} steps re-reads the weights and pays a step's fixed costs"
            + (f" (a step of {chunk + batch:,} tokens is past the {graph_max}-token CUDA-graph capture size, "
               "so every kernel pays its launch)"
               if setup.assumptions.cuda_graphs and chunk + batch > graph_max else "")
            + (f", {setup.model.tp} GPUs' all-reduces included" if setup.model.tp > 1 else "")
            + ". A larger chunk trades some of the decoders' short gaps back for it.")

how_computed(
    rf"""
**The pool.** {POOL_TOKENS:,} token slots cut into pages of $b$ tokens (the page size): {POOL_TOKENS:,}/$b$
pages, {DEFAULT_N_PAGES} at the default {DEFAULT_PAGE_TOKENS}, so another page size changes how the same
memory is cut, not how much there is (as an engine's block size does). A backlog of requests arrives at
step 0 and is served first come, first served for {DEFAULT_N_STEPS} steps. A request with prompt $p$
is admitted with its prompt cached; every step each resident request writes one token; it leaves after
$o$ tokens, its own length capped at the max output length $M$. Run averages leave out the first
quarter of the steps, while the start-up burst settles.

- *Reserved*: $\lceil (p+M)/b \rceil$ **contiguous** pages, first fit, held until the request leaves.
- *Paged*: $\lceil (p+t)/b \rceil$ pages at its $t$-th token, anywhere; one more page only when the
  last fills. No free page: the most recently admitted request is preempted (vLLM's recompute: it
  frees its pages and returns to the head of the queue, keeping the tokens it has written).

**The ledger** (token slots, summing to {POOL_TOKENS:,} at every step): token states; reserved,
still empty (whole pages past a sequence's last filled one); last-page slack
($\lceil n/b\rceil b - n$ for a sequence of $n$ tokens, at most $b-1$); free runs too short to use
(free pages, all in runs shorter than the next queued request's reservation, although together they
would hold it: external fragmentation); free (including free pages too few in total for the next
reservation).

**On a real card.** KV budget $= {DEFAULT_MEMORY_UTILIZATION:g}\,M_\text{{GPU}} - W - R$, $R$ the
engine's start-up reserve (activations, the sampler's warm-up, CUDA context). A resident
request holds, averaged over its life of $o$ steps, $\lceil (p+M)/b\rceil b$ slots (reserved) or
$\frac{{1}}{{o}}\sum_{{t=1}}^{{o}} \lceil (p+t)/b\rceil b$ (paged); requests that fit = budget /
(KV bytes per token × slots), averaged over {CARD_N_REQUESTS:,} ShareGPT-like requests weighted by how
long each stays. Decode throughput = batch / $t_\text{{step}}$ from the shared cost model, at the mean
context a resident request holds.

**Chunked prefill.** $B$ sequences with $c$ = {CHUNK_CONTEXT:,} cached tokens decode; a prompt of $P$ tokens
arrives. Unchunked: one step of $T = B + P$ new tokens with $P(P+1)/2$ causal attention pairs.
Chunked: $\lceil P/C\rceil$ steps; chunk $j$ of $q_j$ tokens on a cached prefix $s_j$ adds
$q_j (s_j + (q_j+1)/2)$ pairs and reads $s_j$ cached tokens, so the pairs still sum to $P(P+1)/2$
but the weights are read once per step. Every step is priced by the same operator-level model as
every page (section 00).
""",
    assumptions=[
        f"Toy pool: one backlog of {DEFAULT_N_REQUESTS} requests (lognormal prompts with mean "
        f"{WORKLOADS['toy chat'].prompt_mean:.0f} tokens, exponential outputs with mean "
        f"{WORKLOADS['toy chat'].output_mean:.0f}, seed 0), the same stream for both policies; lengths are "
        f"scaled down so a request fits the {POOL_TOKENS:,}-token pool.",
        "Prefill happens in the admission step and yields the first token; one token per resident request "
        "per step after that. Time is in steps here, not seconds.",
        "Reserved: first come first served, no skipping past a head that does not fit (no reordering to "
        "pack holes). Paged: no watermark of spare pages, no cap on the number of sequences.",
        f"Real card: {DEFAULT_MEMORY_UTILIZATION:.0%} of memory (vLLM's default gpu_memory_utilization) for "
        "the weights as the engine holds them, its start-up reserve (the larger of a forward pass's "
        "activations and the sampler's warm-up, plus 1 GiB of CUDA context) and the KV cache; the rest "
        "is the driver's. External fragmentation is ignored there (it only lowers the reserved batch). "
        f"The engine decodes at most its max_num_seqs ({fit.max_seqs:,} on this GPU) of the requests that "
        "fit; the rest wait in memory.",
        f"Chunked prefill: the decoders' contexts are held at {CHUNK_CONTEXT:,} tokens over the steps shown; "
        "the prompt arrives as the first prompt-carrying step starts. No tile-quantisation effects "
        "(Sarathi-Serve: chunk 257 instead of 256 can cost 32 %).",
        "PagedAttention's kernel overhead (20–26 % slower attention in the vLLM paper) is not charged.",
        "Decode throughput on the card counts decode steps only: the prefills of requests that replace "
        "finished ones are not charged. With these lengths that is about one prompt token per two output "
        "tokens of extra work, which flatters the larger (paged) batch most, since it runs nearer the "
        "compute-bound regime.",
    ],
    sources=[
        "vLLM / PagedAttention: Kwon et al., SOSP '23 (arXiv 2309.06180): token-state share 20.4–38.2 % "
        "for Orca's reservations vs 96.3 % for vLLM (Fig. 2), block size 16 (§7.2): REFERENCE.md 3.2, "
        "V14, V16.",
        f"ShareGPT-like lengths: {WORKLOADS['sharegpt'].source}.",
        "Backlog (burst) arrivals and exponential outputs: Anyscale's continuous batching benchmark, "
        "REFERENCE.md 3.3.",
        "Chunked prefill: Sarathi-Serve, Agrawal et al., OSDI '24 (arXiv 2403.02310): token budget 512 "
        "under a strict SLO, chunking overhead at most ~25 % at chunk 512: REFERENCE.md 3.4.",
        "gpu_memory_utilization = 0.9: vLLM engine arguments (default).",
        f"{setup.gpu.name}: {setup.gpu.source}. {setup.model.name}: {setup.model.source}.",
    ],
)
data_expander(lambda: {
    "Steps, both policies (ledger in token slots)": steps_table(cmp),
    f"Pages at step {step} ({policy})": pages_table(run, step),
    # no rows for a card the weights overflow, or for requests longer than the model reads
    **({"Real card": card_table(fit)} if fit.fits and card_reads else {}),
    **({"Chunked prefill steps": chunked_table(cp)} if chunk_fits else {}),
}, key="paging_data")
next_link(__file__)
