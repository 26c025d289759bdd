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
import math
import threading
import time
from collections import deque
from contextlib import contextmanager

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx


class FifoLock:
    """A reentrant lock that serves its waiters in the order they came (``threading.Lock`` wakes any
    of them, so under a long queue one run could wait without bound). ``released()`` lets go of it
    for a while, wholly, and takes it again at the back of the queue."""

    def __init__(self, tag=lambda: None) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._queue: deque[int] = deque()  # waiting threads, first come first
        self._owner: int | None = None
        self._depth = 0
        self._waited = False  # whether the holder found the lock taken or others queued
        self._tag = tag  # who the calling thread runs for (a reader's session), for busy()
        self._last_release: tuple[object, float] = (None, -math.inf)  # (tag, time.monotonic())

    def acquire(self, front: bool = False) -> None:
        """Take the lock, after the threads queued for it (``front``: before them)."""
        me = threading.get_ident()
        with self._cond:
            if self._owner == me:
                self._depth += 1
                return
            waited = self._owner is not None or bool(self._queue)
            if front:
                self._queue.appendleft(me)
            else:
                self._queue.append(me)
            try:
                while self._owner is not None or self._queue[0] != me:
                    self._cond.wait()
            except BaseException:  # gave up waiting: out of the queue, so the next one is served
                self._queue.remove(me)
                self._cond.notify_all()
                raise
            self._queue.popleft()
            self._owner, self._depth, self._waited = me, 1, waited

    def release(self) -> None:
        with self._cond:
            if self._owner != threading.get_ident():
                raise RuntimeError("release of a FifoLock this thread does not hold")
            if self._depth == 1:
                tag = self._tag()  # first: a tag that raises leaves the lock as it was
                self._last_release = (tag, time.monotonic())
                self._owner = None
                self._cond.notify_all()
            self._depth -= 1

    def held(self) -> bool:
        """Whether the calling thread holds it."""
        return self._owner == threading.get_ident()

    def waiting(self) -> int:
        """Threads queued for it."""
        with self._cond:
            return len(self._queue)

    def busy(self, window_s: float = 1.0) -> bool:
        """Whether others want it: a thread is queued for it now, or the calling thread, which holds
        it, found it taken or others queued when it asked, or another tag (another reader) let go of
        it less than ``window_s`` seconds ago."""
        with self._cond:
            tag, when = self._last_release
            return (bool(self._queue) or (self._owner == threading.get_ident() and self._waited)
                    or (tag != self._tag() and time.monotonic() - when < window_s))

    def __enter__(self) -> FifoLock:
        self.acquire()
        return self

    def __exit__(self, *exc) -> None:
        self.release()

    @contextmanager
    def released(self, front: bool = False):
        """Let go of the lock (all its levels) if this thread holds it, and take it back after: at the
        back of the queue, or ``front``, ahead of the threads queued meanwhile."""
        if not self.held():
            yield
            return
        with self._cond:
            depth, self._depth = self._depth, 1
        self.release()
        try:
            yield
        finally:
            self.acquire(front=front)
            with self._cond:
                self._depth = depth


#: One reader's page runs at a time in a server process. Streamlit runs each session's script in a
#: thread of its own, and the interpreter runs one thread at a time (the GIL): with many readers at
#: once their runs interleave, every one of them takes as long as all of them together, and the
#: switching itself cost a third of the server's CPU (113 ms of CPU a run against 73 ms with this
#: lock, in the 50-reader load test: README, "Many readers"). Taken around the page's run
#: (``app.py``; the sidebar's few widgets outside it measured no better inside), first come first
#: served. A search of a second or more lets go of it while it computes (``page_cache(...,
#: yields=True)``), so one reader opening page 05's sections does not hold up the others. The event
#: loop thread, which sends what the runs produced, never takes it. Tagged with the reader's session,
#: so that ``busy()`` knows whether another reader ran a moment ago (``ui.layout.send_what_is_drawn``).
SCRIPT_LOCK = FifoLock(tag=lambda: getattr(get_script_run_ctx(suppress_warning=True), "session_id", None))


@st.cache_resource(show_spinner=False)
def freeze_startup_objects() -> bool:
    """Once per server process, after the first run: exempt everything alive now from collection."""
    gc.collect()
    gc.freeze()
    return True
