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

PRECISIONS = ("bf16", "fp8")


@dataclass(frozen=True)
class GPU:
    """One accelerator, as the roofline sees it.

    Attributes:
        name: display name.
        bf16_flops: dense BF16/FP16 tensor-core peak, FLOP/s.
        fp8_flops: dense FP8 tensor-core peak, FLOP/s; ``None`` where the chip has no FP8 (A100).
        hbm_bandwidth: peak device-memory bandwidth, bytes/s.
        hbm_bytes: device memory usable by the serving engine, bytes.
        source: where the numbers come from.
    """

    name: str
    bf16_flops: float
    fp8_flops: float | None
    hbm_bandwidth: float
    hbm_bytes: float
    source: str

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
            hbm_bytes=80 * GB,
            source="NVIDIA H100 datasheet (dense = sparse / 2); glennklockwood.com H100 page",
        ),
        GPU(
            name="A100 80GB SXM",
            bf16_flops=312 * TERA,
            fp8_flops=None,
            hbm_bandwidth=2.039 * TERA,
            hbm_bytes=80 * GB,
            source="NVIDIA A100 datasheet, as cited on glennklockwood.com and thundercompute.com",
        ),
        GPU(
            name="H200 SXM",
            bf16_flops=989.4 * TERA,
            fp8_flops=1978.9 * TERA,
            hbm_bandwidth=4.8 * TERA,
            hbm_bytes=141 * GB,
            source="stas00/ml-engineering accelerator tables; MLPerf Inference v4.1 H200 system JSON",
        ),
        GPU(
            name="B200",
            bf16_flops=2250 * TERA,
            fp8_flops=4500 * TERA,
            hbm_bandwidth=8.0 * TERA,
            hbm_bytes=180 * GB,
            source="glennklockwood.com B200 (HGX, 1000 W); DGX B200 spec / 8 (180 GB usable, 8 TB/s)",
        ),
        GPU(
            name="MI300X",
            bf16_flops=1307.4 * TERA,
            fp8_flops=2614.9 * TERA,
            hbm_bandwidth=5.3 * TERA,
            hbm_bytes=192 * GB,
            source="AMD ROCm docs gpu-specs; AMD MI300X datasheet (dense FP8 2614.9)",
        ),
        GPU(
            name="L40S",
            bf16_flops=362.05 * TERA,
            fp8_flops=733 * TERA,
            hbm_bandwidth=0.864 * TERA,
            hbm_bytes=48 * GB,
            source="NVIDIA L40S datasheet table (mullet.se copy); ml-engineering TFLOPS table",
        ),
        GPU(
            name="L4",
            bf16_flops=121 * TERA,
            fp8_flops=242.5 * TERA,
            hbm_bandwidth=0.300 * TERA,
            hbm_bytes=24 * GB,
            source="NVIDIA L4 datasheet (dense = sparse / 2); 6251 MHz x 192-bit = 300 GB/s",
        ),
    )
}

DEFAULT_GPU = "H100 SXM"


def custom_gpu(bf16_tflops: float, bandwidth_tbps: float, memory_gb: float) -> GPU:
    """A user-defined GPU from datasheet units (TFLOP/s, TB/s, GB). FP8 is taken as 2x BF16."""
    return GPU(
        name="Custom",
        bf16_flops=bf16_tflops * TERA,
        fp8_flops=2 * bf16_tflops * TERA,
        hbm_bandwidth=bandwidth_tbps * TERA,
        hbm_bytes=memory_gb * GB,
        source="entered by the reader",
    )
