"""Section 05: the scheduler on 2,000 requests, the load curve and capacity search, the page's reruns."""

from benchmarks.core import PageCase, SimCase
from sim import load
from sim.hardware import GPUS
from sim.models import MODELS

H100, LLAMA8 = GPUS["H100 SXM"], MODELS["Llama-3.1-8B"]
_BASE = load.make_stream(2000, 1.0)
_SAT = load.saturation_rate(H100, LLAMA8, _BASE)
_DEFAULT = _BASE.at_rate(0.6 * _SAT, _BASE.n / float(_BASE.arrival_s[-1]))  # the page's default load
_SEARCH = load.make_stream(600, 1.0)
_LOADS = [0.2, 0.4, 0.6, 0.8, 1.0, 1.3]
_SWEEP = load.sweep(H100, LLAMA8, _SEARCH, "chunked", [_SAT * f for f in _LOADS])

SIM_CASES = [
    SimCase("load.simulate, 2,000 long-tailed chat requests, prefill-first, 60 % load",
            lambda: load.simulate(H100, LLAMA8, _DEFAULT, "prefill-first"), 150),
    SimCase("load.simulate, 2,000 requests, chunked (512), 60 % load",
            lambda: load.simulate(H100, LLAMA8, _DEFAULT, "chunked"), 150),
    SimCase("load.simulate, 2,000 requests, decode-first, 60 % load",
            lambda: load.simulate(H100, LLAMA8, _DEFAULT, "decode-first"), 150),
    SimCase("load.sweep, chunked, 6 rates x 600 requests",
            lambda: load.sweep(H100, LLAMA8, _SEARCH, "chunked", [_SAT * f for f in _LOADS]), 500),
    SimCase("load.capacity_in_sweep, chunked, strict targets (4 runs)",
            lambda: load.capacity_in_sweep(H100, LLAMA8, _SWEEP, load.TARGET_PRESETS["strict"]), 200),
    SimCase("load.capacity (full bisection, 9 runs x 600 requests), chunked, strict targets",
            lambda: load.capacity(H100, LLAMA8, _SEARCH, "chunked", load.TARGET_PRESETS["strict"]), 500),
]

PAGE = "app_pages/load.py"
PAGE_CASES = [
    PageCase("05 Under load: policy toggle (2,000 requests)", PAGE,
             [("radio", "load_policy", ["chunked", "prefill-first", "decode-first"])], target_ms=150),
    PageCase("05 Under load: arrival rate (2,000 requests)", PAGE,
             [("select_slider", "load_rate", [40, 60, 80])], target_ms=150),
    # The same with the three lower sections open (the load curves, every policy's capacity, prefix
    # caching, disaggregation): what a reader who opened them pays.
    PageCase("05 Under load: policy toggle, every section open", PAGE,
             [("radio", "load_policy", ["chunked", "prefill-first", "decode-first"])], target_ms=150,
             params={"load_show_curves": "true", "load_show_prefix": "true", "load_show_split": "true"}),
]
