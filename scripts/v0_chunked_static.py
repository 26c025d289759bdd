"""A static batch run through vLLM V0's chunked-prefill scheduler, priced by the model: the check behind
the README's ora-03 bullet ("one scheduling assumption was checked and not taken").

vLLM V0 turned chunked prefill on by itself for models longer than 32K tokens when the caller left it
unset, with ``max_num_batched_tokens`` = 512. Its scheduler fills each step's budget with the running
decodes first (one token each), then with prompt chunks, first come first served (a prompt may be
split across steps; it samples its first token in the step its last chunk runs). This prints, for
Oracle's 2024 sweep on 8 x MI300X (Llama-3.1-405B FP8, 128 prompt tokens, 128 out), the measured
latency, the model's one-prefill-step static batch (``sim.truth.static_batch_time_s``, what the model
uses) and the same batch through that scheduler.

    PYTHONPATH=. python scripts/v0_chunked_static.py
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from sim.cost import DEFAULT_ASSUMPTIONS, attention_sums_scalar, step_cost
from sim.truth import parse_rows, row_setup, static_batch_time_s

FIXTURE = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "oracle_mi300x_405b.csv"


def chunked_static_time_s(gpu, model, batch: int, prompt: int, output: int, budget: int = 512,
                          assumptions=DEFAULT_ASSUMPTIONS) -> tuple[float, int]:
    """Seconds and steps for ``batch`` prompts of ``prompt`` tokens, ``output`` tokens each, through
    V0's chunked-prefill scheduler with ``budget`` tokens a step."""
    prefilled = [0] * batch
    generated = [0] * batch
    sums = []
    while min(generated) < output:
        t = p = k = s = 0.0
        left = budget
        decoding = [i for i in range(batch) if prefilled[i] == prompt and 0 < generated[i] < output]
        for i in decoding:
            dp, dk = attention_sums_scalar(model, 1, prompt + generated[i] - 1)
            t, p, k, s, left = t + 1, p + dp, k + dk, s + 1, left - 1
        finished_prefill = []
        for i in range(batch):
            if left <= 0:
                break
            if prefilled[i] < prompt:
                c = min(left, prompt - prefilled[i])
                cp, ck = attention_sums_scalar(model, c, prefilled[i])
                t, p, k, left = t + c, p + cp, k + ck, left - c
                prefilled[i] += c
                if prefilled[i] == prompt:
                    s += 1
                    finished_prefill.append(i)
        for i in decoding + finished_prefill:
            generated[i] += 1
        sums.append((t, p, k, s))
    t, p, k, s = np.array(sums).T
    return float(step_cost(gpu, model, t, p, k, assumptions, sampled_tokens=s).time_s.sum()), len(sums)


def main() -> None:
    rows = [r for r in parse_rows(FIXTURE.read_text(encoding="utf-8")) if r.kind == "static_batch_tok_s"]
    print("batch  measured s  static s (model's error)  V0 chunked-512 s (error)  steps")
    for r in sorted(rows, key=lambda r: r.batch):
        gpu, model = row_setup(r)
        measured = r.batch * r.output_tokens / r.value
        static = static_batch_time_s(gpu, model, r.batch, r.prompt_tokens, r.output_tokens)
        chunked, steps = chunked_static_time_s(gpu, model, r.batch, r.prompt_tokens, r.output_tokens)
        print(f"{r.batch:5d}  {measured:10.2f}  {static:8.2f} ({measured / static - 1:+6.1%})"
              f"          {chunked:8.2f} ({measured / chunked - 1:+6.1%})      {steps:4d}")


if __name__ == "__main__":
    main()
