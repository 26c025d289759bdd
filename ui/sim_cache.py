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

from functools import lru_cache

from sim import paging
from sim import speculative as spec

speculate = lru_cache(maxsize=256)(spec.speculate)
speedup_vs_batch = lru_cache(maxsize=128)(spec.speedup_vs_batch)
speedup_vs_alpha = lru_cache(maxsize=256)(spec.speedup_vs_alpha)
modelled_batch_gain = lru_cache(maxsize=32)(spec.modelled_batch_gain)


@lru_cache(maxsize=64)
def paging_compare(page_tokens: int, max_output: int):
    """``sim.paging.compare`` of both policies on the page's default stream."""
    return paging.compare(page_tokens=page_tokens, max_output=max_output)


card_fit = lru_cache(maxsize=64)(paging.card_fit)
