"""04 · What to watch instead: every scenario measured with one ruler, a day on the dashboard, and the
metric that catches each failure."""

import streamlit as st

from sim.chunked import DEFAULT_DECODE_BATCH as CHUNK_BATCH
from sim.chunked import DEFAULT_PROMPT_TOKENS as CHUNK_PROMPT
from sim.metrics import (
    BATCH_REQUESTS,
    BATCH_SLOTS,
    BATCH_WORKLOAD,
    DAY_QUIETEST_HOUR,
    DEFAULT_DAY_LOW,
    DEFAULT_DAY_PEAK,
    DEFAULT_DAY_REQUESTS,
    HIGH_LOAD,
    MODERATE_LOAD,
    PHASES_CONTEXT,
    PHASES_PROMPT,
    SLO,
    SLO_ATTAINMENT_GOAL,
    SLO_TPOT_RANGE_S,
    SLO_TTFT_RANGE_S,
    SPEC_BATCH,
    SPEC_CONTEXT,
    dashboard_day,
    measure,
    scenario_runs,
)
from sim.paging import DEFAULT_MEMORY_UTILIZATION
from sim.paging import simulate as paging_simulate
from ui import format as fmt
from ui.feasibility import fits_or_stop
from ui.fig_watch import (
    count_range,
    day_figure,
    day_frame,
    failures_display,
    failures_frame,
    percent_range,
    scenario_figure,
    scenario_frame,
    scenario_table,
    spread,
)
from ui.layout import chart, data_expander, header, how_computed, metric_row, next_link
from ui.setup import current_setup


# Cached as objects (st.cache_resource): frozen dataclasses of arrays nothing writes to. The runs take
# ~20 ms and depend only on the setup; the SLO only decides which requests count (``measure``).
@st.cache_resource(max_entries=8, show_spinner=False)
def _runs(_setup, setup_key: str):
    """Every section's run and the simulated day (``setup_key`` stands for the unhashed ``_setup``)."""
    runs = scenario_runs(_setup.gpu, _setup.model, _setup.assumptions)
    return runs, dashboard_day(_setup.gpu, _setup.model, _setup.assumptions, capacity=runs.capacity)


@st.cache_resource(max_entries=1, show_spinner=False)
def _pool():
    """Section 02's 64-page pool under paging, at that page's defaults: its preemptions."""
    return paging_simulate("paged")


@st.cache_resource(max_entries=32, show_spinner=False)
def _views(_runs, _day, key: tuple, ttft_s: float, tpot_s: float) -> dict:
    """Rows, tables and figures for one setup (``key``) and SLO."""
    slo = SLO(ttft_s, tpot_s)
    rows = measure(_runs, slo)
    pool = _pool()
    failures = failures_frame(rows, slo, pool.total_preemptions, pool.n_steps)
    return {
        "rows": rows, "table": scenario_table(rows), "frame": scenario_frame(rows),
        "bars": scenario_figure(rows), "day": day_figure(_day, slo), "day_frame": day_frame(_day, slo),
        "failures": failures, "failures_display": failures_display(failures),
    }


setup = current_setup()
setup_key = repr(setup)
fits_or_stop(setup, 1, 1, "The model's weights")
runs, day = _runs(setup, setup_key)
first_view = _views(runs, day, setup_key, SLO().ttft_s, SLO().tpot_s)["rows"]
mfu_lo, mfu_hi = spread(first_view, "mfu")

header("04", "What to watch instead", f"""
Every section so far has ended the same way: the number on the dashboard hardly moved while the
work done changed several times over. That is not a bug in the tool. NVML defines
`utilization.gpu`, the number `nvidia-smi` and most GPU dashboards show, as the share of time in
which *one or more kernels* was executing. A serving engine launches kernels back to back, so the
number reads close to 100% whether the tensor cores deliver **{fmt.percent(mfu_lo)}** of what they
could or **{fmt.percent(mfu_hi)}**. Below, every scenario of this article is measured with the same
ruler, a simulated day of traffic is read out as a dashboard would read it, and each failure gets
the metric that catches it, with an alert rule.
""")

st.markdown("**Your latency targets.** A request counts towards goodput only if it meets both "
            "(DistServe's definition). They also set two of the alert thresholds below.")
c1, c2 = st.columns(2)
ttft_s = c1.slider("Time to first token (TTFT) target, s", *SLO_TTFT_RANGE_S, value=SLO().ttft_s,
                   step=0.1, format="%.1f", key="watch_ttft", bind="query-params")
tpot_ms = c2.slider("Time per output token (TPOT) target, ms", SLO_TPOT_RANGE_S[0] * 1e3,
                    SLO_TPOT_RANGE_S[1] * 1e3, value=SLO().tpot_s * 1e3, step=5.0, format="%.0f",
                    key="watch_tpot", bind="query-params",
                    help="50 ms a token is 20 tokens a second, faster than people read.")
slo = SLO(ttft_s, tpot_ms / 1e3)
views = _views(runs, day, setup_key, slo.ttft_s, slo.tpot_s)
rows = views["rows"]
by_key = {r.key: r.metrics for r in rows}

util_lo, util_hi = spread(rows, "utilization_gpu")
good_lo, good_hi = spread(rows, "goodput_tok_s")
with metric_row():
    st.metric("nvidia-smi utilization", percent_range(util_lo, util_hi), border=True,
              help=f"Lowest and highest reading over the {len(rows)} scenarios below.")
    st.metric("Goodput, tok/s", count_range(good_lo, good_hi), border=True,
              delta=f"{good_hi / good_lo:,.0f}× apart", delta_color="off", delta_arrow="off",
              help="Output tokens delivered to users per second, lowest and highest over the scenarios.")
    st.metric("MFU", percent_range(mfu_lo, mfu_hi), border=True,
              help="Achieved FLOP/s over the tensor cores' peak (what DCGM's tensor-pipe activity tracks), "
                   "lowest and highest over the scenarios.")
    st.metric("SLO goodput, req/s", f"{by_key['continuous'].goodput_rps:.3g} vs "
              f"{by_key['static'].goodput_rps:.2g}", border=True,
              help=f"Requests per second meeting both targets: continuous vs static batching on the same "
                   f"arrivals ({runs.moderate_rate_rps:g} requests/s).")

st.subheader("Every scenario, one ruler")
st.markdown("One row per situation the article shows, each run by that section's own model at its "
            f"page's first view, on {setup.gpu.name} serving {setup.model.name}. Left, what the "
            "dashboard reads (`nvidia-smi` utilization); right, what the users get (output tokens "
            "per second, on a log scale).")
chart(views["bars"], key="watch_bars",
      title=f"The same GPU, {len(rows)} situations: utilization barely moves, goodput spans orders of "
            "magnitude",
      alt=f"Utilization reads between {util_lo:.0%} and {util_hi:.0%} in every scenario, while goodput "
          f"runs from {good_lo:,.0f} to {good_hi:,.0f} output tokens per second.")
st.dataframe(views["table"], hide_index=True, width="stretch",
             column_config={"Scenario": st.column_config.TextColumn(pinned=True, width=250),
                            "What is happening": st.column_config.TextColumn(width="large")})
st.caption("– : the run does not model it (a steady state has no queue and no whole requests; the "
           "long-prompt rows follow one prompt, so their latency is that prompt's TTFT and the gaps "
           "every decoding user waits). TPOT is each request's mean time per token; ITL is the gap "
           "before each token, so one stalled step shows in its p99. KV cache: the share of this "
           "card's KV-cache budget (section 02) holding token states.")

st.subheader("A day on the dashboard")
st.markdown(f"""
Traffic through section 01's continuous batching ({runs.capacity.slots} slots, the Anyscale workload)
over a simulated day: quiet at {DAY_QUIETEST_HOUR:02d}:00, {day.load.max():.0%} of what the engine serves
flat out at {DAY_QUIETEST_HOUR + 12:02d}:00. This is what three panels of a dashboard would draw,
hour by hour. Shaded hours have requests waiting.
""")
missed = day.hours_missing(slo)
ttft_worst = day.worst_ttft_p99_s
with metric_row():
    st.metric("Utilization, by hour", percent_range(day.utilization_gpu.min(), day.utilization_gpu.max()),
              border=True, help="Lowest and highest hourly reading.")
    st.metric("Goodput by hour, tok/s", count_range(day.goodput_tok_s.min(), day.goodput_tok_s.max()),
              border=True)
    st.metric("MFU, by hour", percent_range(day.mfu.min(), day.mfu.max()), border=True)
    st.metric("Hours missing the SLO", f"{missed} of {day.n_windows}", border=True,
              delta=f"worst TTFT p99 {fmt.seconds(ttft_worst)}", delta_color="off", delta_arrow="off",
              help=f"Hours in which fewer than {SLO_ATTAINMENT_GOAL:.0%} of the requests that arrived met "
                   "both targets (DistServe's attainment goal).")
chart(views["day"], key="watch_day",
      alt=f"Over the simulated day utilization stays between {day.utilization_gpu.min():.0%} and "
          f"{day.utilization_gpu.max():.0%}, while goodput moves from {day.goodput_tok_s.min():,.0f} to "
          f"{day.goodput_tok_s.max():,.0f} tokens per second, MFU from {fmt.percent(day.mfu.min())} to "
          f"{fmt.percent(day.mfu.max())}, and TTFT p99 peaks at {fmt.seconds(ttft_worst)}; {missed} hours "
          "miss the SLO.")

st.subheader("What catches each failure")
st.markdown("For each failure the article describes: the quantity that shows it, what NVIDIA's tools "
            "or the serving engine (vLLM) call it, an alert rule to start from, and its value in the "
            "scenario above, computed live, with and without the fix.")
st.table(views["failures_display"], hide_index=True)

lowest = min(rows, key=lambda r: r.metrics.utilization_gpu)
pairs = [("continuous", "static", "continuous vs static batching"),
         ("paged", "reserved", "paged vs reserved KV")]
same_load = "; ".join(f"{label} **{by_key[a].goodput_tok_s / by_key[b].goodput_tok_s:.1f}×**"
                      for a, b, label in pairs)
st.info(
    f"**Why an observability company cares.** Utilization answers one question, *is a kernel "
    f"running?*, and on a serving GPU the answer is nearly always yes: **{util_lo:.0%}–{util_hi:.0%}** "
    f"across every scenario here. Goodput spans {good_hi / good_lo:,.0f}× across them, much of that "
    f"because the scenarios carry different load; on the *same* demand the fixes alone move it: "
    f"{same_load}; and chunking cuts the worst inter-token gap "
    f"**{by_key['unchunked'].itl_p99_s / by_key['chunked'].itl_p99_s:.0f}×**. The lowest utilization "
    f"reading ({lowest.metrics.utilization_gpu:.0%}, {lowest.name}) says nothing about work either: "
    "it comes from the host time between many short steps. The story is in other signals: tensor and "
    "DRAM activity say whether the chip is starved or busy; the engine's KV-cache, queue and latency "
    "metrics say whether users are served; goodput says whether the fleet pays for itself. Watch "
    "those, alert on those, and keep utilization for what it is: proof the GPU is switched on.",
    icon=":material/lightbulb:",
)

how_computed(
    r"""
Every row is a run of another section's model; ``sim.metrics`` turns each into the same metrics from
that run's own priced steps ($t_\text{step}$, $t_\text{gpu}$, FLOPs and bytes from the shared roofline
model), its requests' timings and its memory state. Over a run of wall time $T$ (idle gaps included):

- **utilization.gpu** (NVML: *"Percent of time over the past sample period during which one or more
  kernels was executing on the GPU"*): $\sum t_\text{gpu} / T$. Host overhead and idle gaps are the
  only time it does not count.
- **MFU**, what DCGM's `DCGM_FI_PROF_PIPE_TENSOR_ACTIVE` tracks (*"The fraction of cycles the tensor
  (HMMA / IMMA) pipe was active"*): $\sum\text{FLOPs} / (F_\text{peak}\,T)$.
- **MBU**, what `DCGM_FI_PROF_DRAM_ACTIVE` tracks (*"The fraction of cycles where data was sent to or
  received from device memory"*, with ~0.8 the practical peak): $\sum\text{bytes} / (B_\text{HBM}\,T)$;
  at batch 1 this is Databricks' (model size + KV cache) / TPOT / peak bandwidth.
- **Goodput, tok/s**: output tokens of requests / $T$. **Useful share**: output tokens over tokens
  computed (static batching's padding and rejected speculative drafts are computed, not useful).
- **SLO goodput** (DistServe): requests per second whose TTFT and TPOT both meet the targets;
  **Meets SLO** is their share of the requests.
- **TTFT**: arrival to the end of the prefill step (queueing included). **TPOT**: a request's
  (last token − first token) / (tokens − 1). **ITL**: the wait before each output token, per token:
  a step of $t$ seconds that gives $n$ users a token is $n$ samples of $t$.
- **KV cache holding tokens**: tokens whose KV the step holds × KV bytes per token, over section 02's
  KV budget $""" + f"{DEFAULT_MEMORY_UTILIZATION:g}" + r"""\,M_\text{GPU} - W$; **Queue**: requests
  arrived and not yet admitted. Both are time-weighted over the steps.

**The day.** The arrival rate follows $\lambda(h) = C\,(\ell + (p-\ell)\,\tfrac{1-\cos(2\pi(h-4)/24)}{2})$,
$C$ the requests/s section 01's continuous batching serves with every request queued at once,
$\ell$ = """ + f"{DEFAULT_DAY_LOW:g} and $p$ = {DEFAULT_DAY_PEAK:g}" + r""". Each
hour is a window of fixed length in which arrivals are Poisson at that hour's rate; the window length
is set so about """ + f"{DEFAULT_DAY_REQUESTS:,}" + r""" requests arrive over the day, whatever the GPU.
The run is section 01's ``simulate``; each step's kernel time, FLOPs and tokens are spread evenly over
the step and summed per window. TTFT p99 is over the requests that arrived in the hour.
""",
    assumptions=[
        f"Each row runs its section's model at that page's first view: page 00's {PHASES_PROMPT:,}-token "
        f"prompt and {PHASES_CONTEXT:,} tokens of context; page 01's {BATCH_REQUESTS:,} requests "
        f"({BATCH_WORKLOAD}) on {BATCH_SLOTS} slots; page 02's ShareGPT-like requests on this card and its "
        f"{CHUNK_PROMPT:,}-token prompt among {CHUNK_BATCH} decoders; page 03's default drafting method at "
        f"batch {SPEC_BATCH} and {SPEC_CONTEXT:,} tokens of context.",
        f"Section 01's rows use Poisson arrivals instead of its first view's burst, so that latency "
        f"means something: {runs.moderate_rate_rps:g} requests/s (a power of two at most "
        f"{MODERATE_LOAD:.0%} of what "
        f"continuous batching serves, {runs.capacity_rps:.3g}/s here) for static vs continuous, and "
        f"{runs.high_rate_rps:g}/s (at least {HIGH_LOAD:.0%}) for high load. Pick them on page 01 to see "
        "the "
        "same runs.",
        "MFU and MBU stand in for DCGM's tensor-pipe and DRAM activity. DCGM counts active cycles, "
        "not FLOPs or bytes: a tensor pipe running below full rate reads as active, so the real "
        "counters read somewhat above MFU and MBU. They still tell a starved GPU from a busy one, "
        "which utilization.gpu cannot.",
        "Steady-state rows (batch-1 decode, the card's two KV policies, speculative decoding) have no "
        "request lifetimes: no SLO goodput and no queue. The card's rows run under a full queue.",
        "KV-cache use counts token states. vLLM's usage gauge counts blocks handed out: under paging "
        "the two agree within the last page's slack; a reserving engine would read full.",
        "Host overhead counts as no kernel running. Speculative decoding adds k small draft steps "
        "per round, each paying it: that is why its row reads lower while doing more.",
        "Preemptions are modelled only by section 02's 64-page pool; the table leaves the column out "
        "and the failure list reads the pool.",
        "The alert thresholds and windows are starting points to tune, not standards.",
        "One GPU, no tensor parallelism; the roofline is a floor (see section 00).",
    ],
    sources=[
        "utilization.gpu: NVML API reference, nvmlUtilization_t (REFERENCE.md §4).",
        "DCGM profiling metrics (GR_ENGINE_ACTIVE, SM_ACTIVE, SM_OCCUPANCY, PIPE_TENSOR_ACTIVE, "
        "DRAM_ACTIVE): NVIDIA DCGM User Guide, profiling metrics table (REFERENCE.md §4).",
        "MBU: Databricks, LLM Inference Performance Engineering: Best Practices (REFERENCE.md §4).",
        "Goodput: DistServe (Zhong et al., OSDI 2024), per-GPU goodput under TTFT and TPOT SLOs "
        "(REFERENCE.md §3.5; V20 in the tests).",
        "vLLM metric names: vLLM docs, Production Metrics and the V1 metrics design "
        "(vllm:kv_cache_usage_perc replaced vllm:gpu_cache_usage_perc; vllm:inter_token_latency_seconds "
        "replaced vllm:time_per_output_token_seconds).",
        f"{setup.gpu.name}: {setup.gpu.source}. {setup.model.name}: {setup.model.source}.",
    ],
)
data_expander({
    "Scenarios (every metric; shares 0-1, seconds)": views["frame"],
    "The day, hour by hour": views["day_frame"],
    "Failures, metrics and alerts": views["failures"],
}, key="watch_data")
next_link(__file__)
