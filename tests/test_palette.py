"""The palette stays distinguishable under simulated colour-vision deficiency.

Simulation: Machado, Oliveira & Fernandes (2009) matrices at full severity for protanopia,
deuteranopia and tritanopia, applied in linear RGB; distance: CIE76 Delta E in CIELAB. Pairs that
share a chart must stay at least MIN_DELTA_E apart for normal vision and every deficiency.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from ui.theme import COLORS, REQUEST_CYCLE

MACHADO = {
    "normal": np.eye(3),
    "protanopia": np.array([[0.152286, 1.052583, -0.204868],
                            [0.114503, 0.786281, 0.099216],
                            [-0.003882, -0.048116, 1.051998]]),
    "deuteranopia": np.array([[0.367322, 0.860646, -0.227968],
                              [0.280085, 0.672501, 0.047413],
                              [-0.011820, 0.042940, 0.968881]]),
    "tritanopia": np.array([[1.255528, -0.076749, -0.178779],
                            [-0.078411, 0.930809, 0.147602],
                            [0.004733, 0.691367, 0.303900]]),
}
MIN_DELTA_E = 10.0  # clearly distinguishable side by side

# Roles that appear together on one chart.
GROUPS = {
    "phases": ["prefill", "decode"],
    "step breakdown": ["weights", "kv", "compute"],
    "goodput": ["useful", "waste", "idle", "padding"],
    "page pool": ["reserved", "slack", "free"],
}


def _linear(hex_color: str) -> np.ndarray:
    rgb = np.array([int(hex_color[i:i + 2], 16) for i in (1, 3, 5)]) / 255
    return np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)


def _lab(linear_rgb: np.ndarray) -> np.ndarray:
    m = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]])
    xyz = m @ np.clip(linear_rgb, 0, 1) / np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > (6 / 29) ** 3, np.cbrt(xyz), xyz / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def delta_e(a: str, b: str, vision: str) -> float:
    sim = MACHADO[vision]
    return float(np.linalg.norm(_lab(sim @ _linear(a)) - _lab(sim @ _linear(b))))


def test_machado_matrices_keep_white_white():
    for vision, m in MACHADO.items():
        assert np.allclose(m @ np.ones(3), 1, atol=0.01), vision


@pytest.mark.parametrize("vision", list(MACHADO))
@pytest.mark.parametrize("group", list(GROUPS))
def test_roles_sharing_a_chart_stay_distinct(group, vision):
    for a, b in itertools.combinations(GROUPS[group], 2):
        assert delta_e(COLORS[a], COLORS[b], vision) >= MIN_DELTA_E, (group, a, b, vision)


@pytest.mark.parametrize("vision", list(MACHADO))
def test_neighbouring_request_colours_stay_distinct(vision):
    cycle = REQUEST_CYCLE + REQUEST_CYCLE[:1]
    for a, b in itertools.pairwise(cycle):
        assert delta_e(a, b, vision) >= MIN_DELTA_E, (a, b, vision)


def test_a_colour_blind_unsafe_pair_is_caught():
    """A typical red/green pair, far apart for normal vision, collapses under deuteranopia."""
    assert delta_e("#CC3333", "#669933", "normal") > 50
    assert delta_e("#CC3333", "#669933", "deuteranopia") < MIN_DELTA_E


def test_figure_helper_styles_and_validation_catches_bad_properties():
    from ui.theme import figure, validated

    fig = figure([dict(type="bar", x=[1, 2], y=[3, 4], name="a")], dict(xaxis=dict(title="x")),
                 height=300, title="T")
    assert validated(fig).layout.height == 300 and fig.layout.title.text == "T"
    with pytest.raises(ValueError):
        validated(figure([dict(type="bar", x=[1], y=[1], colour="red")]))


def test_figure_helper_expands_shorthand_axis_titles():
    """Without validation plotly would pass title="..." through as a string, which plotly.js drops."""
    from ui.theme import figure

    fig = figure([dict(type="bar", x=[1], y=[1])], dict(xaxis=dict(title="Wall time (s)")))
    assert fig.to_dict()["layout"]["xaxis"]["title"] == {"text": "Wall time (s)"}
