"""One reader's page runs at a time in a server process (``ui.perf.SCRIPT_LOCK``, a first-come
first-served lock): with many readers their runs interleaved on the interpreter's lock and the
switching cost a third of the server's CPU (README, "Many readers"). The app takes it around the
page's run; a long search (``page_cache(..., yields=True)``) lets go of it while it computes."""

from __future__ import annotations

import threading
import time

import ui.layout
from tests.conftest import open_app
from ui.perf import SCRIPT_LOCK, FifoLock
from ui.sim_cache import page_cache


def _wait_until(cond, timeout_s: float = 10.0) -> None:
    """Poll until ``cond()`` (a state, not a duration: the tests assert order, not speed)."""
    end = time.monotonic() + timeout_s
    while not cond():
        assert time.monotonic() < end, "timed out waiting"
        time.sleep(0.005)


def test_the_page_runs_holding_the_lock(monkeypatch):
    seen = []
    real = ui.layout.header

    def spy(*args, **kwargs):  # every page draws its header first
        seen.append(SCRIPT_LOCK.held())
        return real(*args, **kwargs)

    monkeypatch.setattr(ui.layout, "header", spy)
    at = open_app("app_pages/two_phases.py")
    assert not at.exception
    assert seen and all(seen)


def test_a_run_waits_while_another_readers_run_holds_the_lock():
    at = open_app("app_pages/two_phases.py")
    slider = at.select_slider(key="phases_batch")
    before = slider.value
    slider.set_value(64 if before != 64 else 16)
    reader = threading.Thread(target=at.run, daemon=True)
    with SCRIPT_LOCK:  # another reader's run, in progress
        reader.start()
        _wait_until(lambda: SCRIPT_LOCK.waiting() == 1)  # the run queued for the lock
        assert reader.is_alive()
    reader.join(timeout=60)
    assert not reader.is_alive() and not at.exception
    assert at.select_slider(key="phases_batch").value != before  # and then it went through


def test_waiters_are_served_in_the_order_they_came():
    lock, order = FifoLock(), []

    def run(n):
        with lock:
            order.append(n)

    lock.acquire()
    threads = []
    for n in range(6):
        t = threading.Thread(target=run, args=(n,))
        t.start()
        threads.append(t)
        _wait_until(lambda n=n: lock.waiting() == n + 1)
    lock.release()
    for t in threads:
        t.join(timeout=10)
    assert order == list(range(6))


def test_released_lets_others_in_and_takes_back_every_level():
    lock, got_in = FifoLock(), threading.Event()

    def other():
        with lock:
            got_in.set()

    with lock, lock:  # two levels, as a full run calling its page
        t = threading.Thread(target=other)
        with lock.released():
            assert not lock.held()
            t.start()
            assert got_in.wait(10)
            t.join(10)
        assert lock.held()
    assert not lock.held()  # both levels let go
    with lock:  # and it is free
        pass


def test_a_long_search_lets_the_other_readers_run_meanwhile():
    others_ran = threading.Event()

    @page_cache("test.yields", 4, yields=True)
    def search(key: str):
        assert not SCRIPT_LOCK.held()
        t = threading.Thread(target=lambda: (SCRIPT_LOCK.acquire(), others_ran.set(), SCRIPT_LOCK.release()))
        t.start()
        assert others_ran.wait(10)  # another reader's run went ahead while this one computed
        t.join(10)
        return key

    with SCRIPT_LOCK:  # a page run
        assert search("a") == "a"
        assert SCRIPT_LOCK.held()  # taken back after the search


def test_a_search_inside_another_entrys_computation_keeps_the_lock():
    """That entry's lock is held: letting go of the script lock there could leave a reader who holds
    the script lock waiting for that entry, and this thread waiting for the script lock."""
    held = []

    @page_cache("test.inner", 4, yields=True)
    def inner(key: str):
        held.append(SCRIPT_LOCK.held())
        return key

    @page_cache("test.outer", 4)
    def outer(key: str):
        return inner(key + "!")

    with SCRIPT_LOCK:
        assert outer("b") == "b!"
    assert held == [True]


def test_busy_when_the_holder_waited_for_it_or_another_waits_now():
    lock, seen = FifoLock(), {}
    lock.acquire()
    assert not lock.busy()  # found free, nobody queued: a pause would cost no one anything

    def second():
        with lock:
            seen["second"] = lock.busy()  # it had to wait for the first holder

    t = threading.Thread(target=second)
    t.start()
    _wait_until(lambda: lock.waiting() == 1)
    assert lock.busy()  # someone is queued now
    lock.release()
    t.join(timeout=10)
    assert seen == {"second": True}
    with lock:
        assert not lock.busy()  # free again when this thread asked


def test_busy_for_a_second_after_another_readers_run():
    tag = {"now": "reader-1"}
    lock = FifoLock(tag=lambda: tag["now"])
    with lock:
        pass  # reader 1's run ends
    tag["now"] = "reader-2"
    with lock:
        assert lock.busy()  # reader 1 ran a moment ago: the server is serving others
        assert not lock.busy(window_s=0.0)
    tag["now"] = "reader-2"
    with lock:
        assert not lock.busy()  # the last run was reader 2's own
