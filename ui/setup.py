"""The global setup every page shares: GPU, model, precisions and the cost model's assumptions.

The controls live in the entrypoint's sidebar, are bound to the URL (so a shared link carries them)
and are rendered on every page, so a change on one page reaches every page.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
from dataclasses import dataclass, field

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from sim.cost import (
    CALIBRATION_GPU,
    CALIBRATION_MEASURED_S,
    CALIBRATION_MODEL,
    DEFAULT_ASSUMPTIONS,
    Assumptions,
    calibration_step_s,
)
from sim.hardware import CUSTOM_GPU_NAME, DEFAULT_GPU, GPU, GPUS, custom_gpu
from sim.measured import SMALL_BATCH, published_summary
from sim.models import (
    ALL_MODELS,
    DEFAULT_MODEL,
    KV_DTYPES,
    MAX_ROUTING_SKEW,
    MEASURED_MODELS,
    MODELS,
    WEIGHT_DTYPES,
    Model,
)
from ui import format as fmt
from ui.custom_model import CUSTOM_MODEL, forget, render_custom_model
from ui.price import render_price
from ui.sources import gpu_price
from ui.state import reset_setup

CUSTOM = "Custom"
DEFAULT_PRICE = gpu_price(DEFAULT_GPU)[0]
GPU_COUNTS = (1, 2, 4, 8)
#: How a mixture's routed experts are laid out over the GPUs: split by width (TP) or whole (EP).
EXPERT_LAYOUTS = ("split (TP)", "whole (EP)")
_STATE_KEY = "_setup"
_LOG = logging.getLogger(__name__)
_READ_OFF_KEY = "_setup_read_off"  # setup_from_state gave a wrong answer once in this session

# Ranges of the editable numbers (also what a hand-edited URL is held to).
CUSTOM_TFLOPS = (1.0, 20000.0)
CUSTOM_BANDWIDTH_TBPS = (0.05, 50.0)
CUSTOM_MEMORY_GB = (1.0, 2000.0)


@dataclass(frozen=True)
class Setup:
    gpu: GPU
    model: Model
    assumptions: Assumptions
    # Dollars per hour for each GPU of the replica (ui.price). Left out of repr and equality: pages key
    # their caches on repr(setup), and the price changes no simulation.
    price_per_gpu_hour: float = field(default=DEFAULT_PRICE, repr=False, compare=False)

    @property
    def on(self) -> str:
        """What runs the model, after "on" in running text: "the H100 SXM", or "8 x MI300X" for a
        replica of several GPUs (whose figures are the replica's)."""
        return f"the {self.gpu.name}" if self.model.tp == 1 else f"{self.model.tp} x {self.gpu.name}"

    @property
    def label(self) -> str:
        m = self.model
        where = f"a {self.gpu.name}" if self.gpu.name == CUSTOM_GPU_NAME else self.gpu.name
        if m.tp > 1:
            experts = ", experts whole per GPU" if m.expert_parallel else ""
            where = f"{m.tp} x {self.gpu.name}{experts} (memory, MFU, MBU and utilization per GPU)"
        skew = f", routing skew {m.routing_skew:g}" if m.n_experts and m.routing_skew else ""
        return f"{m.name} ({m.weight_dtype} weights, {m.kv_dtype} KV{skew}) on {where}"


DEFAULT_SETUP = Setup(GPUS[DEFAULT_GPU], MODELS[DEFAULT_MODEL], DEFAULT_ASSUMPTIONS)


def published_note(published) -> str:
    """The sidebar's sentence on a GPU's published runs (``sim.measured.published_summary``)."""
    w, (lo, hi) = published.worst, published.large_error_range
    return (f"Published runs on this card, not fitted to: {fmt.counted(published.runs, 'run')} of "
            f"{published.engine}, {' and '.join(published.models)} at batch {published.batches[0]} to "
            f"{published.batches[1]}. At its fitted defaults the model is within "
            f"{published.small_max_abs_error:.0%} of each up to batch {SMALL_BATCH}, and "
            + (f"{max(lo, 0.0):.0%} to {hi:.0%} above them" if lo > -0.005  # never "-0%"
               else f"{lo:+.0%} to {hi:+.0%} off them")
            + f" at larger batches, the most for {w.model} at batch {w.batch} with "
            f"{w.prompt_tokens:,}-token prompts (README, *The model*: ora-03).")


def render_setup_controls() -> Setup:
    """Draw the setup controls (call inside ``st.sidebar``) and remember the result for the page."""
    setup = _setup_controls(st)
    use_setup(setup)
    return setup


def setup_from_state() -> Setup | None:
    """The setup the sidebar's controls will give this run, read from their state before they are
    drawn: the same code as ``render_setup_controls``, each widget answered by its value in the
    session (``_StateReader``; text and notices draw nothing, and the custom model's link parameter
    is dropped where the sidebar would drop it in this run). None where that cannot be known: a
    session's first run and a Back or Forward in the browser (the values come from the URL), a control
    never drawn in this session (Streamlit keeps a hidden bound widget's value under its key), a pasted
    or uploaded model, a session where it once read wrong (``setup_read_wrong``), or any error.

    The entrypoint uses it to draw the page before the sidebar on a rerun: the chart a reader moved
    then reaches the browser ahead of the sidebar's two dozen elements (README, "Speed")."""
    ctx = get_script_run_ctx(suppress_warning=True)
    if st.session_state.get(_READ_OFF_KEY) or (ctx is not None and ctx.is_history_navigation):
        return None  # on Back / Forward the widgets take their values from the URL, not the session
    try:
        return _setup_controls(_StateReader())
    except _Unknown:
        return None
    except Exception:  # the sidebar first is always right: a failed read only costs the speed-up
        _LOG.exception("reading the setup from the widgets' state failed; drawing the sidebar first")
        return None


def same_setup(a: Setup, b: Setup) -> bool:
    """Whether two setups give the pages the same numbers: the same repr (what the pages' caches key
    on) and the same price (which the setup's equality leaves out)."""
    return (repr(a), a.price_per_gpu_hour) == (repr(b), b.price_per_gpu_hour)


def setup_read_wrong(early: Setup, drawn: Setup) -> bool:
    """Whether ``setup_from_state`` gave another setup than the sidebar then drew (never expected:
    tests/test_setup_first.py). If so it is turned off for the session, so the rerun that must follow
    draws the sidebar first and cannot repeat."""
    wrong = not same_setup(early, drawn)
    if wrong:
        st.session_state[_READ_OFF_KEY] = True
    return wrong


def use_setup(setup: Setup) -> None:
    """Make ``setup`` the one ``current_setup`` returns for the rest of this run."""
    st.session_state[_STATE_KEY] = setup


class _Unknown(Exception):
    """A control's value is not in the session yet (``setup_from_state``)."""


class _StateReader:
    """Stands in for ``streamlit`` in ``_setup_controls``: a widget answers with the value the session
    holds for its key (what the widget itself would return this run), text and notices draw nothing."""

    def __init__(self) -> None:
        self.state = st.session_state

    def _value(self, key: str):
        if key not in self.state:
            raise _Unknown(key)
        return self.state[key]

    def selectbox(self, *_args, key: str, **_kw):
        return self._value(key)

    radio = slider = number_input = selectbox

    def button(self, *_args, **_kw) -> bool:
        return False

    def markdown(self, *_args, **_kw) -> None:
        pass

    caption = warning = markdown

    @contextlib.contextmanager
    def expander(self, *_args, **_kw):
        yield


def _setup_controls(draw) -> Setup:
    """The sidebar's controls and the setup they give, drawn with ``draw`` (``streamlit``, or a
    ``_StateReader`` that only reads their values)."""
    draw.markdown("### Setup")
    draw.caption("Changes every page. The URL keeps it.")
    gpu_name = draw.selectbox("GPU", [*GPUS, CUSTOM], key="gpu", bind="query-params")
    h100 = GPUS[DEFAULT_GPU]
    if gpu_name == CUSTOM:
        tflops = draw.number_input("Dense BF16 TFLOP/s", *CUSTOM_TFLOPS, value=h100.bf16_flops / 1e12,
                                   step=10.0, key="custom_tflops", bind="query-params",
                                   help="The spec sheet's dense peak. With no microbenchmark of this "
                                        "GPU its best GEMM is taken as NVIDIA's typical share of it "
                                        "(named below), as for every GPU without one.")
        bandwidth = draw.number_input("HBM bandwidth, TB/s", *CUSTOM_BANDWIDTH_TBPS,
                                      value=h100.hbm_bandwidth / 1e12, step=0.1, key="custom_tbps",
                                      bind="query-params",
                                      help="The spec sheet's figure; a STREAM copy is taken to reach "
                                           "NVIDIA's typical share of it (named below).")
        memory = draw.number_input("Memory, GiB", *CUSTOM_MEMORY_GB, value=h100.hbm_bytes / 2**30,
                                   step=8.0, key="custom_gb", bind="query-params")
        gpu = custom_gpu(tflops, bandwidth, memory)
    else:
        gpu = GPUS[gpu_name]
    fp8 = f" ({gpu.fp8_flops / 1e12:,.0f} FP8)" if gpu.fp8_flops else ""
    draw.caption(f"{gpu.bf16_flops / 1e12:,.0f} TFLOP/s BF16{fp8} · {fmt.sig(gpu.hbm_bandwidth / 1e12)} "
                 f"TB/s · {gpu.hbm_bytes / 2**30:,.1f} GiB")  # as the memory notices write it

    model_name = draw.selectbox("Model", [*ALL_MODELS, CUSTOM_MODEL],
                                index=list(ALL_MODELS).index(DEFAULT_MODEL), key="model", bind="query-params",
                                help=f"The last {len(MEASURED_MODELS)} ({', '.join(MEASURED_MODELS)}) are "
                                     "there because engines' measured runs used them: pick one with its "
                                     "GPU and precision and the pages draw those runs.")
    if model_name == CUSTOM_MODEL:
        if isinstance(draw, _StateReader):  # a pasted or uploaded config: only its own controls read it
            raise _Unknown(CUSTOM_MODEL)
        base = render_custom_model() or MODELS[DEFAULT_MODEL]
    else:
        forget()  # before the page reads the URL (its links carry the setup), in either pass
        base = ALL_MODELS[model_name]
    # Radios, not segmented controls: a bound segmented control reads an empty URL value ("?kv=")
    # as "nothing selected" even when a selection is required; a radio falls back to its default.
    weights = draw.radio("Weights", WEIGHT_DTYPES, horizontal=True, key="weights", bind="query-params")
    kv = draw.radio("KV cache", KV_DTYPES, horizontal=True, key="kv", bind="query-params")
    model = base.with_precision(weights, kv)
    n_gpus = draw.radio("GPUs per replica", GPU_COUNTS, horizontal=True, key="gpus", bind="query-params",
                        help="Tensor parallelism (Megatron): each GPU holds its share of the heads, MLP "
                             "and vocabulary; two all-reduces a layer join them.")
    if n_gpus > 1:
        layout = (draw.radio("Experts across the GPUs", EXPERT_LAYOUTS, horizontal=True, key="experts",
                             bind="query-params",
                             help="Split: every GPU holds a slice of every expert (tensor parallelism). "
                                  "Whole: each GPU holds its share of the experts whole (expert "
                                  "parallelism), and a step waits for the GPU whose experts its tokens "
                                  "touch most.")
                  if base.n_experts else EXPERT_LAYOUTS[0])
        whole = layout == EXPERT_LAYOUTS[1]
        try:
            gpu.allreduce_bandwidth(n_gpus)
        except ValueError as err:
            draw.warning(f"{err}. Showing 1 GPU.", icon=":material/call_split:")
        else:
            # Whole experts where asked for; if they do not divide over the GPUs, split ones; if
            # the model's shapes allow neither, one GPU.
            failed = None
            for parallel in ((True, False) if whole else (False,)):
                try:
                    model = model.with_tp(n_gpus, expert_parallel=parallel)
                    break
                except ValueError as err:
                    failed = failed or err
            else:
                draw.warning(f"{failed}. Showing 1 GPU.", icon=":material/call_split:")
            if whole and not model.expert_parallel and model.tp > 1:
                draw.warning(f"{failed}. Showing the experts split (TP).", icon=":material/call_split:")
    if base.n_experts:
        skew = draw.slider("Routing skew", 0.0, MAX_ROUTING_SKEW, 0.0, 0.1, key="skew",
                           bind="query-params",
                           help="How unevenly the router spreads tokens over the experts. 0: uniform "
                                "(every expert equally likely, the named default). s > 0: the r-th most "
                                "popular expert gets a share proportional to r^-s, so a step touches "
                                "fewer distinct experts and reads fewer weights; with experts whole "
                                "per GPU, the popular ones are placed one per GPU first.")
        model = dataclasses.replace(model, routing_skew=float(skew))
    per = " per GPU" if model.tp > 1 else ""
    held = model.served_weight_bytes
    repacked = (f" as vLLM holds them ({model.weight_bytes / 2**30:.1f} GiB shipped, MXFP4 experts padded to "
                f"its kernels' tiles)" if held != model.weight_bytes else "")
    draw.caption(f"{model.n_params / 1e9:.2f} B params · {held / 2**30:.1f} GiB weights{per}{repacked} · "
                 f"{model.kv_bytes_per_token / 1024:.0f} KiB KV per token{per}"
                 + (f" ({model.kv_bytes_per_token_beyond_window / 1024:.0f} KiB past the "
                    f"{model.sliding_window:,}-token window)" if model.window_layers else "")
                 + (f" · {gpu.interconnect}" if model.tp > 1 and gpu.interconnect else ""))
    precision = model.compute_precision
    math_note = ""
    if gpu.math_precision(precision) != precision:
        math_note = f" ({weights.upper()} weight-only: no {precision.upper()} tensor cores on this GPU)"
    elif model.quant_scope == "experts" and weights != "bf16":
        math_note = " (experts only; attention, router and embeddings BF16)"
    draw.caption(f"{gpu.math_precision(precision).upper()} math{math_note}: ridge "
                 f"{fmt.sig(gpu.ridge_point(precision))} FLOP/B"
                 + (f" · ships as {model.shipped_dtype.upper()}" if model.shipped_dtype != weights else ""))
    typical = gpu.typical_ceilings(precision)
    if typical:
        shares = {"GEMM": f"best {gpu.math_precision(precision).upper()} GEMM "
                          f"{gpu.gemm_ceiling(precision):.0%} of its spec peak",
                  "STREAM": f"STREAM {gpu.hbm_ceiling():.0%} of its spec bandwidth"}
        draw.caption(f"No {' or '.join(typical)} microbenchmark of this GPU in measured.csv: it takes "
                     f"NVIDIA's measured GPUs' typical {', '.join(shares[t] for t in typical)} (an "
                     "assumption), and the efficiencies below are shares of that.")

    published = published_summary(gpu.name)
    if published is not None:
        draw.caption(published_note(published))

    price = render_price(gpu.name, model.tp, draw)

    d = DEFAULT_ASSUMPTIONS
    with draw.expander("Assumptions", icon=":material/tune:"):
        draw.caption("The roofline gives the fastest a step can run (a floor on time, a ceiling on "
                     "throughput); these turn it into an estimate. The defaults are fitted to measured "
                     "engines (README, *The model*): "
                     f"{calibration_step_s() * 1e3:.2f} ms per token for {CALIBRATION_MODEL} at batch 1 "
                     f"on {CALIBRATION_GPU} (SGLang measured {CALIBRATION_MEASURED_S * 1e3:.2f} ms).")
        compute_eff = draw.slider("Compute efficiency (share of the GPU's best GEMM)", 0.1, 1.0,
                                  d.compute_eff, 0.005, key="compute_eff", bind="query-params",
                                  help="What compute-bound kernels reach, as a share of the GPU's own "
                                       f"best measured GEMM ({gpu.name}'s at "
                                       f"{gpu.math_precision(precision).upper()}: "
                                       f"{gpu.gemm_ceiling(precision):.0%} of its spec peak). 1 = the "
                                       "microbenchmark's rate.")
        memory_eff = draw.slider("Bandwidth efficiency (share of the GPU's STREAM rate)", 0.3, 1.0,
                                 d.memory_eff, 0.005, key="memory_eff", bind="query-params",
                                 help="What memory-bound kernels reach, as a share of the GPU's "
                                      f"measured STREAM-like bandwidth ({gpu.name}'s: "
                                      f"{gpu.hbm_ceiling():.0%} of its spec figure). 1 = the "
                                      "microbenchmark's rate.")
        # Float sliders: an int slider would truncate a linked "0.5" to 0 without a word.
        overhead_us = draw.slider("Host overhead per step, µs", 0.0, 2000.0, d.host_overhead_s * 1e6,
                                  10.0, format="%.0f", key="overhead_us", bind="query-params",
                                  help="Scheduling and bookkeeping per step in which no kernel runs.")
        seq_host_us = draw.slider("Host time per sequence per step, µs", 0.0, 100.0,
                                  d.sequence_host_s * 1e6, 0.1, format="%.1f", key="seq_host_us",
                                  bind="query-params",
                                  help="The host's work for each sequence that samples in a step "
                                       "(its inputs, its sampling bookkeeping), with no kernel "
                                       "running: a step of 256 sequences adds 256 times this. The "
                                       "model has a speculative round pay it once for all the tokens "
                                       "it makes.")
        graph_us = draw.slider("Kernel cost in a CUDA graph, µs", 0.0, 20.0, d.graph_kernel_s * 1e6,
                               0.1, format="%.1f", key="graph_us", bind="query-params",
                               help="Fixed cost of each kernel of a decode-sized step "
                                    f"(≤ {d.cuda_graph_max_tokens} tokens) replayed as a CUDA graph.")
        launch_us = draw.slider("Kernel cost without a graph, µs", 0.0, 100.0, d.kernel_launch_s * 1e6,
                                0.5, format="%.1f", key="launch_us", bind="query-params",
                                help="Fixed cost of each kernel launched one by one (larger steps).")
    draw.button("Reset setup", key="setup_reset", on_click=reset_setup, type="tertiary",
                icon=":material/restart_alt:", help="GPU, model, precisions and assumptions back to the "
                                                    "defaults.")
    assumptions = dataclasses.replace(
        d, compute_eff=compute_eff, memory_eff=memory_eff, host_overhead_s=overhead_us * 1e-6,
        sequence_host_s=seq_host_us * 1e-6, graph_kernel_s=graph_us * 1e-6, kernel_launch_s=launch_us * 1e-6)
    return Setup(gpu, model, assumptions, price)


def current_setup() -> Setup:
    """The setup the sidebar chose for this run (the defaults if a page runs on its own)."""
    return st.session_state.get(_STATE_KEY, DEFAULT_SETUP)
