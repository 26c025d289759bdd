"""04 · What to watch instead: every scenario measured with one ruler, a day on the dashboard, and the
metric that catches each failure."""

import math

import streamlit as st

from sim.chunked import DEFAULT_DECODE_BATCH as CHUNK_BATCH
from sim.chunked import DEFAULT_PROMPT_TOKENS as CHUNK_PROMPT
from sim.metrics import (
    ALERTS,
    BATCH_REQUESTS,
    BATCH_SLOTS,
    BATCH_WORKLOAD,
    BUSY_UTILIZATION,
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
    longest_request_tokens,
    measure,
    peak_context_tokens,
    scenario_runs,
)
from sim.paging import DEFAULT_MEMORY_UTILIZATION
from sim.paging import simulate as paging_simulate
from ui import format as fmt
from ui.feasibility import fits_or_say, fits_or_stop, reads_or_say, windowed_layers_note
from ui.fig_watch import (
    LINK_COLUMN,
    count_range,
    day_figure,
    day_frame,
    failures_display,
    failures_frame,
    percent_range,
    row_links,
    scenario_figure,
    scenario_frame,
    scenario_table,
    spread,
)
from ui.glossary import define
from ui.layout import (
    chart,
    check_redraw_values,
    data_expander,
    header,
    how_computed,
    metric_row,
    next_link,
    redraw_values,
    stop_page,
)
from ui.measured import offline_points, predictions, summary
from ui.price import cost_sentence
from ui.setup import current_setup
from ui.sim_cache import page_cache
from ui.state import SETUP_KEYS
from ui.workers import offload


# Cached as objects (st.cache_resource): frozen dataclasses of arrays nothing writes to. The runs take
# ~20 ms and depend only on the setup; the SLO only decides which requests count (``measure``).
@page_cache("watch._runs", 8)
def _runs(_setup, setup_key: str):
    """Every section's run and the simulated day (``setup_key`` stands for the unhashed ``_setup``)."""
    runs = offload(scenario_runs, _setup.gpu, _setup.model, _setup.assumptions)
    return runs, offload(dashboard_day, _setup.gpu, _setup.model, _setup.assumptions, flat_out=runs.flat_out)


@page_cache("watch._pool", 1, constant=True)
def _pool():
    """Section 02's 64-page pool under paging, at that page's defaults: its preemptions."""
    return paging_simulate("paged")


@page_cache("watch._views", 32)
def _views(_runs, _day, _offline, key: tuple, ttft_s: float, tpot_s: float) -> dict:
    """Rows, tables and figures for one setup (``key``, which ``_offline``, the measured offline
    runs on it, follows) and SLO."""
    slo = SLO(ttft_s, tpot_s)
    rows = measure(_runs, slo)
    pool = _pool()
    failures = failures_frame(rows, slo, pool.total_preemptions, pool.n_steps, _runs.replicas)
    return {
        "rows": rows, "frame": scenario_frame(rows),
        "bars": scenario_figure(rows, _offline), "day": day_figure(_day, slo),
        "day_frame": day_frame(_day, slo),
        "failures": failures, "failures_display": failures_display(failures),
    }


setup = current_setup()
setup_key = repr(setup)
header("04", "What to watch instead", """
`nvidia-smi` utilization counts the time *a* kernel runs, so a busy serving GPU reads near 100%
whatever work it does. Set your latency targets: goodput, the output of the requests that meet
them, is what moves.
""", prefix="watch")
# The title first: a setup that does not fit still says which page this is.
fits_or_stop(setup, 1, 1, "The model's weights", levers=None)
runs, day = _runs(setup, setup_key)
measured_runs = predictions(setup, ("offline_tok_s", "tpot_ms", "static_batch_tok_s"))


def _slo_views(ttft_s: float, tpot_s: float) -> dict:
    """The page's rows, tables and figures under these targets (seconds)."""
    return _views(runs, day, offline_points(setup, measured_runs), setup_key, ttft_s, tpot_s)


def _bars_chart(views: dict) -> None:
    """The scenario chart: utilization against output, every row (the chart a change of setup moves)."""
    rows = views["rows"]
    util_lo, util_hi = spread(rows, "utilization_gpu")
    out_lo, out_hi = spread(rows, "output_tok_s")
    lowest_out = min((r for r in rows if r.metrics.output_tok_s == out_lo), key=lambda r: r.key)
    highest_out = max((r for r in rows if r.metrics.output_tok_s == out_hi), key=lambda r: r.key)
    with bars_slot:
        n_ran = sum(r.metrics.ran for r in rows)
        chart(views["bars"], key="watch_bars", send_first=True,
              title=f"The same {'GPU' if setup.model.tp == 1 else 'GPUs'}, {n_ran} situations"
                    + (f" ({len(rows) - n_ran} more cannot run here)" if n_ran < len(rows) else "")
                    + ": utilization barely moves, output spans orders of magnitude",
              alt=f"Utilization reads between {util_lo:.0%} and {util_hi:.0%} in every scenario, while "
                  f"output runs from {out_lo:,.0f} output tokens per second ({lowest_out.name}) to "
                  f"{out_hi:,.0f} ({highest_out.name}).")


# Every container in reading order first, filled out of order: on a redraw the scenario chart is sent
# before the targets' sliders and the headline numbers (ui.layout.redraw_values), else right after the
# numbers; the text between the numbers and the chart comes after the chart (send_what_is_drawn).
c1, c2 = st.columns(2)
headline = st.container()
text = st.container()
bars_slot = st.container()
early = redraw_values(("watch_ttft", "watch_tpot"))
if early is not None:
    _bars_chart(_slo_views(early["watch_ttft"], early["watch_tpot"] / 1e3))
ttft_s = c1.slider("Time to first token (TTFT) target, s", *SLO_TTFT_RANGE_S, value=SLO().ttft_s,
                   step=0.1, format="%.1f", key="watch_ttft", bind="query-params", help=define("TTFT"))
tpot_ms = c2.slider("Time per output token (TPOT) target, ms", SLO_TPOT_RANGE_S[0] * 1e3,
                    SLO_TPOT_RANGE_S[1] * 1e3, value=SLO().tpot_s * 1e3, step=5.0, format="%.0f",
                    key="watch_tpot", bind="query-params",
                    help=define("TPOT") + " 50 ms a token is 20 tokens a second, faster than people read.")
check_redraw_values(early, {"watch_ttft": ttft_s, "watch_tpot": tpot_ms})
slo = SLO(ttft_s, tpot_ms / 1e3)
views = _slo_views(slo.ttft_s, slo.tpot_s)
rows = views["rows"]
by_key = {r.key: r.metrics for r in rows}
names = {r.key: r.name for r in rows}
if not any(r.metrics.ran for r in rows):  # every scenario is refused (a model of very few positions)
    with headline:
        st.error("**None of this page's scenarios can run on this setup, so no numbers are shown.** Each "
                 "needs more positions than the model reads"
                 + (f" ({setup.model.max_positions:,})" if setup.model.max_positions else "")
                 + " or more memory than the card has: the other pages say which, for their own "
                 "settings.", icon=":material/block:")
    stop_page()

util_lo, util_hi = spread(rows, "utilization_gpu")
mfu_lo, mfu_hi = spread(rows, "mfu")
out_lo, out_hi = spread(rows, "output_tok_s")
lowest_out = min((r for r in rows if r.metrics.output_tok_s == out_lo), key=lambda r: r.key)
highest_out = max((r for r in rows if r.metrics.output_tok_s == out_hi), key=lambda r: r.key)
cont, stat = by_key["continuous"], by_key["static"]


def _goodput_delta(m, offered_rps: float) -> str | None:
    """Under a goodput: of how many requests a second offered (the goodput cannot exceed it, so two
    setups on the same offered rate read alike however far apart their capacities are), and its tokens
    a second (none where the scenario did not run)."""
    if math.isnan(m.goodput_tok_s):
        return None
    return f"{offered_rps:g}/s offered · {fmt.rate(m.goodput_tok_s, 'tok/s')}"


with headline, metric_row():
    st.metric("nvidia-smi utilization", percent_range(util_lo, util_hi), border=True,
              help=define("GPU utilization (utilization.gpu)")
              + f" Lowest and highest over the {len(rows)} scenarios below.")
    st.metric("Goodput, continuous", fmt.rate(cont.goodput_rps, "req/s"), border=True,
              delta=_goodput_delta(cont, runs.moderate_rate_rps), delta_color="off", delta_arrow="off",
              help=define("Goodput") + f" Continuous batching, requests arriving at "
                                       f"{runs.moderate_rate_rps:g}/s.")
    st.metric("Goodput, static", fmt.rate(stat.goodput_rps, "req/s"), border=True,
              delta=_goodput_delta(stat, runs.moderate_rate_rps), delta_color="off", delta_arrow="off",
              help=define("Goodput") + " Static batching, on the same arrivals.")
    st.metric("MFU", percent_range(mfu_lo, mfu_hi), border=True,
              help=define("MFU") + " Lowest and highest over the scenarios.")
if early is None:
    _bars_chart(views)
with text:
    if math.isnan(cont.goodput_rps) or math.isnan(stat.goodput_rps):
        st.caption("**Goodput n/a:** section 01's requests do not fit on this card, not even one slot at a "
                   "time (its page says by how much), so neither batching mode is run here; the scenarios "
                   "that fit are below.")
    else:
        st.caption(
            f"Both goodput figures: the same {BATCH_REQUESTS:,} requests arriving at "
            f"{runs.moderate_rate_rps:g}/s on {setup.on}, {fmt.counted(runs.slots, 'slot')}"
            + (f" (section 01's {BATCH_SLOTS} do not fit on this card: the most, in powers of two, that do;"
               " the rows' Open links set them)" if runs.slots != BATCH_SLOTS else "")
            + f", and the same {fmt.seconds(slo.ttft_s)} / "
            f"{fmt.seconds(slo.tpot_s)} targets; utilization reads "
            f"{fmt.percent(cont.utilization_gpu, 0)} continuous and {fmt.percent(stat.utilization_gpu, 0)} "
            f"static. The offered rate is a power of two at most {MODERATE_LOAD:.0%} of what this setup "
            "serves flat out, so compare setups' goodput as a share of what each was offered.")
        fastest_tpot_s = runs.phases.decode_step_s  # one user's decode step: no request's TPOT is shorter
        # What shortens a decode step: fewer bytes a step (where smaller weights exist), more GPUs' bandwidth
        tpot_levers = [*(["smaller weights"] if setup.model.weight_dtype in ("bf16", "fp16", "fp8", "int8")
                         else []), *(["more GPUs"] if setup.model.tp < 8 else []), "a faster card"]
        if fastest_tpot_s > slo.tpot_s:
            st.caption(
                f"**No request can meet the {fmt.seconds(slo.tpot_s)} TPOT target here:** one decode step "
                f"takes {fmt.seconds(fastest_tpot_s)} even for a single user at {PHASES_CONTEXT:,} tokens "
                "of context (page 00: every step reads the weights it uses), so goodput is near zero "
                "whatever the scheduler does: the only requests that count are the few with a single "
                "output token. "
                + (f"Raise the TPOT target past {fmt.seconds(fastest_tpot_s)} to see goodput, or pick "
                   if fastest_tpot_s < SLO_TPOT_RANGE_S[1] else "Pick ")
                + (", ".join(tpot_levers[:-1]) + " or " if len(tpot_levers) > 1 else "") + tpot_levers[-1]
                + " in the sidebar.")
        st.caption(cost_sentence(setup, {"continuous batching": cont.output_tok_s,
                                         "static batching": stat.output_tok_s})
                   + " The GPUs are paid for while they wait for requests, so the cost follows the load.")

    st.markdown(f"""
    Every section so far has ended the same way: the number on the dashboard hardly moved while the
    work done changed several times over. That is not a bug in the tool. NVML defines
    `utilization.gpu`, the number `nvidia-smi` and most GPU dashboards show, as the share of time in
    which *one or more kernels* was executing. A serving engine launches kernels back to back, so the
    number reads {"close to 100%" if util_lo >= BUSY_UTILIZATION else
                  f"{percent_range(util_lo, util_hi)} here (steps this short leave the host's time "
                  "between them a visible share)"} whether the tensor cores deliver
    **{fmt.percent(mfu_lo)}** of what they could or **{fmt.percent(mfu_hi)}**. Below, every scenario of
    sections 00 to 03 is measured with the same ruler, a simulated day of traffic is read out as a dashboard
    would read it, and each failure gets the metric that catches it, with an alert rule.
    """)

    st.subheader("Every scenario, one ruler")
    st.markdown(
        f"One row per situation sections 00 to 03 show, each run by that section's own model on {setup.on} "
        f"serving {setup.model.name}, at the settings the row states: the page's first view, except page "
        f"01's rows, which use Poisson arrivals so that latency means something. **Open it** opens the page "
        "at the row's settings, on the same run (page 01's *useful work* is a share of the slots' capacity "
        "while requests were there to use it, this table's *useful share* of the tokens computed: they "
        "differ by the slots left empty while requests waited). Left, what the dashboard reads; right, "
        "the output tokens per second users get (log scale).")
st.caption(f"The rows differ in more than the technique: the lowest output, {out_lo:,.0f} tok/s, is "
           f"{fmt.sentence_case(lowest_out.name)} ({fmt.sentence_case(lowest_out.what)}); the highest, "
           f"{out_hi:,.0f} tok/s, is {fmt.sentence_case(highest_out.name)} "
           f"({fmt.sentence_case(highest_out.what)}). "
           "Like-for-like pairs are in the note at the end of the page. "
           + summary(measured_runs)
           + (" Measured offline runs are the last rows: each ✕ is the measured rate, the hatched bar "
              "the model's for the same run." if any(p.row.kind == "offline_tok_s" for p in measured_runs)
              else ""))
setup_params = {k: st.query_params[k] for k in SETUP_KEYS if k in st.query_params}
st.dataframe(scenario_table(rows, row_links(rows, runs, setup_params)), hide_index=True, width="stretch",
             key="watch_table",
             column_config={"Scenario": st.column_config.TextColumn(pinned=True, width=210),
                            "What is happening": st.column_config.TextColumn(width="large"),
                            "Useful share": st.column_config.TextColumn(help=define("Useful share")),
                            LINK_COLUMN: st.column_config.LinkColumn(display_text="open ↗", width="small")})
st.caption(("A row marked “does not fit” did not run: its scenario does not fit on this card. One "
            f"marked “too long” did not run either: its requests are longer than the "
            f"{setup.model.max_positions:,} positions {setup.model.name} reads (its config.json). "
            if not all(r.metrics.ran for r in rows) else "")
           + "– : the run does not model it (a steady state has no queue and no whole requests, so no "
           "goodput either; the long-prompt rows follow one prompt, so their latency is that prompt's "
           "TTFT and the gaps every decoding user waits). Output tok/s counts every delivered token; "
           "goodput only those of requests meeting both targets. TPOT is each request's mean time per "
           "token; ITL is the gap before each token (page 05's TBT), so one stalled step shows in its "
           "p99. KV cache: the share of this card's KV-cache budget (section 02) holding token states.")
windowed_layers_note(setup, "The paged-KV row takes section 02's fit on the card, which counts a "
                     "token of every layer a token slot: for this model it fits fewer requests than "
                     "an engine that keeps the windowed layers' pages apart.")

st.subheader("A day on the dashboard")
day_fits = fits_or_say(
    setup, day.run.slots, peak_context_tokens(day.run),
    f"The day's {day.run.slots} continuous-batching slots at their fullest step", levers=None, section=True,
) and reads_or_say(setup, longest_request_tokens(day.run), "The day's longest request", section=True)
if day_fits:
    st.markdown(f"""
Traffic through section 01's continuous batching ({runs.flat_out.slots} slots, the Anyscale workload)
over a simulated day: quiet at {DAY_QUIETEST_HOUR:02d}:00, {day.load.max():.0%} of what the engine serves
flat out at {DAY_QUIETEST_HOUR + 12:02d}:00 (the arrival rate; the dotted line is what this one sampled
day's requests asked for, so it wanders around that curve, its peak not always at that hour). This is what
three panels of a dashboard would draw, hour by hour. Shaded hours have requests waiting.

**What the simulation compresses.** Simulating a real day would take millions of requests, so each
hour is simulated as **{fmt.seconds(day.window_s)}** of traffic at that hour's rate, in one run: the queue
an hour leaves behind is there at the start of the next. A queue grows for {fmt.seconds(day.window_s)} an
hour here, not 3,600 s, so its waits stay far shorter than an hour's would (the worst hour's p99 TTFT:
{fmt.duration(day.worst_ttft_p99_s)}). Over real hours the same overload would leave about
**{day.real_time_backlog.max():,.0f}** requests waiting, about **{fmt.duration(day.real_time_worst_wait_s)}**
each (a fluid estimate: the backlog grows by the excess of arrivals over the flat-out rate, hour by
hour).
""")
    missed = day.hours_missing(slo)
    ttft_worst = day.worst_ttft_p99_s
    goodput_day = day.goodput_tok_s(slo)
    with metric_row():
        st.metric("Utilization, by hour", percent_range(day.utilization_gpu.min(), day.utilization_gpu.max()),
                  border=True, help="Lowest and highest hourly reading.")
        st.metric("Goodput by hour, tok/s", count_range(goodput_day.min(), goodput_day.max()), border=True,
                  help=define("Goodput") + " Lowest and highest hourly value.")
        st.metric("MFU, by hour", percent_range(day.mfu.min(), day.mfu.max()), border=True)
        st.metric("Hours missing the SLO", f"{missed} of {day.n_windows}", border=True,
                  delta=f"worst TTFT p99 {fmt.duration(ttft_worst)}", delta_color="off", delta_arrow="off",
                  help=f"Hours in which fewer than {SLO_ATTAINMENT_GOAL:.0%} of the requests that arrived "
                       f"met both targets (DistServe's attainment goal). The TTFT is the simulation's, with "
                       f"each hour {fmt.seconds(day.window_s)} long.")
        st.metric("Longest wait, real hours", fmt.duration(day.real_time_worst_wait_s), border=True,
                  delta="the day's shape: any setup", delta_color="off", delta_arrow="off",
                  help="The wait the backlog would reach if every hour lasted 3,600 s (a fluid estimate: "
                       "backlog / the flat-out rate, every slot busy, no latency target). The backlog and "
                       "that rate both scale with the card, since the day's load is a share of it, so this "
                       "figure follows from the day's shape alone and is the same on every GPU and model.")
    chart(views["day"], key="watch_day",
          alt=f"Over the simulated day utilization stays between {day.utilization_gpu.min():.0%} and "
              f"{day.utilization_gpu.max():.0%}, while the tokens delivered move from "
              f"{day.output_tok_s.min():,.0f} to {day.output_tok_s.max():,.0f} per second, MFU from "
              f"{fmt.percent(day.mfu.min())} to "
              f"{fmt.percent(day.mfu.max())}, and TTFT p99 peaks at {fmt.duration(ttft_worst)}; {missed} "
              "hours miss the SLO.")

st.subheader("What catches each failure")
st.markdown("For each failure sections 00 to 03 show: the quantity that shows it, what NVIDIA's tools "
            "or the serving engine (vLLM) call it, an alert rule to start from, and its value in the "
            "scenario above, computed live, with and without the fix."
            + (f" The {setup.gpu.name} is an AMD GPU: DCGM and NVML do not run on it; AMD's own tools "
               "(amd-smi, rocprofiler-compute) expose the counterparts of the GPU counters named here, "
               "under other names the table does not list." if setup.gpu.name.startswith("MI") else ""))
with st.container(key="watch_failures"):  # on a phone its rows stack, each cell under its name (ui.layout)
    st.table(views["failures_display"], hide_index=True)
fr = views["failures"]
missed = [f for f, v in zip(fr["Failure"], fr["Fires there"], strict=True) if v == "no"]
# Idle tensor cores still read idle after speculation at low load: that row is a ticket to spend the
# headroom, not an alert its fix should silence (its own note says so).
stuck = [f for f, v, a in zip(fr["Failure"], fr["Fires after the fix"], ALERTS, strict=True)
         if v == "yes" and a.key != "idle_tensor"]
if missed or stuck:
    inverted = [f for f in missed if f in stuck]  # quiet where it shows and firing after the fix
    st.caption(
        "On this setup the starting thresholds miss: "
        + "; ".join([*(f"quiet where it shows, *{fmt.sentence_case(f)}*" for f in missed
                       if f not in inverted),
                     *(f"still firing after the fix, *{fmt.sentence_case(f)}*" for f in stuck
                       if f not in inverted),
                     *(f"the wrong way round (quiet where it shows and firing after the fix), "
                       f"*{fmt.sentence_case(f)}*" for f in inverted)])
        + ". The thresholds are starting points to tune to your hardware and targets"
        + ((f" (on {setup.model.tp} GPUs a step's all-reduces and launches take a share of its time, so "
            "each GPU's MBU reads lower than one GPU's would)" if setup.model.tp > 1 else
            " (here batch-1 decode leaves host time and kernel launches that no DRAM counter sees, so "
            "its MBU reads under the threshold)")
           if any("starved by memory" in f.lower() for f in missed) else "")
        + (": a mixture of experts' bigger batch touches more of its experts, so after the fix a step "
           "reads more bytes and MBU climbs with it." if setup.model.n_experts and inverted else "."))

lowest = min((r for r in rows if math.isfinite(r.metrics.utilization_gpu)),
             key=lambda r: r.metrics.utilization_gpu)  # the page stops where no row runs (the weights)


def _ran(*keys: str) -> bool:
    """Whether every one of these rows ran on this card (a row its page refuses is blank)."""
    return not any(math.isnan(by_key[k].output_tok_s) for k in keys)


def _not_run(what: str, *keys: str) -> tuple[str, str]:
    """(what did not run, why: 'positions' where a row's requests pass the model's positions, else
    'memory')."""
    blocked = {r.blocked for r in rows if r.key in keys and not r.metrics.ran}
    return what, "positions" if "positions" in blocked else "memory"


def _ratio(a: str, b: str, field: str) -> str:
    x, y = getattr(by_key[a], field), getattr(by_key[b], field)
    return f"**{x / y:,.1f}×**" if y > 0 else "**∞**"


def _per_s(rate: float) -> str:
    return f"{rate:g} request{'' if rate == 1 else 's'} a second"


cont_m, stat_m = by_key["continuous"], by_key["static"]
# Static batching past what it can serve at these arrivals: its goodput is the few requests that beat
# the queue, and falls toward 0 the longer the run, so a ratio to it says how long the run was.
static_behind = not runs.static.keeps_up and runs.continuous.keeps_up
fixes, not_run = [], []
if not _ran("continuous", "static"):
    not_run.append(_not_run("section 01's batching", "continuous", "static"))
elif cont_m.slo_attainment < SLO_ATTAINMENT_GOAL:  # the fix does not meet the targets either
    fixes.append(f"continuous over static batching on the same arrivals is no fix for these targets: "
                 f"continuous batching meets them for only {fmt.percent(cont_m.slo_attainment, 0)} of its "
                 f"requests (static {fmt.percent(stat_m.slo_attainment, 0)}), so goodput is near zero "
                 "either way")
elif static_behind:
    fixes.append(f"continuous over static batching on the same arrivals: static cannot keep up with "
                 f"{_per_s(runs.moderate_rate_rps)} (its queue grows for the whole run, so its goodput, "
                 f"**{fmt.rate(stat_m.goodput_rps, 'req/s')}**, only falls the longer it runs), while "
                 f"continuous batching serves **{fmt.rate(cont_m.goodput_rps, 'req/s')}** within the targets")
else:
    fixes.append(f"continuous over static batching on the same arrivals, goodput "
                 f"{_ratio('continuous', 'static', 'goodput_rps')} (requests meeting the targets)")
if _ran("paged", "reserved"):
    fixes.append("paged over reserved KV on the same card, output "
                 + _ratio("paged", "reserved", "output_tok_s"))
else:
    not_run.append(_not_run("section 02's card", "paged", "reserved"))
if _ran("speculative", "plain"):
    spec_gain = by_key["speculative"].output_tok_s / by_key["plain"].output_tok_s
    spec_txt = f"**{spec_gain:.2f}×**" if 0.9 <= spec_gain <= 1.1 else _ratio("speculative", "plain",
                                                                               "output_tok_s")
    fixes.append(f"speculative over plain decode for one user, output {spec_txt}" if spec_gain >= 1.0 else
                 f"speculative decoding for one user is no fix here (output {spec_txt}: page 03 says why)")
else:
    not_run.append(_not_run("section 03's speculative decoding", "speculative", "plain"))
if _ran("unchunked", "chunked"):
    fixes.append(f"chunking cuts the worst inter-token gap {_ratio('unchunked', 'chunked', 'itl_p99_s')}")
else:
    not_run.append(_not_run("section 02's long prompt", "unchunked", "chunked"))
fixes_txt = ("; ".join(fixes[:-1]) + "; and " + fixes[-1] if len(fixes) > 1 else "".join(fixes))


def _and(items: list[str]) -> str:
    return " and ".join(items) if len(items) < 3 else ", ".join(items[:-1]) + " and " + items[-1]


too_big = [w for w, why in not_run if why == "memory"]
too_long = [w for w, why in not_run if why == "positions"]
not_run_list = "; ".join(
    ([f"{_and(too_big)} did not fit on this {'card' if setup.model.tp == 1 else 'replica'}"]
     if too_big else [])
    + ([f"{_and(too_long)} asked for more than the {setup.model.max_positions:,} positions "
        f"{setup.model.name} reads"] if too_long else []))
compared = ("Compared like for like, on the same demand and the same GPU, the fixes move what users get: "
            + fixes_txt + (f" ({not_run_list})" if not_run else "") + "."
            if fixes else f"None of the like-for-like comparisons can run here ({not_run_list}).")
st.info(
    "**Why monitoring has to look past it.** Utilization answers one question, *is a kernel "
    "running?*, and on a serving GPU the answer is "
    + ("nearly always yes" if util_lo >= BUSY_UTILIZATION else "mostly yes")
    + f": **{percent_range(util_lo, util_hi)}** "
    f"across every scenario here. {compared} The lowest utilization "
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
  at batch 1 on a dense model this is Databricks' (model size + KV cache) / TPOT / peak bandwidth;
  for a mixture of experts the bytes are those a step reads (the experts its tokens reach), not the
  model's size.
- **Output tok/s**: output tokens of requests / $T$. **Useful share**: output tokens over tokens
  computed (static batching's padding and rejected speculative drafts are computed, not useful).
- **Goodput**, the only sense the word has in this app: requests per second (**Goodput, req/s**, as
  `vllm bench serve --goodput` reports it, after DistServe) or output tokens per second
  (**Goodput, tok/s**) of the requests whose TTFT and TPOT both meet the targets; DistServe's per-GPU
  goodput, the highest rate at which 90 % meet them, has its analogue in page 05's capacity
  (stricter: the p99 TTFT and the p99 of every gap between tokens, not 90 % of requests' TTFT and
  mean TPOT);
  **Meets SLO** is their share.
- **TTFT**: arrival to the end of the prefill step (queueing included). **TPOT**: a request's
  (last token − first token) / (tokens − 1). **ITL**: the wait before each output token, per token:
  a step of $t$ seconds that gives $n$ users a token is $n$ samples of $t$.
- **KV cache holding tokens**: tokens whose KV the step holds × KV bytes per token, over section 02's
  KV budget $""" + f"{DEFAULT_MEMORY_UTILIZATION:g}" + r"""\,M_\text{GPU} - W - R$, $R$ the engine's start-up
  reserve (speculative decoding: the drafter's KV too, and its weights in $W$, as page 03's memory
  check counts them); **Queue**: requests
  arrived and not yet admitted. Both are time-weighted over the steps.

**The day.** The arrival rate follows $\lambda(h) = C\,(\ell + (p-\ell)\,\tfrac{1-\cos(2\pi(h-4)/24)}{2})$,
$C$ the requests/s section 01's continuous batching serves flat out (output tokens per second of a
1,000-request backlog while requests still wait and after its start-up, over the mean output length),
$\ell$ = """ + f"{DEFAULT_DAY_LOW:g} and $p$ = {DEFAULT_DAY_PEAK:g}" + r""". Each
hour is a window of fixed length in which arrivals are Poisson at that hour's rate; the window length
is set so about """ + f"{DEFAULT_DAY_REQUESTS:,}" + r""" requests arrive over the day, whatever the GPU.
The run is section 01's ``simulate``, one run for the whole day, so a queue carries over from hour to
hour; each step's kernel time, FLOPs and tokens are spread evenly over the step and summed per
window. TTFT p99 is over the requests that arrived in the hour. The real-time backlog is a fluid
estimate: $Q_h = \max(0,\ Q_{h-1} + (\lambda(h) - C)\cdot 3600\,\text{s})$, its longest wait
$\max_h Q_h / C$. The flat-out line is $C$ in tokens/s, or the most any hour delivered where that is
higher (an hour's sample of lengths can beat the backlog's average by a few percent).
""",
    assumptions=[
        f"Each row runs its section's model at the settings it states (its Open link sets them): the "
        f"page's first view, except page 01's rows. Page 00's {PHASES_PROMPT:,}-token "
        f"prompt and {PHASES_CONTEXT:,} tokens of context; page 01's {BATCH_REQUESTS:,} requests "
        f"({BATCH_WORKLOAD}) on {BATCH_SLOTS} slots (fewer where they do not fit: the largest power of "
        f"two that does, {runs.slots} here); page 02's ShareGPT-like requests on this card and its "
        f"{CHUNK_PROMPT:,}-token prompt among {CHUNK_BATCH} decoders; page 03's default drafting method at "
        f"batch {SPEC_BATCH} and {SPEC_CONTEXT:,} tokens of context.",
        f"Section 01's rows use Poisson arrivals instead of its first view's burst, so that latency "
        f"means something: {runs.moderate_rate_rps:g} requests/s (a power of two at most "
        f"{MODERATE_LOAD:.0%} of the rate continuous batching finishes a {BATCH_REQUESTS:,}-request "
        f"backlog at, {runs.flat_out_rps:.3g}/s here, its draining tail included; the day's flat-out "
        f"rate, every slot busy, is higher) for static vs continuous, and "
        f"{runs.high_rate_rps:g}/s (at least {HIGH_LOAD:.0%}) for high load. Pick them on page 01 to see "
        "the same runs. The high load's fix is more replicas: split over "
        f"{runs.replicas} replicas each sees {runs.high_rate_rps / runs.replicas:g}/s, the "
        "continuous-batching row.",
        "MFU and MBU stand in for DCGM's tensor-pipe and DRAM activity. DCGM counts active cycles, "
        "not FLOPs or bytes: a tensor pipe running below full rate reads as active, and at batch 1 "
        "each matrix instruction is padded to its tile (16 or 64 rows for one token), so tensor "
        "activity can read several times MFU (not measured here). The alert thresholds are written "
        "against MFU and MBU; against the real counters, calibrate them on your own GPU. They still "
        "tell a starved GPU from a busy one, which utilization.gpu cannot.",
        "Steady-state rows (batch-1 decode, the card's two KV policies, speculative decoding) have no "
        "request lifetimes: no goodput and no queue. The card's rows run under a full queue.",
        "KV-cache use counts token states. vLLM's usage gauge counts blocks handed out: under paging "
        "the two agree within the last page's slack; a reserving engine would read full.",
        "Host overhead counts as no kernel running. A speculative round pays it once for its k draft "
        "steps and the verify pass together (the drafts run back to back on the GPU), so its row reads "
        "a little higher than plain decode's, which pays it every step, while doing more.",
        "Of these scenarios only section 02's 64-page pool evicts requests (section 05's scheduler "
        "evicts and recomputes under load too, on its own page); the table leaves the column out and "
        "the failure list reads the pool.",
        "The alert thresholds and windows are starting points to tune, not standards.",
        "One replica on the sidebar's GPUs per replica (tensor parallelism splits the weights and KV heads "
        "and adds two all-reduces a layer, as in section 00); the roofline is a floor on step time, a "
        "ceiling on throughput.",
    ],
    sources=[
        "utilization.gpu: NVML API reference, nvmlUtilization_t (REFERENCE.md §4).",
        "DCGM profiling metrics (GR_ENGINE_ACTIVE, SM_ACTIVE, SM_OCCUPANCY, PIPE_TENSOR_ACTIVE, "
        "DRAM_ACTIVE): NVIDIA DCGM User Guide, profiling metrics table (REFERENCE.md §4).",
        "MBU: Databricks, LLM Inference Performance Engineering: Best Practices (REFERENCE.md §4).",
        "Goodput: vLLM's `bench serve --goodput` (requests meeting the TTFT and TPOT targets), after "
        "DistServe (Zhong et al., OSDI 2024), whose per-GPU goodput is the highest such rate (REFERENCE.md "
        "§3.5; V20 in the tests).",
        "vLLM metric names: vLLM docs, Production Metrics and the V1 metrics design "
        "(vllm:kv_cache_usage_perc replaced vllm:gpu_cache_usage_perc; vllm:inter_token_latency_seconds "
        "replaced vllm:time_per_output_token_seconds).",
        f"{setup.gpu.name}: {setup.gpu.source}. {setup.model.name}: {setup.model.source}.",
    ],
)
data_expander(lambda: {
    "Scenarios (every metric; shares 0-1, seconds)": views["frame"],
    **({"The day, hour by hour": views["day_frame"]} if day_fits else {}),
    "Failures, metrics and alerts": views["failures"],
}, key="watch_data", notes={"Scenarios (every metric; shares 0-1, seconds)":
                            "A blank cell: a metric that scenario's run does not give (shown as – "
                            "above): a steady step has no queue, goodput or SLO share; none of these "
                            "runs counts preemptions."})
next_link(__file__)
