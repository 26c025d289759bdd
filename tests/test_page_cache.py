"""``ui.sim_cache.page_cache``: the cache for functions a page script defines (and redefines on every
rerun)."""

from __future__ import annotations

import threading

import pytest

from ui.sim_cache import page_cache


def test_entries_survive_the_function_being_defined_again():
    calls = []

    def define():
        @page_cache("test.survive", 8)
        def f(_unhashed, key: str, n: int = 2):
            calls.append((key, n))
            return (key, n, _unhashed)
        return f

    first = define()
    value = first(None, "b", 3)
    again = define()  # the page ran again: a new function object, the same cache
    assert again(None, "b", 3) is value
    assert again(None, "b", n=3) is value  # keywords and defaults key like positions
    assert calls.count(("b", 3)) == 1


def test_arguments_named_with_an_underscore_are_left_out_of_the_key():
    calls = []

    @page_cache("test.underscore", 8)
    def f(_setup, setup_key: str):
        calls.append(setup_key)
        return len(calls)

    assert f("one object", "k") == f("another object", "k") == 1
    assert f("one object", "other") == 2


def test_at_most_max_entries_are_kept_least_recently_used_first():
    calls = []

    @page_cache("test.lru", 2)
    def f(x: int):
        calls.append(x)
        return x

    f(1)
    f(2)
    f(1)  # 1 is now the most recent
    f(3)  # drops 2
    f(1)
    f(2)
    assert calls == [1, 2, 3, 2]


def test_readers_asking_for_a_missing_entry_at_once_compute_it_once():
    """While one reader computes an entry, a second asking for it waits (it is still waiting when
    looked at: with the correct lock it would wait forever), then gets the same object."""
    started, release = threading.Event(), threading.Event()
    calls = []

    @page_cache("test.once", 4)
    def slow(key: str):
        calls.append(key)
        if len(calls) == 1:
            started.set()
            release.wait(timeout=30)
        return object()

    results = []
    first = threading.Thread(target=lambda: results.append(slow("k")))
    first.start()
    assert started.wait(timeout=30)
    second = threading.Thread(target=lambda: results.append(slow("k")))
    second.start()
    second.join(timeout=2)  # not a timing assertion: a second computation would end at once
    assert second.is_alive() and calls == ["k"]
    release.set()
    first.join(timeout=30)
    second.join(timeout=30)
    assert calls == ["k"] and len(results) == 2 and results[0] is results[1]


def test_a_failed_computation_leaves_no_entry_and_can_be_tried_again():
    tries = []

    @page_cache("test.fails", 4)
    def flaky(key: str):
        tries.append(key)
        if len(tries) == 1:
            raise ValueError("first try fails")
        return "ok"

    with pytest.raises(ValueError):
        flaky("k")
    assert flaky("k") == "ok" and tries == ["k", "k"]


def test_parameters_it_could_not_key_are_refused():
    with pytest.raises(TypeError, match="positional-or-keyword"):
        @page_cache("test.kwonly", 4)
        def f(a, *, b):
            return a


def test_clear_all_empties_the_page_caches_and_the_sim_calls():
    """A benchmark's "cold" rerun clears them all (Streamlit's own clear does not reach them)."""
    from sim.hardware import GPUS
    from sim.models import MODELS
    from ui import sim_cache

    calls = []

    @page_cache("test.clear", 4)
    def f(key: str):
        calls.append(key)
        return key

    f("a")
    sim_cache.card_fit(GPUS["H100 SXM"], MODELS["Llama-3.1-8B"], 16, 512)
    assert sim_cache.card_fit.cache_info().currsize >= 1
    sim_cache.clear_all()
    f("a")
    assert calls == ["a", "a"]
    assert sim_cache.card_fit.cache_info().currsize == 0


def test_clear_all_keeps_what_does_not_depend_on_the_setup():
    from ui import sim_cache

    calls = []

    @page_cache("test.constant", 1, constant=True)
    def once():
        calls.append(1)
        return 1

    once()
    sim_cache.clear_all()
    once()
    assert calls == [1]
