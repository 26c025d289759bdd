"""Tell the reader when a shared link carried settings that could not be used.

Streamlit drops a bound widget's URL value that is malformed or out of range and shows the default
instead. That keeps the page safe but silent; a reader who followed a hand-edited or stale link
deserves to know. On a session's first run we note the raw query parameters before any widget reads
them, and after the page has run we list those that did not survive.
"""

from __future__ import annotations

import math

import streamlit as st

_CHECKED = "_url_checked"


def raw_params_on_first_run() -> dict[str, list[str]] | None:
    """The URL's query parameters as the session's first run received them (None on later runs)."""
    if st.session_state.get(_CHECKED):
        return None
    st.session_state[_CHECKED] = True
    return {key: st.query_params.get_all(key) for key in st.query_params}


def _same(raw: str, value) -> bool:
    if str(value) == raw:
        return True
    try:
        return math.isclose(float(raw), float(value))
    except (TypeError, ValueError):
        return False


def rejected_params(raw: dict[str, list[str]]) -> list[str]:
    """``key=value`` strings from ``raw`` that the app ignored: unknown keys, and values a widget
    refused (a value equal to the widget's default is dropped from the URL too, and is not listed)."""
    rejected = []
    for key, values in raw.items():
        shown = ", ".join(values)
        if key not in st.session_state:
            rejected.append(f"{key}={shown} (not a setting of this page)")
        elif key in st.query_params:
            continue  # the widget took it
        elif not (len(values) == 1 and _same(values[0], st.session_state[key])):
            rejected.append(f"{key}={shown} (not a valid value; using {st.session_state[key]})")
    return rejected


def show_rejected(raw: dict[str, list[str]] | None, container) -> None:
    """Write a warning into ``container`` (placed at the top of the page) if anything was ignored."""
    if not raw:
        return
    rejected = rejected_params(raw)
    if rejected:
        container.warning(
            "This link had settings that could not be used, so their defaults are shown: "
            + "; ".join(f"`{r}`" for r in rejected), icon=":material/link_off:",
        )
