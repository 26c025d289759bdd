"""What runs inside a simulation worker process (``ui.workers``): kept apart from that module, which
imports Streamlit, so a worker imports only ``sim`` and numpy (about 30 MiB instead of 80).

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
import os
import sys
import threading
import types

# --- starting a worker without the app's script ------------------------------------------------------
# A "spawn" child imports the parent's main module first (``multiprocessing.spawn``: the module in
# ``sys.modules["__main__"]``, found by its ``__spec__`` or ``__file__``). In a Streamlit server that is
# the page script a reader's run installed there (Streamlit runs each script as ``__main__``), so every
# new worker would run app.py: Streamlit, every page, a page run in bare mode. A worker needs none of
# it (what it runs is pickled by reference to ``sim`` and this module), so while one is started the
# main module is one with neither.
_NO_MAIN = types.ModuleType("__main__")
_SWAP_LOCK = threading.Lock()


class Process(multiprocessing.context.SpawnProcess):
    """A "spawn" process that does not import the parent's main module."""

    @staticmethod
    def _Popen(process_obj):
        with _SWAP_LOCK:
            main = sys.modules.get("__main__")
            sys.modules["__main__"] = _NO_MAIN
            try:
                return multiprocessing.context.SpawnProcess._Popen(process_obj)
            finally:
                if sys.modules.get("__main__") is _NO_MAIN:  # unless a script run replaced it meanwhile
                    sys.modules["__main__"] = main


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
