"""What runs inside a simulation worker process (``ui.workers``): kept apart from that module, which
imports Streamlit, so a worker imports only ``sim`` and numpy (40-60 MiB at its start; 118 MiB when
workers still ran the app's script, below).

Each call is followed by ``malloc_trim`` where the C library is glibc: a run's large temporary arrays
are freed into the heap, and without it a worker's resident memory crept up by fragments over
thousands of runs (in a 1,500-run test of random setups: 169 MiB and still rising, against 124 MiB
flat once the ``sim`` caches had filled, with the trim).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import multiprocessing
import multiprocessing.connection
import multiprocessing.context
import multiprocessing.spawn
import os
import threading

# --- starting a worker without the app's script ------------------------------------------------------
# A "spawn" child imports the parent's main module first (``multiprocessing.spawn.get_preparation_data``
# names it by the ``__spec__`` or ``__file__`` of ``sys.modules["__main__"]``). In a Streamlit server
# that is the page script a reader's run installed there (Streamlit runs each script as ``__main__``,
# in its own thread, at any moment), so every new worker would run app.py: Streamlit, every page, a
# page run in bare mode. A worker needs none of it (what it runs is pickled by reference to ``sim``
# and this module), so for processes of this pool, known by their name, the preparation data leave
# the main module out. Swapping ``sys.modules["__main__"]`` while a worker starts instead lost a race
# with the script threads (3 workers in 6 ran app.py in a review's test).
NAME_PREFIX = "wtgl-sim-worker"
_MAIN_KEYS = ("init_main_from_name", "init_main_from_path")
_original_preparation_data = multiprocessing.spawn.get_preparation_data


def _preparation_data(name):
    data = _original_preparation_data(name)
    if str(name).startswith(NAME_PREFIX):
        for key in _MAIN_KEYS:
            data.pop(key, None)
    return data


if getattr(multiprocessing.spawn.get_preparation_data, "__name__", "") != "_preparation_data":
    multiprocessing.spawn.get_preparation_data = _preparation_data  # once, however often imported


class Process(multiprocessing.context.SpawnProcess):
    """A "spawn" process named for this pool, so that it starts without the parent's main module."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.name = f"{NAME_PREFIX}-{self.name}"


class Context(multiprocessing.context.SpawnContext):
    """The "spawn" start method with ``Process``: the pool's ``mp_context``."""

    Process = Process


def _malloc_trim():
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return libc.malloc_trim
    except (OSError, AttributeError):  # not glibc: nothing to trim
        return None


_TRIM = None


def start() -> None:
    """A worker's initializer: end this worker when its server process ends, however it ends (a
    worker holds its own end of the pool's task queue, so a server killed with SIGKILL would leave it
    waiting on that queue for ever)."""
    global _TRIM
    _TRIM = _malloc_trim()
    parent = multiprocessing.parent_process()
    if parent is None:
        return

    def watch() -> None:
        multiprocessing.connection.wait([parent.sentinel])
        os._exit(0)

    threading.Thread(target=watch, name="exit-with-server", daemon=True).start()


def call(fn, args: tuple, kwargs: dict):
    """``fn(*args, **kwargs)``, then the freed heap handed back to the system."""
    try:
        return fn(*args, **kwargs)
    finally:
        if _TRIM is not None:
            _TRIM(0)
