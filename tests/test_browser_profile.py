"""benchmarks/browser_profile.py's arithmetic: a CDP CPU profile's samples summed per script chunk over
the window after the input. (The profiling itself drives a real browser and is not part of the
suite.)"""

import pytest

from benchmarks.browser_profile import NATIVE, chunk_of, self_time_by_chunk


def test_chunk_names_come_from_the_script_file():
    assert chunk_of("http://127.0.0.1:8501/static/js/react-dom.Dzbslgj4.js") == "react-dom"
    assert chunk_of("http://h/static/js/emotion-styled.abc.js") == "emotion-styled"
    assert chunk_of("") == NATIVE


def _profile(frames: list[tuple[str, str]], deltas_us: list[int]) -> dict:
    """A profile whose i-th sample is in frames[i] (function name, url), taken deltas_us[i] after
    the one before it."""
    nodes = [{"id": i + 1, "callFrame": {"functionName": f, "url": u}} for i, (f, u) in enumerate(frames)]
    return {"nodes": nodes, "startTime": 1_000_000, "samples": [n["id"] for n in nodes],
            "timeDeltas": deltas_us}


def test_samples_count_from_the_first_script_for_the_window():
    react = "http://h/static/js/react-dom.x.js"
    plotly = "http://h/static/js/PlotlyChart.y.js"
    profile = _profile(
        [("(idle)", ""), ("press", "playwright-injected"), ("se", react), ("se", react), ("(program)", ""),
         ("draw", plotly), ("(idle)", ""), ("late", plotly)],
        [0, 5000, 1000, 2000, 3000, 4000, 1000, 10_000],
    )
    # the frontend's first sample is at 6 ms (Playwright's script at 5 ms is not the input's handler);
    # a 10 ms window ends at 16 ms: the last sample (at 26) is out
    got = self_time_by_chunk(profile, window_ms=10)
    assert got == pytest.approx({"react-dom": 1 + 2, "(program)": 3, "PlotlyChart": 4, "(idle)": 1})


def test_a_profile_with_no_script_has_nothing_to_count():
    assert self_time_by_chunk(_profile([("(idle)", ""), ("(program)", "")], [0, 100]), 50) == {}
    assert self_time_by_chunk(_profile([("(idle)", ""), ("f", "http://h/other.js")], [0, 100]), 50) == {}
