"""Speed measurements (not tests): ``python -m benchmarks`` prints a table for the README.

Each ``benchmarks/bench_*.py`` module defines
    SIM_CASES:  list of ``SimCase``  (a sim entry point at named settings, with its target in ms)
    PAGE_CASES: list of ``PageCase`` (a page script, and widget changes to rerun it with)
The runner times every case and prints one markdown table.
"""
