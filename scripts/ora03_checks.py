"""Two assumptions checked against Oracle's 2024 sweep on 8 x MI300X and not taken (the README's ora-03
bullet): each reprices the sweep (Llama-3.1-405B FP8, 128 prompt tokens, 128 out, batch 1 to 256) with
the model's own step costs.

**V0's chunked prefill** (``chunked_static_time_s``). vLLM V0 turned chunked prefill on by itself for
models longer than 32K tokens when the caller left it unset, with ``max_num_batched_tokens`` = 512.
Its scheduler fills each step's budget with the running decodes first (one token each), then with
prompt chunks, first come first served (a prompt may be split across steps; it samples its first
token in the step its last chunk runs): page 05's chunked scheduler, ``sim.load.simulate``. Not
taken: the ``benchmark_latency.py`` of ROCm's vLLM forks of mid-2024 passed its own
``--enable-chunked-prefill`` flag, off unless given.

**RCCL's all-reduce** (``library_allreduce_extra_s``). The model prices a tensor-parallel all-reduce as
the textbook ring (``sim.cost.allreduce_s``): a fitted latency a hop, 2(n - 1) hops, plus the bytes at
the large-message bus bandwidth, fitted to engines that mostly run their own all-reduce kernels.
Upstream vLLM had no custom all-reduce on ROCm until March 2025 (vllm-project/vllm#14125), so it ran
every one on RCCL, whose measured times at small and mid-size messages are far longer (MEASURED.md
3.2, Azure rccl-tests on 8 x MI300X). This adds, to each step, the difference between RCCL's measured
time at the step's message size (interpolated log-log between the measured sizes) and the model's.
Not taken: AMD's own fork, ROCm/vllm, had enabled a custom all-reduce on ROCm in May 2024
(ROCm/vllm#27), and Oracle's post names neither the fork nor a version.

``main`` prints, for each batch, the measured latency, the model's static batch (one prefill step,
``sim.truth.static_batch_time_s``: what the model uses) and the batch under each of the two.

    PYTHONPATH=. python scripts/ora03_checks.py
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from sim.cost import DEFAULT_ASSUMPTIONS, allreduce_s
from sim.load import Stream, simulate
from sim.truth import parse_rows, row_setup, static_batch_time_s

FIXTURE = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "oracle_mi300x_405b.csv"


def chunked_static_time_s(gpu, model, batch: int, prompt: int, output: int, budget: int = 512,
                          assumptions=DEFAULT_ASSUMPTIONS) -> tuple[float, int]:
    """Seconds and steps for ``batch`` prompts of ``prompt`` tokens, ``output`` tokens each, all there at
    t = 0, through page 05's chunked-prefill scheduler (``sim.load.simulate``: decodes first, then prompt
    chunks first come first served, ``budget`` tokens a step), V0's scheduler as it ran."""
    n = int(batch)
    stream = Stream(np.zeros(n), np.full(n, prompt, np.int64), np.full(n, output, np.int64),
                    np.full(n, -1, np.int64))
    run = simulate(gpu, model, stream, "chunked", chunk_tokens=budget, prefix_caching=False,
                   assumptions=assumptions)
    return run.wall_s, int(run.step_time_s.size)


#: RCCL 2.22.3 AllReduce bus bandwidth on 8 x MI300X, bytes/s, at 1 KB, 16 KB, 1 MB, 16 MB, 268 MB and
#: 8 GB messages (MEASURED.md 3.2, Azure rccl-tests, in place).
RCCL_SIZES_BYTES = np.array([2.0**10, 2.0**14, 2.0**20, 2.0**24, 2.0**28, 2.0**33])
RCCL_MI300X_BUSBW = np.array([0.04, 0.59, 22.41, 171.46, 302.80, 316.82]) * 1e9


def library_allreduce_extra_s(gpu, model, tokens, assumptions=DEFAULT_ASSUMPTIONS) -> np.ndarray:
    """Seconds a step of ``tokens`` new tokens would add with every all-reduce on RCCL's measured
    curve instead of the model's (``sim.cost.allreduce_s``; 2 all-reduces a layer of tokens x hidden BF16
    values; RCCL's time at a message is its size x 2(n - 1)/n / busbw)."""
    n = model.tp
    size = np.asarray(tokens, dtype=float) * model.hidden * 2.0
    measured_s = RCCL_SIZES_BYTES * 2 * (n - 1) / n / RCCL_MI300X_BUSBW
    rccl_s = np.exp(np.interp(np.log(size), np.log(RCCL_SIZES_BYTES), np.log(measured_s)))
    model_s = allreduce_s(gpu, n, size, assumptions)
    return model.n_layers * 2 * (rccl_s - model_s)


def rccl_static_time_s(gpu, model, batch: int, prompt: int, output: int) -> float:
    """The model's static batch with every all-reduce on RCCL's measured curve."""
    extra = library_allreduce_extra_s(gpu, model, [batch * prompt, batch])
    return static_batch_time_s(gpu, model, batch, prompt, output) + float(extra[0] + (output - 1) * extra[1])


def sweep() -> list[tuple[int, float, float, float, int, float]]:
    """Per batch of the sweep: (batch, measured s, model s, V0 chunked-512 s, its steps, RCCL s)."""
    rows = [r for r in parse_rows(FIXTURE.read_text(encoding="utf-8")) if r.kind == "static_batch_tok_s"]
    out = []
    for r in sorted(rows, key=lambda r: r.batch):
        gpu, model = row_setup(r)
        b, p, o = r.batch, r.prompt_tokens, r.output_tokens
        chunked, steps = chunked_static_time_s(gpu, model, b, p, o)
        out.append((b, b * o / r.value, static_batch_time_s(gpu, model, b, p, o), chunked, steps,
                    rccl_static_time_s(gpu, model, b, p, o)))
    return out


def main() -> None:
    print("The model's error on each run (+: the model is faster than the engine)")
    print("batch  measured s  model (error)     V0 chunked-512 (error, steps)  RCCL all-reduce (error)")
    for b, measured, static, chunked, steps, rccl in sweep():
        print(f"{b:5d}  {measured:10.2f}  {static:6.2f} s ({measured / static - 1:+6.1%})"
              f"  {chunked:6.2f} s ({measured / chunked - 1:+6.1%}, {steps:3d})"
              f"        {rccl:6.2f} s ({measured / rccl - 1:+6.1%})")


if __name__ == "__main__":
    main()
