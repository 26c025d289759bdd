"""Pure numpy models of LLM inference serving.

Nothing here imports Streamlit or Plotly or reads a file but its own data (``sim/data``,
``sim/configs``; ``python -m sim.truth FILE`` is the one command-line entry, and it reads the file it
is given): every function takes named inputs
(units in names or docstrings: seconds, bytes, FLOP) and returns numbers or numpy arrays, and
everything random is seeded. ``cost`` is the one roofline step-time model every other module
prices its steps with.
"""
