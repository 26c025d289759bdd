"""05 · Under load: how prefill and decode share one GPU as requests arrive, the capacity under latency
targets, prefix caching and disaggregated prefill/decode."""

import streamlit as st

from sim import load
from sim.cost import decode_step_cost, prefill_cost
from sim.hardware import GPUS, GiB
from sim.memory import (
    LARGE_GPU_BYTES,
    MAX_BATCHED_TOKENS,
    MAX_SEQS_DEFAULT,
    MAX_SEQS_LARGE_GPU,
    engine_max_batched_tokens,
)
from sim.metrics import BUSY_UTILIZATION
from sim.paging import WORKLOADS as PAGING_WORKLOADS
from ui import format as fmt
from ui.feasibility import fits_or_say, fits_or_stop, windowed_layers_note
from ui.fig_load import (
    POLICY_LABEL,
    backlog_points,
    dashboard_figure,
    disagg_figure,
    latency_figure,
    prefix_figure,
    prefix_frame,
    requests_frame,
    splits_frame,
    sweep_frame,
    timeline_figure,
    timeline_frame,
    timeline_users,
)
from ui.glossary import define
from ui.layout import chart, data_expander, header, how_computed, lazy_section, metric_slots, next_link
from ui.measured import predictions, summary
from ui.setup import current_setup
from ui.sim_cache import page_cache, view
from ui.workers import offload

LOADS = [10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 120, 150]  # % of the saturation rate
SWEEP_LOADS = [0.2, 0.4, 0.6, 0.8, 1.0, 1.3]  # x the saturation rate
PREFIX_EXTRA_LOADS = [1.7, 2.2]
REQUESTS = [500, 1000, 2000, 5000]
CHUNKS = [128, 256, 512, 1024, 2048, 4096, 8192]
TTFTS = [0.2, 0.3, 0.45, 0.6, 1.0, 1.5, 2.0, 3.0, 5.0, 10.0]  # s
TBTS = [20, 30, 40, 50, 75, 100, 150, 200]  # ms
SHARES = [0, 25, 50, 75, 90, 100]  # % of requests with a shared prefix
PREFIX_TOKENS = [256, 512, 1024, 2048, 4096, 8192]
N_PREFIXES = [1, 4, 16, 64, 256, 1024, 4096]
CURVE_PREFIXES = [1, 16, 64, 256, 1024]  # the hit-rate curve's points (one run each)
GPU_COUNTS = [2, 3, 4, 6, 8]
WORKLOAD_LABEL = {"sharegpt": "Chat, long-tailed", "fixed": "Fixed 1,024 → 128"}
SHAREGPT = PAGING_WORKLOADS["sharegpt"]  # page 02's ShareGPT means, which this workload is not
FIXED = (1024, 128)
#: Requests of the runs behind the curves and the capacity search (each point is one run).
SEARCH_REQUESTS = 600
#: Requests of the run that confirms a capacity found on the short runs (the headline's default).
CONFIRM_REQUESTS = 2000
PRESET_LABEL = {"relaxed": "2 s / 100 ms", "strict": "450 ms / 40 ms", "custom": "Custom"}


def _stream(workload: str, n: int, rate: float, share: int = 0, prefix_tokens: int = 0, n_prefixes: int = 1):
    """The page's request stream; chat-like lengths are drawn within the model's positions (``setup``,
    the sidebar's, is set before any stream is made), as vLLM's benchmark skips longer samples."""
    return load.make_stream(
        n,
        rate,
        lengths=workload,
        prompt_tokens=FIXED[0],
        output_tokens=FIXED[1],
        prefix_share=share / 100,
        prefix_tokens=prefix_tokens if share else 0,
        n_prefixes=n_prefixes,
        max_tokens=setup.model.max_positions,
    )


def _compared(slot, label: str, value: str, delta: str | None = None, help: str | None = None) -> None:
    """A bordered metric whose delta names the other case (a policy, caching off): grey, no arrow."""
    slot.metric(label, value, border=True, delta=delta, delta_color="off", delta_arrow="off", help=help)


# Runs are frozen dataclasses of arrays nothing writes to: cached as objects (st.cache_resource), few
# entries (a 2,000-request run holds ~30k steps). ``setup_key`` stands for the unhashed ``_setup``.
@page_cache("load._run", 24)
def _run(
    _setup,
    setup_key: str,
    policy: str,
    workload: str,
    n: int,
    load_pct: int,
    chunk: int,
    share: int = 0,
    prefix_tokens: int = 0,
    n_prefixes: int = 1,
    caching: bool = True,
):
    base = _stream(workload, n, 1.0, share, prefix_tokens, n_prefixes)
    sat = load.saturation_rate(_setup.gpu, _setup.model, base, _setup.assumptions)
    stream = base.at_rate(sat * load_pct / 100, base.n / float(base.arrival_s[-1]))
    return offload(
        load.simulate,
        _setup.gpu,
        _setup.model,
        stream,
        policy,
        chunk_tokens=chunk,
        prefix_caching=caching,
        assumptions=_setup.assumptions,
    )


@page_cache("load._sweep", 16, yields=True)
def _sweep(
    _setup,
    setup_key: str,
    policy: str,
    workload: str,
    chunk: int,
    share: int = 0,
    prefix_tokens: int = 0,
    n_prefixes: int = 1,
    caching: bool = True,
):
    """One policy's runs at each of SWEEP_LOADS x the saturation rate (targets are applied later);
    with shared prefixes two more, higher loads (a cache hit skips work the saturation estimate counts)."""
    base = _stream(workload, SEARCH_REQUESTS, 1.0, share, prefix_tokens, n_prefixes)
    sat = load.saturation_rate(_setup.gpu, _setup.model, base, _setup.assumptions)
    loads = SWEEP_LOADS + (PREFIX_EXTRA_LOADS if share and prefix_tokens else [])
    return offload(
        load.sweep,
        _setup.gpu,
        _setup.model,
        base,
        policy,
        [sat * f for f in loads],
        chunk_tokens=chunk,
        prefix_caching=caching,
        assumptions=_setup.assumptions,
    )


def _chunk(policy: str, chunk: int) -> int:
    """The chunk budget as a cache key: only chunked prefill reads it."""
    return chunk if policy == "chunked" else load.DEFAULT_CHUNK_TOKENS


@page_cache("load._capacity", 64, yields=True)
def _capacity(
    _setup,
    setup_key: str,
    policy: str,
    workload: str,
    chunk: int,
    ttft_s: float,
    tbt_s: float,
    share: int = 0,
    prefix_tokens: int = 0,
    n_prefixes: int = 1,
    caching: bool = True,
) -> tuple[float, bool]:
    """(capacity in requests/s, whether it is only a lower bound: met at the load curve's top rate) of
    a policy at these settings: the load curve's runs bracket it, ``load.SWEEP_CAPACITY_ITERATIONS``
    bisection runs find it (at most one more when no point meets), and a run of the headline's default
    length confirms it: the curve's short runs can meet the targets just above what the GPU sustains,
    before their backlog builds (``load.sustained_capacity``: 0 where no rate is confirmed)."""
    sw = _sweep(_setup, setup_key, policy, workload, chunk, share, prefix_tokens, n_prefixes, caching)
    targets = load.Targets(ttft_s, tbt_s)
    cap = _capacity_in_sweep(_setup, sw, targets, chunk, caching)
    cap = offload(
        load.sustained_capacity, _setup.gpu, _setup.model, cap,
        _stream(workload, CONFIRM_REQUESTS, 1.0, share, prefix_tokens, n_prefixes), policy, targets,
        chunk_tokens=chunk, prefix_caching=caching, assumptions=_setup.assumptions,
        ceiling_per_s=float(sw.rate_per_s.max()),  # within the load curve it is drawn on
    )
    return cap.rate_per_s, cap.at_ceiling


def _capacity_in_sweep(setup, sw, targets, chunk: int, caching: bool = True):
    """``load.capacity_in_sweep``: here where the sweep answers it (every rate met), else its bisection
    runs in a worker, sent what the sweep found (a few arrays), not the sweep's runs."""
    met = sw.met(targets)
    if met.all():
        return load.capacity_in_sweep(setup.gpu, setup.model, sw, targets, chunk_tokens=chunk,
                                      prefix_caching=caching, assumptions=setup.assumptions)
    return offload(load.capacity_from_tests, setup.gpu, setup.model, sw.runs[0].stream, sw.policy,
                   sw.rate_per_s, met, targets, chunk_tokens=chunk, prefix_caching=caching,
                   assumptions=setup.assumptions)


def _policy_capacity(_setup, setup_key: str, policy: str, workload: str, chunk: int, ttft_s: float,
                     tbt_s: float) -> float:
    """The capacity (requests/s) of a policy with no shared prefixes (``_capacity``)."""
    return _capacity(_setup, setup_key, policy, workload, chunk, ttft_s, tbt_s)[0]


@page_cache("load._hit_curve", 16, yields=True)
def _hit_curve(
    _setup,
    setup_key: str,
    policy: str,
    workload: str,
    n: int,
    load_pct: int,
    chunk: int,
    share: int,
    prefix_tokens: int,
):
    """The prefix hit rate (and a never-evicting cache's) at each of CURVE_PREFIXES distinct prefixes:
    the prefix section's own runs at those counts (the same cache entries), so the curve passes through
    its metric."""
    hit, ideal = [], []
    for n_pre in CURVE_PREFIXES:
        run = _run(_setup, setup_key, policy, workload, n, load_pct, chunk, share, prefix_tokens, n_pre)
        hit.append(run.hit_rate)
        ideal.append(load.ideal_hit_rate(run.stream))
    return tuple(hit), tuple(ideal)  # shared between readers: not to be changed in place


@page_cache("load._roles", 16, yields=True)
def _roles(_setup, setup_key: str, workload: str, ttft_s: float, tbt_s: float):
    """Prefill-only and decode-only GPUs' capacities (policy-independent), and the mean KV transfer:
    searched on the load curves' short runs and confirmed on the run that confirms the colocated
    capacity they are compared with."""
    base = _stream(workload, SEARCH_REQUESTS, 1.0)
    return offload(
        load.role_capacities,
        _setup.gpu, _setup.model, base, load.Targets(ttft_s, tbt_s), assumptions=_setup.assumptions,
        confirm=_stream(workload, CONFIRM_REQUESTS, 1.0),
    )


@page_cache("load._distserve_examples", 1, constant=True, yields=True)
def _distserve_examples():
    """REFERENCE.md V20: DistServe's example through this model (setup-independent), at the default
    assumptions and at DistServe's engine speed (both readings of it)."""
    return {name: load.distserve_example(a) for name, a in (
        ("defaults", load.DEFAULT_ASSUMPTIONS), ("kernels", load.DISTSERVE_ENGINE),
        ("host", load.DISTSERVE_ENGINE_HOST))}


header(
    "05",
    "Under load: who waits for whom",
    """
Requests arrive while others are decoding. With **prefill-first** scheduling a new prompt runs alone
and every user's next token waits for it; **chunked prefill** cuts prompts into pieces that ride along
with the decodes. Pick the policy: the dashboard's utilization hardly moves, the time between tokens does.
""",
    prefix="load",
)

setup = current_setup()
policy = st.radio(
    "Scheduling policy",
    load.POLICIES,
    index=0,
    format_func=POLICY_LABEL.get,
    horizontal=True,
    key="load_policy",
    bind="query-params",
    help="Prefill-first: vLLM V0's default, whole prompts first, no chunking. Decode-first: new prompts "
    "wait until the running batch has finished. Chunked: Sarathi-Serve / vLLM chunked prefill (always on "
    "in vLLM V1), a token budget a step, decodes first.",
)
headline = st.container(key="load_headline")  # filled once the run is known

settings = st.container(horizontal=True, wrap=True, gap="small", key="load_settings")
load_pct = settings.select_slider(
    "Arrival rate, % of saturation",
    LOADS,
    value=60,
    key="load_rate",
    bind="query-params",
    width=230,
    help="Poisson arrivals at this share of the saturation estimate (the caption gives it in "
    "requests/s): the mean prompt at a 2,048-token chunk's cost a token plus the mean output at the "
    "largest batch's decode cost. A scale, not a bound: a policy may serve somewhat more (prefill-first's "
    "larger steps) or much less.",
)
workload = settings.radio(
    "Lengths",
    load.LENGTHS,
    format_func=WORKLOAD_LABEL.get,
    horizontal=True,
    key="load_workload",
    bind="query-params",
    width=290,
)
n_requests = settings.select_slider(
    "Requests", REQUESTS, value=2000, key="load_requests", bind="query-params", width=170
)
chunk = settings.select_slider(
    "Chunk budget, tokens a step",
    CHUNKS,
    value=load.DEFAULT_CHUNK_TOKENS,
    key="load_chunk",
    bind="query-params",
    width=230,
    help="Chunked prefill only: new tokens a step, decodes included (Sarathi-Serve: 512 for strict "
    f"targets, 2,048 relaxed; vLLM V1's API server defaults to {engine_max_batched_tokens(setup.gpu):,} "
    f"on the {setup.gpu.name}, its max_num_batched_tokens).",
)
targets_row = st.container(horizontal=True, wrap=True, gap="small", key="load_targets")
preset = targets_row.radio(
    "Targets (p99 TTFT / p99 TBT)",
    [*load.TARGET_PRESETS, "custom"],
    format_func=PRESET_LABEL.get,
    horizontal=True,
    key="load_preset",
    bind="query-params",
    width=330,
    help="Two target pairs: relaxed chat and strict interactive (percentiles of TTFT and of the gaps "
         "between tokens); 'Custom' uses the two sliders. Goodput holds each request to the TTFT target "
         "and its mean gap (TPOT) to the second, as vllm bench serve does.",
)
custom = preset == "custom"
ttft_pick = targets_row.select_slider(
    "Custom TTFT target, s", TTFTS, value=2.0, key="load_ttft", bind="query-params", width=200,
    disabled=not custom, help="Used with the Custom targets only; a preset's targets are in its name."
)
tbt_pick = targets_row.select_slider(
    "Custom TBT target, ms", TBTS, value=100, key="load_tbt", bind="query-params", width=200,
    disabled=not custom, help="Used with the Custom targets only; a preset's targets are in its name."
)
if custom:
    ttft_s, tbt_s = float(ttft_pick), tbt_pick / 1e3
else:
    ttft_s, tbt_s = load.TARGET_PRESETS[preset].ttft_s, load.TARGET_PRESETS[preset].tbt_s
tbt_ms = round(tbt_s * 1e3)
targets = load.Targets(ttft_s, tbt_s)

key = repr(setup)


def _longest(share: int = 0, prefix_tokens: int = 0, n_prefixes: int = 1) -> int:
    """The longest request, prompt and output, of every stream the page runs at these settings: the
    headline's and the capacity search's short and confirming runs (different lengths of stream draw
    different requests), so that no run meets a request the card or the model cannot hold."""
    return max(int((s.prompt_tokens + s.output_tokens).max()) for s in (
        _stream(workload, n, 1.0, share, prefix_tokens, n_prefixes)
        for n in sorted({n_requests, SEARCH_REQUESTS, CONFIRM_REQUESTS})))


longest = _longest()
with headline:  # where the result would be, under the main control (on a phone the settings fill a screen)
    fits_or_stop(setup, 1, longest, "The longest request of this workload",
                 # the fixed workload's requests are the shorter: offered only from the long-tailed chat
                 levers=("Pick the fixed-length workload (Lengths) on this page" if workload == "sharegpt"
                         else None))
    if workload == "sharegpt" and setup.model.max_positions is not None:
        free = load.make_stream(n_requests, 1.0, lengths="sharegpt")  # the same draw, no limit
        unbounded = int((free.prompt_tokens + free.output_tokens).max())
        if unbounded > setup.model.max_positions:
            st.caption(f"Chat-like lengths drawn within the {setup.model.max_positions:,} positions "
                       f"{setup.model.name} reads: a longer request is drawn again, as vLLM's benchmark "
                       f"skips a sample longer than the model's context (without the limit the longest "
                       f"would run to {unbounded:,} tokens).")
run = _run(setup, key, policy, workload, n_requests, load_pct, _chunk(policy, chunk))
other_policy = "prefill-first" if policy != "prefill-first" else "chunked"
other = _run(setup, key, other_policy, workload, n_requests, load_pct, _chunk(other_policy, chunk))
metrics, other_metrics = run.metrics(targets), other.metrics(targets)
rate = run.stream.n / float(run.stream.arrival_s[-1])


with headline:
    m = metric_slots(4)
    _compared(
        m[0],
        "p99 TBT",
        fmt.seconds(run.tbt_pct(99)),
        delta=f"{other_policy}: {fmt.seconds(other.tbt_pct(99))}",
        help=define("TBT"),
    )
    _compared(
        m[1],
        "p99 TTFT",
        fmt.duration(run.ttft_pct(99)),
        delta=f"{other_policy}: {fmt.duration(other.ttft_pct(99))}",
        help=define("TTFT"),
    )
    _compared(
        m[2],
        "GPU utilization",
        fmt.percent(run.utilization_gpu),
        delta=f"{other_policy}: {fmt.percent(other.utilization_gpu)}",
        help=define("GPU utilization (utilization.gpu)") + " The share of wall time with a kernel running.",
    )
    _compared(
        m[3],
        "Goodput",
        fmt.rate(metrics.goodput_rps, "req/s"),
        delta=f"{other_policy}: {fmt.rate(other_metrics.goodput_rps, 'req/s')}",
        help=define("Goodput")
        + f" Here: TTFT ≤ {fmt.seconds(ttft_s)} and TPOT ≤ {fmt.seconds(tbt_s)}. TPOT is a request's mean "
        "gap, so a few long stalls average out of it; the p99 TBT keeps them, and so does the capacity "
        "(in the load curves' section below).",
    )
    st.caption(
        f"{n_requests:,} {WORKLOAD_LABEL[workload].lower()} requests at **{fmt.rate(rate, 'req/s')}** "
        f"({load_pct} % of the saturation estimate, {fmt.rate(rate * 100 / load_pct, 'req/s')}); "
        f"targets p99 TTFT ≤ {fmt.seconds(ttft_s)}, p99 TBT ≤ {fmt.seconds(tbt_s)} (TBT: each gap "
        "between a user's tokens, what vLLM calls ITL; goodput tests each request's TTFT and mean gap, "
        "its TPOT, so a p99 TBT over its target can stand beside most requests on target); "
        f"{fmt.counted(run.preemptions, 'preemption')}, {int(run.rejected.sum()):,} rejected (too long "
        "for the KV cache)."
    )
    if not run.steady():
        st.caption(
            f"**{POLICY_LABEL[policy]} is past what it serves at this rate**: its queue grows through the "
            f"run, so its TTFT is the backlog's. The % of saturation is one scale for every policy "
            f"(prompts priced in {load.SATURATION_CHUNK_TOKENS:,}-token steps)"
            + (f"; in {chunk:,}-token chunks each step re-reads the weights"
               + (" and the experts its tokens reach" if setup.model.n_experts else "")
               + " and pays a step's fixed costs, so prompts cost more and this policy saturates sooner "
               "(prefill-first keeps up at this rate): a larger chunk budget moves it back"
               if policy == "chunked" and chunk < load.SATURATION_CHUNK_TOKENS
               and other_policy == "prefill-first" and other.steady()
               else "")
            + ". Lower the rate to see it in steady state.")

long_rid, users = timeline_users(run)
if users:
    chart(
        view(
            "timeline",
            (key, policy, workload, n_requests, load_pct, _chunk(policy, chunk), tbt_s),
            lambda: timeline_figure(run, long_rid, users, tbt_s),
        ),
        key="load_timeline",
        title=f"{POLICY_LABEL[policy]}: the tokens of {fmt.counted(len(users), 'user')} as a "
              f"{int(run.stream.prompt_tokens[long_rid]):,}-token prompt, the longest, arrives",
        alt=f"A tick for each token of {fmt.counted(len(users), 'user')} around the arrival of a "
        f"{int(run.stream.prompt_tokens[long_rid]):,}-token prompt under {POLICY_LABEL[policy]}; p99 time "
        f"between tokens {fmt.seconds(run.tbt_pct(99))}.",
    )
    st.caption(
        "The shaded band runs from the long prompt's arrival to its first token, and a lighter one "
        "on to the users' next tokens where the prompts that arrived meanwhile prefill first; a "
        "vermillion tick is a token that came later than the TBT target after the one before. This is "
        "the stall around the longest prompt of the run's middle half, the worst kind, not a typical "
        "gap: the p99 above counts every gap. Prefill-first: one step carries the whole prompt, and "
        "every user's next token waits for it, and for the prompts that arrived meanwhile. Chunked: the "
        "prompt "
        "rides along in budget-sized pieces, each step a little longer. Decode-first: nobody's token "
        "waits, and the new prompt waits for the whole batch instead."
    )
else:  # nobody decodes when the long prompt arrives: there is no stall to draw
    st.caption(f"At this rate no one is decoding when the longest prompt arrives under "
               f"{POLICY_LABEL[policy].lower()}, so there is no stall to draw: raise the arrival rate to see "
               "who waits for whom.")

def _measured_note(setup) -> str:
    """The online runs measured on this setup, named with the model's error: they report a mean
    time per output token at their own rate and lengths, not a p99 of this page's stream, so they
    are named here rather than drawn on these curves."""
    runs = predictions(setup, ("tpot_ms",))
    if not runs:
        return summary(runs)
    return (summary(runs) + " These online runs report a mean time per output token at their own rate "
            "and lengths, not a p99 of this page's stream, so they are named here, not drawn.")


windowed_layers_note(setup, (
    "The scheduler counts every token of its KV cache, so past the window it holds fewer requests at once "
    "than an engine that frees the pages sliding out of it." if setup.model.window_share >= 1 else
    "The scheduler counts the cache in tokens of the full-attention layers, and each running request also "
    f"holds its windowed layers' last {setup.model.sliding_window or 0:,} tokens, as vLLM's hybrid KV-cache "
    "manager keeps them (from admission on: a little more than an engine holds while a context is still "
    "shorter than the window)."))

def _caps() -> dict[str, float]:
    """Each policy's capacity (requests/s) at these settings: its load curve and a bisection."""
    return {p: _policy_capacity(setup, key, p, workload, _chunk(p, chunk), ttft_s, tbt_s)
            for p in load.POLICIES}


def _lower_bounds() -> dict[str, bool]:
    """Per policy, whether its capacity is only a lower bound (met at the load curve's top rate)."""
    return {p: _capacity(setup, key, p, workload, _chunk(p, chunk), ttft_s, tbt_s)[1] for p in load.POLICIES}


def _sweeps() -> dict:
    """Each policy's load curve at these settings."""
    return {p: _sweep(setup, key, p, workload, _chunk(p, chunk)) for p in load.POLICIES}


def _curves_section() -> dict:
    """The load curves, each policy's capacity and the dashboard against the users."""
    caps, bound, sweeps = _caps(), _lower_bounds(), _sweeps()
    st.metric(
        "Capacity",
        _held(caps[policy], bound[policy]),
        border=True,
        delta=f"{other_policy}: {_held(caps[other_policy], bound[other_policy])}",
        delta_color="off",
        delta_arrow="off",
        help=define("Capacity") + f" Here: {POLICY_LABEL[policy].lower()}, p99 TTFT ≤ {fmt.seconds(ttft_s)} "
        f"and p99 TBT ≤ {fmt.seconds(tbt_s)}.",
        width="content",
    )
    capacities = ", ".join(f"{POLICY_LABEL[p]} {_held(caps[p], bound[p])}" for p in load.POLICIES)
    for kind, name, target_s, target_text in (("tbt", "time between tokens", tbt_s, f"{tbt_ms} ms"),
                                              ("ttft", "time to first token", ttft_s, f"{ttft_s:g} s")):
        chart(
            view(kind, (key, workload, chunk, targets, rate),
                 lambda kind=kind, target_s=target_s: latency_figure(sweeps, kind, target_s, rate, caps,
                                                                     targets.steady_slack_s)),
            key=f"load_{kind}_curve",
            title=f"p99 {name} against the arrival rate",
            alt=f"p99 {name} against arrival rate for the three policies, with the {target_text} target; "
            f"capacities: {capacities}.",
        )
    knee = sweeps[policy].knee_per_s
    knee_lo, _ = sweeps[policy].knee_bracket
    below = [p for p in load.POLICIES if 0 < caps[p] < float(sweeps[p].rate_per_s[0])]
    st.caption(
        "Diamonds: each policy's capacity, the highest rate at which both p99 targets hold (a bisection "
        f"over rates, {SEARCH_REQUESTS} requests a run, fixed seed, then confirmed on a "
        f"{CONFIRM_REQUESTS:,}-request run, stepping down until it holds or up while it still does: a "
        "short run just past what the GPU sustains ends before its backlog builds, and a short run's p99 "
        "over fewer requests can miss where the longer run meets, so a diamond can sit off where its "
        "curve crosses a target); "
        "crosses on the TTFT "
        "chart: each policy's knee. Dotted: this page's rate. "
        + ("Hollow points: past what the policy serves (from the first rate whose run's queue grows "
           "through it), so the p99 is the backlog's at the run's end, set by the run's length as much "
           "as by the rate (a curve can dip there). "
           if any(any(backlog_points(sweeps[p], targets.steady_slack_s, caps[p])) for p in sweeps) else "")
        + (" ".join(f"{POLICY_LABEL[p]}'s capacity, {fmt.rate(caps[p], 'req/s')}, is below the lowest "
                    f"rate drawn ({fmt.rate(float(sweeps[p].rate_per_s[0]), 'req/s')}): no diamond."
                    for p in below) + " " if below else "")
        + (
            f"The knee of {POLICY_LABEL[policy].lower()}, where queueing starts to set the TTFT (p99 twice "
            f"its light-load value), lies between the sweep's rates {fmt.rate(knee_lo, 'req/s')} and "
            f"{fmt.rate(knee, 'req/s')}."
            if knee == knee
            else ""
        )
        + " "
        + _measured_note(setup)
    )
    chart(
        view("dash", (key, workload, chunk, targets, rate), lambda: dashboard_figure(sweeps, rate, targets)),
        key="load_dashboard",
        title="What the dashboard shows, and what the users get",
        alt="nvidia-smi utilization against arrival rate, every policy, while the share of requests "
        "meeting both targets falls at different rates.",
    )
    st.caption(
        "On target: a request whose own TTFT and mean TPOT both meet the targets (goodput's test, as "
        "vllm bench serve counts it). A capacity asks more: the p99 TTFT and the p99 of every gap between "
        "tokens, so a policy can keep nearly every request on target at rates past its capacity (one "
        "long stall in a request hardly moves its mean, but it is a gap in the p99)."
    )

    pf = _run(setup, key, "prefill-first", workload, n_requests, load_pct, load.DEFAULT_CHUNK_TOKENS)
    ch = _run(setup, key, "chunked", workload, n_requests, load_pct, chunk)
    apart = abs(pf.utilization_gpu - ch.utilization_gpu)
    # One chunk alone (its prompt tokens, no decodes): past the TBT target, chunking cannot meet it.
    chunk_step_s = float(prefill_cost(setup.gpu, setup.model, [chunk], 1, setup.assumptions).time_s[0])
    low = min((pf, ch), key=lambda r_: r_.utilization_gpu)  # what the lower reading's idle time is
    idle_share = low.idle_s / low.wall_s
    host_share = float(low.cost.host_time_s.sum()) / low.wall_s
    busy = min(pf.utilization_gpu, ch.utilization_gpu) >= BUSY_UTILIZATION
    st.info(
        ("**The dashboard reads the same.** " if apart < 0.05 else
         f"**The dashboard reads them {apart * 100:.0f} points apart.** ")
        + f"At {fmt.rate(rate, 'req/s')}, nvidia-smi reports "
        f"**{fmt.percent(pf.utilization_gpu)}** under prefill-first and "
        f"**{fmt.percent(ch.utilization_gpu)}** with chunked prefill. The p99 time between tokens is "
        f"**{fmt.seconds(pf.tbt_pct(99))}** against "
        f"**{fmt.seconds(ch.tbt_pct(99))}**, and "
        + ("neither holds any load within the targets here"
           if max(caps["prefill-first"], caps["chunked"]) <= 0 else
           "the load each holds within the targets is "
           f"**{_held(caps['prefill-first'], bound['prefill-first'])}** against "
           f"**{_held(caps['chunked'], bound['chunked'])}**")
        + ((f": here chunked prefill holds less, since one {chunk:,}-token chunk step alone takes "
            f"{fmt.seconds(chunk_step_s)}, past the {fmt.seconds(tbt_s)} TBT target: every chunk stalls "
            "every decoding user, where prefill-first stalls them once a prompt. "
            if chunk_step_s > tbt_s else
            f": here chunked prefill holds less, since in {chunk:,}-token chunks every step re-reads the "
            "weights" + (" and the experts its tokens reach" if setup.model.n_experts else "")
            + " and pays a step's fixed costs for few prompt tokens. ")
           if caps["chunked"] < caps["prefill-first"] else ". ")
        + ("A kernel runs either way; what it makes users wait for is not on that gauge." if busy else
           ("The GPU idles between arrivals" if idle_share >= host_share else
            "Short steps leave the GPU idle for the host's share of each")
           + " (utilization counts it), and still the gauge says nothing of what users wait for."),
        icon=":material/lightbulb:",
    )
    return sweeps


def _held(rate_per_s: float, lower_bound: bool = False) -> str:
    """A rate held within the targets: 'none' where no rate is (one word wherever a 0 would show), and
    '≥' where it is only a lower bound (the load curve's top rate still met the targets)."""
    if rate_per_s <= 0:
        return "none"
    return ("≥ " if lower_bound else "") + fmt.rate(rate_per_s, "req/s")


def _role_holds(rate_per_s: float, at_bound: bool, target: str) -> str:
    """What one role's GPU holds within its target, for the split's caption."""
    if rate_per_s <= 0:
        return f"meets the {target} target at no rate here"
    return f"holds {'at most ' if at_bound else ''}{fmt.rate(rate_per_s, 'req/s')} within the {target} target"


def _prefix_section() -> tuple:
    """Prefix caching: the hit rate, TTFT and capacity with and without it."""
    st.markdown(
        "Many requests start with the same tokens: a system prompt, a document, earlier turns. With "
        "**prefix caching** (vLLM's automatic prefix caching, SGLang's RadixAttention) their KV stays in "
        "the cache after the request ends; a request that finds its prefix there prefills only the rest."
    )
    prow = st.container(horizontal=True, wrap=True, gap="small", key="load_prefix_settings")
    caching = prow.toggle("Prefix caching", value=True, key="load_caching", bind="query-params", width=150)
    share = prow.select_slider(
        "Requests with a shared prefix, %", SHARES, value=75, key="load_share", bind="query-params", width=220
    )
    prefix_tokens = prow.select_slider(
        "Prefix length, tokens", PREFIX_TOKENS, value=2048, key="load_prefix", bind="query-params", width=200
    )
    n_prefixes = prow.select_slider(
        "Distinct prefixes", N_PREFIXES, value=16, key="load_prefixes", bind="query-params", width=200
    )
    pk = _chunk(policy, chunk)
    # No shared prefix: the prefix settings change nothing, so the headline's runs and capacities (the
    # same cache entries) are these.
    prefix_args = (share, prefix_tokens, n_prefixes) if share else (0, 0, 1)
    longest_prefixed = _longest(*prefix_args)
    if not fits_or_say(setup, 1, longest_prefixed,
                       "The longest request with its prefix",
                       levers="Shorten the prefix or lower the share on this section", section=True):
        return None
    on, off = (True, False) if share else (True, True)
    # The headline's run length, so that at a 0 % share these are the headline's numbers.
    p_on = _run(setup, key, policy, workload, n_requests, load_pct, pk, *prefix_args, on)
    p_off = _run(setup, key, policy, workload, n_requests, load_pct, pk, *prefix_args, off)
    p_run, p_other = (p_on, p_off) if caching else (p_off, p_on)
    cap_on = _capacity(setup, key, policy, workload, pk, ttft_s, tbt_s, *prefix_args, on)
    cap_off = _capacity(setup, key, policy, workload, pk, ttft_s, tbt_s, *prefix_args, off)
    word = "without" if caching else "with"
    pm = metric_slots(4)
    _compared(
        pm[0],
        "Prefix hits",
        fmt.percent(p_on.hit_rate) if caching and share else "off" if share else "n/a",
        help=define("Prefix hit rate"),
        delta=f"never evicting: {fmt.percent(load.ideal_hit_rate(p_on.stream))}" if share else None,
    )
    _compared(
        pm[1],
        "p50 TTFT (prefix)",
        fmt.duration(p_run.ttft_pct(50)),
        delta=f"{word}: {fmt.duration(p_other.ttft_pct(50))}",
    )
    _compared(
        pm[2],
        "p99 TTFT (prefix)",
        fmt.duration(p_run.ttft_pct(99)),
        delta=f"{word}: {fmt.duration(p_other.ttft_pct(99))}",
    )
    _compared(
        pm[3],
        "Capacity (prefix)",
        _held(*(cap_on if caching else cap_off)),
        delta=f"{word}: {_held(*(cap_off if caching else cap_on))}",
        help=define("Capacity") + " Same prefix settings, same rate-independent seed.",
    )
    hit, ideal = _hit_curve(setup, key, policy, workload, n_requests, load_pct, pk, share, prefix_tokens)
    room = load.cache_room_prefixes(setup.gpu, setup.model, prefix_tokens)
    if share:
        chart(
            view(
                "prefix",
                (key, policy, workload, n_requests, load_pct, pk, share, prefix_tokens, n_prefixes),
                lambda: prefix_figure(CURVE_PREFIXES, hit, ideal, room, n_prefixes),
            ),
            key="load_prefix_curve",
            title=f"Prefix hit rate against distinct prefixes ({n_requests:,} requests a run, "
            f"{POLICY_LABEL[policy].lower()})",
            alt=f"Prefix hit rate with LRU in the KV cache against distinct prefixes of {prefix_tokens:,} "
            f"tokens; the cache could hold about {room:,.0f} of them if nothing else ran.",
        )
        st.caption(
            f"The KV cache holds at most **{room:,.0f}** prefixes of {prefix_tokens:,} tokens, fewer while "
            "requests run. Past that, least-recently-used eviction throws each prefix out before it comes "
            "back: the cache thrashes, and the hit rate falls below what a cache that never evicts would get "
            "(whose misses are only each prefix's first use)."
        )
    else:
        st.caption("No request shares a prefix at 0 %: raise the share to see the cache at work.")
    return hit, ideal


def _split_section() -> load.Disaggregation:
    """Disaggregated prefill and decode against the same GPUs colocated."""
    st.markdown(
        "DistServe's answer to the interference: run prefill and decode on **different GPUs**, moving "
        "each prompt's KV cache over the interconnect, and size each pool to its own target. Capacity "
        "per GPU (the analogue of DistServe's per-GPU goodput) is what it buys, or not, against the "
        "same GPUs each doing both."
    )
    tp = setup.model.tp  # GPUs per replica (sidebar): each prefill or decode instance is that many
    n_gpus = st.select_slider("GPUs" if tp == 1 else f"Instances of {tp} GPUs", GPU_COUNTS, value=4,
                              key="load_gpus", bind="query-params", width=240)
    if tp > 1:
        layout = ("tensor parallelism, the experts whole on each GPU" if setup.model.expert_parallel
                  else "tensor parallelism")
        st.caption(f"With {tp} GPUs per replica, each prefill or decode instance is {tp} GPUs ({layout}): "
                   f"the split is counted in instances, {n_gpus} × {tp} = {n_gpus * tp} GPUs, "
                   f"and every rate below is per GPU, an instance's rate / {tp}.")
    # The split against the better of the two colocated policies at these settings, whichever policy
    # the page shows: against prefill-first alone it read 1.8x better where chunked prefill, colocated,
    # held more than any split.
    colocated_caps = {p: _policy_capacity(setup, key, p, workload, _chunk(p, chunk), ttft_s, tbt_s)
                      for p in ("prefill-first", "chunked")}
    colocated_low = {p: _capacity(setup, key, p, workload, _chunk(p, chunk), ttft_s, tbt_s)[1]
                     for p in colocated_caps}  # only a lower bound: met at the load curve's top rate
    colocated_policy = max(colocated_caps, key=colocated_caps.get)
    weaker = "chunked" if colocated_policy == "prefill-first" else "prefill-first"
    weaker_held = _held(colocated_caps[weaker] / tp, colocated_low[weaker])
    weaker_text = f"{POLICY_LABEL[weaker].lower()} {weaker_held}"
    roles = _roles(setup, key, workload, ttft_s, tbt_s)
    colocated = colocated_caps[colocated_policy]
    d = load.disaggregation(
        setup.gpu,
        setup.model,
        run.stream,
        targets,
        n_gpus=n_gpus,
        colocated_per_instance=colocated,
        roles=roles,
    )
    p_best, d_best, v_best = d.best
    dm = metric_slots(4)
    # No split meets the targets at any rate: no best split either (an argmax over zeros).
    dm[0].metric("Best split (P : D)", f"{p_best} : {d_best}" if v_best > 0 else "none", border=True)
    ceiling = (d.prefill_at_bound or d.decode_at_bound) and v_best > 0
    dm[1].metric(
        "Per GPU, split",
        ("≤ " if ceiling else "") + fmt.rate(v_best, "req/s") if v_best > 0 else "none",
        border=True,
        help="Capacity per GPU of the best split (after DistServe's per-GPU goodput): min(P × prefill rate, "
             "D × decode rate) / (P + D), each role's rate its capacity within its target"
             + ("; a role met at its throughput bound counts at that bound, so this is a ceiling." if ceiling
                else "."),
    )
    dm[2].metric(
        "Per GPU, colocated",
        _held(d.colocated_per_gpu, colocated_low[colocated_policy]),
        border=True,
        delta=f"{POLICY_LABEL[colocated_policy].lower()}, the better of two", delta_color="off",
        delta_arrow="off",
        help=f"One {'GPU' if tp == 1 else f'instance of {tp} GPUs'} doing both under "
             f"{POLICY_LABEL[colocated_policy].lower()}, meeting both targets"
             + ("" if tp == 1 else f"; its rate / {tp}") + f". The better of the two colocated policies "
             f"here: {weaker_text} a GPU.",
    )
    dm[3].metric(
        "KV transfer, mean",
        fmt.seconds(d.transfer_s_mean),
        border=True,
        help=f"A prompt's KV cache over the peer link at {fmt.rate(d.link_bytes_per_s / 1e9, 'GB/s')}.",
    )
    chart(
        view(
            "disagg",
            (key, workload, targets, n_gpus, colocated_policy, colocated),
            lambda: disagg_figure(d),
        ),
        key="load_disagg",
        title=f"Capacity per GPU: {n_gpus * tp} GPUs split, against the same GPUs colocated",
        alt=f"Capacity per GPU of every prefill:decode split of {n_gpus} "
        + ("GPUs" if tp == 1 else f"instances of {tp} GPUs") + f"; best {p_best}:{d_best} at "
        f"{fmt.sig(v_best)} req/s per GPU against "
        + (f"{fmt.sig(d.colocated_per_gpu)} colocated." if d.colocated_per_gpu > 0 else "none colocated."),
    )
    bound = [role for role, at in (("prefill", d.prefill_at_bound), ("decode", d.decode_at_bound)) if at]
    if v_best > 0 and d.colocated_per_gpu > 0:
        gain = v_best / d.colocated_per_gpu
        # The split's figure is a ceiling where a role was met at its bound, the colocated one a floor
        # where its curve's top rate still met the targets: then the ratio is at most this.
        at_most = "at most " if ceiling or colocated_low[colocated_policy] else ""
        if not at_most and abs(gain - 1) < 0.02:
            verdict = f"the best split serves about the same a GPU ({gain:.2f}×)"
        elif at_most and round(gain, 2) == 1:  # a ceiling level with colocated: no more, not less
            verdict = (f"the best split serves **no more a GPU** (at most {gain:.2f}×): here "
                       "disaggregation buys nothing")
        elif gain > 1:
            verdict = f"the best split serves **{at_most}{gain:.2f}×** as much a GPU"
        else:
            verdict = (f"the best split serves **less a GPU** ({at_most}{gain:.2f}×): here disaggregation "
                       "buys nothing")
        st.markdown(f"Against the better colocated policy at these settings, "
                    f"{POLICY_LABEL[colocated_policy].lower()} "
                    f"({_held(d.colocated_per_gpu, colocated_low[colocated_policy])} a GPU; "
                    f"{weaker_text}), {verdict}.")
    st.caption(
        f"A prefill-only GPU {_role_holds(d.prefill_per_gpu, d.prefill_at_bound, 'TTFT')}; a decode-only "
        f"GPU {_role_holds(d.decode_per_gpu, d.decode_at_bound, 'TBT')}. A split serves what its slower "
        "pool serves, min(P × prefill rate, D × decode rate), over P + D "
        + ("GPUs." if tp == 1 else f"instances of {tp} GPUs (rates per GPU).")
        + ("" if not bound else
           f" The {' and '.join(bound)} rate{'s are' if len(bound) > 1 else ' is'} the GPU's throughput "
           f"bound{'s' if len(bound) > 1 else ''} (every step at its fullest: "
           + ("; ".join(({"prefill": "prompts filling the largest step",
                          "decode": "the largest batch the KV cache and max_num_seqs allow"})[r]
                         for r in bound))
           + f"): a {CONFIRM_REQUESTS:,}-request run at that rate still met the target, too short for "
           "the queue that would build at full load, so the search stops there and the split's figure is "
           "a ceiling.")
    )
    return d


# The rest of the page runs its searches only when a reader opens it: a first view of a setup costs
# the two headline runs, not the ~20 load-curve, capacity and prefix runs (README, "Many readers").
sweeps = hit_curve = split = None
st.markdown(f"**Further:** each section simulates its own scheduler runs when you open it (the load curves "
            f"{SEARCH_REQUESTS:,} requests a run, each capacity confirmed on {CONFIRM_REQUESTS:,}; prefix "
            f"caching at the headline's {n_requests:,}), so the first opening for a setup takes a moment.")
box = lazy_section("As the load rises: each policy's load curve and capacity", "load_show_curves",
                   icon=":material/show_chart:")
if box is not None:
    with box:
        sweeps = _curves_section()
box = lazy_section("Prefix caching", "load_show_prefix", icon=":material/cached:",
                   open_for=("load_caching", "load_share", "load_prefix", "load_prefixes"))
if box is not None:
    with box:
        hit_curve = _prefix_section()
box = lazy_section("Disaggregated prefill and decode", "load_show_split", icon=":material/call_split:",
                   open_for=("load_gpus",))
if box is not None:
    with box:
        split = _split_section()

# Decode steps of DistServe's model under both readings of its engine, at a colocated GPU's few
# sequences and at a busy decode GPU's batch, each at its mean context (prompt + half the output).
SMALL_BATCH, LARGE_BATCH = 2, 24


@page_cache("load._distserve_steps", 1, constant=True)
def _distserve_steps() -> dict:
    """Decode step, ms, of DistServe's model at both batches under both readings (setup-independent)."""
    return {name: [1e3 * float(decode_step_cost(GPUS[load.DISTSERVE_GPU], load.DISTSERVE_MODEL, b,
                                                load.DISTSERVE_PROMPT + load.DISTSERVE_OUTPUT // 2,
                                                a).time_s)
                   for b in (SMALL_BATCH, LARGE_BATCH)]
            for name, a in (("kernels", load.DISTSERVE_ENGINE), ("host", load.DISTSERVE_ENGINE_HOST))}


_full_layers = " of the full-attention layers" if 0 < setup.model.window_share < 1 else ""


def _how_body() -> str:
    """The expander's text. It quotes DistServe's example through the model (about 2 s of runs, once
    per server process), so it is built only when a reader opens the expander."""
    examples, step_ms = _distserve_examples(), _distserve_steps()
    example, matched, host_read = examples["defaults"], examples["kernels"], examples["host"]
    return rf"""
**Requests.** Poisson arrivals; lengths fixed or long-tailed chat (lognormal, prompt median
{load.SHAREGPT_PROMPT[0]:.0f} tokens, output median {load.SHAREGPT_OUTPUT[0]:.0f}, capped; shapes chosen
to look like chat traffic with a tail of long documents, not fitted to a dataset: its prompts are longer
than ShareGPT's, whose means page 02 uses, {SHAREGPT.prompt_mean:.0f} tokens in and
{SHAREGPT.output_mean:.0f} out). One seed; a different rate
re-times the same requests (gaps divided by the rate), so every point of a curve holds the same requests.

**Steps.** An event loop over engine steps. *Prefill-first*: whenever a waiting prompt can be
admitted, the next step prefills the admitted prompts (up to {MAX_BATCHED_TOKENS:,} new tokens) and nobody
decodes in it. *Decode-first*: prompts are admitted only when the running batch has finished. *Chunked*: every
step carries at most $C$ new tokens: one for each running decode, then prompt chunks, first come first
served. Each step's sums, new tokens $T$, attention pairs $P=\sum q_i(c_i+\frac{{q_i+1}}{{2}})$, KV tokens
$K$ and sampled positions $S$, are priced by the shared cost model of section 00; a run of decode-only
steps between events is priced in closed form (at a fixed batch a decode step is linear in its KV
tokens until an operator changes bound). The whole schedule is priced again in one vectorised call for
the FLOPs, bytes and kernel time (the two agree to rounding; a test checks it).

**Memory.** The KV cache holds {run.kv_budget_tokens:,} tokens{_full_layers} here (card × 0.9 − weights −
the engine's start-up reserve, as section 02 counts it). At most {load.engine_max_seqs(setup.gpu):,}
requests run at once (vLLM's default `max_num_seqs` on this GPU; under chunked prefill also at most
$C$, one decode token each). A prompt is admitted only if its KV fits with one step of decode tokens
to spare; when the decodes' next tokens do not fit, the most recently admitted request is preempted and later
recomputed (prompt and tokens so far), as vLLM does.

**Latency and goodput.** TTFT: arrival to the end of the step that computes the prompt's last token.
TBT: each gap between a user's consecutive tokens (a step that gives $n$ users a token after the same
wait is $n$ samples), p99 over all of them. Goodput: requests per second that meet TTFT ≤ target and
mean time per output token ≤ the TBT target (section 04's definition, the same code). GPU utilization:
time with a kernel running over wall time, idle gaps included (NVML's definition).

**Capacity.** The highest arrival rate at which p99 TTFT and p99 TBT both meet their targets, with
the queue steady (its last quarter's median TTFT at most twice its first half's, plus 5 % of the TTFT
target) and no request
turned away, found
by geometric bisection with the same requests (re-timed) at every rate. For each policy the load
curve's own runs (at {", ".join(f"{f:g}" for f in SWEEP_LOADS)} × the saturation rate, the rate the GPU
would finish with no idle time at the mean lengths) give the bracket: the last rate that meets the
targets before the first that does not; {load.SWEEP_CAPACITY_ITERATIONS} bisection runs narrow it. The
prefix-caching capacities are found the same way on that section's own load curve, which adds
{" and ".join(f"{f:g}" for f in PREFIX_EXTRA_LOADS)} × the saturation rate (a cache hit skips work the
rate counts). Each capacity is then confirmed on a {CONFIRM_REQUESTS:,}-request run (the headline's
length): where that run meets the targets at the rate found, the rate climbs by
1/{load.CONFIRM_STEP:g} while it still does (up to the load curve's top rate, a role's throughput
bound; reaching it, or climbing {load.CONFIRM_TRIES} steps, makes the figure a lower bound), and
{load.COARSE_BISECTIONS} bisections narrow it against the rate that missed; where it does not, the
rate steps down by {load.CONFIRM_STEP:g} until it does (then coarser steps; none met: no capacity). A
disaggregated role (no prefix cache) searches from 1/16 of its throughput bound up to the bound itself
(prompts filling the largest step; decode at the largest batch the KV cache and max_num_seqs hold): a
run of {SEARCH_REQUESTS} requests above it can still meet its targets, so a role met at its bound is
shown as at most that. Each role's capacity is then confirmed on the {CONFIRM_REQUESTS:,}-request run, as
the colocated capacity it is compared with is. Either way a looser target never
gets a lower capacity (the rates tried do not depend on the targets until the first answer that
differs; a test checks it).

**Prefix caching.** A share of requests start with one of $N$ prefixes (uniformly chosen). The first
request with a prefix computes it and leaves its KV in the cache; later ones with that prefix prefill
only their own tokens, attending over the cached prefix. Unused cached prefixes are evicted least
recently used when memory is needed.

**Disaggregation.** Each role's capacity from its own runs: a prefill-only GPU against the TTFT target
(each request leaves after its first token), a decode-only GPU against the TBT target (requests arrive
with their KV; the first gap includes the transfer, prompt tokens × KV bytes a token / the peer link's
achieved bandwidth, MEASURED.md §3.1). Capacity per GPU of a split is $\min(P\,r_p, D\,r_d)/(P+D)$
(DistServe's per-GPU goodput arithmetic; `sim.metrics.per_gpu_goodput`).

**REFERENCE V20 through this model.** DistServe's example (a 13B model, OPT-13B, on an A100 80GB; 512
prompt and 64 output tokens; P90 TTFT 0.4 s, P90 TPOT 40 ms). At the app's default assumptions, fitted
to 2024-26 engines, every role here is faster than the paper's engine: prefill-only
**{example.prefill_per_gpu:.2f}** req/s (paper 5.6), decode-only **{example.decode_per_gpu:.2f}** (10),
colocated **{example.colocated_per_gpu:.2f}** (1.6), so 2 prefill + 1 decode give only
**{example.gain:.2f}×** colocated (paper 2.08×). Matched to the paper's engine instead (its kernels at
compute efficiency {load.DISTSERVE_ENGINE.compute_eff:.2f} and bandwidth efficiency
{load.DISTSERVE_ENGINE.memory_eff:.2f}, fitted by `scripts/calibrate_distserve.py` so that the prefill-only
and decode-only GPUs hold the paper's 5.6 and 10 req/s: here {matched.prefill_per_gpu:.2f} and
{matched.decode_per_gpu:.2f}), the colocated GPU, where the two phases interfere, is the model's own
prediction: **{matched.colocated_per_gpu:.2f}** req/s (paper 1.6), and the split gives
**{matched.gain:.2f}×** (paper 2.08×). Where the engine's time goes matters: the same two rates matched
with {load.DISTSERVE_ENGINE_HOST.host_overhead_s * 1e3:.0f} ms of host time a step instead of slow decode
kernels give colocated {host_read.colocated_per_gpu:.2f} req/s and {host_read.gain:.1f}×: a decode step at
{SMALL_BATCH} sequences then costs {step_ms["host"][0]:.0f} ms instead of {step_ms["kernels"][0]:.0f} (at
{LARGE_BATCH}, as on a busy decode GPU, {step_ms["host"][1]:.0f} against {step_ms["kernels"][1]:.0f}),
leaving less of the {load.DISTSERVE_TARGETS.tbt_s * 1e3:.0f} ms TPOT target for the prefills that stall it.
The paper does not split its engine's time; its engine is C++ (LLMServe/DistServe's README:
"pure C++ GPT implementation"), which points at the kernels.
"""


how_computed(
    _how_body,
    assumptions=[
        "A replica is the sidebar's GPUs per replica, the model split over them by tensor parallelism "
        "(a mixture's experts as the sidebar lays them out: split by width, or whole on each GPU); "
        "the numbers are per replica. No pipeline parallelism.",
        f"First come, first served; at most {load.engine_max_seqs(setup.gpu):,} running requests (vLLM's "
        f"default max_num_seqs on this GPU: {MAX_SEQS_LARGE_GPU:,} on cards of {LARGE_GPU_BYTES / GiB:.0f} "
        f"GiB or more other than the A100, {MAX_SEQS_DEFAULT:,} elsewhere), and no more than the chunk "
        "budget under chunked prefill.",
        "KV memory in tokens (of the full-attention layers for a model with windowed layers, each request "
        "also holding its windowed layers' window); the last page's slack (under 16 tokens a request) is "
        "ignored.",
        "A request whose prompt plus output cannot fit the KV cache at all is rejected (vLLM refuses it).",
        f"Prefill-first batches whole prompts up to {MAX_BATCHED_TOKENS:,} tokens a step on every GPU "
        "(vLLM V0 ran whole prompts up to its max_num_batched_tokens, by default the model's whole "
        "context; this page's one budget keeps the policies comparable across cards); a longer prompt "
        "runs alone.",
        "Decode-first is request-level batching (FasterTransformer-style): the batch runs to completion.",
        f"The curves and capacities use {SEARCH_REQUESTS} requests a run; the headline run uses the number "
        "chosen above. Above saturation the queue grows with the run's length, so capacities are for runs "
        "of that length.",
        "Prefix caching: the first request with a prefix leaves it cached once its prefill is done; one "
        "arriving before that computes it again (no waiting on an in-flight prefix).",
        "Disaggregation: the prefill and decode pools are searched separately, as DistServe's placement "
        "does; the transfer uses the peer link of the chosen GPU (PCIe for L40S, L4 and custom GPUs).",
    ],
    sources=[
        f"{setup.gpu.name}: {setup.gpu.source}. {setup.model.name}: {setup.model.source}.",
        "Sarathi-Serve (Agrawal et al., OSDI '24): chunked prefill, token budgets of 512 / 2,048, "
        "'up to 28.3×' TBT with naive hybrid batching, chunking overhead 'at most ~25%' (REFERENCE.md §3.4).",
        "DistServe (Zhong et al., OSDI '24): per-GPU goodput, the 13B/A100 example (REFERENCE.md §3.5, V20).",
        "vLLM: chunked prefill, automatic prefix caching, recompute preemption, max_num_seqs defaults "
        "(vllm/engine/arg_utils.py).",
        "Interconnect: MEASURED.md §3.1 (NVLink per direction; nvbandwidth pair copy 396.4 of 450 GB/s).",
        "utilization.gpu definition: NVML API reference (REFERENCE.md §4).",
    ],
)


def _tables() -> dict:
    """The tables behind the charts shown: the headline run's, and those of each open section."""
    tables = {
        f"Requests ({policy})": view(
            "requests",
            (key, policy, workload, n_requests, load_pct, _chunk(policy, chunk)),
            lambda: requests_frame(run),
        ),
        "Timeline tokens": view(
            "timeline_frame",
            (key, policy, workload, n_requests, load_pct, _chunk(policy, chunk)),
            lambda: timeline_frame(run, long_rid, users),
        ),
    }
    if sweeps is not None:
        tables["Load sweep"] = view("sweep", (key, workload, chunk, targets),
                                    lambda: sweep_frame(sweeps, targets))
    if hit_curve is not None:
        tables["Prefix hit rate"] = prefix_frame(CURVE_PREFIXES, *hit_curve)
    if split is not None:
        tables["Disaggregated splits"] = splits_frame(split)
    return tables


data_expander(_tables, key="load_data")
next_link(__file__)
