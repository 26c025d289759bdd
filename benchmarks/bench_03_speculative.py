"""Section 03: speculative decoding."""

import numpy as np

from benchmarks.core import PageCase, SimCase
from sim import speculative as spec
from sim.hardware import GPUS
from sim.models import MODELS

H100, LLAMA8, LLAMA70 = GPUS["H100 SXM"], MODELS["Llama-3.1-8B"], MODELS["Llama-3.1-70B"]
DRAFT, EAGLE3 = spec.METHODS["Draft model"], spec.METHODS["EAGLE-3"]
KS = list(range(1, 17))


def _page_models():
    """Everything the page computes at its defaults: the round (Monte Carlo and best k included),
    the batch sweep and the acceptance sweep."""
    spec.speculate(H100, LLAMA8, DRAFT, 0.8, 4, 1, 1024)
    spec.speedup_vs_batch(H100, LLAMA8, DRAFT, 0.8, 4, 1024)
    spec.speedup_vs_alpha(H100, LLAMA8, DRAFT, KS, 1, 1024)


SIM_CASES = [
    SimCase("speculative: page models at defaults (round + Monte Carlo + both sweeps)", _page_models, 5),
    SimCase("speculative.speculate, defaults (4,000 Monte Carlo rounds, k = 1..16)",
            lambda: spec.speculate(H100, LLAMA8, DRAFT, 0.8, 4, 1, 1024), 5),
    SimCase("speculative.speculate, largest sliders (70B, EAGLE-3, k 16, batch 1024, 32k context)",
            lambda: spec.speculate(H100, LLAMA70, EAGLE3, 0.99, 16, 1024, 32768), 5),
    SimCase(f"speculative.speedup_vs_batch, {len(spec.SWEEP_BATCHES)} batch sizes (1..1024)",
            lambda: spec.speedup_vs_batch(H100, LLAMA8, DRAFT, 0.8, 4, 1024), 20),
    SimCase("speculative.speedup_vs_alpha, 16 k x 101 alpha",
            lambda: spec.speedup_vs_alpha(H100, LLAMA8, DRAFT, KS, 1, 1024), 5),
    SimCase("speculative.simulate_rounds, 100,000 rounds x k 8",
            lambda: spec.simulate_rounds(0.8, 8, 100_000, 1), 20),
]

# Many distinct values so that the page's st.cache_data rarely hits: these are honest reruns.
_ALPHAS = [float(a) for a in np.round(np.linspace(0.30, 0.99, 40), 2)]

PAGE_CASES = [
    PageCase("03 Speculative: acceptance slider", "app_pages/speculative.py",
             [("slider", "spec_alpha", _ALPHAS)]),
    PageCase("03 Speculative: batch slider", "app_pages/speculative.py",
             [("select_slider", "spec_batch", [1, 8, 64, 512]),
              ("slider", "spec_alpha", _ALPHAS[::3])]),
    PageCase("03 Speculative: drafting method", "app_pages/speculative.py",
             [("radio", "spec_method", list(spec.METHODS))]),
]
