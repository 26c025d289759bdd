"""Section 02b: chunked prefill (Sarathi-Serve). A long prompt arrives while a batch is decoding.

``decode_batch`` sequences are decoding, each with ``context_tokens`` cached, when a prompt of
``prompt_tokens`` tokens arrives. The engine runs one step at a time and every decoding sequence gets
one token per step, so the time of a step is the gap each decoding user waits between two tokens.

- **unchunked**: one step carries the decode tokens and the whole prompt (T = B + P new tokens);
  every decoder waits for that whole prefill.
- **chunked**: the prompt rides along in ceil(P / C) steps of at most C tokens; chunk j attends to
  the j * C prompt tokens already cached (its prefix) as well as causally to itself.

``pad_steps`` decode-only steps before and after frame the prefill, so a stall reads as a spike;
after the prefill the new request decodes too (B + 1 sequences). All steps of both schedules are
priced in one ``sim.cost.step_cost`` call. The causal attention pairs of the prompt sum to
P (P + 1) / 2 however it is cut, so chunking conserves the work; what it adds is one more read of
the weights (and of the prompt's cached prefix) for every extra step.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sim.cost import DEFAULT_ASSUMPTIONS, Assumptions, StepCost, attention_sums, step_cost, take_steps
from sim.hardware import GPU
from sim.models import Model
from sim.validate import check_int

PROMPT_TOKENS_RANGE = (1, 131072)
DECODE_BATCH_RANGE = (1, 1024)
CHUNK_TOKENS_RANGE = (1, 131072)
CONTEXT_TOKENS_RANGE = (0, 131072)
PAD_STEPS_RANGE = (0, 64)

DEFAULT_PROMPT_TOKENS = 8192
DEFAULT_DECODE_BATCH = 32
DEFAULT_CHUNK_TOKENS = 512  # Sarathi-Serve's token budget under its strict SLO (REFERENCE.md 3.4)
DEFAULT_CONTEXT_TOKENS = 1024  # tokens each decoding sequence already holds
DEFAULT_PAD_STEPS = 4


@dataclass(frozen=True)
class Schedule:
    """One way of running the scenario: per-step token counts and their cost."""

    chunked: bool
    chunk_tokens: np.ndarray  # (steps,) prompt tokens in the step (0: decode only)
    prefix_tokens: np.ndarray  # (steps,) prompt tokens already cached when the step runs
    decode_seqs: np.ndarray  # (steps,) sequences decoding one token in the step
    new_tokens: np.ndarray  # (steps,) T: decode tokens + prompt tokens
    cost: StepCost  # per-step cost from sim.cost

    @property
    def n_steps(self) -> int:
        return int(self.new_tokens.size)

    @property
    def time_s(self) -> np.ndarray:
        return self.cost.time_s

    @property
    def end_s(self) -> np.ndarray:
        """Time each step ends, from the start of the first step, seconds."""
        return np.cumsum(self.time_s)

    @property
    def start_s(self) -> np.ndarray:
        return self.end_s - self.time_s

    @property
    def prefill_steps(self) -> np.ndarray:
        """Indices of the steps that carry prompt tokens."""
        return np.flatnonzero(self.chunk_tokens > 0)

    @property
    def worst_gap_s(self) -> float:
        """The longest wait of a decoding user between two tokens: the longest step."""
        return float(self.time_s.max())

    @property
    def ttft_s(self) -> float:
        """Time from the prompt's arrival (the start of its first step) to its first token (the end
        of its last prefill step)."""
        steps = self.prefill_steps
        return float(self.end_s[steps[-1]] - self.start_s[steps[0]])

    @property
    def decode_only_step_s(self) -> float:
        """A decode step of the batch before the prompt arrived (the gap users are used to)."""
        return float(self.time_s[0]) if self.chunk_tokens[0] == 0 else float("nan")


@dataclass(frozen=True)
class ChunkedPrefill:
    unchunked: Schedule
    chunked: Schedule
    prompt_tokens: int
    decode_batch: int
    chunk_tokens: int
    context_tokens: int

    @property
    def n_chunks(self) -> int:
        return int(self.chunked.prefill_steps.size)

    @property
    def prefill_slowdown(self) -> float:
        """How much longer the prompt's prefill (its TTFT) takes chunked: ttft_chunked / ttft - 1."""
        return self.chunked.ttft_s / self.unchunked.ttft_s - 1

    @property
    def gap_reduction(self) -> float:
        """Worst inter-token gap unchunked / chunked."""
        return self.unchunked.worst_gap_s / self.chunked.worst_gap_s



def _steps(model: Model, prompt: int, chunk: int, batch: int, context: int, pad: int):
    """Per-step (chunk tokens, prefix tokens, decode sequences, new tokens, attention pairs, KV tokens)
    (windowed layers capped, ``sim.cost.attention_sums``)."""
    starts = np.arange(0, prompt, chunk)
    sizes = np.minimum(chunk, prompt - starts)
    zeros = np.zeros(pad, dtype=np.int64)
    q = np.concatenate([zeros, sizes, zeros])
    prefix = np.concatenate([zeros, starts, zeros])
    n = q.size
    after = np.arange(n) >= pad + sizes.size  # the new request decodes once its prefill is done
    seqs = batch + after.astype(np.int64)
    # Decoders: q = 1 on c cached -> c + 1 pairs and c + 1 KV tokens each; the new one has P cached.
    old_p, old_k = (float(v) for v in attention_sums(model, 1, context))
    new_p, new_k = (float(v) for v in attention_sums(model, 1, prompt))
    dec_pairs = batch * old_p + np.where(after, new_p, 0.0)
    dec_kv = batch * old_k + np.where(after, new_k, 0.0)
    chunk_p, chunk_k = attention_sums(model, q, prefix)
    pairs = dec_pairs + np.where(q > 0, chunk_p, 0.0)
    kv = dec_kv + np.where(q > 0, chunk_k, 0.0)
    # Every decoder samples; the prompt samples once, at its last chunk (its first token).
    last_chunk = np.zeros(n)
    last_chunk[pad + sizes.size - 1] = 1.0
    sampled = seqs + last_chunk
    return q, prefix, seqs, seqs + q, pairs, kv, sampled


def chunked_prefill(
    gpu: GPU,
    model: Model,
    prompt_tokens: int = DEFAULT_PROMPT_TOKENS,
    decode_batch: int = DEFAULT_DECODE_BATCH,
    chunk_tokens: int = DEFAULT_CHUNK_TOKENS,
    context_tokens: int = DEFAULT_CONTEXT_TOKENS,
    pad_steps: int = DEFAULT_PAD_STEPS,
    assumptions: Assumptions = DEFAULT_ASSUMPTIONS,
) -> ChunkedPrefill:
    """The long prompt's arrival, unchunked and in chunks of ``chunk_tokens``, priced by ``sim.cost``."""
    prompt = check_int("prompt_tokens", prompt_tokens, *PROMPT_TOKENS_RANGE)
    batch = check_int("decode_batch", decode_batch, *DECODE_BATCH_RANGE)
    chunk = check_int("chunk_tokens", chunk_tokens, *CHUNK_TOKENS_RANGE)
    context = check_int("context_tokens", context_tokens, *CONTEXT_TOKENS_RANGE)
    pad = check_int("pad_steps", pad_steps, *PAD_STEPS_RANGE)

    whole = _steps(model, prompt, prompt, batch, context, pad)
    parts = _steps(model, prompt, chunk, batch, context, pad)
    n = whole[0].size
    cost = step_cost(gpu, model, np.concatenate([whole[3], parts[3]]), np.concatenate([whole[4], parts[4]]),
                     np.concatenate([whole[5], parts[5]]), assumptions,
                     sampled_tokens=np.concatenate([whole[6], parts[6]]))

    def schedule(arrays, sl: slice, is_chunked: bool) -> Schedule:
        part = take_steps(cost, sl)
        return Schedule(chunked=is_chunked, chunk_tokens=arrays[0], prefix_tokens=arrays[1],
                        decode_seqs=arrays[2], new_tokens=arrays[3], cost=part)

    return ChunkedPrefill(
        unchunked=schedule(whole, slice(0, n), False),
        chunked=schedule(parts, slice(n, None), True),
        prompt_tokens=prompt, decode_batch=batch, chunk_tokens=chunk, context_tokens=context,
    )
