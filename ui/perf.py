"""Server-side costs that are not the script's: Python's garbage collector, and threads that
contend for the interpreter.

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
import threading

import streamlit as st

#: One reader's page runs at a time in a server process. Streamlit runs each session's script in a
#: thread of its own, and the interpreter runs one thread at a time (the GIL): with many readers at
#: once their runs interleave, every one of them takes as long as all of them together, and the
#: switching itself cost a third of the server's CPU (113 ms of CPU a run against 73 ms with this
#: lock, in the 50-reader load test: README, "Many readers"). Taken around the page's run
#: (``app.py``; the sidebar's few widgets outside it measured no better inside). Reentrant. The
#: event loop thread, which sends what the runs produced, never takes it.
SCRIPT_LOCK = threading.RLock()


@st.cache_resource(show_spinner=False)
def freeze_startup_objects() -> bool:
    """Once per server process, after the first run: exempt everything alive now from collection."""
    gc.collect()
    gc.freeze()
    return True
