"""sim.paging: the V14 and V16 checks of REFERENCE.md, the pool's invariants, and the real-card fit."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sim.cost import decode_step_cost, gemm_ridge_batch
from sim.hardware import GPUS
from sim.memory import activation_bytes
from sim.models import MODELS
from sim.paging import (
    FREE,
    FULL,
    LEDGER,
    PARTIAL,
    RESERVED_EMPTY,
    STRANDED,
    _free_runs,
    _sum_ceil,
    card_fit,
    compare,
    last_page_slack,
    pages_needed,
    request_stream,
    simulate,
)

H100, LLAMA8, LLAMA70 = GPUS["H100 SXM"], MODELS["Llama-3.1-8B"], MODELS["Llama-3.1-70B"]


# --- REFERENCE.md V16: paging arithmetic ---------------------------------------------------------------

def test_v16_blocks_allocated_and_waste_for_block_16():
    """V16: block 16, lengths 100 / 500 / 2000 -> 7 / 32 / 125 blocks, 112 / 512 / 2000 tokens
    allocated, waste 12 / 12 / 0 (at most B - 1 = 15 per sequence)."""
    lengths = np.array([100, 500, 2000])
    blocks = pages_needed(lengths, 16)
    assert blocks.tolist() == [7, 32, 125]
    assert (blocks * 16).tolist() == [112, 512, 2000]
    assert last_page_slack(lengths, 16).tolist() == [12, 12, 0]
    assert last_page_slack(np.arange(1, 5000), 16).max() == 15


# --- REFERENCE.md V14: token-state share ---------------------------------------------------------------

@pytest.fixture(scope="module")
def v14():
    """Reserve-for-max (max output 2048) vs paged with 16-token blocks on ShareGPT-like lengths, on a
    pool big enough (2,048 pages = 32,768 tokens) to hold a dozen 2k reservations, under a full queue."""
    return compare(n_pages=2048, page_tokens=16, max_output=2048, workload="sharegpt", n_steps=2000,
                   n_requests=3000)


def test_v14_reserved_token_share_is_about_a_fifth(v14):
    """V14: reserved keeps ~20 % of KV memory in token states (Orca-Max 20.4 %); band 15-40 %."""
    assert v14.reserved.waiting.min() > 0  # saturated all along, as in the paper's measurement
    assert 0.15 <= v14.reserved.mean_token_share <= 0.40
    # Where it goes: mostly reservation for tokens not yet (or never) written.
    share = dict(zip(LEDGER, v14.reserved.mean_ledger_share, strict=True))
    assert share["reserved still empty"] > 0.5
    assert share["last-page slack"] < 0.01


def test_v14_paged_token_share_at_least_95_percent(v14):
    """V14: paged keeps >= 95 % of KV memory in token states (vLLM 96.3 %, waste < 4 %)."""
    assert v14.paged.waiting.min() > 0
    assert v14.paged.mean_token_share >= 0.95
    share = dict(zip(LEDGER, v14.paged.mean_ledger_share, strict=True))
    assert share["reserved still empty"] == 0
    assert share["free runs too short"] == 0
    assert share["last-page slack"] < 0.04
    assert v14.paged.mean_resident > 4 * v14.reserved.mean_resident


# --- The default view on the page ----------------------------------------------------------------------

def test_defaults_paged_fits_clearly_more_and_reserved_loses_memory_to_reservation():
    c = compare()
    assert c.reserved.n_pages == 64 and c.reserved.page_tokens == 16
    assert c.paged.mean_resident >= 3 * c.reserved.mean_resident
    r = dict(zip(LEDGER, c.reserved.mean_ledger_share, strict=True))
    p = dict(zip(LEDGER, c.paged.mean_ledger_share, strict=True))
    assert r["token states"] < 0.35 < 0.85 < p["token states"]
    assert r["reserved still empty"] > 0.3 and r["free runs too short"] > 0.1
    assert c.reserved.total_preemptions == 0 < c.paged.total_preemptions
    assert c.paged.total_finished > 2 * c.reserved.total_finished
    assert not c.reserved.rejected.any()


def test_same_stream_for_both_policies_and_deterministic():
    c = compare(seed=3)
    np.testing.assert_array_equal(c.reserved.prompt_tokens, c.paged.prompt_tokens)
    np.testing.assert_array_equal(c.reserved.output_tokens, c.paged.output_tokens)
    again = simulate("paged", seed=3)
    np.testing.assert_array_equal(again.owner, c.paged.owner)
    assert not np.array_equal(simulate("paged", seed=4).owner, c.paged.owner)


def test_stream_cap_only_shortens_the_requests_it_cuts():
    p1, o1 = request_stream("toy chat", 500, 64, seed=1)
    p2, o2 = request_stream("toy chat", 500, 1024, seed=1)
    np.testing.assert_array_equal(p1, p2)
    np.testing.assert_array_equal(o1, np.minimum(o2, 64))
    assert o1.min() >= 1 and o1.max() == 64


def test_requests_larger_than_the_pool_are_turned_away_not_deadlocked():
    # 8-token pages: the pool holds 512 tokens, a reservation of prompt + 1024 never fits.
    c = compare(page_tokens=8, max_output=1024, n_steps=50)
    assert c.reserved.rejected.all() and c.reserved.resident.max() == 0
    assert c.reserved.ledger[:, LEDGER.index("free")].min() == c.reserved.pool_tokens
    assert c.paged.mean_resident > 0


@pytest.mark.parametrize(("kwargs", "name"), [
    (dict(policy="lru"), "policy"), (dict(n_pages=0), "n_pages"), (dict(page_tokens=0), "page_tokens"),
    (dict(max_output=0), "max_output"), (dict(n_steps=0), "n_steps"), (dict(n_requests=0), "n_requests"),
    (dict(workload="nope"), "workload"), (dict(page_tokens=2.5), "page_tokens"),
])
def test_bad_arguments_name_themselves(kwargs, name):
    args = dict(policy="paged") | kwargs
    with pytest.raises(ValueError, match=name):
        simulate(args.pop("policy"), **args)


# --- Invariants (hypothesis) ---------------------------------------------------------------------------

runs = st.builds(
    dict,
    n_pages=st.integers(8, 96),
    page_tokens=st.sampled_from([1, 2, 4, 8, 16, 32, 64]),
    max_output=st.integers(1, 400),
    seed=st.integers(0, 10_000),
)


def _check_pool(run) -> None:
    P, n = run.page_tokens, run.n_pages
    steps = run.n_steps
    # Every page is in exactly one state; owned + free = n_pages; the ledger adds up to the pool.
    owned = run.owner >= 0
    free = np.isin(run.state, [FREE, STRANDED])
    assert (owned ^ free).all()
    assert (owned.sum(axis=1) + free.sum(axis=1) == n).all()
    np.testing.assert_array_equal(run.ledger.sum(axis=1), np.full(steps, n * P))
    assert (run.ledger >= 0).all()
    for s in range(steps):
        ids = np.unique(run.owner[s][owned[s]])
        assert ids.size == run.resident[s]
        for r in ids:
            pages = np.flatnonzero(run.owner[s] == r)
            # One owner per page, and the owner's page table is a permutation of blocks 0..k-1.
            assert sorted(run.block[s][pages].tolist()) == list(range(pages.size))
            fill = run.fill[s][pages]
            tokens = int(fill.sum())
            assert tokens >= run.prompt_tokens[r] + 1  # at least its prompt and first token
            # The pages hold its tokens, with at most one partly empty page, the last filled one.
            order = np.argsort(run.block[s][pages])
            f = fill[order]
            used = int(pages_needed(tokens, P))
            assert (f[: used - 1] == P).all() and 0 < f[used - 1] <= P and (f[used:] == 0).all()
            assert (run.state[s][pages] == PARTIAL).sum() <= 1
            if run.policy == "paged":
                assert pages.size == used  # nothing held beyond the last filled page
            else:
                assert pages.size == pages_needed(run.prompt_tokens[r] + run.max_output, P)
                assert np.array_equal(np.sort(pages), pages[0] + np.arange(pages.size))  # contiguous
                assert (run.state[s][pages][order][used:] == RESERVED_EMPTY).all()
        # Stranded pages: only in reserved runs, and no free run is long enough for the queue's head.
        if (run.state[s] == STRANDED).any():
            assert run.policy == "reserved" and run.waiting[s] > 0
            _, lengths = _free_runs(~owned[s])
            assert (lengths < run.head_need_pages[s]).all()
            # fragmentation, not a full pool: in total the free pages would hold the reservation
            assert lengths.sum() >= run.head_need_pages[s]
        elif run.policy == "reserved" and run.waiting[s] > 0 and (run.state[s] == FREE).any():
            assert (run.state[s] == FREE).sum() < run.head_need_pages[s]  # free, but not enough
    assert ((run.state == FULL) == (owned & (run.fill == P))).all()


@given(runs)
def test_pool_invariants_hold_at_every_step(kwargs):
    c = compare(n_steps=40, n_requests=120, **kwargs)
    _check_pool(c.reserved)
    _check_pool(c.paged)
    assert c.reserved.total_preemptions == 0


@given(runs)
def test_tokens_are_conserved_across_preemption(kwargs):
    """Every step each resident request writes one token, and a finished request wrote exactly its
    output, however often it was preempted (recompute keeps the tokens it had written)."""
    for run in (simulate(p, n_steps=60, n_requests=120, **kwargs) for p in ("reserved", "paged")):
        done = run.finish_step >= 0
        written = run.generated_tokens
        # Tokens written by finished requests plus those still resident at the end, and those of
        # preempted requests waiting in the queue, cannot exceed what the steps produced.
        assert run.output_tokens[done].sum() <= written
        assert (run.finish_step[done] >= run.admit_step[done] + run.output_tokens[done] - 1).all()
        if run.policy == "reserved":  # no preemption: a request runs its output in one go
            assert (run.finish_step[done] == run.admit_step[done] + run.output_tokens[done] - 1).all()


@given(runs)
def test_paged_holds_as_many_requests_as_reserved_under_load_within_2_percent(kwargs):
    """Averaged over the steps where both policies have a queue. (Step by step the two histories
    differ, and a paged pool can dip for a step or two behind a long prompt at the head of its queue.)

    Within 2 %: where reserving wastes less than a page per request (outputs shorter than a page,
    found by hypothesis: 8 pages of 16 tokens, outputs of at most 8 tokens) the two hold the same
    requests but for those dips, and paged came out 0.6 % lower (2.11 against 2.13)."""
    c = compare(n_steps=80, n_requests=300, **kwargs)
    loaded = (c.reserved.waiting > 0) & (c.paged.waiting > 0)
    if loaded.sum() >= 10:
        assert c.paged.resident[loaded].mean() >= 0.98 * c.reserved.resident[loaded].mean()


@given(st.integers(0, 5000), st.integers(1, 300))
def test_sum_ceil_matches_brute_force(x, page):
    assert _sum_ceil(np.array([x]), page)[0] == sum(math.ceil(n / page) for n in range(1, x + 1))


# --- On a real card ------------------------------------------------------------------------------------

def test_card_fit_h100_llama8b():
    fit = card_fit(H100, LLAMA8)
    assert fit.fits
    # 0.9 of the card as the driver counts it (81,559 MiB), less the weights and activations.
    assert fit.kv_budget_bytes == pytest.approx(
        0.9 * 81559 * 2**20 - LLAMA8.weight_bytes - activation_bytes(LLAMA8, H100))
    assert fit.reserve_bytes == pytest.approx(activation_bytes(LLAMA8, H100))
    # A reserved request holds its prompt + 2048 rounded up to pages for its whole life.
    assert fit.slots_per_request["reserved"] > 2048
    assert fit.slots_per_request["paged"] < fit.slots_per_request["reserved"] / 3
    assert fit.batch["reserved"] == int(fit.kv_budget_tokens // fit.slots_per_request["reserved"])
    assert fit.batch["paged"] > 3 * fit.batch["reserved"]
    # Throughput is batch / decode step time from the shared cost model.
    cost = decode_step_cost(H100, LLAMA8, fit.batch["paged"], fit.context_tokens)
    assert fit.tokens_per_s["paged"] == pytest.approx(fit.batch["paged"] / float(cost.time_s))
    # 4x the batch buys little here: the reserved batch already sits at the GEMMs' ridge (~200
    # sequences) and the paged one far past it, where every sequence adds its own math and KV reads.
    gain = fit.tokens_per_s["paged"] / fit.tokens_per_s["reserved"]
    assert 1.05 < gain < 1.5
    ridge = gemm_ridge_batch(H100, LLAMA8)
    assert fit.batch["reserved"] > 0.9 * ridge and fit.batch["paged"] > 4 * ridge


def test_card_fit_paged_slots_are_tokens_rounded_up_to_pages():
    """With 1-token pages nothing is rounded: paged slots = the mean tokens held = the context."""
    fit = card_fit(H100, LLAMA8, page_tokens=1)
    assert fit.slots_per_request["paged"] == pytest.approx(fit.context_tokens)
    assert card_fit(H100, LLAMA8, page_tokens=16).slots_per_request["paged"] > fit.context_tokens


@pytest.mark.parametrize("gpu_name", sorted(GPUS))
def test_card_fit_batch_counts_whole_tokens_of_the_budget(gpu_name):
    """The batch a policy keeps resident is the budget's whole tokens (``kv_budget_tokens``, as page
    05's scheduler counts them) over the slots a request holds, on every GPU and preset model."""
    for name in sorted(MODELS):
        fit = card_fit(GPUS[gpu_name], MODELS[name])
        for policy, slots in fit.slots_per_request.items():
            assert fit.batch[policy] == int(fit.kv_budget_tokens // slots), (name, policy)
            assert fit.batch[policy] * slots <= fit.kv_budget_tokens


def test_card_fit_model_too_big_for_the_card():
    fit = card_fit(H100, LLAMA70)  # 141 GB of bf16 weights vs 72 GB usable
    assert not fit.fits
    assert fit.batch == {"reserved": 0, "paged": 0}
    assert fit.tokens_per_s == {"reserved": 0.0, "paged": 0.0}
    assert card_fit(H100, LLAMA70.with_precision("int4")).fits


def test_card_fit_validates_memory_utilization():
    with pytest.raises(ValueError, match="memory_utilization"):
        card_fit(H100, LLAMA8, memory_utilization=1.5)
