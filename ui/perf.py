"""Server-side costs that are not the script's: Python's garbage collector.

Streamlit runs a full collection (``gc.collect(2)``) after every script run by default
(``runner.postScriptGC``). With numpy, pandas, plotly's validators and the caches loaded, that
traversal cost ~60-90 ms of CPU per rerun on the development machine: more than most pages' whole
script. The repo's config turns it off (.streamlit/config.toml), and after the first run has
imported and built everything long-lived, ``gc.freeze()`` moves those objects out of the collector's
way, so Python's own (rare) full collections stay cheap too. Memory stays flat under load (README,
"Many readers"); what is freed is still freed by reference counting.
"""

from __future__ import annotations

import gc

import streamlit as st


@st.cache_resource(show_spinner=False)
def freeze_startup_objects() -> bool:
    """Once per server process, after the first run: exempt everything alive now from collection."""
    gc.collect()
    gc.freeze()
    return True
