"""01 · Keeping the slots full: static vs continuous batching, and two gauges that disagree."""


import streamlit as st

from sim.batching import LOADS, WORKLOADS, Comparison, compare, expected_static_slot_efficiency
from sim.memory import memory_plan
from sim.metrics import BUSY_UTILIZATION, RATE_EXPONENTS, longest_request_tokens, peak_context_tokens
from ui import format as fmt
from ui.feasibility import fits, fits_or_stop, reads_or_say
from ui.fig_batching import (
    TIMELINE_MAX_SLOTS,
    USEFUL_WORK_LABEL,
    UTILIZATION_LABEL,
    breakdown_html,
    comparison_table,
    gauge_readings,
    requests_frame,
    summary_frame,
    timeline_figure,
)
from ui.gauge import gauges_html
from ui.glossary import define
from ui.layout import (
    chart,
    check_redraw_values,
    data_expander,
    header,
    how_computed,
    metric_slots,
    next_link,
    redraw_values,
    send_what_is_drawn,
    stop_page,
)
from ui.price import cost_metric
from ui.setup import current_setup
from ui.sim_cache import page_cache
from ui.workers import offload

SLOT_OPTIONS = [2**i for i in range(9)]  # 1 .. 256 (sim.batching.SLOTS_RANGE allows up to 1024)
REQUEST_OPTIONS = [50, 100, 200, 500, 1000, 2000]
# Requests per second: every power of two sim.batching.RATE_RANGE holds, so that page 04's rows,
# whose rates are such powers set by the setup's capacity (sim.metrics._pow2), open here as they are.
RATE_OPTIONS = [2.0**e if e < 0 else 2**e for e in range(RATE_EXPONENTS[0], RATE_EXPONENTS[1] + 1)]
LOAD_LABEL = {"burst": "All at once", "poisson": "Poisson arrivals"}
#: The page's controls whose values decide its run (ui.layout.redraw_values reads them on a redraw).
CONTROL_KEYS = ("batching_continuous", "batching_slots", "batching_workload", "batching_requests",
                "batching_load", "batching_rate")


# Cached as objects, not copies (st.cache_resource): a run is a frozen dataclass of arrays that nothing
# writes to, and st.plotly_chart / st.dataframe only read figures and frames. Copying them on every
# rerun (st.cache_data) cost more than the simulation itself. Few entries: a low-rate Poisson run of
# 2,000 requests has ~250k steps (tens of MB of per-step arrays).
@page_cache("batching._compare", 8)
def _compare(_setup, setup_key: str, slots: int, workload: str, n: int, load: str, rate: float) -> Comparison:
    """Both modes on the same requests (``setup_key`` stands for the unhashed ``_setup``)."""
    # Poisson runs step through their arrivals for tens of ms: in a worker (ui.workers). A burst's
    # few ms cost less than the round trip.
    run = offload if load == "poisson" else (lambda f, *a, **k: f(*a, **k))
    return run(compare, _setup.gpu, _setup.model, slots=slots, workload=workload, n_requests=n, load=load,
               rate_per_s=rate, assumptions=_setup.assumptions)


@page_cache("batching._views", 16)
def _views(_comparison: Comparison, key: tuple, policy: str) -> dict:
    """Figures and tables for one mode (building a plotly figure costs 5-15 ms, mostly validation)."""
    run = _comparison.run(policy)
    other = _comparison.run("static" if policy == "continuous" else "continuous")
    x_max = max(_comparison.static.wall_s, _comparison.continuous.wall_s)
    return {
        "gauges": gauge_readings(run, other), "timeline": timeline_figure(run, x_max),
        "breakdown": breakdown_html(_comparison), "table": comparison_table(_comparison),
        "summary": summary_frame(_comparison), "requests": requests_frame(run),
    }


header("01", "Keeping the slots full: continuous batching", """
A server runs many requests at once, one per **slot** of the batch. **Static batching** holds a batch
until its longest request is done; **continuous batching** refills a slot the step after it frees.
Flip the switch: the useful work changes several times over, the dashboard's gauge far less (and
not always the same way).
""", prefix="batching")

setup = current_setup()
# The page's places in reading order, filled in sending order: on a redraw after a setting moved, the
# slot timeline goes out first, before the controls and the gauges (ui.layout.redraw_values).
gauges = st.container(key="batching_gauges")  # the toggle, then the gauges once the run is known
settings = st.container(horizontal=True, wrap=True, gap="small", key="batching_settings")
# Below the settings: the workload's lengths (drawn with the controls), then the text and numbers
# that come before the slot timeline on the page but go out after it: the browser renders every element
# a run sends, changed or not (docs/speed-log.md, eighth run), so the fewer come before the timeline,
# the sooner it is drawn.
middle = st.container()


def _controls() -> dict:
    """Draw the toggle and the settings; their values by widget key."""
    continuous = gauges.toggle("Continuous batching (off: static batching)", value=False,
                               key="batching_continuous", bind="query-params",
                               help="Static: the batch waits for its slowest member. Continuous: a "
                                    "finished request's slot is refilled at the next step.")
    slots = settings.select_slider("Slots (batch size B)", SLOT_OPTIONS, value=64, key="batching_slots",
                                   bind="query-params", help="Sequences the engine runs at once.", width=200)
    workload = settings.selectbox("Workload", list(WORKLOADS), format_func=lambda k: WORKLOADS[k].label,
                                  key="batching_workload", bind="query-params", width=230,
                                  help=None)
    n_requests = settings.select_slider("Requests", REQUEST_OPTIONS, value=1000, key="batching_requests",
                                        bind="query-params", width=170)
    # A radio, not a segmented control: a bound segmented control shows no selection for "?x=".
    load = settings.radio("Load", LOADS, format_func=LOAD_LABEL.get, horizontal=True, key="batching_load",
                          bind="query-params", width=260,
                          help="All at once: every request queued at t = 0 (the throughput view). Poisson "
                               "arrivals: requests arrive at random at the rate below (the latency view).")
    rate = settings.select_slider("Arrival rate, requests/s", RATE_OPTIONS, value=8, key="batching_rate",
                                  bind="query-params", disabled=load == "burst", width=220,
                                  help="Poisson arrivals only. Used when the load is 'Poisson arrivals'.")
    middle.caption(f"{WORKLOADS[workload].label}: prompts {WORKLOADS[workload].prompt.describe()} tokens; "
                   f"outputs {WORKLOADS[workload].output.describe()} tokens.")
    return dict(zip(CONTROL_KEYS, (continuous, slots, workload, n_requests, load, rate), strict=True))


def _run_key(values: dict) -> tuple:
    return (repr(setup), values["batching_slots"], values["batching_workload"], values["batching_requests"],
            values["batching_load"], float(values["batching_rate"]))


def _fits(comparison: Comparison, slots: int) -> bool:
    return setup.model.reads(longest_request_tokens(comparison.static)) and all(
        fits(setup, slots, peak_context_tokens(r_)) for r_ in (comparison.static, comparison.continuous))


# What a change moves is sent first (ui.layout.send_what_is_drawn): the gauges when no setting moved
# (the toggle, or a control outside the key such as the sidebar's price); when a setting did, the slot
# timeline: after the gauges on a first view, before everything else on a redraw. Not where the
# settings do not fit: the page stops at its notice, after its controls.
previous_key = st.session_state.get("_batching_run_key")  # None: the page's first run, nothing moved
early = redraw_values(CONTROL_KEYS)
if early is not None and _run_key(early) == previous_key:
    early = None  # no setting moved: the gauges go first, in reading order
if early is not None:
    try:
        if not _fits(_compare(setup, *_run_key(early)), early["batching_slots"]):
            early = None
    except ValueError:
        early = None
values = early if early is not None else _controls()
continuous = values["batching_continuous"]
key = _run_key(values)
slots, workload, n_requests, load, rate = key[1:]
try:
    comparison = _compare(setup, *key)
except ValueError as err:  # only reachable through a direct call with bad values: say so, don't crash
    st.error(f"Cannot run these settings: {err}")
    stop_page()
policy = "continuous" if continuous else "static"
run = comparison.run(policy)
other = comparison.run("static" if continuous else "continuous")
# The fullest step of either policy must fit its KV cache. Where it does not, the notice takes the
# gauges' place under the toggle: on a phone the settings fill the rest of the first screen.
with gauges:
    # The weights first (no length helps where they do not fit), then the workload's longest request
    # against the model's positions, then the slots' KV cache.
    if memory_plan(setup.gpu, setup.model, 1, 1).weights_fit and not reads_or_say(
            setup, longest_request_tokens(run), "The longest request of this workload",
            levers="Pick a workload with shorter requests on this page"):
        stop_page()
    for r_ in (run, other):
        fits_or_stop(setup, slots, peak_context_tokens(r_),
                     f"{fmt.counted(slots, 'slot')} at the fullest step of {r_.policy} batching",
                     levers="Lower the slots or pick a workload with shorter requests on this page")
mode = policy.capitalize()
views = _views(comparison, key, policy)
settings_moved = previous_key is not None and previous_key != key


def _timeline() -> None:
    chart(
        views["timeline"], key="batching_timeline", send_first=settings_moved, legend_at="above",
        alt=f"Slot timeline, {policy} batching: {run.requests.n:,} requests on {run.slots} slots finish "
            f"after {fmt.duration(run.wall_s)}; padding {fmt.percent(run.padding_share)} and idle "
            f"{fmt.percent(run.idle_share)} of the slot-steps.",
    )


if early is not None:
    _timeline()
    check_redraw_values(early, _controls())
# Saved after the check, so that a rerun it asks for still compares with the last run's settings.
st.session_state["_batching_run_key"] = key

gauge_alt = (f"{mode} batching: GPU utilization {fmt.percent(run.utilization_gpu)} "
             f"({fmt.percent(other.utilization_gpu)} with {other.policy}); useful work "
             f"{fmt.percent(run.useful_work)} ({fmt.percent(other.useful_work)} with {other.policy}).")
# Two gauges in a row that does not stack (toggle and both gauges on one screen of a phone), as one
# SVG element: two Plotly charts changing before the slot timeline cost it ~80 ms each (ui/gauge.py).
with gauges:
    st.markdown(gauges_html(views["gauges"], gauge_alt), unsafe_allow_html=True)
    if previous_key == key:
        send_what_is_drawn()
    st.caption(f"The black tick marks the same reading with {other.policy} batching; ▲/▼ pp is the "
               "difference from it in percentage points. Useful work leaves out capacity nobody asked for "
               "(Unused, below), so a server that does all it is asked reads 100 %; the table and chart "
               "below split all the capacity, requested tokens included, which adds to 100 % with the "
               "waste.")
    first_numbers = st.container()  # filled after the timeline (below)

if early is None:
    _timeline()
with first_numbers:
    m = metric_slots(5)
    m[0].metric(UTILIZATION_LABEL, fmt.percent(run.utilization_gpu), border=True,
                help=define("GPU utilization (utilization.gpu)"))
    m[1].metric(USEFUL_WORK_LABEL, fmt.percent(run.useful_work), border=True,
                help=define("Useful work") + " The rest is waste: padding, and slots left empty while "
                                              "requests waited.")
    m[2].metric("Unused: no demand", fmt.percent(run.unused_share), border=True,
                help=define("Unused (no demand)"))
    m[3].metric("Output tok/s", fmt.count(run.output_tokens_per_s), border=True,
                help=define("Output tokens per second") + " Goodput (page 04) counts only the requests "
                                                          "that also meet the latency targets.")
    cost_metric(m[4], "$ per M output tokens", run.output_tokens_per_s, setup,
                f"{mode} batching, every token someone asked for; padding is paid for but not counted.")

with middle:
    if load == "poisson":
        st_, ct_ = comparison.static.ttft_p50_s, comparison.continuous.ttft_p50_s
        behind = comparison.behind()
        busy = run.unused_share < 0.2  # the slots are mostly in use: arrivals queue for them
        if ct_ < 0.95 * st_:
            ttft_txt = (f"Continuous batching's win shows in the time to first token (median "
                        f"{fmt.duration(ct_)} against {fmt.duration(st_)} static).")
        elif ct_ > 1.05 * st_:
            ttft_txt = (f"Here continuous batching's first token comes later (median {fmt.duration(ct_)} "
                        f"against {fmt.duration(st_)} static): it prefills each arrival in a step of its own "
                        "beside the decodes, where static prefills the prompts that arrived together in one.")
        else:
            ttft_txt = (f"Here its time to first token is not clearly shorter (median {fmt.duration(ct_)} "
                        f"against {fmt.duration(st_)} static)"
                        + (": with answers of one length and every slot busy, continuous batching admits "
                           "each arrival as a slot frees, behind the same queue."
                           if workload == "fixed" and busy else
                           ": with slots to spare both modes admit each arrival at once, so it waits "
                           "only for its own prefill." if not busy and not behind else "."))
        st.caption("Under arrivals the engine is only as busy as the requests make it"
                   + (": much of its capacity goes unused for lack of demand (not a failure, so useful "
                      "work leaves it out)" if not busy and policy not in behind else "")
                   + ", and the tokens/s follow the arrival rate until one mode can no longer keep up"
                   + (f" (here {' and '.join(behind)} cannot: "
                      + ("its queue grows" if len(behind) == 1 else "their queues grow")
                      + " through the run). " if behind else ". ")
                   + ttft_txt)
    m = metric_slots(5)
    m[0].metric("All done after", fmt.duration(run.wall_s), border=True,
                help=f"Wall time until the last of the {run.requests.n:,} requests finishes "
                     f"({fmt.rate(run.requests_per_s, 'req/s')}).")
    m[1].metric("TTFT p50", fmt.duration(run.ttft_p50_s), border=True, help=define("TTFT"))
    m[2].metric("TTFT p99", fmt.duration(run.ttft_p99_s), border=True)
    m[3].metric("TPOT p50", fmt.seconds(run.tpot_p50_s), border=True, help=define("TPOT"))
    m[4].metric("Tok/s incl. padding", fmt.count(run.generated_tokens_per_s), border=True,
                help="Every token the engine emitted per second, padding included (batch × steps / "
                     "time): what a naive benchmark counts.")

    st.markdown("""
    Requests finish at different times. Under static batching the members that finished early keep their
    slot and keep computing padding, and nobody new gets in until the whole batch is done. Continuous
    batching (iteration-level scheduling, from Orca; standard in vLLM, SGLang and TensorRT-LLM) hands a
    slot to the next queued request the step after it frees. A kernel runs either way, so the
    dashboard's gauge reads about the same (lower for continuous batching where its short steps let
    the host's time between them show, or where it finishes early and waits for arrivals); what
    differs is how much of that work anyone asked for.
    """)
st.caption("Each bar is a request in its slot, from its prefill to its last token; pink is "
           "padding, grey is an empty slot. The time axis is the same in both modes"
           + (f"; only the first {TIMELINE_MAX_SLOTS} slots are drawn." if slots > TIMELINE_MAX_SLOTS
              else "."))

st.subheader("Both modes on these settings")
# Static HTML, not a grid or a Plotly chart: the browser lays both out in no time (ui/bars.py)
st.table(views["table"])
st.markdown(views["breakdown"], unsafe_allow_html=True)

s, k = comparison.static, comparison.continuous
gain = k.output_tokens_per_s / s.output_tokens_per_s


#: The thesis box explains a lower gauge for continuous batching from this many points down, by the
#: cause whose share of the time grew the more (at least 2 points), and calls it the mode that
#: delivers more from a 5 % gain.
LOWER_READING_PP, CAUSE_MIN_PP, DELIVERS_MORE = 0.03, 0.02, 1.05


def _lower_reading(s, k, host_s: float, seq_host_s: float, gain: float) -> str:
    """Why the gauge reads lower for continuous batching, where it does (3 points or more), by what
    its extra idle time is: the host's time between its shorter steps, or waiting for arrivals after
    finishing its requests sooner."""
    if s.utilization_gpu - k.utilization_gpu < LOWER_READING_PP:
        return ""
    more_host, more_wait = k.host_share - s.host_share, k.idle_wall_share - s.idle_wall_share
    better = ", the mode that delivers more" if gain >= DELIVERS_MORE else ""
    if more_host >= max(more_wait, CAUSE_MIN_PP) and k.mean_step_s < s.mean_step_s:
        return (f"It even reads **lower** for continuous batching{better}: its steps are short "
                f"({fmt.seconds(k.mean_step_s)} on average against static's {fmt.seconds(s.mean_step_s)}, "
                "whose finished requests keep their slots and their ever-longer KV caches), so the host's "
                f"time between steps ({fmt.seconds(host_s)} a step and {fmt.seconds(seq_host_s)} a "
                "sequence), when the GPU waits, is a larger share of its time "
                f"({fmt.percent(k.host_share)} against {fmt.percent(s.host_share)}). ")
    if more_wait >= max(more_host, CAUSE_MIN_PP):
        return (f"It even reads **lower** for continuous batching{better}: it gets each request done "
                "sooner, then waits for the next arrival with nothing to run "
                f"({fmt.percent(k.idle_wall_share)} of the time against static's "
                f"{fmt.percent(s.idle_wall_share)}), and the gauge counts work finished early as idle. ")
    return ""


# Static's empty slots while requests wait, as a share of the capacity in demand (useful work's base).
waiting_in_demand = s.idle_waiting_share / max(1e-12, 1 - s.unused_share)
st.info(
    f"**The thesis in one widget.** Utilization reads **{fmt.percent(s.utilization_gpu)}** static and "
    f"**{fmt.percent(k.utilization_gpu)}** continuous"
    + (": a kernel is running either way. " if min(s.utilization_gpu, k.utilization_gpu) >= BUSY_UTILIZATION
       else
       ": the GPU sits idle part of the time in both modes (between arrivals, or for the host's share of "
       "short steps), which utilization counts, and still it cannot tell padding from work. ")
    + _lower_reading(s, k, setup.assumptions.host_overhead_s, setup.assumptions.sequence_host_s, gain)
    + f"Useful work is **{fmt.percent(s.useful_work)}** against **{fmt.percent(k.useful_work)}**, "
    + (f"and the tokens delivered per second differ **{gain:.1f}×**. " if gain >= 1.1 else
       f"and continuous batching delivers **{gain:.2f}×** the tokens per second of static here"
       + (": each arrival's prefill joins a decode step of its own, and a prompt's tokens reach every "
          f"expert of {setup.model.name}, so each such step reads all the experts' weights, where static "
          "batching prefills a whole batch's prompts in one step. "
          if setup.model.n_experts else
          ": each arrival's prefill joins a decode step of its own, where static batching prefills a "
          "whole batch's prompts in one step. ")
       if gain < 0.95 else
       f"and the tokens delivered per second differ only **{gain:.2f}×**"
       + (": under arrivals the requests set the rate while both modes keep up. "
          if load == "poisson" and not comparison.behind() else ". "))
    + ((f"Static batching spends {fmt.percent(s.padding_share)} of its token capacity computing padding "
        "for requests that already finished"
        + (f", and leaves {fmt.percent(s.idle_waiting_share)} of it in empty slots while requests wait"
           if s.idle_waiting_share >= 0.005 else "")
        + (": busy, and useless." if s.padding_share >= 0.05 else "."))
       if s.padding_share >= 0.0005 else
       ("With every answer the same length nothing pads: this is the control"
        + (f", but static batching still leaves {fmt.percent(waiting_in_demand)} of the capacity in demand "
           "in empty slots while requests wait (a batch admits no one until it is done): the useful work "
           "it loses."
           if waiting_in_demand >= 0.005 else
           ", and the two modes agree, as they should." if 0.98 <= gain <= 1.02 else ".")
        if workload == "fixed" else
        "With one slot nothing pads: static and continuous batching run the same schedule."
        if slots == 1 else "Nothing pads here.")),
    icon=":material/lightbulb:",
)

how_computed(
    r"""
**Schedule, in steps.** A request with a $p$-token prompt and $L$ output tokens takes one prefill
step ($q=p$ new tokens, nothing cached; it emits the first token), then $L-1$ decode steps ($q=1$ on
$c=p+j-1$ cached tokens at its $j$-th). *Static*: first-come batches of up to $B$; a batch prefills
padded to its longest prompt $P_{\max}$ and decodes until its longest output is done, so it runs
$\max L$ steps and a member with $L_i<\max L$ pads for $\max L-L_i$ of them (such slots are
often said to "sit idle"; in a static batch they stay in every step's matmuls, their tokens
computed and thrown away, which is why utilization stays high: this page calls them padding).
*Continuous*: after every step finished requests leave, and queued requests that have arrived
take the free slots; their prefill runs in that same step, beside the others' decodes.

**Time.** Each step's new tokens $T=\sum q_i$, attention pairs $P=\sum q_i(c_i+\frac{q_i+1}{2})$ and
KV tokens $\sum(c_i+q_i)$ (padding included) go through the shared roofline model in one call:
the operator-level step model of section 00 (each operator's own roofline, summed, plus kernel and
host costs). Wall time is
the running sum of step times plus idle gaps (nothing to run, waiting for the next arrival).

**The gauges.** Every step can advance each of the $B$ slots by one token: over $S$ steps the
token capacity is $B\,S$ slot-steps. With $u_s$ the slots at step $s$ advancing a request's own
tokens (a padded prefill counts $p_i/P_{\max}$ of its slot), $e_s$ its empty slots and $w_s$ the
requests that have arrived but not got in, $\min(e_s, w_s)$ empty slots are *wasted* (a request
could have used them) and the other $n_s = e_s-\min(e_s,w_s)$ are *unused* (nobody asked):

$$
\begin{aligned}
\text{utilization.gpu} &= \frac{\sum_s t_{\text{gpu},s}}{T_\text{wall}}\\
\text{useful work} &= \frac{\sum_s u_s}{B\,S-\sum_s n_s}
\end{aligned}
$$

The rest of the capacity in demand is waste: padding (computed, unwanted) and empty slots while
requests wait. Unused capacity is spare, not waste: a lightly loaded server shows a lot of it and
still does all its useful work. For static batching of a backlog with exponential output lengths
the share of the whole capacity spent on requested tokens, $\sum_s u_s/(B\,S)$, is $1/H_B$
(REFERENCE.md V17: """
    + f"{expected_static_slot_efficiency(slots):.3f} at this $B={slots}$)." + r"""
$T_\text{wall}$ includes the gaps in which the engine waits for arrivals: they lower utilization
and tokens/s, but hold no steps, so they are in neither share. Output tokens/s = requested
output tokens / $T_\text{wall}$; TTFT = arrival → end of the prefill step; TPOT = (last token − first
token) / $(L-1)$; p50 and p99 over requests.
""",
    assumptions=[
        "Slots are the only limit: every admitted request's KV cache fits. Memory (reserved vs paged "
        "KV cache) is the next section's subject.",
        "First come, first served; a new request takes the lowest free slot. Nobody knows a request's "
        "output length in advance.",
        "Static batching under arrivals takes every request already waiting, up to B, whenever the "
        "engine is free; it does not wait to fill the batch (the kindest static policy).",
        "Static pads every prompt to the batch's longest and keeps finished members decoding padding "
        "(their KV keeps growing), as a padded batched generate does.",
        "Continuous runs a joining request's whole prefill in one step with everyone's decodes (no "
        "chunking; chunked prefill comes with the next section), so those steps are slower.",
        "Tokens stream: a static request's time per output token ends at its own last token, not at "
        "its batch's end.",
        "Useful work counts slot-steps (tokens), not seconds: a slow prefill step and a fast decode step "
        "each offer B slots once. Host overhead is part of every step's time and is idle for "
        "nvidia-smi (no kernel runs).",
        "Lengths and arrivals are drawn from a fixed seed; the same draw feeds both modes.",
        "One replica on the sidebar's GPUs per replica (tensor parallelism splits the weights and KV heads "
        "and adds two all-reduces a layer, as in section 00); the roofline is a floor on step time, a "
        "ceiling on throughput.",
    ],
    sources=[
        f"{setup.gpu.name}: {setup.gpu.source}. {setup.model.name}: {setup.model.source}.",
        f"Workload: {WORKLOADS[workload].source}; prompts {WORKLOADS[workload].prompt.describe()}, "
        f"outputs {WORKLOADS[workload].output.describe()} tokens.",
        "Orca (Yu et al., OSDI '22): iteration-level scheduling, 36.9× throughput over "
        "FasterTransformer at the same latency (REFERENCE.md §3.1).",
        "Anyscale, 'How continuous batching enables 23x throughput in LLM inference' (2023): 8× over "
        "naive static batching from continuous batching alone (REFERENCE.md §3.3).",
        "Static slot efficiency with exponential output lengths is 1/H_B (0.368 at B = 8, 0.246 at "
        "B = 32): REFERENCE.md check V17, asserted in the tests.",
        "utilization.gpu definition: NVML API reference, nvmlUtilization_t (REFERENCE.md §4).",
    ],
)
data_expander(lambda: {"Both modes": views["summary"], f"Requests ({policy})": views["requests"]},
              key="batching_data")
next_link(__file__)
