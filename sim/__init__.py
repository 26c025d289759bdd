"""Pure numpy models of LLM inference serving.

Nothing here imports Streamlit or Plotly or touches the disk: every function takes named inputs
(units in names or docstrings: seconds, bytes, FLOP) and returns numbers or numpy arrays, and
everything random is seeded. ``cost`` is the one roofline step-time model every other module
prices its steps with.
"""
