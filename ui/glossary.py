"""One definition per word: the glossary on the Sources page, and the help text of the metrics that
show each quantity, so a word means the same on every page."""

from __future__ import annotations

from sim.hardware import GPUS
from sim.models import MODELS
from sim.phases import achievable_knee


def _h100_knee() -> str:
    """The default setup's knee against its spec ridge, as page 00 draws them (computed, not typed)."""
    gpu, model = GPUS["H100 SXM"], MODELS["Llama-3.1-8B"]
    return (f"{achievable_knee(gpu, model):.0f} against {gpu.ridge_point(model.compute_precision):.0f} "
            "FLOP/B on an H100")

#: term -> definition (plain text: it is also a metric's help tooltip).
GLOSSARY: dict[str, str] = {
    "Prefill": "The pass over a request's whole prompt, all tokens at once; it yields the first output "
               "token. Large matrix multiplications: compute-bound for a prompt of a few hundred "
               "tokens or more on a dense model; a short prompt, or a mixture of experts whose experts "
               "each see a few of its tokens, can leave it memory-bound.",
    "Decode": "Every later step: one new token per sequence, reading all the weights and the sequence's "
              "KV cache to make it. Memory-bound at small batches.",
    "Roofline": "The fastest a step can run on a GPU: its FLOPs at the tensor cores' peak or its bytes at "
                "the memory's peak bandwidth, whichever takes longer. A floor on step time, a ceiling on "
                "throughput.",
    "Ridge point": "Peak FLOP/s over peak bytes/s (FLOP per byte), for the precision the matmuls run in "
                   "(BF16, or FP8 with FP8 weights): on the spec sheet's roofline, steps with less "
                   "arithmetic per byte are memory-bound, steps with more are compute-bound. At the rates "
                   "kernels achieve (the assumptions) the switch sits at the knee, achievable FLOP/s over "
                   f"achievable bytes/s, lower on every preset at the default assumptions ({_h100_knee()}): "
                   "the pages call a step compute- or memory-bound by the knee.",
    "GPU utilization (utilization.gpu)": "What nvidia-smi and most dashboards show: the share of time in "
                                         "which at least one kernel was running, however little of the "
                                         "chip it used (NVML). On AMD GPUs (MI300X) amd-smi's GPU "
                                         "activity reads the same way; the pages say nvidia-smi for "
                                         "both.",
    "MFU": "Model FLOP/s utilization: FLOPs done per second over the tensor cores' spec peak at the "
           "precision the model's matrix multiplies run in: BF16 for 16-bit weights and for weight-only "
           "INT8 and INT4, FP8 for FP8 weights on GPUs with FP8 tensor cores, FP4 for FP4 weights on "
           "Blackwell. So FP8 weights are measured against a peak twice BF16's: the same FLOPs read half "
           "the MFU. Here it counts every FLOP the GPU executes (padding, rejected drafts, a draft "
           "model included), as "
           "DCGM's tensor-pipe activity does; the training-style MFU, 2 x parameters x delivered tokens "
           "per second, leaves those out and reads lower wherever work is wasted.",
    "MBU": "Model bandwidth utilization: bytes moved per second over the memory's peak bandwidth. What "
           "DCGM's DRAM activity tracks.",
    "Slot": "One sequence's place in the running batch; a batch of B has B slots, and each step can "
            "advance each slot by one token (the token capacity).",
    "Padding": "Tokens computed for nobody: a static batch's finished members keep computing until its "
               "longest member is done, and short prompts are padded to the longest.",
    "Useful work": "Of the token capacity there was demand for, the share spent on tokens someone asked "
                   "for. Capacity left empty while nobody was waiting is unused, not wasted, and is "
                   "left out: a lightly loaded server that does all it is asked reads 100%.",
    "Useful share": "Of the tokens the GPU computed, the share someone asked for: output tokens over "
                    "every token processed, padding, recomputed prefills and rejected drafts included "
                    "(page 04's column). Page 01's gauge, useful work, is a share of capacity instead.",
    "Unused (no demand)": "Token capacity in slots left empty while no request was waiting: spare "
                          "capacity, high under light load.",
    "Output tokens per second": "Output tokens delivered to users per second, whatever their latency "
                                "(padding and rejected drafts are not counted).",
    "Goodput": "The only sense the word has here: requests per second that meet the latency targets "
               "(TTFT and TPOT), as vLLM's benchmark reports it (`vllm bench serve --goodput`, after "
               "DistServe), or those requests' output tokens per second. DistServe's own headline, "
               "per-GPU goodput, is the highest request rate per GPU at which 90 % of requests meet "
               "them: this app's analogue is capacity per GPU.",
    "Latency targets (SLO)": "A time to first token and a time per output token that a request must "
                             "both meet to count as served well. Page 05 calls the second a TBT target: "
                             "a capacity holds the p99 of every gap between tokens to it, goodput each "
                             "request's mean TPOT. 'Missing the SLO' means fewer than 90 % of the "
                             "requests met both (DistServe's attainment goal).",
    "SLO attainment": "The share of requests that meet both latency targets.",
    "TTFT": "Time to first token: from a request's arrival to the end of its prefill, queueing included.",
    "TPOT": "Time per output token: a request's (last token − first token) / (tokens − 1).",
    "ITL": "Inter-token latency: the wait before each output token after the first, counted per token; "
           "one stalled step shows in its p99 (page 05 calls it TBT, as the serving papers do). Under "
           "speculative decoding a round's accepted tokens arrive together, and the gap counted is the "
           "round's, as vLLM's benchmark records one gap per streamed chunk.",
    "TBT": "Time between tokens: the gap before each output token after the first, counted per token "
           "(the same quantity as ITL); its p99 shows the stalls a mean hides.",
    "Capacity": "The highest arrival rate (requests/s) at which the latency targets still hold: here p99 "
                "TTFT and p99 TBT both within their targets (after Sarathi-Serve's serving capacity, \"the "
                "maximum request load a system can sustain while meeting certain latency targets\"; its "
                "own targets differ), with the queue steady and no request turned away. Per GPU, "
                "it is the analogue of DistServe's per-GPU goodput (which asks 90 % of requests to meet "
                "both targets, where this asks the 99th percentile of each). Stricter than goodput: a "
                "request counts toward goodput if its own TTFT and mean TPOT meet the targets, while a "
                "capacity needs the p99 of every gap between tokens within its target, so goodput "
                "measured at a rate above the capacity can exceed it.",
    "Prefix hit rate": "Of the requests that start with a shared prefix, the share that found its KV "
                       "already in the cache and skipped prefilling it.",
    "KV cache": "The attention keys and values of every token a sequence holds, kept in GPU memory so "
                "that decode reads them instead of recomputing.",
    "KV cache holding tokens": "The share of the KV-cache budget holding token states (the rest is "
                               "reserved, slack in last pages, or free).",
    "Queue depth": "Requests that have arrived and are waiting to get into the batch.",
    "Preemption": "A paged engine out of KV pages evicts a running request and recomputes it later.",
    "Speedup (speculative decoding)": "Tokens per second with speculation over tokens per second of "
                                      "plain decode at the same batch and context.",
}


def define(term: str) -> str:
    """The glossary's definition of ``term`` (a KeyError for a word the glossary does not define)."""
    return GLOSSARY[term]
