"""The shared cost model in words and equations: one text, quoted by every page that explains it
(kept in step with ``sim/cost.py``; tests check the numbers it quotes)."""

from __future__ import annotations

from sim.cost import DEFAULT_ASSUMPTIONS, Assumptions, allreduce_hops
from sim.hardware import GPUS, TYPICAL_GEMM_CEILINGS, TYPICAL_HBM_CEILING

#: The measured microbenchmark shares of the spec peaks, over every preset GPU.
_GEMM_SHARES = [share for g in GPUS.values() for _, share in g.gemm_eff_measured]
_STREAM_SHARES = [g.hbm_eff_measured for g in GPUS.values() if g.hbm_eff_measured is not None]


def _span(shares: list[float]) -> str:
    return f"{min(shares):.0%}-{max(shares):.0%}"

STEP_MODEL_MD = r"""
One engine step runs the model once over a batch. Sequence *i* brings $q_i$ new tokens and has $c_i$
cached. The step is described by $T=\sum q_i$ new tokens, $P=\sum q_i\,(c_i+\tfrac{q_i+1}{2})$ causal
attention pairs, $K=\sum(c_i+q_i)$ tokens of KV cache read or written, and $S$ positions that sample
(the last token of a prompt, in its last chunk; every decode token; every verified draft).

Each operator runs as its own kernels, one after another; **within** one, math and memory overlap:

$$
\begin{aligned}
t_\text{op} &= n_\text{layers}\cdot\max\!\Big(\frac{\text{FLOP}_\text{op}}{F\,\eta_c},\;
\frac{\text{bytes}_\text{op}}{B\,\eta_m}\Big)\\
&\quad + n_\text{kernels}\,t_\text{kernel}\\
t_\text{step} &= \textstyle\sum_\text{op} t_\text{op} + t_\text{host}
\end{aligned}
$$

with $t_\text{host} = t_\text{step host} + n_\text{seq}\,t_\text{seq host}$: the host's fixed work a
step and its work for each of the $n_\text{seq}$ sequences that sample in it (a verify pass counts a
sequence once), with no kernel running.

| operator | FLOP | bytes |
|---|---|---|
| embedding (once) | 0 | $T$ rows of the table |
| QKV projection (per layer) | $2T\,d\,(H+2H_{kv})\,d_h$ | its weights + activations in and out |
| attention (per layer) | $4\,H\,d_h\,P$ | $K$ tokens of KV cache + $q$ in, output out |
| output projection (per layer) | $2T\,H d_h\,d$ | its weights + activations |
| MLP (per layer) | $2T\cdot 3\,d\,d_{ff}$ (SwiGLU) | its weights + activations |
| LM head (once, if $S>0$) | $2S\,d\,V$ | the BF16 head + $S$ rows of logits |

$F$ is the GPU's best measured GEMM rate at the weights' precision and $B$ its STREAM-like
bandwidth (the microbenchmark rows of measured.csv); $\eta_c$ and $\eta_m$ are the shares of them a
serving step's kernels reach, the same for every GPU. GEMMs run at the weights' precision where the
GPU has tensor cores for it (FP8 weights: FP8 math on Ada, Hopper and MI300X; FP4 on Blackwell),
otherwise weight-only at BF16 math (INT8, INT4; FP8 on an A100); attention and the BF16 LM head run
at BF16. Without a
CUDA graph (steps over the capture size) a run of kernels takes at least their CPU launch time:
$t_\text{op}=\max(\ldots + n\,t_\text{kernel},\; n\,t_\text{launch})$. `nvidia-smi` utilization is
the share of wall time with a kernel running, $\sum t_\text{op}/t_\text{step}$; MFU = FLOP /
($F_\text{spec}\,t_\text{step}$) and MBU = bytes / ($B_\text{spec}\,t_\text{step}$), against the spec
sheet's peaks ($F_\text{spec}$ at the precision the weights' GEMMs run in: FP8 weights against the FP8
peak).
"""


def step_model_md(model) -> str:
    """STEP_MODEL_MD with the rows this model adds or changes: a mixture's experts, MLA's attention,
    GPT-J's two-matrix MLP, tensor parallelism's all-reduces (``sim.cost.operators`` prices them)."""
    rows = []
    if model.n_experts:
        rows.append(rf"| MLP of a mixture (per layer) | $2T\,k\cdot {model.mlp_matrices}\,d\,d_{{e}}$ + the "
                    r"router's $2T\,d\,E$ "
                    + (r"+ the shared experts' $2T\cdot 3\,d\,d_s$ " if model.shared_intermediate else "")
                    + r"($k$ of $E$ experts a token, width $d_e$) | the experts the step's tokens reach, "
                    + (rf"$\sum_r 1-(1-\pi_r)^T$ of them at routing skew {model.routing_skew:g} "
                       rf"($\pi_r \propto r^{{-{model.routing_skew:g}}}$ for the $r$-th most popular "
                       r"expert, summing to $k$, each at most 1; "
                       if model.routing_skew else r"$E\,(1-(1-k/E)^T)$ of them (")
                    + r"the slowest GPU's under expert parallelism) + activations |")
    if model.is_mla:
        rows.append(r"| attention, MLA (per layer) | $2H\,(d_{qk}+d_v)\,P$ (un-absorbed) + the latent "
                    r"projections in QKV | $K$ tokens of the latent cache ($d_c + d_{rope}$ a token) |")
    if not model.gated_mlp:
        rows.append(r"| MLP, two matrices (per layer) | $2T\cdot 2\,d\,d_{ff}$ | its weights + activations |")
    if model.tp > 1:
        n = model.tp
        rows.append(rf"| all-reduce (2 a layer, {n} GPUs) | 0 | ${allreduce_hops(n)}\,\alpha$ + "
                    rf"$2\tfrac{{{n - 1}}}{{{n}}}\,T\,d$ × 2 bytes / busbw over the link ($2(n-1)$ hops "
                    r"of latency $\alpha$, the textbook ring); every other row is one GPU's share |")
    if not rows:
        return STEP_MODEL_MD
    table_end = "| LM head (once, if $S>0$) | $2S\\,d\\,V$ | the BF16 head + $S$ rows of logits |\n"
    head, tail = STEP_MODEL_MD.split(table_end)
    return (head + table_end + "\n".join(rows) + "\n\n*For " + model.name
            + ": the table's last rows replace or add to the dense, single-GPU ones.*\n" + tail)


def assumption_lines(a: Assumptions = DEFAULT_ASSUMPTIONS) -> list[str]:
    """The named assumptions with their values (the sidebar's "Assumptions" can change them)."""
    d = DEFAULT_ASSUMPTIONS

    def mark(value: float, default: float) -> str:
        """Each value that differs from its fitted default says so; the rest, where all are defaults,
        once at the end of the sentence."""
        return "" if value == default else f" (fitted default {default:.3g})"

    return [
        f"Compute-bound kernels reach η_c = {a.compute_eff:.3g}{mark(a.compute_eff, d.compute_eff)} of the "
        f"GPU's best measured GEMM, memory-bound ones η_m = {a.memory_eff:.3g}"
        f"{mark(a.memory_eff, d.memory_eff)} of its STREAM-like bandwidth"
        + (" (the fitted defaults)" if (a.compute_eff, a.memory_eff) == (d.compute_eff, d.memory_eff) else "")
        + ": shares "
        f"of the GPU's own microbenchmarks (best GEMM {_span(_GEMM_SHARES)}, STREAM "
        f"{_span(_STREAM_SHARES)} of the spec sheet; "
        f"a GPU with none takes NVIDIA's typical: BF16 GEMM {TYPICAL_GEMM_CEILINGS['bf16']:.0%}, FP8 "
        f"{TYPICAL_GEMM_CEILINGS['fp8']:.0%}, STREAM {TYPICAL_HBM_CEILING:.0%}).",
        f"Each kernel costs {a.graph_kernel_s * 1e6:.1f} µs on top of its roofline; a step that is not "
        f"a CUDA graph (over {a.cuda_graph_max_tokens} tokens) needs {a.kernel_launch_s * 1e6:.0f} µs "
        "of CPU launch per kernel, which only shows when kernels are shorter than that.",
        f"The host's scheduling and sampling take {a.host_overhead_s * 1e6:.0f} µs a step, plus "
        f"{a.sequence_host_s * 1e6:.1f} µs for each sequence that samples in it, with no kernel running.",
        f"On n GPUs an all-reduce takes 2(n−1) hops of {a.allreduce_hop_s * 1e6:.3g} µs"
        + ("" if a.allreduce_hop_s == d.allreduce_hop_s
           else f" (fitted default {d.allreduce_hop_s * 1e6:.3g} µs)")
        + f" plus the {a.graph_kernel_s * 1e6:.1f} µs every kernel pays, "
        f"{(allreduce_hops(8) * a.allreduce_hop_s + a.graph_kernel_s) * 1e6:.0f} µs on 8 GPUs and "
        f"{(allreduce_hops(2) * a.allreduce_hop_s + a.graph_kernel_s) * 1e6:.1f} on 2 (the textbook "
        "ring's form; nccl-tests' small messages take 25-45 µs on 8), besides its bytes at the GPU's "
        "measured bus bandwidth.",
        "Fitted once to the measured rows of measured.csv with the same values for every GPU and "
        "engine (README, *The model against measurements*).",
        "Activations move through HBM between operators; the embedding table is gathered, not read; "
        "the LM head runs only where a token is sampled.",
    ]
