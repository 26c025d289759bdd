"""A reader's benchmark as rows the model can price: parsed rows (``calib.parsers``) that do not
name their GPU or model ran on the setup the reader has chosen (the app's sidebar).

Pure: no I/O, nothing evaluated.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from calib.parsers import rows_to_csv
from sim.hardware import GPU, GPUS
from sim.models import ALL_MODELS, KV_DTYPES, WEIGHT_DTYPES, Model
from sim.truth import COLUMNS, Row, RowError, parse_rows

MAX_READER_ROWS = 200


@dataclass(frozen=True)
class ReaderRows:
    rows: tuple[Row, ...]
    setups: dict[str, tuple[GPU, Model]]  # row id -> (gpu, model) for rows on the reader's setup
    notes: tuple[str, ...]


def reader_rows(parsed: Sequence[dict[str, str]], gpu: GPU, model: Model) -> ReaderRows:
    """Rows (ids made unique) and the setup each runs on. A row's blank GPU is ``gpu``; its blank
    model is ``model`` (the sidebar's, a pasted config included), at the row's precisions and GPU
    count where it gives them and the sidebar's where it does not. Raises ``RowError`` naming the
    field a row gets wrong."""
    if len(parsed) > MAX_READER_ROWS:
        raise RowError(f"{len(parsed)} rows: at most {MAX_READER_ROWS} are fitted at once")
    filled, setups, notes, seen = [], {}, [], set()
    for i, raw in enumerate(parsed, start=1):
        row = {k: str(raw.get(k, "") or "").strip() for k in COLUMNS}
        rid = row["id"] or f"yours-{i}"
        while rid in seen:
            rid = f"{rid}-{i}"
        seen.add(rid)
        row["id"] = rid
        on_ours = not row["gpu"] or not row["model"]
        if not row["weights"]:
            row["weights"] = model.weight_dtype
        if not row["kv"]:
            row["kv"] = model.kv_dtype
        if not row["gpus"]:
            row["gpus"] = str(model.tp)
        filled.append(row)
        if on_ours:
            setups[rid] = row
    rows = tuple(parse_rows(rows_to_csv(filled)))
    out_setups = {}
    for r in rows:
        if r.id not in setups:
            continue
        g = gpu if not setups[r.id]["gpu"] else GPUS.get(r.gpu)
        base = model if not setups[r.id]["model"] else ALL_MODELS.get(r.model)
        if g is None or base is None:
            notes.append(f"{r.id}: {'GPU ' + repr(r.gpu) if g is None else 'model ' + repr(r.model)} "
                         "is not a preset; the row is shown, not priced")
            continue
        if r.weights not in WEIGHT_DTYPES or r.kv not in KV_DTYPES:
            notes.append(f"{r.id}: precision {r.weights}/{r.kv} is not one the model prices; not priced")
            continue
        try:
            out_setups[r.id] = (g, base.with_precision(r.weights, r.kv).with_tp(r.gpus))
            if r.gpus > 1:
                g.allreduce_bandwidth(r.gpus)
        except ValueError as exc:
            out_setups.pop(r.id, None)
            notes.append(f"{r.id}: {exc}; not priced")
    return ReaderRows(rows, out_setups, tuple(notes))
