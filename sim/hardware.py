"""GPU specifications: dense tensor-core peaks, HBM bandwidth and capacity, each with its source.

All figures are from ``REFERENCE.md`` section 1.1 (dense, no 2:4 sparsity). The ridge point of a
roofline is peak FLOP/s divided by peak bytes/s: a kernel whose arithmetic intensity (FLOP per byte
moved) is below it is limited by memory bandwidth, above it by the tensor cores.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

TERA = 1e12
GB = 1e9
GiB = 2**30
MiB = 2**20

PRECISIONS = ("bf16", "fp8", "fp4")

#: A GPU with no GEMM microbenchmark takes, per math precision, the median of NVIDIA's measured
#: best-shape GEMMs (measured.csv mle-01..03, mle-05 and its notes): BF16 A100 0.869, H100/H200
#: 0.803, B200 0.776; FP8 H100 0.709, H200 0.734, B200 0.763. An assumption, named where such a GPU
#: is priced (L4, L40S, a custom GPU). FP4 takes FP8's, as on the measured GPUs.
TYPICAL_GEMM_CEILINGS = {"bf16": 0.803, "fp8": 0.734}
TYPICAL_GEMM_CEILING = TYPICAL_GEMM_CEILINGS["bf16"]
#: A GPU with no STREAM-like measurement takes the median of NVIDIA's measured ones (A100 0.834,
#: H100 0.887, H200 0.871; az-04..06): an assumption (B200, L4, L40S, a custom GPU).
TYPICAL_HBM_CEILING = 0.871


@dataclass(frozen=True)
class GPU:
    """One accelerator, as the roofline sees it.

    Attributes:
        name: display name.
        bf16_flops: dense BF16/FP16 tensor-core peak, FLOP/s.
        fp8_flops: dense FP8 tensor-core peak, FLOP/s; ``None`` where the chip has no FP8 (A100).
        fp4_flops: dense FP4 (NVFP4 / MXFP4) tensor-core peak, FLOP/s; ``None`` where the chip has no
            FP4 units (everything before Blackwell): FP4 weights are then weight-only, BF16 math.
        hbm_bandwidth: peak device-memory bandwidth, bytes/s.
        hbm_bytes: device memory as the driver reports it (``nvidia-smi`` / ``rocm-smi`` total),
            bytes. Marketed "80 GB" cards hold 80 GiB less what the driver keeps.
        source: where the numbers come from.
        gemm_eff_measured: best measured dense-GEMM rate over the spec peak, per precision, from
            the microbenchmark rows of measured.csv (empty: no measurement). The cost model's
            compute efficiency is a share of it.
        hbm_eff_measured: STREAM-like measured bandwidth over the spec bandwidth (None: none). The
            cost model's bandwidth efficiency is a share of it.
        allreduce_busbw: measured large-message all-reduce bus bandwidth, bytes/s, by GPU count
            ((n, busbw) pairs; MEASURED.md section 3.2). A count not listed takes the nearest
            listed one at or below it (the smallest listed if none is).
        interconnect: the scale-up link, in words.
    """

    name: str
    bf16_flops: float
    fp8_flops: float | None
    hbm_bandwidth: float
    hbm_bytes: float
    source: str
    gemm_eff_measured: tuple[tuple[str, float], ...] = ()
    hbm_eff_measured: float | None = None
    allreduce_busbw: tuple[tuple[int, float], ...] = ()
    interconnect: str = ""
    fp4_flops: float | None = None

    def __post_init__(self) -> None:
        _check_positive("bf16_flops", self.bf16_flops, "FLOP/s")
        if self.fp8_flops is not None:
            _check_positive("fp8_flops", self.fp8_flops, "FLOP/s")
        _check_positive("hbm_bandwidth", self.hbm_bandwidth, "bytes/s")
        _check_positive("hbm_bytes", self.hbm_bytes, "bytes")
        # A measured share of the spec peak: above 1 would price kernels faster than the spec sheet.
        for prec, share in self.gemm_eff_measured:
            if prec not in PRECISIONS or not (isinstance(share, (int, float)) and 0 < share <= 1):
                raise ValueError(f"gemm_eff_measured needs (precision, share in (0, 1]), got "
                                 f"{(prec, share)!r}")
        if self.hbm_eff_measured is not None and not (
                isinstance(self.hbm_eff_measured, (int, float)) and 0 < self.hbm_eff_measured <= 1):
            raise ValueError(f"hbm_eff_measured must be in (0, 1], got {self.hbm_eff_measured!r}")

    def peak_flops(self, precision: str = "bf16") -> float:
        """Dense tensor-core peak in FLOP/s for ``precision`` ('bf16', 'fp8' or 'fp4').

        FP8 or FP4 on a chip without such units falls back to the BF16 rate (the weights are
        dequantised and the math runs in BF16: weight-only).
        """
        if precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {PRECISIONS}, got {precision!r}")
        if precision == "fp8" and self.fp8_flops is not None:
            return self.fp8_flops
        if precision == "fp4" and self.fp4_flops is not None:
            return self.fp4_flops
        return self.bf16_flops

    def math_precision(self, precision: str) -> str:
        """The precision the tensor cores actually run for ``precision`` on this chip."""
        if precision == "fp8" and self.fp8_flops is None:
            return "bf16"
        if precision == "fp4" and self.fp4_flops is None:
            return "bf16"
        return precision

    def gemm_ceiling(self, precision: str = "bf16") -> float:
        """The measured GEMM efficiency ceiling for ``precision``: the best dense GEMM's rate over the
        spec peak (TYPICAL_GEMM_CEILINGS where nothing was measured).
        FP4 was measured nowhere: it takes the FP8 ceiling where the chip has FP4 units (an
        assumption), and the BF16 one where FP4 runs as BF16 math."""
        precision = self.math_precision(precision)
        measured = dict(self.gemm_eff_measured)
        if precision == "fp4":
            return measured.get("fp4", measured.get("fp8", TYPICAL_GEMM_CEILINGS["fp8"]))
        return measured.get(precision, TYPICAL_GEMM_CEILINGS[precision])

    def typical_ceilings(self, precision: str = "bf16") -> tuple[str, ...]:
        """The microbenchmarks this GPU has none of, so its ceiling is the typical share: "GEMM" (at
        ``precision``'s math; FP4 counts FP8's where measured) and/or "STREAM"."""
        math_prec = self.math_precision(precision)
        measured = dict(self.gemm_eff_measured)
        out = []
        if math_prec not in measured and not (math_prec == "fp4" and "fp8" in measured):
            out.append("GEMM")
        if self.hbm_eff_measured is None:
            out.append("STREAM")
        return tuple(out)

    def hbm_ceiling(self) -> float:
        """The measured bandwidth efficiency ceiling: a STREAM-like test's rate over the spec
        bandwidth (TYPICAL_HBM_CEILING where nothing was measured)."""
        return TYPICAL_HBM_CEILING if self.hbm_eff_measured is None else self.hbm_eff_measured

    def allreduce_bandwidth(self, n_gpus: int) -> float:
        """All-reduce bus bandwidth across ``n_gpus`` of these GPUs, bytes/s (inf for one GPU)."""
        if n_gpus <= 1:
            return math.inf
        if not self.allreduce_busbw:
            raise ValueError(f"{self.name} has no all-reduce bandwidth: tensor parallelism is not "
                             "available for it")
        table = sorted(self.allreduce_busbw)
        below = [bw for n, bw in table if n <= n_gpus]
        return below[-1] if below else table[0][1]

    def ridge_point(self, precision: str = "bf16") -> float:
        """Arithmetic intensity (FLOP/byte) where the roofline turns from memory- to compute-bound."""
        return self.peak_flops(precision) / self.hbm_bandwidth


def _check_positive(name: str, value: float, unit: str) -> None:
    if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be a finite number > 0 ({unit}), got {value!r}")


#: All-reduce bus bandwidth over PCIe Gen4 x16 with no NVLink (L40S, L4), bytes/s: derived from
#: TensorRT-LLM v0.17's measured L40S runs at TP4 and TP8 (see the L40S preset), not nccl-tests.
L40S_ALLREDUCE_BUSBW = 15 * GB

GPUS: dict[str, GPU] = {
    gpu.name: gpu
    for gpu in (
        GPU(
            name="H100 SXM",
            bf16_flops=989.4 * TERA,
            fp8_flops=1978.9 * TERA,
            hbm_bandwidth=3.35 * TERA,
            hbm_bytes=81559 * MiB,
            source="NVIDIA H100 datasheet (dense = sparse / 2); glennklockwood.com H100 page; "
                   "memory as nvidia-smi reports an 80 GB H100 SXM (81,559 MiB)",
            gemm_eff_measured=(("bf16", 794.5 / 989.4), ("fp8", 1402.6 / 1978.9)),  # mle-02, mle-05
            hbm_eff_measured=2.97 / 3.35,  # az-05 STREAM-like triad
            # nccl-tests 8 GB all-reduce: Azure 8 x H100 478.87 GB/s (NVLS); 4 GPUs as ml-engineering's
            # H200 sweep (same NVLink 4 and NVSwitch): 363.3 GB/s.
            allreduce_busbw=((4, 363.3 * GB), (8, 478.87 * GB)),
            interconnect="NVLink 4 + NVSwitch, 450 GB/s per direction",
        ),
        GPU(
            name="A100 80GB SXM",
            bf16_flops=312 * TERA,
            fp8_flops=None,
            hbm_bandwidth=2.039 * TERA,
            hbm_bytes=81920 * MiB,
            source="NVIDIA A100 datasheet, as cited on glennklockwood.com and thundercompute.com; "
                   "memory as nvidia-smi reports an A100-SXM4-80GB (81,920 MiB)",
            gemm_eff_measured=(("bf16", 271.2 / 312),),  # mle-01
            hbm_eff_measured=1.7 / 2.039,  # az-04
            allreduce_busbw=((8, 231.58 * GB),),  # Azure 8 x A100, nccl-tests 8 GB (the one count measured)
            interconnect="NVLink 3 + NVSwitch, 300 GB/s per direction",
        ),
        GPU(
            name="H200 SXM",
            bf16_flops=989.4 * TERA,
            fp8_flops=1978.9 * TERA,
            hbm_bandwidth=4.8 * TERA,
            hbm_bytes=143771 * MiB,
            source="stas00/ml-engineering accelerator tables; MLPerf Inference v4.1 H200 system JSON; "
                   "memory as nvidia-smi reports a 141 GB H200 SXM (143,771 MiB)",
            # mle-02's note: "H200 is the same" as H100 for BF16; mle-05 for FP8.
            gemm_eff_measured=(("bf16", 794.5 / 989.4), ("fp8", 1453.4 / 1978.9)),
            hbm_eff_measured=4.18 / 4.8,  # az-06
            # 8 GPUs: Azure's nccl-tests 8 GB run, 480.94 GB/s, the H100's source (ml-engineering's
            # sweep read 473.1 and put the H200, on the same NVLink 4 and NVSwitch, below the H100);
            # 4 GPUs: that sweep's 363.3 GB/s, as for the H100.
            allreduce_busbw=((4, 363.3 * GB), (8, 480.94 * GB)),
            interconnect="NVLink 4 + NVSwitch, 450 GB/s per direction",
        ),
        GPU(
            name="B200",
            bf16_flops=2250 * TERA,
            fp8_flops=4500 * TERA,
            hbm_bandwidth=8.0 * TERA,
            hbm_bytes=182631 * MiB,
            source="glennklockwood.com B200 (HGX, 1000 W); DGX B200 spec / 8 (8 TB/s); memory from "
                   "a device-query dump (182,631 MiB, REFERENCE.md 1.1, unverified)",
            gemm_eff_measured=(("bf16", 1745.0 / 2250), ("fp8", 3432.5 / 4500)),  # mle-03, mle-05 note
            # ml-engineering, p6-b200, 8 GiB: 4 GPUs 673.2 (ring), 8 GPUs 838.0 GB/s (NVLS).
            allreduce_busbw=((4, 673.2 * GB), (8, 838.0 * GB)),
            interconnect="NVLink 5 + NVSwitch, 900 GB/s per direction",
            # Dense FP4 = 2 x dense FP8: NVIDIA's DGX B200 spec sheet gives 144 PFLOPS FP4 (sparse)
            # for 8 GPUs, 18 per GPU sparse, 9 dense. Not read in REFERENCE.md: from the spec sheet
            # as remembered [unverified]; it is the FP8 rate doubled, as every Blackwell table has it.
            fp4_flops=9000 * TERA,
        ),
        GPU(
            name="MI300X",
            bf16_flops=1307.4 * TERA,
            fp8_flops=2614.9 * TERA,
            hbm_bandwidth=5.3 * TERA,
            hbm_bytes=192 * GiB,
            source="AMD ROCm docs gpu-specs (192 GiB VRAM); AMD MI300X datasheet (dense FP8 2614.9)",
            gemm_eff_measured=(("bf16", 668.4 / 1307.4), ("fp8", 1222.9 / 2614.9)),  # mle-04, az-03
            hbm_eff_measured=4.1 / 5.3,  # az-07
            # ml-engineering, 4 GiB: 2 GPUs 47.671 GB/s (one 64 GB/s peer link), 8 GPUs 312.912.
            # The board is a full mesh, so n GPUs all-reduce over their n - 1 peer links: 4 GPUs
            # over 3, at the 8-GPU run's share of its 7 links (312.912 / 448 = 0.698; the 2-GPU run
            # reached 0.745 of its one), 134.1 GB/s. Derived, not measured: without it a 4-GPU
            # replica would take the one-link figure, and per GPU run slower than at 2 or 8 GPUs.
            allreduce_busbw=((2, 47.671 * GB), (4, 3 * 64 * 312.912 / 448 * GB), (8, 312.912 * GB)),
            interconnect="Infinity Fabric, 7 peer links of 64 GB/s per direction",
        ),
        GPU(
            name="L40S",
            bf16_flops=362.05 * TERA,
            fp8_flops=733 * TERA,
            hbm_bandwidth=0.864 * TERA,
            hbm_bytes=46068 * MiB,
            source="NVIDIA L40S datasheet table (mullet.se copy); ml-engineering TFLOPS table; "
                   "memory as nvidia-smi reports a 48 GB L40S (46,068 MiB)",
            # No NVLink: all-reduce over PCIe Gen4 x16 (~31.5 GB/s per direction). MEASURED.md 3.1
            # has no L40S nccl-tests run; 15 GB/s is what TensorRT-LLM v0.17's measured L40S runs at
            # TP4 and TP8 give (its perf-overview table, 36 cells: median -2 % and 0 % at 15 GB/s,
            # +24 % and +43 % at the 25 GB/s, 80 % of the link, taken before;
            # tests/test_sim_trtllm_perf_overview.py): about half the link. An effective figure,
            # fitted to those cells: it may also carry tensor parallelism's other costs on this card.
            allreduce_busbw=((2, L40S_ALLREDUCE_BUSBW),),
            interconnect="PCIe Gen4 x16 only (no NVLink)",
        ),
        GPU(
            name="L4",
            bf16_flops=121 * TERA,
            fp8_flops=242.5 * TERA,
            hbm_bandwidth=0.300 * TERA,
            hbm_bytes=23034 * MiB,
            source="NVIDIA L4 datasheet (dense = sparse / 2); 6251 MHz x 192-bit = 300 GB/s; "
                   "memory as nvidia-smi reports a 24 GB L4 (23,034 MiB)",
            allreduce_busbw=((2, L40S_ALLREDUCE_BUSBW),),  # the same PCIe Gen4 x16 link as the L40S's
            interconnect="PCIe Gen4 x16 only (no NVLink)",
        ),
    )
}

DEFAULT_GPU = "H100 SXM"


#: The name of a GPU given by its figures (the sidebar's "Custom"), as running text reads it.
CUSTOM_GPU_NAME = "custom GPU"


def custom_gpu(bf16_tflops: float, bandwidth_tbps: float, memory_gb: float) -> GPU:
    """A user-defined GPU from datasheet units (TFLOP/s, TB/s, GB of memory as the driver reports
    it, in GiB). FP8 is taken as 2x BF16."""
    return GPU(
        name=CUSTOM_GPU_NAME,  # read in running text: "on one custom GPU", "Roofline of the custom GPU"
        bf16_flops=bf16_tflops * TERA,
        fp8_flops=2 * bf16_tflops * TERA,
        hbm_bandwidth=bandwidth_tbps * TERA,
        hbm_bytes=memory_gb * GiB,
        source="entered by the reader",
    )
