"""Bounded, per-process caches of the sim calls a page makes on every rerun.

A page script runs again on every change, so a cache must live in a module it imports. The sim
functions are pure (same inputs, same result: ``sim`` is deterministic for a given seed), and their
inputs are frozen dataclasses and numbers, so ``functools.lru_cache`` keys them exactly. The results
are shared between readers: pages only read them. A reader moving one slider back and forth, or many
readers on the same link, then pay for each setting once (page 03: ~7 ms of its rerun).
``st.cache_data`` would copy each result out of the cache (pickle) on every hit: for page 02's
runs that costs more than the lookup saves.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from functools import lru_cache, wraps

from sim import chunked, paging
from sim import speculative as spec
from ui.perf import SCRIPT_LOCK

speculate = lru_cache(maxsize=256)(spec.speculate)
speedup_vs_batch = lru_cache(maxsize=128)(spec.speedup_vs_batch)
speedup_vs_alpha = lru_cache(maxsize=256)(spec.speedup_vs_alpha)
modelled_batch_gain = lru_cache(maxsize=32)(spec.modelled_batch_gain)
verify_cost_reason = lru_cache(maxsize=256)(spec.verify_cost_reason)


@lru_cache(maxsize=64)
def paging_compare(page_tokens: int, max_output: int):
    """``sim.paging.compare`` of both policies on the page's default stream, in the toy pool's fixed
    memory cut into pages of ``page_tokens`` (``sim.paging.pool_pages``)."""
    return paging.compare(page_tokens=page_tokens, max_output=max_output,
                          n_pages=paging.pool_pages(page_tokens))


card_fit = lru_cache(maxsize=64)(paging.card_fit)
chunked_prefill = lru_cache(maxsize=64)(chunked.chunked_prefill)


# ---------------------------------------------------------------------------------------------------
# Caches for functions defined in a page script
# ---------------------------------------------------------------------------------------------------

_PAGE_CACHES: dict[str, tuple[OrderedDict, dict, threading.Lock]] = {}
_CONSTANT: set[str] = set()  # caches of results that do not depend on the setup
_computing = threading.local()  # .depth: entries this thread is computing (holding their locks)
_REGISTRY_LOCK = threading.Lock()


def page_cache(name: str, max_entries: int, *, constant: bool = False, yields: bool = False):
    """Cache a function a page script defines, under ``name``, across reruns and readers.

    A page script runs again on every change, so its ``@st.cache_resource`` decorators run again
    too, and each one hashes its function's source (``inspect.getsource``) and every argument on
    every call: a fifth of page 05's rerun (README, *Speed*). This keeps the entries in this module
    (``name`` finds them again on the next rerun), keys them on the arguments as given (hashable:
    strings, numbers, tuples, frozen dataclasses) and, as Streamlit does, leaves out arguments whose
    name starts with ``_`` (an unhashed input that another argument stands for). Results are shared,
    not copied: pages only read them. One reader computes a missing entry while the others wait for
    it (a lock per key), and at most ``max_entries`` are kept, the least recently used dropped.
    ``constant``: the result does not depend on the setup (computed once per server process), so a
    benchmark's cold rerun (``clear_all``) keeps it. ``yields``: a search of a second or more; a
    reader computing it lets go of the server's one-run-at-a-time lock (``ui.perf.SCRIPT_LOCK``)
    meanwhile, so the other readers' runs go ahead, and takes it back after (it waits for nothing
    else while it holds the lock again: the entry's own lock is let go of first)."""

    def decorate(fn):
        code = fn.__code__
        if code.co_kwonlyargcount or code.co_flags & 0x0C:  # keyword-only, *args or **kwargs
            raise TypeError(f"page_cache({name!r}): plain positional-or-keyword parameters only")
        names = code.co_varnames[:code.co_argcount]
        keep = tuple(i for i, n in enumerate(names) if not n.startswith("_"))
        defaults = fn.__defaults__ or ()
        first_default = len(names) - len(defaults)
        with _REGISTRY_LOCK:
            entries, locks, guard = _PAGE_CACHES.setdefault(name, (OrderedDict(), {}, threading.Lock()))
            if constant:
                _CONSTANT.add(name)

        @wraps(fn)
        def cached(*args, **kwargs):
            full = list(args)
            for i in range(len(args), len(names)):  # keywords and defaults, in parameter order
                n = names[i]
                full.append(kwargs[n] if n in kwargs else defaults[i - first_default])
            key = tuple(full[i] for i in keep)
            with guard:
                if key in entries:
                    entries.move_to_end(key)
                    return entries[key]
            if yields and not getattr(_computing, "depth", 0):
                with SCRIPT_LOCK.released():
                    return compute(key, full)
            # Nested inside another entry's computation, the outermost entry has decided whether the
            # script lock is let go of for the whole search (a worker's run lets go of it anyway:
            # ui.workers).
            return compute(key, full)

        def compute(key, full):
            with guard:
                if key in entries:
                    return entries[key]
                lock = locks.setdefault(key, threading.Lock())
            # One reader computes; the others find its result. A reader that finds the entry being
            # computed waits for it without the script lock: the one computing it may have let go of
            # that lock (a worker's run, ``ui.workers``; a search that yields) and need it back.
            if not lock.acquire(blocking=False):
                with SCRIPT_LOCK.released(front=True):
                    lock.acquire()
            try:
                with guard:
                    if key in entries:
                        return entries[key]
                _computing.depth = getattr(_computing, "depth", 0) + 1
                try:
                    value = fn(*full)
                except BaseException:
                    with guard:
                        locks.pop(key, None)
                    raise
                finally:
                    _computing.depth -= 1
                with guard:
                    entries[key] = value
                    while len(entries) > max_entries:
                        entries.popitem(last=False)
                    locks.pop(key, None)
            finally:
                lock.release()
            return value

        return cached

    return decorate


def clear_all() -> None:
    """Empty every cache of this module that depends on the setup: the pages' (``page_cache``, all
    but the ``constant`` ones) and the sim calls' (a benchmark's "cold" rerun: a setting no reader
    has asked for yet)."""
    with _REGISTRY_LOCK:
        for name, (entries, _, guard) in _PAGE_CACHES.items():
            if name in _CONSTANT:
                continue
            with guard:
                entries.clear()
    for value in list(globals().values()):
        if callable(getattr(value, "cache_clear", None)):
            value.cache_clear()


@page_cache("views", 256)
def view(name: str, key: tuple, _build):
    """A figure or table a page builds, once per (``name``, ``key``): ``key`` names everything it
    shows (building a figure costs milliseconds, and a reader moving a control back and forth asks
    for the same ones again). Names are the pages' own ("pool", "dash", ...), unique across pages."""
    return _build()
