"""The measured rows the app ships (``sim/data/measured.csv``, a copy of the project's
``shared/measured.csv``; MEASURED.md section 1 describes it), and the ones that match a setup.

Reading this module's own data file is its only I/O.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from sim.models import Model
from sim.truth import Row, parse_rows

DATA = Path(__file__).with_name("data") / "measured.csv"


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
