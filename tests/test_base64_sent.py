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


dtypes = st.sampled_from(["float64", "float32", "float16", "int64", "int32", "int16", "int8", "uint64",
                          "uint32", "uint16", "uint8", "bool", ">f8"])


@given(dtypes, st.lists(st.integers(-2**40, 2**40) | st.floats(allow_nan=True, width=32), max_size=8),
       st.booleans(), st.booleans())
def test_typed_array_matches_plotlys_own(dtype, values, two_d, strided):
    """``_typed_array``, the fast path for numeric numpy arrays, gives what plotly's own
    ``to_typed_array_spec`` gives: every dtype (64-bit integers narrowed, or left as they are when
    they do not fit 32 bits), non-native byte order, NaN and infinities, 2-D and strided arrays."""
    from _plotly_utils.utils import to_typed_array_spec

    from ui.layout import _typed_array

    with np.errstate(all="ignore"):
        v = np.array(values, dtype=float).astype(dtype)
    if two_d and v.size % 2 == 0 and v.size:
        v = v.reshape(2, -1)
    if strided:
        v = v[..., ::2]
    got, want = _typed_array(v), to_typed_array_spec(v)
    if isinstance(want, dict):
        assert got == want
    else:
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
