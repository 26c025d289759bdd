"""ui.workers: simulations computed in worker processes give the same values as in the server, the
page's script lock is let go of while a worker computes, and a worker that dies costs no answer."""

from __future__ import annotations

import dataclasses
import logging
import sys
import threading
import types
from concurrent.futures import CancelledError, Future
from pathlib import Path

import numpy as np
import pytest

import ui.workers as workers
from sim import load, metrics
from sim.cost import DEFAULT_ASSUMPTIONS
from sim.hardware import GPUS, custom_gpu
from sim.models import MODELS
from tests.conftest import open_app
from tests.workers_helpers import doubled_or_die, imported_streamlit, in_worker, wait_then
from ui.perf import SCRIPT_LOCK
from ui.sim_cache import clear_all, page_cache

H100, LLAMA8 = GPUS["H100 SXM"], MODELS["Llama-3.1-8B"]


@pytest.fixture
def pool(monkeypatch):
    """One worker process for the test (the suite's pages run in-process: tests/conftest.py)."""
    monkeypatch.setattr(workers, "FORCE_WORKERS", 1)
    workers.shutdown()
    yield
    workers.shutdown()


@pytest.mark.parametrize(("raw", "expected"), [("0", 0), ("3", 3), (" 2 ", 2), ("8", 8)])
def test_the_environment_sets_the_count(monkeypatch, raw, expected):
    monkeypatch.setattr(workers, "FORCE_WORKERS", None)
    monkeypatch.setenv(workers.ENV, raw)
    assert workers.configured_workers() == expected


@pytest.mark.parametrize("raw", ["-1", "9", "two", "1.5", "٣"])
def test_a_bad_count_is_logged_and_the_default_used(monkeypatch, caplog, raw):
    monkeypatch.setattr(workers, "FORCE_WORKERS", None)
    monkeypatch.setattr(workers.os, "sched_getaffinity", lambda pid: {0, 1})
    monkeypatch.setenv(workers.ENV, raw)
    with caplog.at_level(logging.WARNING, logger="ui.workers"):
        assert workers.configured_workers() == 2
    assert workers.ENV in caplog.text


@pytest.mark.parametrize(("cores", "expected"), [(1, 0), (2, 2), (3, 2), (64, 2)])
def test_the_default_is_two_workers_given_a_second_core(monkeypatch, cores, expected):
    """The cores this process may run on (a container's CPU set), not the host's count."""
    monkeypatch.setattr(workers, "FORCE_WORKERS", None)
    monkeypatch.delenv(workers.ENV, raising=False)
    monkeypatch.setattr(workers.os, "sched_getaffinity", lambda pid: set(range(cores)))
    monkeypatch.setattr(workers.os, "cpu_count", lambda: 128)
    assert workers.configured_workers() == expected


def test_no_pool_runs_the_call_here(monkeypatch):
    monkeypatch.setattr(workers, "FORCE_WORKERS", 0)
    workers.shutdown()
    assert workers.offload(in_worker) is False
    with pytest.raises(ValueError):
        workers.result(workers.submit(load.simulate, H100, LLAMA8, load.make_stream(5, 1.0), "fastest"))


def test_a_worker_gives_the_same_runs_as_this_process(pool):
    """A page's runs, computed in the worker, equal the ones computed here (sim is deterministic), step
    cost breakdowns included: everything sim returns pickles."""
    assert workers.offload(in_worker) is True
    stream = load.make_stream(300, 20.0)
    here = load.simulate(H100, LLAMA8, stream, "chunked")
    there = workers.offload(load.simulate, H100, LLAMA8, stream, "chunked")
    assert there is not here
    np.testing.assert_array_equal(there.ttft_s, here.ttft_s)
    np.testing.assert_array_equal(there.e2e_s, here.e2e_s)
    assert there.metrics() == here.metrics()
    runs = workers.offload(metrics.scenario_runs, H100, LLAMA8, DEFAULT_ASSUMPTIONS)
    mine = metrics.scenario_runs(H100, LLAMA8, DEFAULT_ASSUMPTIONS)
    slo = metrics.SLO()
    assert [r.metrics for r in metrics.measure(runs, slo)] == [r.metrics for r in metrics.measure(mine, slo)]
    day = workers.offload(metrics.dashboard_day, H100, LLAMA8, DEFAULT_ASSUMPTIONS, flat_out=mine.flat_out)
    mine_day = metrics.dashboard_day(H100, LLAMA8, DEFAULT_ASSUMPTIONS, flat_out=mine.flat_out)
    for f in dataclasses.fields(mine_day):
        if f.name == "run":  # the day's one batching run: its requests' times
            np.testing.assert_array_equal(day.run.finish_s, mine_day.run.finish_s)
        else:
            np.testing.assert_array_equal(getattr(day, f.name), getattr(mine_day, f.name), err_msg=f.name)


def test_a_worker_imports_sim_not_streamlit(pool, monkeypatch):
    """A worker holds numpy and sim (40-60 MiB), not Streamlit and the app (60 MiB more): what it runs is
    pickled by reference to modules that do not import it."""
    # As in a server: Streamlit runs each page script as the module "__main__", which a "spawn" child
    # would import first (and so run app.py).
    # Streamlit installs it from the script threads at any moment: one here does so without pause
    # while pools start.
    script = types.ModuleType("__main__")
    script.__file__ = str(Path(__file__).resolve().parent.parent / "app.py")
    monkeypatch.setitem(sys.modules, "__main__", script)
    stop = threading.Event()

    def script_runs():
        while not stop.is_set():
            sys.modules["__main__"] = script

    runner = threading.Thread(target=script_runs, daemon=True)
    runner.start()
    try:
        for _ in range(3):
            workers.shutdown()
            assert workers.offload(imported_streamlit) is False
        workers.offload(load.simulate, H100, LLAMA8, load.make_stream(20, 1.0), "chunked")
        assert workers.offload(imported_streamlit) is False
    finally:
        stop.set()
        runner.join()
    assert sys.modules["__main__"] is script  # the server's own main module is never touched


_SETUPS = [  # beyond the default: a custom GPU, MoE split by width and whole, windowed layers, TP, FP8
    (custom_gpu(400.0, 2.0, 96.0), MODELS["Llama-3.1-8B"]),
    (GPUS["H200 SXM"], MODELS["Mixtral-8x7B"].with_tp(2)),
    (GPUS["B200"], MODELS["Qwen3-30B-A3B"].with_tp(2, expert_parallel=True)),
    (GPUS["H100 SXM"], MODELS["gpt-oss-20b"]),
    (GPUS["A100 80GB SXM"], MODELS["Llama-3.1-70B"].with_precision("fp8", "fp8").with_tp(4)),
]


@pytest.mark.parametrize(("gpu", "model"), _SETUPS, ids=lambda v: getattr(v, "name", ""))
def test_every_kind_of_setup_runs_the_same_in_a_worker(pool, gpu, model):
    """Page 05's run and page 04's scenario runs, for setups whose models and cost objects differ from
    the default's (lazily built parts, experts, windows): the worker's copy gives the same numbers."""
    stream = load.make_stream(200, 5.0)
    here = load.simulate(gpu, model, stream, "chunked")
    there = workers.offload(load.simulate, gpu, model, stream, "chunked")
    np.testing.assert_array_equal(there.ttft_s, here.ttft_s)
    assert there.metrics() == here.metrics()
    assert there.cost.operators.keys() == here.cost.operators.keys()
    runs = workers.offload(metrics.scenario_runs, gpu, model, DEFAULT_ASSUMPTIONS)
    mine = metrics.scenario_runs(gpu, model, DEFAULT_ASSUMPTIONS)
    slo = metrics.SLO()
    assert [r.metrics for r in metrics.measure(runs, slo)] == [r.metrics for r in metrics.measure(mine, slo)]


def test_an_exception_in_the_worker_is_raised_here(pool):
    with pytest.raises(ValueError, match="policy"):
        workers.offload(load.simulate, H100, LLAMA8, load.make_stream(5, 1.0), "fastest")
    assert workers.offload(in_worker) is True  # the pool survives a call that raised


def test_a_worker_that_dies_costs_no_answer(pool, caplog):
    with caplog.at_level(logging.WARNING, logger="ui.workers"):
        assert workers.offload(doubled_or_die, 21) == 42  # computed here after the worker died
    assert "died" in caplog.text
    assert workers.offload(in_worker) is True  # a new pool on the next call


@pytest.fixture
def manager_event():
    import multiprocessing

    with multiprocessing.get_context("spawn").Manager() as manager:
        yield manager.Event()


def test_a_dead_worker_drops_only_its_own_pool(pool, manager_event):
    """Two readers' calls were on the pool whose worker died; the first to find out drops it and the
    next call starts a new pool; the second to find out must leave that new pool, and the call queued
    on it, alone."""
    first, second = workers.submit(doubled_or_die, 1), workers.submit(doubled_or_die, 2)
    assert workers.result(first, doubled_or_die, 1) == 2  # run here after the worker died
    queued = workers.submit(wait_then, manager_event, "x", 20.0)  # on a new pool
    new_pool = workers._pool
    assert new_pool is not None and new_pool is not first.pool
    assert workers.result(second, doubled_or_die, 2) == 4
    assert workers._pool is new_pool and not queued.cancelled()
    manager_event.set()
    assert workers.result(queued) == ("x", True, True)


def test_a_cancelled_call_runs_here():
    cancelled = Future()
    assert cancelled.cancel()
    assert workers.result(cancelled, doubled_or_die, 3) == 6
    with pytest.raises(CancelledError):
        workers.result(cancelled)


def test_the_script_lock_is_let_go_of_while_a_worker_computes(pool, manager_event):
    """Reader A's page waits for a worker; reader B's page takes the script lock meanwhile: the worker
    finishes only once B has it (had A kept the lock, B would wait and the worker would time out)."""
    got, a_holds = {}, threading.Event()

    def reader_a():
        with SCRIPT_LOCK:
            a_holds.set()
            got["a"] = workers.offload(wait_then, manager_event, "a", 20.0)

    a = threading.Thread(target=reader_a, daemon=True)
    a.start()
    assert a_holds.wait(60)
    with SCRIPT_LOCK:  # B: possible only while A lets go of it
        manager_event.set()
    a.join(60)
    assert got["a"] == ("a", True, True)  # set by B before the worker's timeout, in the worker


_EVENT = {}


@page_cache("test_workers.shared", 4)
def _shared(tag: str):
    return workers.offload(wait_then, _EVENT["e"], tag, 20.0)


def test_a_reader_waiting_for_an_entry_a_worker_computes_lets_go_of_the_lock(pool, manager_event):
    """A computes a page-cache entry in a worker (the script lock let go of); B, holding the lock, asks
    for the same entry. B must wait for it without the lock, or A could never take the lock back to
    finish: both would wait for ever. Both get A's value."""
    clear_all()
    _EVENT["e"] = manager_event
    got, a_holds, b_holds = {}, threading.Event(), threading.Event()

    def reader(name, holds):
        with SCRIPT_LOCK:
            holds.set()
            got[name] = _shared("k")

    a = threading.Thread(target=reader, args=("a", a_holds), daemon=True)
    a.start()
    assert a_holds.wait(60)
    b = threading.Thread(target=reader, args=("b", b_holds), daemon=True)
    b.start()
    assert b_holds.wait(60)  # B has the lock: A is waiting for its worker
    manager_event.set()
    a.join(60)
    b.join(60)
    deadlocked = a.is_alive() or b.is_alive()
    if deadlocked:  # free the lock the stuck threads hold, or every later page test here would wait
        _force_release(SCRIPT_LOCK)
    assert not deadlocked, "the two readers wait for each other"
    assert got["a"] == got["b"] == ("k", True, True)


def _force_release(lock) -> None:
    with lock._cond:
        lock._owner, lock._depth = None, 0
        lock._queue.clear()
        lock._cond.notify_all()


@pytest.mark.parametrize(("page", "params"), [
    ("app_pages/load.py", None),
    # the sections that run the load curves, every policy's capacity, prefix caching and the split
    ("app_pages/load.py", {"load_show_curves": "true", "load_show_prefix": "true", "load_show_split": "true",
                           "load_preset": "strict"}),
    ("app_pages/watch.py", None),
    ("app_pages/batching.py", {"batching_load": "Poisson arrivals"}),
])
def test_pages_show_the_same_numbers_with_a_worker(monkeypatch, page, params):
    """The pages that send their runs to a worker show every number they show without one."""
    def opened(n_workers):
        workers.shutdown()
        monkeypatch.setattr(workers, "FORCE_WORKERS", n_workers)
        clear_all()
        at = open_app(page, params)
        assert not at.exception
        assert (workers._pool is not None) == (n_workers > 0)  # a worker was asked, or none
        return at

    try:
        here, with_worker = opened(0), opened(1)
    finally:
        workers.shutdown()
    shown = [(m.label, m.value) for m in with_worker.metric]
    assert len(shown) >= 3
    if params and "load_show_curves" in params:
        assert "Capacity" in dict(shown)  # the bisection that runs in a worker
    assert shown == [(m.label, m.value) for m in here.metric]
    if "batching" in page:
        assert with_worker.radio(key="batching_load").value == "poisson"


def test_a_worker_ends_when_its_server_is_killed(tmp_path):
    """A server killed with SIGKILL (no clean shutdown) leaves no worker behind: each watches for its
    parent's end (a worker holds its own end of the task queue, so it would wait for ever)."""
    import os
    import select
    import signal
    import subprocess
    import sys
    import time

    script = tmp_path / "server.py"
    script.write_text(
        "import sys, time\n"
        f"sys.path.insert(0, {str(Path(__file__).resolve().parent.parent)!r})\n"
        "import ui.workers as w\n"
        "from tests.workers_helpers import worker_pid\n"
        "if __name__ == '__main__':\n"
        "    w.FORCE_WORKERS = 1\n"
        "    print(w.offload(worker_pid), flush=True)\n"
        "    time.sleep(600)\n"
    )
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    try:
        ready, _, _ = select.select([proc.stdout], [], [], 60)  # no hang if it never prints
        assert ready, "the server script printed no worker pid in 60 s"
        pid = int(proc.stdout.readline())
        assert pid != proc.pid and os.path.exists(f"/proc/{pid}")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    deadline = time.monotonic() + 30
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(pid), "the worker outlived its server"


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"  # a zombie has ended
    except OSError:
        return False
