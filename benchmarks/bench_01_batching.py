"""Section 01: static vs continuous batching (sim runs and page reruns)."""

from benchmarks.core import PageCase, SimCase
from sim.batching import sample_requests, simulate
from sim.hardware import GPUS
from sim.models import MODELS

H100, LLAMA8 = GPUS["H100 SXM"], MODELS["Llama-3.1-8B"]
_BURST_1K = sample_requests("anyscale", 1_000)
_BURST_10K = sample_requests("anyscale", 10_000)
# Poisson at a rate the 64-slot continuous engine keeps up with (8 req/s) and one near saturation
_POISSON_1K = sample_requests("anyscale", 1_000, "poisson", 8.0)
_POISSON_10K = sample_requests("anyscale", 10_000, "poisson", 30.0)

_RUNS = [  # (requests, label, slots, target ms)
    (_BURST_1K, "1,000 requests, 64 slots, burst", 64, 20),
    (_BURST_10K, "10,000 requests, 256 slots, burst", 256, 200),
    (_POISSON_1K, "1,000 requests, 64 slots, Poisson 8 req/s", 64, 20),
    (_POISSON_10K, "10,000 requests, 256 slots, Poisson 30 req/s", 256, 200),
]
SIM_CASES = [
    SimCase(f"batching.simulate {policy}, {label}",
            lambda req=req, slots=slots, policy=policy: simulate(H100, LLAMA8, req, slots, policy), target)
    for req, label, slots, target in _RUNS
    for policy in ("static", "continuous")
]

PAGE_CASES = [
    PageCase("01 Batching: static/continuous toggle", "app_pages/batching.py",
             [("toggle", "batching_continuous", [True, False])]),
    PageCase("01 Batching: slots slider", "app_pages/batching.py",
             [("select_slider", "batching_slots", [16, 32, 64, 128])]),
    PageCase("01 Batching: Poisson rate slider", "app_pages/batching.py",
             [("radio", "batching_load", ["poisson"]),
              ("select_slider", "batching_rate", [2, 4, 8, 16])]),
]
