"""Section 00 and the shared cost model."""

import numpy as np

from benchmarks.core import PageCase, SimCase
from sim.cost import DEFAULT_ASSUMPTIONS, step_cost
from sim.hardware import GPUS
from sim.models import MODELS
from sim.phases import two_phases

H100, LLAMA8 = GPUS["H100 SXM"], MODELS["Llama-3.1-8B"]
_steps = np.arange(1, 100_001, dtype=float)

SIM_CASES = [
    SimCase("phases.two_phases, defaults", lambda: two_phases(H100, LLAMA8, 2048, 1, 512), 5),
    SimCase("phases.two_phases, largest sliders",
            lambda: two_phases(GPUS["B200"], MODELS["Llama-3.1-70B"], 32768, 1024, 32768), 5),
    SimCase("cost.step_cost, 100,000 steps",
            lambda: step_cost(H100, LLAMA8, _steps, _steps * 512, _steps * 512, DEFAULT_ASSUMPTIONS), 20),
]

PAGE_CASES = [
    PageCase("00 Two phases: batch slider", "app_pages/two_phases.py",
             [("select_slider", "phases_batch", [1, 8, 64, 512])]),
    PageCase("00 Two phases: prompt slider", "app_pages/two_phases.py",
             [("select_slider", "phases_prompt", [512, 2048, 8192, 32768])]),
    PageCase("00 Two phases: GPU choice", "app_pages/two_phases.py",
             [("selectbox", "gpu", ["H100 SXM", "A100 80GB SXM", "B200", "L4"])]),
]
