"""``ui.layout._to_base64`` gives exactly what plotly's own ``convert_to_base64`` gives (it only skips
the per-value array test where the answer is known)."""

from __future__ import annotations

import copy
import json

import numpy as np
import pandas as pd
from _plotly_utils.utils import convert_to_base64
from hypothesis import given
from hypothesis import strategies as st

from ui.layout import _to_base64

scalars = st.one_of(st.none(), st.booleans(), st.integers(-10**12, 10**12), st.floats(allow_nan=False),
                    st.text(max_size=5), st.sampled_from([np.float64(1.5), np.int64(3), np.bool_(True)]))
arrays = st.one_of(
    st.lists(st.floats(-1e6, 1e6), max_size=6).map(np.array),
    st.lists(st.integers(-2**40, 2**40), max_size=6).map(lambda v: np.array(v, dtype=np.int64)),
    st.lists(st.integers(0, 200), min_size=1, max_size=6).map(lambda v: np.array(v, dtype=np.uint64)),
    st.lists(st.floats(-10, 10), min_size=1, max_size=4).map(pd.Series),
    st.just(np.zeros((2, 3))),
)
keys = st.sampled_from(["x", "y", "z", "marker", "range", "geojson", "text", "customdata", "color"])
values = st.recursive(st.one_of(scalars, arrays),
                      lambda inner: st.one_of(st.lists(inner, max_size=4),
                                              st.lists(inner, max_size=3).map(tuple),
                                              st.dictionaries(keys, inner, max_size=4)),
                      max_leaves=25)


def _json(obj) -> str:
    return json.dumps(obj, sort_keys=True, default=lambda v: repr(v))


@given(st.dictionaries(keys, values, max_size=5))
def test_the_same_result_as_plotly_on_any_nesting(spec):
    theirs, ours = copy.deepcopy(spec), copy.deepcopy(spec)
    convert_to_base64(theirs)
    _to_base64(ours)
    assert _json(ours) == _json(theirs)
