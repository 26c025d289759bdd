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

PRECISIONS = ("bf16", "fp8")


@dataclass(frozen=True)
class GPU:
    """One accelerator, as the roofline sees it.

    Attributes:
        name: display name.
        bf16_flops: dense BF16/FP16 tensor-core peak, FLOP/s.
        fp8_flops: dense FP8 tensor-core peak, FLOP/s; ``None`` where the chip has no FP8 (A100).
        hbm_bandwidth: peak device-memory bandwidth, bytes/s.
        hbm_bytes: device memory as the driver reports it (``nvidia-smi`` / ``rocm-smi`` total),
            bytes. Marketed "80 GB" cards hold 80 GiB less what the driver keeps.
        source: where the numbers come from.
        gemm_eff_measured: best measured dense-GEMM rate over the spec peak, per precision, from
            the microbenchmark rows of measured.csv (None: no measurement). The cost model never
            assumes more than this.
        hbm_eff_measured: STREAM-like measured bandwidth over the spec bandwidth (None: none).
    """

    name: str
    bf16_flops: float
    fp8_flops: float | None
    hbm_bandwidth: float
    hbm_bytes: float
    source: str
    gemm_eff_measured: tuple[tuple[str, float], ...] = ()
    hbm_eff_measured: float | None = None

    def __post_init__(self) -> None:
        _check_positive("bf16_flops", self.bf16_flops, "FLOP/s")
        if self.fp8_flops is not None:
            _check_positive("fp8_flops", self.fp8_flops, "FLOP/s")
        _check_positive("hbm_bandwidth", self.hbm_bandwidth, "bytes/s")
        _check_positive("hbm_bytes", self.hbm_bytes, "bytes")

    def peak_flops(self, precision: str = "bf16") -> float:
        """Dense tensor-core peak in FLOP/s for ``precision`` ('bf16' or 'fp8').

        FP8 on a chip without FP8 units falls back to the BF16 rate (the math runs in BF16).
        """
        if precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {PRECISIONS}, got {precision!r}")
        if precision == "fp8" and self.fp8_flops is not None:
            return self.fp8_flops
        return self.bf16_flops

    def gemm_ceiling(self, precision: str = "bf16") -> float:
        """The measured GEMM efficiency ceiling for ``precision`` (1.0 where nothing was measured)."""
        return dict(self.gemm_eff_measured).get(precision, 1.0)

    def hbm_ceiling(self) -> float:
        """The measured bandwidth efficiency ceiling (1.0 where nothing was measured)."""
        return 1.0 if self.hbm_eff_measured is None else self.hbm_eff_measured

    def ridge_point(self, precision: str = "bf16") -> float:
        """Arithmetic intensity (FLOP/byte) where the roofline turns from memory- to compute-bound."""
        return self.peak_flops(precision) / self.hbm_bandwidth


def _check_positive(name: str, value: float, unit: str) -> None:
    if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be a finite number > 0 ({unit}), got {value!r}")


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
        ),
        GPU(
            name="L40S",
            bf16_flops=362.05 * TERA,
            fp8_flops=733 * TERA,
            hbm_bandwidth=0.864 * TERA,
            hbm_bytes=46068 * MiB,
            source="NVIDIA L40S datasheet table (mullet.se copy); ml-engineering TFLOPS table; "
                   "memory as nvidia-smi reports a 48 GB L40S (46,068 MiB)",
        ),
        GPU(
            name="L4",
            bf16_flops=121 * TERA,
            fp8_flops=242.5 * TERA,
            hbm_bandwidth=0.300 * TERA,
            hbm_bytes=23034 * MiB,
            source="NVIDIA L4 datasheet (dense = sparse / 2); 6251 MHz x 192-bit = 300 GB/s; "
                   "memory as nvidia-smi reports a 24 GB L4 (23,034 MiB)",
        ),
    )
}

DEFAULT_GPU = "H100 SXM"


def custom_gpu(bf16_tflops: float, bandwidth_tbps: float, memory_gb: float) -> GPU:
    """A user-defined GPU from datasheet units (TFLOP/s, TB/s, GB of memory as the driver reports
    it, in GiB). FP8 is taken as 2x BF16."""
    return GPU(
        name="Custom",
        bf16_flops=bf16_tflops * TERA,
        fp8_flops=2 * bf16_tflops * TERA,
        hbm_bandwidth=bandwidth_tbps * TERA,
        hbm_bytes=memory_gb * GiB,
        source="entered by the reader",
    )
