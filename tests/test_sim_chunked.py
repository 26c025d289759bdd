"""sim.chunked: chunking shortens the worst gap between tokens and conserves the work."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sim.chunked import chunked_prefill
from sim.cost import prefill_cost, step_cost
from sim.hardware import GPUS
from sim.models import MODELS

H100, A100, LLAMA8 = GPUS["H100 SXM"], GPUS["A100 80GB SXM"], MODELS["Llama-3.1-8B"]
gpus = st.sampled_from([GPUS[g] for g in ("H100 SXM", "A100 80GB SXM", "L4", "B200")])
models = st.sampled_from([MODELS[m] for m in ("Llama-3.1-8B", "Qwen2.5-7B", "Llama-3.1-70B", "Llama-3.2-1B")])


def test_defaults_stall_unchunked_and_not_chunked():
    """H100, Llama-3.1-8B, 32 decoding at 1,024 tokens, an 8,192-token prompt, chunks of 512."""
    r = chunked_prefill(H100, LLAMA8)
    decode = r.unchunked.decode_only_step_s
    assert decode == pytest.approx(r.chunked.decode_only_step_s)
    assert r.unchunked.worst_gap_s > 25 * decode  # every decoder waits for the whole prefill
    assert r.chunked.worst_gap_s < 3 * decode
    assert r.n_chunks == 16
    # Chunking costs the prompt little here (Sarathi-Serve: at most ~25 % at chunk 512).
    assert 0 < r.prefill_slowdown < 0.25
    # Unchunked, the prompt's first token comes after one step: the prefill plus the decodes.
    assert r.unchunked.ttft_s == pytest.approx(r.unchunked.worst_gap_s)
    assert r.unchunked.ttft_s > float(prefill_cost(H100, LLAMA8, 8192).time_s)


def test_schedule_shapes_and_the_new_request_decodes_after_its_prefill():
    r = chunked_prefill(H100, LLAMA8, prompt_tokens=1000, decode_batch=8, chunk_tokens=300, pad_steps=3)
    assert r.chunked.chunk_tokens.tolist() == [0, 0, 0, 300, 300, 300, 100, 0, 0, 0]
    assert r.chunked.prefix_tokens.tolist() == [0, 0, 0, 0, 300, 600, 900, 0, 0, 0]
    assert r.chunked.decode_seqs.tolist() == [8] * 7 + [9] * 3
    assert r.unchunked.chunk_tokens.tolist() == [0, 0, 0, 1000, 0, 0, 0]
    assert (r.chunked.new_tokens == r.chunked.decode_seqs + r.chunked.chunk_tokens).all()


def test_steps_are_priced_by_the_shared_cost_model():
    r = chunked_prefill(A100, LLAMA8, prompt_tokens=4096, decode_batch=16, chunk_tokens=1024)
    # The last chunk: 16 decodes on 1,024 cached, and 1,024 prompt tokens on a 3,072-token prefix.
    q, s, b, c = 1024, 3072, 16, 1024
    pairs = b * (c + 1) + q * (s + (q + 1) / 2)
    expect = step_cost(A100, LLAMA8, b + q, pairs, b * (c + 1) + s + q, sampled_tokens=b + 1)
    last = int(r.chunked.prefill_steps[-1])
    assert r.chunked.time_s[last] == pytest.approx(float(expect.time_s))
    assert r.chunked.cost.flops[last] == pytest.approx(float(expect.flops))


@given(gpus, models, st.integers(1, 20000), st.integers(1, 256), st.integers(1, 20000))
def test_work_is_conserved(gpu, model, prompt, batch, chunk):
    """However the prompt is cut: its tokens sum to P, its causal attention pairs to P (P + 1) / 2,
    and chunked it never finishes sooner (every extra step re-reads the weights)."""
    r = chunked_prefill(gpu, model, prompt, batch, chunk, pad_steps=2)
    for sched in (r.unchunked, r.chunked):
        assert sched.chunk_tokens.sum() == prompt
        q, s = sched.chunk_tokens.astype(float), sched.prefix_tokens.astype(float)
        assert (q * (s + (q + 1) / 2)).sum() == pytest.approx(prompt * (prompt + 1) / 2)
    assert r.chunked.n_steps - r.unchunked.n_steps == r.n_chunks - 1
    assert r.chunked.ttft_s >= r.unchunked.ttft_s * (1 - 1e-12)
    assert r.chunked.worst_gap_s <= r.unchunked.worst_gap_s * (1 + 1e-12)
    if chunk >= prompt:
        np.testing.assert_allclose(r.chunked.time_s, r.unchunked.time_s)


@given(gpus, models, st.integers(10, 15), st.integers(0, 8), st.integers(0, 6))
def test_worst_gap_shrinks_as_chunks_shrink(gpu, model, log_prompt, log_batch, log_chunk):
    """For chunk sizes that divide the prompt (the page's powers of two), halving the chunk never
    lengthens the worst gap between tokens."""
    prompt, batch = 2**log_prompt, 2**log_batch
    big = 2 ** (log_chunk + 6)
    gaps = [chunked_prefill(gpu, model, prompt, batch, c).chunked.worst_gap_s for c in (big, big // 2)]
    assert gaps[1] <= gaps[0] * (1 + 1e-12)


def test_worst_gap_falls_steadily_over_the_page_chunk_sizes():
    """Down to the floor: a decode-only step (after the prefill the new request decodes too, on its
    16k-token context, so that step is the longest gap once chunks are small)."""
    runs = [chunked_prefill(H100, LLAMA8, 16384, 32, c) for c in (8192, 4096, 2048, 1024, 512, 256, 128, 64)]
    gaps = [r.chunked.worst_gap_s for r in runs]
    floor = float(runs[0].chunked.time_s[-1])
    assert all(a > b for a, b in itertools.pairwise(gaps[:6]))
    # A 64- or 128-token chunk adds its own math to a decode step: within a few % of the floor.
    assert gaps[-1] == pytest.approx(floor, rel=0.04) and gaps[-2] == pytest.approx(floor, rel=0.04)
    assert gaps[0] / gaps[-1] > 30
    ttfts = [chunked_prefill(H100, LLAMA8, 16384, 32, c).chunked.ttft_s for c in (8192, 512, 64)]
    assert ttfts[0] < ttfts[1] < ttfts[2]  # the price: the prompt waits longer


@pytest.mark.parametrize(("kwargs", "name"), [
    (dict(prompt_tokens=0), "prompt_tokens"), (dict(decode_batch=0), "decode_batch"),
    (dict(chunk_tokens=0), "chunk_tokens"), (dict(context_tokens=-1), "context_tokens"),
    (dict(pad_steps=100), "pad_steps"), (dict(chunk_tokens=1.5), "chunk_tokens"),
])
def test_bad_arguments_name_themselves(kwargs, name):
    with pytest.raises(ValueError, match=name):
        chunked_prefill(H100, LLAMA8, **kwargs)
