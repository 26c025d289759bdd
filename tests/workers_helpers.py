"""Functions tests/test_workers.py sends to worker processes (importable there: a test module's own
functions would drag the test module, and pytest, into each worker)."""

from __future__ import annotations

import multiprocessing
import os


def in_worker() -> bool:
    return multiprocessing.parent_process() is not None


def doubled_or_die(x: int) -> int:
    """Ends the worker process it runs in (as a crash would); in the calling process, 2 x."""
    if in_worker():
        os._exit(3)
    return 2 * x


def wait_then(event, value, timeout_s: float = 60.0):
    """``value`` once ``event`` (a manager's Event) is set, or after ``timeout_s``; with whether it was
    set and the process it ran in."""
    return value, event.wait(timeout_s), in_worker()


def worker_pid() -> int:
    return os.getpid()


def imported_streamlit() -> bool:
    import sys

    return any(name == "streamlit" or name.startswith("streamlit.") for name in sys.modules)
