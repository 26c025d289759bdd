"""The simulations a page waits for, run in worker processes instead of the server's interpreter.

A Streamlit server is one Python process: every reader's script runs in a thread of it, and the
interpreter runs one thread at a time. The queue simulations of pages 01, 04 and 05 step through
their requests in Python, one event at a time, so while one reader's page waited for such a run,
every other reader's page waited too (``ui.perf.SCRIPT_LOCK`` runs one page at a time on purpose:
interleaved, they all took as long as all of them together). ``offload`` sends such a call to a
small pool of worker processes and lets go of the lock while it waits, so on a machine with a second
core another reader's page runs meanwhile; the result comes back as a copy (everything ``sim``
returns pickles: frozen dataclasses of arrays) and is cached by the page as before.

The sim functions are pure and deterministic, so a run gives the same numbers in a worker as in the
server (tested). How many workers: the environment variable ``WTGL_SIM_WORKERS`` (0 turns the pool
off: every call runs in the calling thread, as the tests' in-process pages do); unset, two where the
server may run on at least two cores, none on one (README, "Many readers"). Each worker holds 60-155
MiB. A worker that dies takes its call back to the calling thread and the pool is
started again on the next call; a worker ends when the server does, however the server ends.
"""

from __future__ import annotations

import logging
import os
import threading
from concurrent.futures import CancelledError, Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from ui import worker_task
from ui.perf import SCRIPT_LOCK

ENV = "WTGL_SIM_WORKERS"
MAX_WORKERS = 8
_LOG = logging.getLogger(__name__)
_LOCK = threading.Lock()
_pool: ProcessPoolExecutor | None = None
#: Set by a process that wants a fixed count whatever the environment says (the tests' in-process
#: pages: 0).
FORCE_WORKERS: int | None = None


def configured_workers() -> int:
    """Worker processes to use: ``WTGL_SIM_WORKERS`` (0-8) if set, else two where this process may
    run on two cores or more, and none on one. A value that is not a whole number in range is logged
    and replaced by that default. (Two, not one a core: each worker holds 60-155 MiB, and a host's
    core count says nothing of its memory; set more where both allow.)"""
    if FORCE_WORKERS is not None:
        return FORCE_WORKERS
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    default = 2 if cores >= 2 else 0
    raw = os.environ.get(ENV, "").strip()
    if not raw:
        return default
    n = int(raw) if raw.isascii() and raw.isdigit() else -1  # int() would take "٣" as 3
    if not 0 <= n <= MAX_WORKERS:
        _LOG.warning("%s=%r is not a whole number from 0 to %d: using %d", ENV, raw, MAX_WORKERS, default)
        return default
    return n


def _get_pool() -> ProcessPoolExecutor | None:
    global _pool
    with _LOCK:
        if _pool is None:
            n = configured_workers()
            if n == 0:
                return None
            # "spawn": the server is multi-threaded, and forking a process with threads can copy a lock
            # some other thread holds; without the app's script (``worker_task.Process``). A worker
            # starts on the first calls (a few hundred ms).
            _pool = ProcessPoolExecutor(n, mp_context=worker_task.Context(), initializer=worker_task.start)
        return _pool


def _discard(pool: ProcessPoolExecutor) -> None:
    """Drop ``pool`` (a broken one) if it is still the current one; a newer pool is left alone, and
    nothing queued is cancelled (a broken pool's waiting calls fail by themselves, and run here)."""
    global _pool
    with _LOCK:
        if _pool is pool:
            _pool = None
    pool.shutdown(wait=False)


def shutdown() -> None:
    """Stop the workers (tests; a server's exit stops them too)."""
    global _pool
    with _LOCK:
        pool, _pool = _pool, None
    if pool is not None:
        pool.shutdown(wait=True, cancel_futures=True)


def submit(fn, /, *args, **kwargs) -> Future:
    """Start ``fn(*args, **kwargs)`` in a worker (``fn`` a module-level function of ``sim``) and return
    its future; with no pool, or a pool that cannot take it, the call runs here and the future is
    already done. Wait for it with ``result``."""
    pool = _get_pool()
    if pool is not None:
        try:
            future = pool.submit(worker_task.call, fn, args, kwargs)
            future.pool = pool  # which pool to drop if this call finds it broken
            return future
        except (BrokenProcessPool, RuntimeError) as e:  # a dead pool, or one shut down meanwhile
            _LOG.warning("sim worker pool unusable (%s): running %s here", e, getattr(fn, "__name__", fn))
            _discard(pool)
    done: Future = Future()
    try:
        done.set_result(fn(*args, **kwargs))
    except Exception as e:  # raised by result(), as a worker's would be
        done.set_exception(e)
    return done


def result(future: Future, fn=None, /, *args, **kwargs):
    """``future``'s result. While it is not done, this thread lets go of the server's one-page-at-a-
    time lock (``ui.perf.SCRIPT_LOCK``), so another reader's page runs meanwhile, and takes it back
    ahead of the readers queued for it (it had its turn). If the worker died (``BrokenProcessPool``:
    that pool, and only that one, is dropped) or the call was cancelled (a pool shut down), and ``fn``
    is given, ``fn(*args, **kwargs)`` runs here instead; an exception that ``fn`` raised in the worker
    is raised here, as if it had run here."""
    try:
        if future.done():
            return future.result()
        with SCRIPT_LOCK.released(front=True):
            return future.result()
    except (BrokenProcessPool, CancelledError) as e:
        pool = getattr(future, "pool", None)
        if pool is not None and isinstance(e, BrokenProcessPool):
            _discard(pool)
        if fn is None:
            raise
        _LOG.warning("sim worker died (%s): running %s here", e, getattr(fn, "__name__", fn))
        return fn(*args, **kwargs)


def offload(fn, /, *args, **kwargs):
    """``fn(*args, **kwargs)``, computed in a worker process while this thread lets go of the script
    lock (``submit`` then ``result``); the same value as calling it here."""
    return result(submit(fn, *args, **kwargs), fn, *args, **kwargs)
