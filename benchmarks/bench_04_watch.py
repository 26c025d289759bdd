"""Section 04: the scenario table (every section's run, then the metrics), the simulated day."""

from benchmarks.core import PageCase, SimCase
from sim.hardware import GPUS
from sim.metrics import SLO, dashboard_day, measure, scenario_runs
from sim.models import MODELS

H100, LLAMA8 = GPUS["H100 SXM"], MODELS["Llama-3.1-8B"]
_RUNS = scenario_runs(H100, LLAMA8)

SIM_CASES = [
    SimCase("metrics.scenario_runs, H100 + Llama-3.1-8B (every section's run)",
            lambda: scenario_runs(H100, LLAMA8), 30),
    SimCase("metrics.measure, ten scenarios", lambda: measure(_RUNS, SLO()), 10),
    SimCase("metrics.dashboard_day, 24 windows, ~2,400 requests",
            lambda: dashboard_day(H100, LLAMA8, flat_out=_RUNS.flat_out), 50),
]

PAGE = "app_pages/watch.py"
PAGE_CASES = [
    PageCase("04 Watch: TTFT target", PAGE, [("slider", "watch_ttft", [0.5, 1.0, 2.0, 5.0])]),
    PageCase("04 Watch: TPOT target", PAGE, [("slider", "watch_tpot", [20.0, 50.0, 100.0, 150.0])]),
    PageCase("04 Watch: GPU choice", PAGE,
             [("selectbox", "gpu", ["H100 SXM", "A100 80GB SXM", "B200", "L4"])]),
]
