"""Every external figure the app uses, with where it comes from (REFERENCE.md, sections 1-5).

GPU and model sources are read from the presets themselves (``sim.hardware.GPUS``,
``sim.models.MODELS``), so a new preset shows up here without editing this file.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Source:
    topic: str
    used_for: str
    figures: str
    citation: str
    url: str = ""


#: Typical on-demand rental price per GPU-hour, US dollars, 2026 (the sidebar's default; editable).
#: (price, where it comes from). Rental prices spread 2-5x across providers and terms; these are a
#: midpoint to start from, not a quote.
GPU_PRICES: dict[str, tuple[float, str]] = {
    "H100 SXM": (2.95, "aimultiple.com Cloud GPU Rental Price Index, May 2026: H100 cohort median "
                       "~$2.95 per GPU-hour on demand, 37 providers"),
    "A100 80GB SXM": (1.30, "mercatus-ai.com cloud GPU pricing, May 2026: specialty clouds "
                            "$1.10-1.50 per hour on demand (midpoint)"),
    "H200 SXM": (4.00, "mercatus-ai.com cloud GPU pricing, May 2026: specialty clouds $3.50-4.50 "
                       "(midpoint)"),
    "B200": (5.25, "lyceum.technology, B200 cloud pricing 2026 (March): on demand $4.50-6.00 on "
                   "specialised clouds (midpoint)"),
    "MI300X": (2.50, "typical on-demand price, 2026, assumption (no source read)"),
    "L40S": (1.00, "typical on-demand price, 2026, assumption (no source read)"),
    "L4": (0.70, "typical on-demand price, 2026, assumption (no source read)"),
}
#: A custom GPU's default price (an assumption).
CUSTOM_GPU_PRICE = (2.00, "assumption for a custom GPU")


def gpu_price(gpu_name: str) -> tuple[float, str]:
    """The default price per GPU-hour for ``gpu_name`` and where it comes from."""
    return GPU_PRICES.get(gpu_name, CUSTOM_GPU_PRICE)


PAPERS: tuple[Source, ...] = (
    Source("Measured decode latency", "calibration of the cost model (00, all pages)",
           "Llama-3.1-8B on H100, SGLang: 158.34 tok/s = 6.32 ms/token; EAGLE-2/3 244.10 / 373.25 tok/s",
           "Li et al., EAGLE-3 (NeurIPS 2025), Table 4", "https://arxiv.org/abs/2503.01840"),
    Source("Achievable bandwidth and FLOP/s", "each GPU's ceilings (the efficiencies are shares of them)",
           "STREAM-like HBM 87-95 % of peak on H100; best BF16 GEMM 80 % of peak (MAMF)",
           "samuel-bohman/AI-benchmarking-guide (Azure results); stas00/ml-engineering, accelerator README"),
    Source("nvidia-smi utilization.gpu", "the utilization gauges (01, 04)",
           "\"Percent of time over the past sample period during which one or more kernels was executing\"",
           "NVIDIA NVML API reference, nvmlUtilization_t",
           "https://docs.nvidia.com/deploy/nvml-api/structnvmlUtilization__t.html"),
    Source("DCGM profiling metrics", "what to watch instead (04)",
           "SM_ACTIVE, SM_OCCUPANCY, PIPE_TENSOR_ACTIVE, DRAM_ACTIVE (~0.8 practical peak)",
           "NVIDIA DCGM User Guide, profiling metrics; NVIDIA/dcgm-exporter dcp-metrics-included.csv",
           "https://docs.nvidia.com/datacenter/dcgm/latest/user-guide/feature-overview.html"),
    Source("MBU", "memory bandwidth utilisation (00, 04)",
           "MBU = (model size + KV cache) / TPOT / peak bandwidth; 60 % on 2xH100 at batch 1",
           "Databricks, LLM Inference Performance Engineering: Best Practices (2023)",
           "https://www.databricks.com/blog/llm-inference-performance-engineering-best-practices"),
    Source("Orca", "continuous batching (01)",
           "iteration-level scheduling; 36.9x throughput at the same latency (GPT-3 175B)",
           "Yu et al., Orca (OSDI 2022)",
           "https://www.usenix.org/conference/osdi22/presentation/yu"),
    Source("Anyscale continuous batching benchmark", "workload preset (01)",
           "OPT-13B, A100 40GB; 512-token prompts, exponential outputs (mean 128) capped at "
           "32/128/512/1536; up to 23x throughput",
           "Daniel et al., How continuous batching enables 23x throughput in LLM inference (Anyscale, 2023)",
           "https://www.anyscale.com/blog/continuous-batching-llm-inference"),
    Source("PagedAttention / vLLM", "paged KV cache (02)",
           "token states 20.4-38.2 % of KV memory in prior systems vs 96.3 % in vLLM; block size 16; "
           "waste under 4 %",
           "Kwon et al., Efficient Memory Management for LLM Serving with PagedAttention (SOSP 2023)",
           "https://arxiv.org/abs/2309.06180"),
    Source("Sarathi-Serve", "chunked prefill (02)",
           "1 decode token costs about as much as 128 prefill tokens; token budgets 512 / 2048; "
           "2.6x capacity on Mistral-7B",
           "Agrawal et al., Taming Throughput-Latency Tradeoff in LLM Inference with Sarathi-Serve "
           "(OSDI 2024)", "https://arxiv.org/abs/2403.02310"),
    Source("Speculative decoding", "expected tokens per pass and speedup (03)",
           "E = (1 − α^(k+1)) / (1 − α); Table 1 speedups (α = 0.8, k = 5: 3.69×); measured α 0.5-0.9",
           "Leviathan, Kalman, Matias, Fast Inference from Transformers via Speculative Decoding "
           "(ICML 2023)", "https://arxiv.org/abs/2211.17192"),
    Source("Medusa", "drafting preset (03)", "Medusa-1 over 2.2x; Medusa-2 2.3-3.6x",
           "Cai et al., Medusa (2024)", "https://arxiv.org/abs/2401.10774"),
    Source("EAGLE, EAGLE-2, EAGLE-3", "drafting presets; speedup vs batch (03)",
           "acceptance lengths and speedups (Table 1); gain vs batch size on H100 (Table 3): "
           "EAGLE 1.40× at batch 2 to 0.99× at 64 (lowest 0.88× at 48), EAGLE-3 1.81× to 1.38×",
           "Li et al., EAGLE (arXiv 2401.15077), EAGLE-2 (2406.16858), EAGLE-3 (2503.01840)",
           "https://arxiv.org/abs/2503.01840"),
    Source("Prompt lookup decoding", "n-gram drafting preset (03)",
           "2x-4x on input-grounded tasks (Mistral-7B, A100)",
           "apoorvumang/prompt-lookup-decoding README",
           "https://github.com/apoorvumang/prompt-lookup-decoding"),
    Source("Speculative decoding under load", "why gains fade with batch size (03)",
           "up to 1.5x (draft model) and 2.8x (n-gram) at QPS 1; 1.4x-1.8x slowdowns at high QPS",
           "vLLM blog, How Speculative Decoding Boosts vLLM Performance by up to 2.8x (2024-10-17)",
           "https://blog.vllm.ai/2024/10/17/spec-decode.html"),
    Source("vLLM production metrics", "metric names and alerts (04)",
           "vllm:kv_cache_usage_perc (formerly gpu_cache_usage_perc), vllm:num_requests_waiting, "
           "vllm:num_preemptions_total, vllm:time_to_first_token_seconds, "
           "vllm:inter_token_latency_seconds (formerly time_per_output_token_seconds)",
           "vLLM documentation, Production Metrics", "https://docs.vllm.ai/en/latest/usage/metrics.html"),
    Source("DistServe", "goodput definition (04)",
           "per-GPU goodput = max request rate at which 90 % of requests meet the TTFT/TPOT SLOs (this "
           "app's capacity per GPU is its analogue, with p99 targets; the app's goodput is vLLM's "
           "benchmark's, the rate of the requests that meet them); 2 prefill + 1 decode GPUs: 3.3 "
           "rps/GPU vs 1.6 colocated",
           "Zhong et al., DistServe (OSDI 2024)", "https://arxiv.org/abs/2401.09670"),
    Source("Published vLLM runs on MI300X", "the sidebar's note on MI300X; not fitted to",
           "Llama-3.1-70B and -405B FP8 on 8 x MI300X, vLLM v0.10.0 on ROCm 6.4.1, benchmark_latency.py "
           "at batch 1-128 with 128 or 2,048 prompt tokens and 2,048 out (sim/data/published.csv)",
           "AMD, ROCm/vllm docs/dev-docker/README.md (commit 040de12d)",
           "https://github.com/ROCm/vllm/blob/040de12d45c16d6de6ad386cc57dd68b8c5b805e/docs/dev-docker/README.md"),
)
