"""The measured rows the app ships (``sim/data/measured.csv``, a copy of the project's
``shared/measured.csv``; MEASURED.md section 1 describes it), and the ones that match a setup; and
published runs the model is not fitted to (``sim/data/published.csv``, the same schema: AMD's vLLM
latency table for 8 x MI300X), summarised per GPU.

Reading this module's own data files is its only I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from sim.cost import DEFAULT_ASSUMPTIONS, Assumptions
from sim.models import Model
from sim.truth import Row, parse_rows, predict

DATA = Path(__file__).with_name("data") / "measured.csv"
PUBLISHED = Path(__file__).with_name("data") / "published.csv"


@lru_cache(maxsize=1)
def shipped_rows() -> tuple[Row, ...]:
    """Every row of the shipped copy of measured.csv."""
    return tuple(parse_rows(DATA.read_text(encoding="utf-8")))


def rows_for(gpu_name: str, model: Model, kinds: tuple[str, ...]) -> list[Row]:
    """The shipped rows of ``kinds`` measured on this GPU preset and this model at its precisions
    and GPU count (``model.tp``)."""
    return [r for r in shipped_rows()
            if r.kind in kinds and r.gpu == gpu_name and r.model == model.name
            and r.weights == model.weight_dtype and r.kv == model.kv_dtype and r.gpus == model.tp]


def shipped_csv(ids: tuple[str, ...]) -> str:
    """The header and the shipped rows with these ids, as the file has them (for an example)."""
    lines = DATA.read_text(encoding="utf-8").splitlines(keepends=True)
    return lines[0] + "".join(line for line in lines[1:] if line.split(",", 1)[0] in ids)


@lru_cache(maxsize=1)
def published_rows() -> tuple[Row, ...]:
    """Every row of ``sim/data/published.csv``: published runs kept beside measured.csv, not fitted to."""
    return tuple(parse_rows(PUBLISHED.read_text(encoding="utf-8")))


#: Batches up to this are "small" in a published table's summary.
SMALL_BATCH = 8


@dataclass(frozen=True)
class PublishedSummary:
    """How the model compares with one GPU's published runs: signed errors, (model - measured) /
    measured, over the static-batch runs at small batches (<= SMALL_BATCH) and at larger ones."""

    engine: str
    models: tuple[str, ...]
    runs: int
    batches: tuple[int, int]  # smallest and largest batch
    small_max_abs_error: float  # largest |error| at batch <= SMALL_BATCH
    large_error_range: tuple[float, float]  # (min, max) signed error at larger batches
    worst: Row  # the run with the largest |error|


@lru_cache(maxsize=64)
def published_summary(gpu_name: str, assumptions: Assumptions = DEFAULT_ASSUMPTIONS
                      ) -> PublishedSummary | None:
    """The model against the published static-batch runs on ``gpu_name`` (at these assumptions), or
    None where there are none."""
    rows = [r for r in published_rows() if r.gpu == gpu_name and r.kind == "static_batch_tok_s"]
    errors = [(r, predict(r, assumptions).error) for r in rows]
    errors = [(r, e) for r, e in errors if e is not None]
    small = [abs(e) for r, e in errors if (r.batch or 1) <= SMALL_BATCH]
    large = [e for r, e in errors if (r.batch or 1) > SMALL_BATCH]
    if not small or not large:
        return None
    batches = [r.batch or 1 for r, _ in errors]
    return PublishedSummary(
        engine=errors[0][0].engine,
        models=tuple(dict.fromkeys(r.model for r, _ in errors)), runs=len(errors),
        batches=(min(batches), max(batches)), small_max_abs_error=max(small),
        large_error_range=(min(large), max(large)),
        worst=max(errors, key=lambda re: abs(re[1]))[0])
