"""Read the output of the serving benchmarks readers run, as rows of ``measured.csv``.

    parse_benchmark(text)              -> Parsed(fmt, rows, notes), the format detected
    parse_benchmark(text, fmt="...")   -> the same, the format forced (one of FORMATS)

Formats (``FORMATS``):

- ``vllm-summary``: the block ``vllm bench serve`` (and the older ``benchmarks/benchmark_serving.py``)
  prints, "============ Serving Benchmark Result ============" to the closing "=====" line, with the
  "Traffic request rate:" / "Maximum request concurrency:" lines printed before it when they were
  pasted too. Several blocks (a sweep) give rows for each.
- ``vllm-json``: the file ``vllm bench serve --save-result`` writes (one JSON object; with
  ``--append-result`` one object a line).
- ``sglang-summary``: the block ``python -m sglang.bench_serving`` prints.
- ``sglang-jsonl``: the lines ``sglang.bench_serving`` appends to its ``--output-file``.
- ``trtllm-bench``: the report of ``trtllm-bench ... throughput`` (ENGINE DETAILS or PYTORCH
  BACKEND, WORLD + RUNTIME INFORMATION, REQUEST DETAILS, PERFORMANCE OVERVIEW).
- ``csv``: rows typed in ``measured.csv``'s columns (``sim.truth.COLUMNS``), header first; ``kind``
  and ``value`` are required, every other column may be missing or blank.

A serving run becomes the rows the model can express (MEASURED.md section 1):

- ``tpot_ms``: the mean TPOT (the mean ITL where the output has no TPOT; SGLang's summary), with
  ``qps`` = the request rate when it is finite and ``concurrency`` = the max concurrency when one
  was set. Not for an all-at-once run (rate inf, no cap): that is offline, not a steady state.
- ``ttft_ms``: the mean TTFT, only when the server was effectively idle (max concurrency 1, or one
  request); under load TTFT includes queueing, which the model's ``ttft_ms`` (an idle-server
  prefill) does not.
- ``offline_tok_s``: the output token throughput when every request was queued at t = 0 (rate inf
  and no concurrency cap; every ``trtllm-bench throughput`` run), ``requests`` = requests completed.

``prompt_tokens`` / ``output_tokens`` are the mean lengths (total tokens / successful requests,
rounded). ``gpu``, ``model``, ``weights``, ``kv`` stay "" where the benchmark does not say (the
sidebar's setup applies); a model or GPU it names is mapped to the app's preset name when one
matches (``model_preset``, ``gpu_preset``), and left "" with a note when none does. ``source`` names
the format and where in the text the run was; ``notes`` the raw numbers used.

Strict: at most ``MAX_BYTES`` bytes; a value that is not a finite number >= 0 where one is needed,
a wrong unit, a truncated block, a JSON field of the wrong type or a missing required field raise
``BenchmarkParseError`` naming the line or the field. JSON is read with ``json.loads`` after a
nesting-depth check; nothing is evaluated. Unknown fields are ignored and listed in the notes.
Pure: no I/O; every function takes the text.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from sim.truth import COLUMNS, MAX_ROWS, UNITS, RowError, parse_rows

FORMATS: dict[str, str] = {
    "vllm-summary": "the summary block `vllm bench serve` prints",
    "vllm-json": "the JSON `vllm bench serve --save-result` writes",
    "sglang-summary": "the summary block `python -m sglang.bench_serving` prints",
    "sglang-jsonl": "the JSON lines `sglang.bench_serving` writes to its --output-file",
    "trtllm-bench": "the report `trtllm-bench ... throughput` prints",
    "csv": "rows typed in measured.csv's columns, with the header line",
}
MAX_BYTES = 1_000_000
MAX_JSON_DEPTH = 32
MAX_RECORDS = 500  # runs in one paste (blocks or JSON lines)
_MAX_NOTE_NAMES = 12


class BenchmarkParseError(ValueError):
    """The text could not be read; the message names the line or the field, and what was expected."""


@dataclass(frozen=True)
class Parsed:
    """What a benchmark's output says, as measured.csv rows.

    ``fmt``: one of FORMATS. ``rows``: dicts over ``sim.truth.COLUMNS`` (every value a string), in
    the order of the runs. ``notes``: what was read, and what was not used and why."""

    fmt: str
    rows: tuple[dict[str, str], ...]
    notes: tuple[str, ...]


# ---- public helpers ----


def rows_to_csv(rows: Iterable[dict[str, str]]) -> str:
    """The rows as measured.csv text (header ``sim.truth.COLUMNS``), for ``sim.truth.parse_rows``."""
    out = io.StringIO()
    # Every cell quoted: with "\n" ending the lines, csv quotes a cell holding "\n" but not one
    # holding a lone "\r", which the reader then refuses ("new-line character seen in unquoted field").
    writer = csv.DictWriter(out, fieldnames=COLUMNS, lineterminator="\n", quoting=csv.QUOTE_ALL)
    writer.writeheader()
    for row in rows:
        writer.writerow({k: row.get(k, "") for k in COLUMNS})
    return out.getvalue()


def decode_bytes(data: bytes) -> str:
    """An uploaded file's text: UTF-8 (a byte-order mark dropped), or UTF-16 / UTF-32 where the file
    says so with its byte-order mark or, for UTF-16 without one, with a NUL in every other byte
    (Windows PowerShell 5.1's ``>`` writes UTF-16); undecodable bytes become U+FFFD."""
    if data.startswith((b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")):
        return data.decode("utf-32", errors="replace")
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16", errors="replace")
    sample = data[:4096]
    if len(sample) >= 8 and sample[1::2].count(0) > 0.9 * len(sample[1::2]) and 0 not in sample[0::2]:
        return data.decode("utf-16-le", errors="replace")
    return data.decode("utf-8-sig", errors="replace")


def with_setup(rows: Iterable[dict[str, str]], *, gpu: str, model: str, weights: str = "bf16",
               kv: str = "bf16", gpus: int = 1) -> tuple[dict[str, str], ...]:
    """The rows with their blank ``gpu``, ``model``, ``weights``, ``kv``, ``gpus`` cells filled (the
    sidebar's setup); cells the benchmark stated are kept."""
    fill = {"gpu": gpu, "model": model, "weights": weights, "kv": kv, "gpus": str(gpus)}
    return tuple({k: (v or fill.get(k, "")) if k in fill else v for k, v in row.items()} for row in rows)


_MODEL_ALIASES = {"deepseek-r1": "DeepSeek-V3",  # the same shapes (MEASURED.md)
                  "llama-3.3-70b": "Llama-3.1-70B", "llama-7b": "Llama-2-7B", "llama-70b": "Llama-2-70B",
                  "llama-3-8b": "Llama-3.1-8B", "llama-3-70b": "Llama-3.1-70B"}


def _model_key(name: str) -> str:
    key = name.strip().lower().rsplit("/", 1)[-1]
    key = re.sub(r"^meta-", "", key)
    key = re.sub(r"[-_.](instruct|chat|hf|it|base|thinking)\b", "", key)
    key = re.sub(r"[-_]quantized([-_.][a-z0-9]+)*$", "", key)  # RedHatAI's -quantized.w4a16 / .w8a8
    key = re.sub(r"[-_](fp8|fp16|bf16|awq|gptq|int4|int8|w8a8|w4a16|nvfp4|mxfp4|fp4)(-dynamic)?\b", "", key)
    key = re.sub(r"-v\d+\.\d+$", "", key)  # Mistral's -v0.3; DeepSeek-V2 / -V3 are models, kept
    key = re.sub(r"[-_](\d{4})$", "", key)  # a release date: DeepSeek-R1-0528, V3-0324, Qwen3's -2507
    key = re.sub(r"-\d+b-\d+e$", "", key)  # Meta's Llama-4-Scout-17B-16E: active size, experts
    return key


#: Weight precisions a model id's suffix names (RedHatAI's ``-FP8``, ``-AWQ``, ``-GPTQ-INT4``, ...).
_ID_WEIGHTS = (("nvfp4", "nvfp4"), ("mxfp4", "mxfp4"), ("fp4", "nvfp4"),  # NVIDIA's -FP4 checkpoints: NVFP4
               ("fp8", "fp8"), ("awq", "int4"), ("gptq", "int4"),
               ("w4a16", "int4"), ("int4", "int4"), ("int8", "int8"), ("w8a16", "int8"))


def id_weights(name: str) -> str:
    """The weight precision a model id states in its name (``Meta-Llama-3.1-8B-Instruct-FP8``: fp8;
    ``...-AWQ``: int4), or "" where it states none."""
    parts = set(re.split(r"[-_./]", name.lower().rsplit("/", 1)[-1]))
    return next((dtype for tag, dtype in _ID_WEIGHTS if tag in parts), "")


def model_preset(name: str) -> str:
    """The app's model name for a model id such as ``meta-llama/Llama-3.1-8B-Instruct``, or ""."""
    from sim.models import ALL_MODELS

    key = _model_key(name)
    if not key:
        return ""
    for preset in ALL_MODELS:
        if _model_key(preset) == key:
            return preset
    return _MODEL_ALIASES.get(key, "")


def gpu_preset(name: str) -> str:
    """The app's GPU preset for a device name such as ``NVIDIA H200`` (``torch.cuda.get_device_name``),
    or "" when none matches (PCIe and NVL variants are not the SXM presets)."""
    low = name.lower()
    if any(v in low for v in ("pcie", " nvl", "-nvl", "gh200", "gb200", "gb300")):
        return ""  # Grace-Hopper / Grace-Blackwell: other memory and bandwidth than the SXM presets
    if "h200" in low:
        return "H200 SXM"
    if "h100" in low:
        return "H100 SXM"
    if "a100" in low and "80" in low:
        return "A100 80GB SXM"
    if "b200" in low:
        return "B200"
    if "mi300x" in low:
        return "MI300X"
    if "l40s" in low:
        return "L40S"
    if re.search(r"\bl4\b", low):
        return "L4"
    return ""


# ---- numbers ----

_NUM_RE = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


def _number(raw: str, where: str) -> float:
    """A printed number, strictly: finite, written as digits (no NaN, inf, hex, or words)."""
    s = raw.strip()
    low = s.lower()
    if low.lstrip("+-") in ("nan", "inf", "infinity"):
        raise BenchmarkParseError(f"{where}: {s!r} is not a finite number")
    if not _NUM_RE.fullmatch(s):
        raise BenchmarkParseError(f"{where}: {s[:40]!r} is not a number")
    value = float(s)
    if not math.isfinite(value):
        raise BenchmarkParseError(f"{where}: {s[:40]!r} is not a finite number")
    if value < 0:
        raise BenchmarkParseError(f"{where}: {s!r} is negative")
    return value


def _count(raw: str, where: str) -> int:
    value = _number(raw, where)
    if value != int(value) or value > 1e12:
        raise BenchmarkParseError(f"{where}: {raw.strip()!r} is not a whole number")
    return int(value)


def _fmt(x: float | int) -> str:
    """A number as a CSV cell: whole numbers without a decimal point, others as repr (exact)."""
    if isinstance(x, float) and math.isinf(x):
        return "inf"
    if isinstance(x, float) and x.is_integer() and abs(x) < 1e15:
        return str(int(x))
    return repr(x) if isinstance(x, float) else str(x)


# ---- one run, whatever printed it ----


@dataclass
class _Run:
    fmt: str
    where: str  # "block at line 12", "record 3 (line 3)"
    engine: str
    completed: int
    total_in: int
    total_out: int
    output_tps: float | None = None
    mean_ttft_ms: float | None = None
    mean_tpot_ms: float | None = None
    tpot_label: str = "Mean TPOT (ms)"
    accept_length: float | None = None  # speculative decoding: tokens committed a step (accept length)
    spec_mode: str = ""  # speculative decoding named without an accept length (trtllm-bench's section)
    ttft_label: str = "Mean TTFT (ms)"
    tps_label: str = "Output token throughput (tok/s)"
    rate: float | None = None  # requests/s; inf = all at once; None = not stated
    rate_known: bool = False
    concurrency: int | None = None  # None = no cap
    concurrency_known: bool = False
    model: str = ""  # as the benchmark names it
    gpu: str = ""
    gpus: int | None = None
    weights: str = ""
    kv: str = ""
    workload: str = "random"
    raw: dict[str, str] = field(default_factory=dict)  # label -> the text read, for the notes column
    lengths_note: str = ""  # how the lengths were read, when not from the token totals
    max_batch: int | None = None  # the engine's own cap on sequences at once (trtllm-bench's report)
    notes: list[str] = field(default_factory=list)


def _require_positive(run: _Run, value: float | None, name: str) -> float:
    if value is None:
        raise BenchmarkParseError(f"{run.where}: {name} is missing")
    if not (math.isfinite(value) and value > 0):
        raise BenchmarkParseError(f"{run.where}: {name} = {value!r} must be a finite number > 0")
    return value


def _rows_for(run: _Run, prefix: str, n: int) -> tuple[list[dict[str, str]], list[str]]:
    """The rows the model can express for one run, and notes on what was not used."""
    notes = [f"{run.where}: {m}" for m in run.notes]
    if run.completed < 1:
        raise BenchmarkParseError(f"{run.where}: no successful requests (Successful requests = 0)")
    for name, v in (("Total input tokens", run.total_in), ("Total generated tokens", run.total_out)):
        if v < 1:
            raise BenchmarkParseError(f"{run.where}: {name} = {v} must be > 0")
    mean_in = run.total_in / run.completed
    mean_out = run.total_out / run.completed
    prompt, output = max(1, round(mean_in)), max(1, round(mean_out))
    model = model_preset(run.model) if run.model else ""
    if run.model and not run.weights and id_weights(run.model):
        run.weights = id_weights(run.model)
        notes.append(f"{run.where}: weights {run.weights}, as the model id {run.model!r} names them")
    if model and _model_key(run.model) != _model_key(model):
        notes.append(f"{run.where}: model {run.model!r} is priced as {model} (the same shapes)")
    if run.model and not model:  # kept as named: priced only on a custom model in the sidebar
        model = run.model
    gpu = gpu_preset(run.gpu) if run.gpu else ""
    if run.gpu and not gpu:  # kept as named: priced only on a custom GPU in the sidebar
        gpu = run.gpu
    lengths = run.lengths_note or (
        f"Successful requests {run.completed}; Total input tokens {run.total_in} "
        f"(mean {mean_in:.6g}); Total generated tokens {run.total_out} (mean {mean_out:.6g})")
    if run.model:
        lengths += f"; model {run.model}"
    if run.gpu:
        lengths += f"; GPU {run.gpu}"
    base = {c: "" for c in COLUMNS}
    base.update(gpu=gpu, gpus=_fmt(run.gpus) if run.gpus else "", model=model, weights=run.weights,
                kv=run.kv, engine=run.engine, requests=_fmt(run.completed), workload=run.workload,
                prompt_tokens=_fmt(prompt), output_tokens=_fmt(output), source=f"{run.fmt}, {run.where}")
    rate_txt = ("not stated" if not run.rate_known else _fmt(run.rate) if run.rate is not None else "inf")
    conc_txt = ("not stated" if not run.concurrency_known
                else str(run.concurrency) if run.concurrency is not None else "none")
    load = f"request rate {rate_txt}; max concurrency {conc_txt}"
    rows: list[dict[str, str]] = []

    def add(kind: str, value: float, used: str, **cells: str) -> None:
        row = dict(base, kind=kind, value=_fmt(value), unit=UNITS[kind], **cells)
        row["id"] = f"{prefix}-{n:02d}-{kind.split('_')[0]}"
        row["notes"] = f"{used}; {lengths}; {load}"
        rows.append(row)

    single = run.completed == 1
    idle = single or (run.concurrency_known and run.concurrency == 1)
    all_at_once = (run.rate_known and run.concurrency_known and run.concurrency is None
                   and (run.rate is None or math.isinf(run.rate)))
    if run.mean_ttft_ms is not None:
        if idle:
            _require_positive(run, run.mean_ttft_ms, run.ttft_label)
            add("ttft_ms", run.mean_ttft_ms, f"{run.ttft_label} {_fmt(run.mean_ttft_ms)}",
                concurrency="1")
        else:
            notes.append(f"{run.where}: TTFT not used: under load it includes queueing, and the model's "
                         "ttft_ms is an idle-server prefill (run with --max-concurrency 1 for it)")
    speculative = bool(run.spec_mode) or (run.accept_length is not None and run.accept_length > 1.0)
    if speculative:
        what = ", ".join([*([run.spec_mode] if run.spec_mode else []),
                          *([f"accept length {_fmt(run.accept_length)}: tokens committed a step"]
                            if run.accept_length is not None else [])])
        notes.append(f"{run.where}: speculative decoding ({what}): its TPOT and throughput are not plain "
                     "decode's, which these rows price, so only its TTFT is used (page 03 models "
                     "speculation)")
    if run.mean_tpot_ms is not None and not speculative:
        if run.mean_tpot_ms == 0 and mean_out <= 1:
            notes.append(f"{run.where}: TPOT not used: one output token per request")
        elif idle:
            _require_positive(run, run.mean_tpot_ms, run.tpot_label)
            add("tpot_ms", run.mean_tpot_ms, f"{run.tpot_label} {_fmt(run.mean_tpot_ms)}", concurrency="1")
        elif all_at_once:
            notes.append(f"{run.where}: TPOT not used: every request was sent at t = 0 with no "
                         "concurrency cap, an offline run rather than an online steady state")
        elif not (run.rate_known or run.concurrency_known):
            notes.append(f"{run.where}: TPOT not used: the load is not in the text (paste the "
                         "'Traffic request rate:' and 'Maximum request concurrency:' lines too)")
        else:
            _require_positive(run, run.mean_tpot_ms, run.tpot_label)
            cells = {}
            if run.rate is not None and math.isfinite(run.rate):
                cells["qps"] = _fmt(run.rate)
            if run.concurrency is not None:
                cells["concurrency"] = _fmt(run.concurrency)
            if not cells:
                notes.append(f"{run.where}: TPOT not used: neither a finite request rate nor a "
                             "concurrency cap is stated")
            else:
                if "qps" in cells and "concurrency" in cells:
                    notes.append(f"{run.where}: both a request rate and a concurrency cap: the model "
                                 "runs the row at the rate (the cap binds only if the server falls behind)")
                add("tpot_ms", run.mean_tpot_ms, f"{run.tpot_label} {_fmt(run.mean_tpot_ms)}", **cells)
    if "itl" in run.tpot_label.lower() and any(r["kind"] == "tpot_ms" for r in rows):
        notes.append(f"{run.where}: the output has no TPOT; its mean ITL (time between tokens over "
                     "all tokens) stands for TPOT, the same when every request has the same length")
    if all_at_once and not single and not speculative:
        tps = _require_positive(run, run.output_tps, run.tps_label)
        add("offline_tok_s", tps, f"{run.tps_label} {_fmt(tps)}", qps="inf",
            **({"batch": _fmt(run.max_batch)} if run.max_batch else {}))
    elif run.output_tps is not None and not single and (run.rate_known or run.concurrency_known):
        notes.append(f"{run.where}: output throughput not used as offline_tok_s: "
                     + ("the text does not say whether a concurrency cap was set (paste the "
                        "'Maximum request concurrency:' line too)"
                        if run.rate_known and run.rate is not None and math.isinf(run.rate)
                        and not run.concurrency_known else "the requests were not all queued at t = 0"))
    if not rows:
        notes.append(f"{run.where}: no row the model can express")
    return rows, notes


# ---- text blocks: vllm bench serve, sglang.bench_serving ----

_SERVING_TITLE = re.compile(r"=+ *Serving Benchmark Result *=+")
_PREFIXED_TITLE = re.compile(r"([^=]{1,40}?)=+ *Serving Benchmark Result *=+\s*")
_RULE = re.compile(r"={10,}")
#: A result line of vLLM's / SGLang's serving benchmark, which a paste may carry without its title.
_RESULT_LINE = re.compile(r"(Successful requests|Request throughput \(req/s\)|Mean TTFT \(ms\)|"
                          r"Mean TPOT \(ms\)|Output token throughput \(tok/s\))\s*:")
_SECTION = re.compile(r"-{3,}\s*[A-Za-z][^:]*?\s*-{3,}")
_LABEL = re.compile(r"([^:]{1,100}?)\s*:\s*(.*?)")
_STAT = re.compile(r"(Mean|Median|Std|P\d+(?:\.\d+)?|Max) (TTFT|TPOT|ITL|E2EL|E2E Latency) \(([^)]*)\)")
_UNIT = re.compile(r"(.*?)\s*\(([^)]*)\)")

# label -> (key, parser): "int", "num", "rate", "conc", "str"
_SERVING_LABELS: dict[str, tuple[str, str]] = {
    "Successful requests": ("completed", "int"),
    "Failed requests": ("failed", "int"),
    "Benchmark duration (s)": ("duration", "num"),
    "Total input tokens": ("total_in", "int"),
    "Total generated tokens": ("total_out", "int"),
    "Total generated tokens (retokenized)": ("total_out_retok", "int"),
    "Request throughput (req/s)": ("req_tput", "num"),
    "Input token throughput (tok/s)": ("input_tps", "num"),
    "Output token throughput (tok/s)": ("output_tps", "num"),
    "Total Token throughput (tok/s)": ("total_tps", "num"),
    "Total token throughput (tok/s)": ("total_tps", "num"),
    "Maximum request concurrency": ("concurrency", "conc"),
    "Max request concurrency": ("concurrency", "conc"),
    "Request rate configured (RPS)": ("rate", "rate"),
    "Traffic request rate": ("rate", "rate"),
    "Backend": ("backend", "str"),
    "Concurrency": ("avg_concurrency", "num"),
    "Burstiness factor": ("burstiness", "str"),
    "Accept length": ("accept_length", "num"),  # SGLang
    "Acceptance length": ("accept_length", "num"),  # vllm bench serve's Speculative Decoding section
}
_SERVING_UNITS = {m.group(1): full for full in _SERVING_LABELS if (m := _UNIT.fullmatch(full))}
_NO_RATE = ("trace", "n/a")  # SGLang replaying a trace's timestamps: no one request rate
_MAX_LINE = 2000  # longer lines are not the benchmarks' label lines (and would slow the regexes)


def _lines(text: str) -> list[str]:
    return [line.rstrip("\r") for line in text.split("\n")]


def _serving_value(kind: str, raw: str, where: str) -> object:
    s = raw.strip()
    if kind == "int":
        return _count(s, where)
    if kind == "num":
        return _number(s, where)
    if kind == "rate":
        if s.lower() in _NO_RATE:
            return None
        return math.inf if s.lower() == "inf" else _number(s, where)
    if kind == "conc":
        return None if s in ("None", "not set") else _count(s, where)
    return s


def _read_label_line(label: str, value: str, where: str, out: dict, raw: dict, unknown: list[str]) -> None:
    if label in _SERVING_LABELS:
        key, kind = _SERVING_LABELS[label]
        if value.strip() == "":
            raise BenchmarkParseError(f"{where}: {label!r} has no value (truncated?)")
        out[key] = _serving_value(kind, value, f"{where} ({label})")
        raw[label] = value.strip()
        return
    stat = _STAT.fullmatch(label)
    if stat:
        if stat.group(3) != "ms":
            raise BenchmarkParseError(
                f"{where}: {label!r} is in {stat.group(3)!r}; the engines print these in ms "
                f"('{stat.group(1)} {stat.group(2)} (ms):'), so this is not their output")
        if value.strip() == "":
            raise BenchmarkParseError(f"{where}: {label!r} has no value (truncated?)")
        out[f"{stat.group(1).lower()}_{stat.group(2).lower().replace(' ', '_')}"] = _number(
            value, f"{where} ({label})")
        raw[label] = value.strip()
        return
    unit = _UNIT.fullmatch(label)
    if unit and unit.group(1) in _SERVING_UNITS:
        raise BenchmarkParseError(f"{where}: {label!r} has the wrong unit; expected "
                                  f"{_SERVING_UNITS[unit.group(1)]!r}")
    unknown.append(label)


_NAMESPACE_KEYS = ("model", "dataset_name", "backend", "max_concurrency", "request_rate")


def _namespace(line: str) -> dict[str, str]:
    """key='value' / key=value pairs of an argparse Namespace line the benchmarks print first."""
    found = {}
    for key in _NAMESPACE_KEYS:
        m = re.search(rf"[(, ]{key}=('([^']{{0,300}})'|[\w.+-]{{1,40}})", line)
        if m:
            found[key] = m.group(2) if m.group(2) is not None else m.group(1)
    return found


def _serving_engine(backend: str, harness: str) -> str:
    b = backend.lower()
    server = ("SGLang" if b.startswith("sglang") else "TensorRT-LLM" if b in ("trt", "tensorrt-llm")
              else "LMDeploy" if b.startswith("lmdeploy") else "vLLM" if b.startswith("vllm")
              else "")
    if not server:
        server = "vLLM" if harness == "vllm bench serve" and b in ("", "openai", "openai-chat") else (
            "SGLang" if harness == "sglang.bench_serving" and not b else "an OpenAI-compatible server")
    return f"{server} ({harness}{', backend ' + backend if backend else ''})"


def _strip_prefix(lines: list[str]) -> tuple[list[str], str]:
    """The lines without the prefix a log or a shell comment put before the result block's title
    ("# ", "INFO: "), removed from every line that has it; and that prefix ("" when none)."""
    for line in lines:
        if len(line) > _MAX_LINE:
            continue
        m = _PREFIXED_TITLE.fullmatch(line)
        if m and m.group(1).strip():
            prefix = m.group(1)
            return [ln[len(prefix):] if ln.startswith(prefix) else ln for ln in lines], prefix
        if m or _SERVING_TITLE.fullmatch(line.strip()):
            break
    return lines, ""


def _parse_serving_text(text: str, fmt: str) -> tuple[list[_Run], list[str]]:
    lines, prefix = _strip_prefix(_lines(text))
    harness = "vllm bench serve" if fmt == "vllm-summary" else "sglang.bench_serving"
    runs: list[_Run] = []
    notes: list[str] = [f"the prefix {prefix!r} before each line was removed"] if prefix else []
    context_start = 0
    i = 0
    while i < len(lines):
        if not _SERVING_TITLE.fullmatch(lines[i].strip()):
            i += 1
            continue
        start = i
        if len(runs) >= MAX_RECORDS:
            raise BenchmarkParseError(f"more than {MAX_RECORDS} result blocks")
        # Context printed before the block: the traffic lines and the argparse Namespace.
        before: dict[str, object] = {}
        ns: dict[str, str] = {}
        raw: dict[str, str] = {}
        ramp = False
        for j in range(context_start, start):
            s = lines[j].strip()
            if s.startswith("Traffic ramp-up strategy:"):
                ramp = True
            if "Namespace(" in s:
                ns.update(_namespace(s))
                continue
            m = _LABEL.fullmatch(s) if len(s) <= _MAX_LINE else None
            if m and m.group(1) in ("Traffic request rate", "Maximum request concurrency"):
                key, kind = _SERVING_LABELS[m.group(1)]
                before[key] = _serving_value(kind, m.group(2), f"line {j + 1} ({m.group(1)})")
                raw[m.group(1)] = m.group(2).strip()
        values: dict[str, object] = {}
        unknown: list[str] = []
        i += 1
        closed = False
        while i < len(lines):
            s = lines[i].strip()
            where = f"line {i + 1}"
            if _RULE.fullmatch(s):
                closed = True
                break
            if _SERVING_TITLE.fullmatch(s):
                break
            if len(s) > _MAX_LINE:
                raise BenchmarkParseError(f"{where}: a {len(s):,}-character line inside the result block "
                                          f"that starts on line {start + 1}")
            if s == "" or _SECTION.fullmatch(s):
                i += 1
                continue
            m = _LABEL.fullmatch(s)
            if not m:
                raise BenchmarkParseError(f"{where}: cannot read {s[:60]!r} inside the result block "
                                          f"that starts on line {start + 1} (expected 'Label: value')")
            _read_label_line(m.group(1).strip(), m.group(2), where, values, raw, unknown)
            i += 1
        if not closed:
            raise BenchmarkParseError(f"line {start + 1}: the 'Serving Benchmark Result' block starting "
                                      "here has no closing '=====' line (truncated?)")
        where = f"block at line {start + 1}"
        for key, label in (("completed", "Successful requests"), ("total_in", "Total input tokens"),
                           ("total_out", "Total generated tokens")):
            if key not in values:
                raise BenchmarkParseError(f"{where}: {label!r} is missing from the block")
        backend = str(values.get("backend") or ns.get("backend") or "")
        run = _Run(fmt=fmt, where=where, engine=_serving_engine(backend, harness),
                   completed=int(values["completed"]), total_in=int(values["total_in"]),
                   total_out=int(values["total_out"]), raw=raw)
        run.output_tps = values.get("output_tps")  # type: ignore[assignment]
        run.mean_ttft_ms = values.get("mean_ttft")  # type: ignore[assignment]
        run.accept_length = values.get("accept_length")  # type: ignore[assignment]
        if "mean_tpot" in values:
            run.mean_tpot_ms = values["mean_tpot"]  # type: ignore[assignment]
        elif "mean_itl" in values:
            run.mean_tpot_ms, run.tpot_label = values["mean_itl"], "Mean ITL (ms)"  # type: ignore[assignment]
        else:
            run.notes.append("no 'Mean TPOT (ms)' or 'Mean ITL (ms)' line")
        if run.mean_ttft_ms is None:
            run.notes.append("no 'Mean TTFT (ms)' line")
        for key in ("rate", "concurrency"):
            if key in values or key in before:
                val = values[key] if key in values else before[key]
                if key == "rate" and val is None:
                    run.notes.append("the requests followed a trace's timestamps: no one request rate")
                    continue
                setattr(run, key, val)
                setattr(run, f"{key}_known", True)
        in_block = [k for k in ("rate", "concurrency") if k in values]
        if ramp:
            run.rate, run.rate_known = None, False
            run.concurrency_known = False
            run.notes.append("a ramp-up run (the request rate changes during it): no load to give the rows")
        elif fmt == "vllm-summary" and in_block:
            # vLLM versions that print the cap or the configured rate inside the block print each
            # only when it is set: the one absent was not (rate inf, no cap).
            if not run.rate_known:
                run.rate, run.rate_known = math.inf, True
            if not run.concurrency_known:
                run.concurrency, run.concurrency_known = None, True
        if run.rate_known and not run.concurrency_known and "max_concurrency" in ns:
            mc = ns["max_concurrency"]
            run.concurrency = None if mc == "None" else _count(mc, f"{where} (Namespace max_concurrency)")
            run.concurrency_known = True
        elif run.rate_known and not run.concurrency_known and not ramp and (
                (ns and "max_concurrency" not in ns)
                or (fmt == "sglang-summary" and "backend" in values)):
            # A version before the concurrency cap (2024): its argparse Namespace has no
            # max_concurrency, or its SGLang block, which prints 'Max request concurrency' beside
            # 'Backend' since the cap came, has none: there was no cap.
            run.concurrency, run.concurrency_known = None, True
            run.notes.append("no concurrency cap: this version of the benchmark predates it ("
                             + ("its Namespace has no max_concurrency" if ns and "max_concurrency" not in ns
                                else "its block has no 'Max request concurrency' line") + ")")
        run.model = ns.get("model", "")
        ds = ns.get("dataset_name", "")
        run.workload = "sharegpt" if ds == "sharegpt" else "random"
        if run.workload == "random":
            run.notes.append("prompt/output lengths are means over the requests (the summary does not "
                             "say whether every request had the same length)")
        if unknown:
            names = sorted(set(unknown))
            run.notes.append("ignored lines: " + ", ".join(repr(u) for u in names[:_MAX_NOTE_NAMES])
                             + (" ..." if len(names) > _MAX_NOTE_NAMES else ""))
        runs.append(run)
        context_start = i + 1
        i += 1
    if not runs:
        raise BenchmarkParseError("no '============ Serving Benchmark Result ============' block found")
    return runs, notes


# ---- trtllm-bench throughput report ----

_TRT_SECTION = re.compile(r"= ([A-Za-z][A-Za-z +/()-]*?)\s*")
_TRT_AL_AVERAGE = re.compile(r"\[AL\]\s*AVERAGE\s*:\s*(\S+)", re.IGNORECASE)
_TRT_LABELS: dict[str, tuple[str, str]] = {
    "Model": ("model", "str"),
    "TensorRT-LLM Version": ("version", "str"),
    "TensorRT LLM Version": ("version", "str"),
    "Dtype": ("dtype", "str"),
    "KV Cache Dtype": ("kv_dtype", "str"),
    "Quantization": ("quant", "str"),
    "TP Size": ("tp", "int"),
    "PP Size": ("pp", "int"),
    "EP Size": ("ep", "str"),
    "Max Runtime Batch Size": ("max_batch", "int"),
    "Max Runtime Tokens": ("max_tokens", "int"),
    "Scheduling Policy": ("policy", "str"),
    "Number of requests": ("requests", "int"),
    "Number of concurrent requests": ("avg_concurrency", "num"),
    "Average Input Length (tokens)": ("avg_in", "num"),
    "Average Output Length (tokens)": ("avg_out", "num"),
    "Request Throughput (req/sec)": ("req_tput", "num"),
    "Total Output Throughput (tokens/sec)": ("output_tps", "num"),
    "Token Throughput (tokens/sec)": ("legacy_tps", "num"),
    "Total Token Throughput (tokens/sec)": ("total_tps", "num"),
    "Total Latency (ms)": ("total_latency_ms", "num"),
    "Average request latency (ms)": ("avg_latency_ms", "num"),
    "Per User Output Throughput [w/ ctx] (tps/user)": ("per_user_tps", "num"),
    "Per User Output Throughput (tps/user)": ("per_user_tps", "num"),
    "Per GPU Output Throughput (tps/gpu)": ("per_gpu_tps", "num"),
    # the units as TensorRT-LLM's own docs print them (perf-benchmarking.md's sample report)
    "Per User Output Throughput [w/ ctx] (tokens/sec/user)": ("per_user_tps", "num"),
    "Per User Output Throughput (tokens/sec/user)": ("per_user_tps", "num"),
    "Per GPU Output Throughput (tokens/sec/gpu)": ("per_gpu_tps", "num"),
    "Per User Output Speed (tokens/sec/user)": ("per_user_speed", "num"),
    "Average time-to-first-token [TTFT] (ms)": ("avg_ttft_ms", "num"),
    "Average time-per-output-token [TPOT] (ms)": ("avg_tpot_ms", "num"),
    "Per User Output Speed (tps/user)": ("per_user_speed", "num"),
}
_TRT_UNITS: dict[str, str] = {}
for _full in _TRT_LABELS:  # label -> its unit(s) as printed, for the wrong-unit message
    if _m := _UNIT.fullmatch(_full):
        _TRT_UNITS[_m.group(1)] = (_TRT_UNITS[_m.group(1)] + "' or '" + _full) if _m.group(1) in _TRT_UNITS \
            else _full
#: At most this many requests in flight on average, or a runtime batch of one: a sequential run
#: (``--concurrency 1``, NVIDIA's min-latency recipe), whose TTFT and TPOT are an idle server's.
_TRT_SEQUENTIAL_CONCURRENCY = 1.05
_TRT_WEIGHTS = {"fp8": "fp8", "fp8_block_scales": "fp8", "nvfp4": "nvfp4", "w4a16_awq": "int4",
                "w4a16": "int4", "w4a16_gptq": "int4", "w8a16": "int8", "w4a8_mxfp4_fp8": "mxfp4",
                "w4a16_mxfp4": "mxfp4", "w4a8_mxfp4_mxfp8": "mxfp4"}
_TRT_NONE = ("none", "null", "", "auto")


def _parse_trtllm(text: str) -> tuple[list[_Run], list[str]]:
    lines = _lines(text)
    values: dict[str, object] = {}
    lines_of: dict[str, int] = {}
    raw: dict[str, str] = {}
    unknown: list[str] = []
    section = ""
    perf_line = None
    machine = ""
    sections: set[str] = set()
    for n, line in enumerate(lines, start=1):
        s = line.strip()
        if len(s) > _MAX_LINE:
            continue
        sec = _TRT_SECTION.fullmatch(s)
        if sec and not s.startswith("=="):
            section = sec.group(1).strip().upper()
            sections.add(section)
            if section == "PERFORMANCE OVERVIEW":
                if perf_line is not None:
                    raise BenchmarkParseError(f"line {n}: a second PERFORMANCE OVERVIEW (paste one "
                                              "trtllm-bench report at a time)")
                perf_line = n
            continue
        if section.startswith("DECODING STATISTICS"):  # speculative decoding (MTP, Eagle, a draft model)
            al = _TRT_AL_AVERAGE.fullmatch(s)
            if al:  # not a number: the section alone says it was speculative
                with contextlib.suppress(BenchmarkParseError):
                    values["accept_length"] = _number(al.group(1), f"line {n} ([AL] AVERAGE)")
            continue
        if not section or s == "" or s.startswith(("[", "-", "=")):
            continue
        if section == "MACHINE DETAILS" and not machine:
            machine = "" if s.startswith("No GPU info") else s.split(",")[0].strip()
            continue
        m = _LABEL.fullmatch(s)
        if not m:
            continue
        label, value = m.group(1).strip(), m.group(2)
        where = f"line {n} ({label})"
        if label in _TRT_LABELS:
            key, kind = _TRT_LABELS[label]
            if value.strip() == "":
                raise BenchmarkParseError(f"line {n}: {label!r} has no value (truncated?)")
            values[key] = (_count(value, where) if kind == "int" else _number(value, where)
                           if kind == "num" else value.strip())
            lines_of[key] = n
            raw[label] = value.strip()
            continue
        unit = _UNIT.fullmatch(label)
        if unit and unit.group(1) in _TRT_UNITS:
            raise BenchmarkParseError(f"line {n}: {label!r} has the wrong unit; expected "
                                      f"{_TRT_UNITS[unit.group(1)]!r}")
        unknown.append(label)
    if perf_line is None:
        raise BenchmarkParseError("no '= PERFORMANCE OVERVIEW' section: not a trtllm-bench throughput "
                                  "report (the latency subcommand's report is not supported)")
    where = f"report at line {perf_line}"
    missing = [label for label, key in (("Number of requests", "requests"),
                                        ("Average Input Length (tokens)", "avg_in"),
                                        ("Average Output Length (tokens)", "avg_out"))
               if key not in values]
    if "output_tps" not in values and "legacy_tps" not in values:
        missing.append("Total Output Throughput (tokens/sec)")
    if missing:
        raise BenchmarkParseError(f"{where}: missing {', '.join(repr(m) for m in missing)} (truncated?)")
    requests = int(values["requests"])  # type: ignore[arg-type]
    avg_in, avg_out = float(values["avg_in"]), float(values["avg_out"])  # type: ignore[arg-type]
    version = str(values.get("version", "")).strip()
    backend = ("PyTorch backend" if "PYTORCH BACKEND" in sections
               else "TRT engine" if "ENGINE DETAILS" in sections else "backend not stated")
    run = _Run(fmt="trtllm-bench", where=where,
               engine=f"TensorRT-LLM{' ' + version if version else ''} (trtllm-bench throughput, {backend})",
               completed=requests, total_in=round(avg_in * requests), total_out=round(avg_out * requests),
               raw=raw)
    spec = sorted(sec for sec in sections if sec.startswith("DECODING STATISTICS"))
    if spec:  # e.g. "DECODING STATISTICS (MTP)": its throughput is not plain decode's
        run.spec_mode = f"trtllm-bench's {spec[0]} section"
        run.accept_length = values.get("accept_length")  # type: ignore[assignment]
    run.lengths_note = (f"Number of requests {requests}; Average Input Length (tokens) "
                        f"{raw['Average Input Length (tokens)']}; Average Output Length (tokens) "
                        f"{raw['Average Output Length (tokens)']}")
    if "output_tps" in values:
        run.output_tps = float(values["output_tps"])  # type: ignore[arg-type]
        run.tps_label = "Total Output Throughput (tokens/sec)"
    else:
        run.tps_label = "Token Throughput (tokens/sec)"
        legacy = float(values["legacy_tps"])  # type: ignore[arg-type]
        run.output_tps = legacy
        check = ""
        if "total_latency_ms" in values:
            derived = requests * avg_out / (float(values["total_latency_ms"]) / 1e3)  # type: ignore[arg-type]
            check = f" (requests x mean output / total latency = {derived:.6g})"
        run.notes.append("'Token Throughput (tokens/sec)' (TensorRT-LLM 0.17's label) read as output "
                         "tokens/s" + check)
    avg_conc = float(values["avg_concurrency"]) if "avg_concurrency" in values else None  # type: ignore[arg-type]
    # the average concurrency decides; a runtime batch of one only where that is not printed (a run
    # with --max_batch_size 1 and no --concurrency queues every request: its TTFT is the queue's)
    sequential = (avg_conc <= _TRT_SEQUENTIAL_CONCURRENCY if avg_conc is not None
                  else values.get("max_batch") == 1)
    if sequential:  # one request at a time: an idle server's TTFT and TPOT, and no offline row
        run.rate, run.rate_known = None, True
        run.concurrency, run.concurrency_known = 1, True
        run.notes.append("one request at a time ("
                         + (f"average concurrency {_fmt(avg_conc)}" if avg_conc is not None
                            else "Max Runtime Batch Size 1, no average concurrency printed")
                         + "): read as a run at concurrency 1, not as every request queued at once")
        run.mean_ttft_ms = values.get("avg_ttft_ms")  # type: ignore[assignment]
        run.mean_tpot_ms = values.get("avg_tpot_ms")  # type: ignore[assignment]
        run.ttft_label = "Average time-to-first-token [TTFT] (ms)"
        run.tpot_label = "Average time-per-output-token [TPOT] (ms)"
    else:
        run.rate, run.rate_known = math.inf, True
        run.concurrency, run.concurrency_known = None, True
        run.notes.append("trtllm-bench throughput queues every request at t = 0 (without --concurrency)")
    if "avg_concurrency" in values and not sequential:
        run.notes.append(f"average concurrency {_fmt(float(values['avg_concurrency']))} (the report does "  # type: ignore[arg-type]
                         "not print --concurrency): if the run capped it, it was not all at once, and the "
                         "offline row, priced at the batch the KV cache holds, does not describe it")
    if ("avg_ttft_ms" in values or "avg_tpot_ms" in values) and not sequential and requests > 1:
        run.notes.append("streaming TTFT/TPOT not used: measured with every request queued at once")
    if requests == 1:
        run.mean_ttft_ms = values.get("avg_ttft_ms")  # type: ignore[assignment]
        run.mean_tpot_ms = values.get("avg_tpot_ms")  # type: ignore[assignment]
        run.ttft_label = "Average time-to-first-token [TTFT] (ms)"
        run.tpot_label = "Average time-per-output-token [TPOT] (ms)"
    run.model = str(values.get("model", ""))
    run.gpu = machine
    tp = int(values.get("tp", 1))  # type: ignore[arg-type]
    pp = int(values.get("pp", 1))  # type: ignore[arg-type]
    run.gpus = max(1, tp * pp)
    if pp > 1:
        run.notes.append(f"gpus = TP {tp} x PP {pp}")
    if str(values.get("ep", "1")).strip() not in ("1", "None", ""):
        run.engine += f", EP {str(values['ep']).strip()}"  # priced with the experts whole per GPU
        run.notes.append(f"EP Size {values['ep']}: expert parallelism (the experts whole per GPU)")
    quant = str(values.get("quant", "")).strip().lower()
    dtype = str(values.get("dtype", "")).strip().lower()
    if quant in _TRT_WEIGHTS:
        run.weights = _TRT_WEIGHTS[quant]
    elif quant in _TRT_NONE and dtype in ("bfloat16", "float16", "bf16", "fp16"):
        run.weights = "bf16"
    elif quant not in _TRT_NONE:
        run.notes.append(f"Quantization {values.get('quant')!r} is not one of the app's precisions; "
                         "weights left blank")
    kvq = str(values.get("kv_dtype", "")).strip().lower()
    if kvq == "fp8":
        run.kv = "fp8"
    elif kvq not in _TRT_NONE and kvq not in ("bfloat16", "float16", "bf16", "fp16"):
        run.notes.append(f"KV Cache Dtype {values.get('kv_dtype')!r} not mapped; kv left blank")
    if "max_batch" in values and not sequential:
        run.max_batch = int(values["max_batch"])  # type: ignore[arg-type]
        run.notes.append(f"Max Runtime Batch Size {values['max_batch']}: the engine's cap on sequences at "
                         "once, the offline row's batch (at most what the KV cache holds)")
    run.workload = "random"
    if unknown:
        names = sorted(set(unknown))
        run.notes.append("ignored lines: " + ", ".join(repr(u) for u in names[:_MAX_NOTE_NAMES])
                         + (" ..." if len(names) > _MAX_NOTE_NAMES else ""))
    return [run], []


# ---- JSON: vllm --save-result, sglang JSONL ----


def _check_depth(text: str, first_line: int = 1) -> None:
    """Reject JSON nested deeper than MAX_JSON_DEPTH before json.loads sees it."""
    depth = 0
    in_string = escape = False
    line = first_line
    for ch in text:
        if ch == "\n":
            line += 1
        if in_string:
            if escape:
                escape = False
            elif ch == "\\":
                escape = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            if depth > MAX_JSON_DEPTH:
                raise BenchmarkParseError(f"line {line}: JSON nested deeper than {MAX_JSON_DEPTH} levels")
        elif ch in "]}":
            depth -= 1


def _loads(text: str, where: str, dupes: list[str]) -> object:
    try:
        return json.loads(text, object_pairs_hook=lambda items: _dedupe(items, dupes))
    except json.JSONDecodeError as exc:
        raise BenchmarkParseError(f"{where}: not valid JSON ({exc.msg} at column {exc.colno})") from None
    except (RecursionError, ValueError) as exc:
        raise BenchmarkParseError(f"{where}: not readable JSON ({exc})") from None


def _json_records(text: str) -> list[tuple[int, dict]]:
    """(first line, object) for one JSON object, or one object a line (JSONL)."""
    dupes: list[str] = []
    stripped = text.strip().lstrip("\ufeff")  # a byte-order mark (a file re-saved by Notepad)
    _check_depth(stripped)
    records: list[tuple[int, object]] = []
    try:
        records = [(1, json.loads(stripped, object_pairs_hook=lambda p: _dedupe(p, dupes)))]
    except json.JSONDecodeError as exc:
        if exc.msg != "Extra data":
            raise BenchmarkParseError(f"line {exc.lineno}: not valid JSON ({exc.msg} at column "
                                      f"{exc.colno})") from None
        for n, line in enumerate(_lines(text), start=1):
            if line.strip():
                if len(records) >= MAX_RECORDS:
                    raise BenchmarkParseError(f"more than {MAX_RECORDS} JSON records") from None
                records.append((n, _loads(line, f"line {n}", dupes)))
    except (RecursionError, ValueError) as exc:
        raise BenchmarkParseError(f"not readable JSON ({exc})") from None
    out = []
    for n, rec in records:
        if not isinstance(rec, dict):
            raise BenchmarkParseError(f"line {n}: the JSON is a {_type_name(rec)}; expected an object "
                                      "with the benchmark's result fields")
        out.append((n, rec))
    if dupes:
        out[0][1].setdefault("\0dupes", sorted(set(dupes)))
    return out


def _dedupe(items: list[tuple[str, object]], dupes: list[str]) -> dict:
    out: dict = {}
    for k, v in items:
        if k in out:
            dupes.append(k)
        out[k] = v
    return out


def _type_name(v: object) -> str:
    return {dict: "object", list: "list", str: "string", bool: "boolean", type(None): "null",
            int: "integer", float: "number"}.get(type(v), type(v).__name__)


def _field(rec: dict, key: str, kind: str, where: str, required: bool = True) -> object:
    """rec[key] checked: "int" (whole, >= 0), "num" (finite, >= 0), "rate" (number, inf, "inf"),
    "conc" (int > 0 or null), "str" (string or null)."""
    if key not in rec or (rec[key] is None and kind in ("int", "num")):
        if required:
            raise BenchmarkParseError(f"{where}: required field {key!r} is missing")
        return None
    v = rec[key]
    name = f"{where}: field {key!r}"
    if kind == "str":
        if v is not None and not isinstance(v, str):
            raise BenchmarkParseError(f"{name} is a {_type_name(v)}; expected a string")
        return v or ""
    if kind == "conc":
        if v is None:
            return None
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise BenchmarkParseError(f"{name} = {str(v)[:40]!r} ({_type_name(v)}); expected a whole "
                                      "number >= 1 or null")
        return v
    if kind == "rate":
        if isinstance(v, str):
            if v.strip().lower() == "inf":
                return math.inf
            if v.strip().lower() in _NO_RATE:
                return None
            return _number(v, name)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or math.isnan(v) or v <= 0:
            raise BenchmarkParseError(f"{name} = {str(v)[:40]!r} ({_type_name(v)}); expected a number "
                                      "> 0 or \"inf\"")
        return float(v)
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise BenchmarkParseError(f"{name} is a {_type_name(v)} ({str(v)[:40]!r}); expected a number")
    if not math.isfinite(v):
        raise BenchmarkParseError(f"{name} = {v!r} is not a finite number")
    if v < 0:
        raise BenchmarkParseError(f"{name} = {v!r} is negative")
    if kind == "int":
        if isinstance(v, float) and not v.is_integer():
            raise BenchmarkParseError(f"{name} = {v!r} is not a whole number")
        return int(v)
    return float(v)


_VLLM_KNOWN = {
    "date", "endpoint_type", "backend", "label", "model_id", "tokenizer_id", "num_prompts",
    "request_rate", "burstiness", "max_concurrency", "duration", "completed", "failed",
    "total_input_tokens", "total_output_tokens", "request_throughput", "request_goodput",
    "request_goodput:", "output_throughput", "total_token_throughput", "input_lens", "output_lens",
    "ttfts", "itls", "latencies", "start_times", "queue_times", "generated_texts", "errors",
    "max_output_tokens_per_s", "max_concurrent_requests", "rtfx", "ramp_up_strategy",
    "spec_decode_acceptance_length", "spec_decode_acceptance_rate", "spec_decode_num_drafts",
    "spec_decode_draft_tokens", "spec_decode_accepted_tokens", "spec_decode_per_position_acceptance_rates",
    "ramp_up_start_rps", "ramp_up_end_rps", "rps_change_events",
}
_SGLANG_KNOWN = {
    "backend", "dataset_name", "request_rate", "max_concurrency", "sharegpt_output_len",
    "random_input_len", "random_output_len", "random_range_ratio", "duration", "completed",
    "total_input_tokens", "total_output_tokens", "total_output_tokens_retokenized",
    "request_throughput", "input_throughput", "output_throughput", "concurrency", "accept_length",
    "input_lens", "output_lens", "ttfts", "itls", "generated_texts", "errors", "model_id", "tokenizer_id",
    "total_throughput", "tag", "server_info", "total_input_text_tokens", "total_input_vision_tokens",
    "max_output_tokens_per_s", "max_concurrent_requests",
}
_STAT_KEY = re.compile(r"(mean|median|std|p\d+(\.\d+)?|max)_(ttft|tpot|itl|e2el|e2e_latency)_ms")
_SGLANG_MARKERS = {"dataset_name", "input_throughput", "total_output_tokens_retokenized",
                   "mean_e2e_latency_ms", "random_range_ratio", "sharegpt_output_len", "accept_length"}
_VLLM_MARKERS = {"date", "model_id", "num_prompts", "mean_e2el_ms", "total_token_throughput",
                 "endpoint_type", "burstiness", "tokenizer_id"}


def _json_flavour(rec: dict) -> str | None:
    keys = set(rec)
    if keys & {"model_id", "tokenizer_id", "date"}:  # vLLM's --save-result header, 2024 on (then with
        return "vllm-json"  # 'input_throughput', which SGLang's JSONL has too)
    if keys & _SGLANG_MARKERS:
        return "sglang-jsonl"
    if keys & _VLLM_MARKERS:
        return "vllm-json"
    return None


def _lens_equal(rec: dict, key: str, where: str) -> bool | None:
    v = rec.get(key)
    if not isinstance(v, list) or not v:
        return None
    if not all(isinstance(x, int) and not isinstance(x, bool) for x in v):
        raise BenchmarkParseError(f"{where}: field {key!r} must be a list of whole numbers")
    return min(v) == max(v)


def _run_from_json(n: int, rec: dict, fmt: str, count: int) -> _Run:
    where = f"record {count} (line {n})"
    for key in rec:
        if not isinstance(key, str):
            raise BenchmarkParseError(f"{where}: a non-string key")
    completed = _field(rec, "completed", "int", where)
    run = _Run(fmt=fmt, where=where, engine="",
               completed=completed, total_in=_field(rec, "total_input_tokens", "int", where),  # type: ignore[arg-type]
               total_out=_field(rec, "total_output_tokens", "int", where))  # type: ignore[arg-type]
    _field(rec, "duration", "num", where)
    run.output_tps = _field(rec, "output_throughput", "num", where)  # type: ignore[assignment]
    run.tps_label, run.ttft_label = "output_throughput", "mean_ttft_ms"
    run.mean_ttft_ms = _field(rec, "mean_ttft_ms", "num", where)  # type: ignore[assignment]
    run.accept_length = _field(rec, "accept_length", "num", where, required=False)  # type: ignore[assignment]
    if run.accept_length is None:  # vllm bench serve --save-result with a speculative server
        run.accept_length = _field(rec, "spec_decode_acceptance_length", "num", where,  # type: ignore[assignment]
                                   required=False)
    tpot = _field(rec, "mean_tpot_ms", "num", where, required=False)
    if tpot is None:
        itl = _field(rec, "mean_itl_ms", "num", where, required=False)
        if itl is None:
            raise BenchmarkParseError(f"{where}: required field 'mean_tpot_ms' (or 'mean_itl_ms') is missing")
        run.mean_tpot_ms, run.tpot_label = itl, "mean_itl_ms"  # type: ignore[assignment]
    else:
        run.mean_tpot_ms, run.tpot_label = tpot, "mean_tpot_ms"  # type: ignore[assignment]
    if "ramp_up_strategy" in rec:
        run.notes.append("a ramp-up run (the request rate changes during it): no load to give the rows")
    elif "request_rate" in rec:
        rate = _field(rec, "request_rate", "rate", where)
        if rate is None:
            run.notes.append("the requests followed a trace's timestamps: no one request rate")
        else:
            run.rate, run.rate_known = rate, True  # type: ignore[assignment]
    if "ramp_up_strategy" in rec:
        pass
    elif "max_concurrency" in rec:
        run.concurrency = _field(rec, "max_concurrency", "conc", where)  # type: ignore[assignment]
        run.concurrency_known = True
    elif run.rate_known and fmt == "sglang-jsonl":
        run.concurrency, run.concurrency_known = None, True  # SGLang before --max-concurrency
    backend = _field(rec, "backend", "str", where, required=False) or ""
    harness = "vllm bench serve" if fmt == "vllm-json" else "sglang.bench_serving"
    run.engine = _serving_engine(str(backend), harness)
    run.model = str(_field(rec, "model_id", "str", where, required=False) or "")
    if fmt == "sglang-jsonl":
        _server_info(run, rec.get("server_info"))
        ds = str(_field(rec, "dataset_name", "str", where, required=False) or "")
        ratio = _field(rec, "random_range_ratio", "num", where, required=False)
        run.workload = ("sharegpt" if ds == "sharegpt" else "fixed" if ds == "random" and ratio == 1.0
                        else "random")
    eq_in, eq_out = _lens_equal(rec, "input_lens", where), _lens_equal(rec, "output_lens", where)
    if eq_in is not None and eq_out is not None and fmt == "vllm-json":
        run.workload = "fixed" if eq_in and eq_out else "random"
    known = _VLLM_KNOWN if fmt == "vllm-json" else _SGLANG_KNOWN
    unknown = sorted(k for k in rec if k not in known and not _STAT_KEY.fullmatch(k) and k != "\0dupes")
    if unknown:
        run.notes.append("ignored fields: " + ", ".join(repr(u) for u in unknown[:_MAX_NOTE_NAMES])
                         + (" ..." if len(unknown) > _MAX_NOTE_NAMES else ""))
    if rec.get("\0dupes"):
        run.notes.append("duplicated keys (the last value was used): " + ", ".join(rec["\0dupes"]))
    return run


#: SGLang's ``quantization`` values and the weight precision each stores.
_SERVER_QUANT = {"fp8": "fp8", "w8a8_fp8": "fp8", "modelopt_fp8": "fp8", "awq": "int4", "awq_marlin": "int4",
                 "gptq": "int4", "gptq_marlin": "int4", "mxfp4": "mxfp4", "modelopt_fp4": "nvfp4"}


def _server_info(run: _Run, info: object) -> None:
    """What newer SGLang records of the server (its /get_server_info answer, the server's
    arguments): model path, TP size, quantization, KV cache dtype, version. Read only where the
    types are what SGLang writes; anything else is left alone."""
    if not isinstance(info, dict):
        return
    used = []
    if isinstance(info.get("model_path"), str) and not run.model:
        run.model = info["model_path"]
        used.append(f"model_path {run.model}")
    tp = info.get("tp_size")
    if isinstance(tp, int) and not isinstance(tp, bool) and tp >= 1:
        run.gpus = tp
        used.append(f"tp_size {tp}")
    quant = info.get("quantization")
    weights = _SERVER_QUANT.get(quant.lower()) if isinstance(quant, str) else None
    if weights:
        run.weights = weights
        used.append(f"quantization {quant}")
    kv = info.get("kv_cache_dtype")
    if isinstance(kv, str) and kv.lower().startswith("fp8"):
        run.kv = "fp8"
        used.append(f"kv_cache_dtype {kv}")
    version = info.get("version")
    if isinstance(version, str) and len(version) < 40 and run.engine.startswith("SGLang ("):
        run.engine = f"SGLang {version} (" + run.engine[len("SGLang ("):]
        used.append(f"version {version}")
    if used:
        run.notes.append("from server_info: " + "; ".join(used))


def _parse_json(text: str, fmt: str | None) -> tuple[str, list[_Run], list[str]]:
    records = _json_records(text)
    if fmt is None:
        flavours = {_json_flavour(r) for _, r in records} - {None}
        if len(flavours) > 1:
            raise BenchmarkParseError("the JSON records mix vLLM and SGLang fields; paste one at a time")
        fmt = flavours.pop() if flavours else ("vllm-json" if len(records) == 1 else "sglang-jsonl")
    runs = [_run_from_json(n, rec, fmt, i) for i, (n, rec) in enumerate(records, start=1)]
    return fmt, runs, []


# ---- CSV in measured.csv's columns ----


def _parse_csv(text: str) -> tuple[list[dict[str, str]], list[str]]:
    notes: list[str] = []
    try:
        reader = csv.reader(io.StringIO(text.lstrip("\ufeff")))
        header = next(reader, None)
        if not header:
            raise BenchmarkParseError("line 1: no header line (the columns of measured.csv)")
        names = [h.strip() for h in header]
        if "kind" not in names or "value" not in names:
            raise BenchmarkParseError("line 1: the header must name at least the columns 'kind' and "
                                      f"'value' (measured.csv's columns: {', '.join(COLUMNS)})")
        extra = sorted({h for h in names if h not in COLUMNS})
        if extra:
            notes.append("ignored columns: " + ", ".join(repr(e[:40]) for e in extra[:_MAX_NOTE_NAMES]))
        if len(set(names)) != len(names):
            notes.append("a column is named twice; its last cell was used")
        rows: list[dict[str, str]] = []
        for cells in reader:
            n = reader.line_num
            if not any(c.strip() for c in cells):
                continue
            if len(rows) >= MAX_ROWS:
                raise BenchmarkParseError(f"more than {MAX_ROWS} rows")
            if len(cells) > len(names):
                raise BenchmarkParseError(f"line {n}: {len(cells)} cells but the header has "
                                          f"{len(names)} columns")
            row = {c: "" for c in COLUMNS}
            for name, cell in zip(names, cells, strict=False):
                if name in row:
                    row[name] = cell.strip()
            kind = row["kind"]
            if kind not in UNITS:
                raise BenchmarkParseError(f"line {n}: kind = {kind[:40]!r} is not one of "
                                          f"{', '.join(UNITS)}")
            if row["unit"] and row["unit"] != UNITS[kind]:
                raise BenchmarkParseError(f"line {n}: unit {row['unit'][:20]!r} does not match kind "
                                          f"{kind!r}, which is in {UNITS[kind]!r}")
            row["unit"] = UNITS[kind]
            row["id"] = row["id"] or f"csv-{len(rows) + 1:02d}"
            row["source"] = row["source"] or "typed (csv)"
            try:
                parse_rows(rows_to_csv([row]))
            except RowError as exc:
                raise BenchmarkParseError(f"line {n}: {exc}") from None
            rows.append(row)
    except csv.Error as exc:
        raise BenchmarkParseError(f"not readable as CSV: {exc}") from None
    if not rows:
        raise BenchmarkParseError("no rows under the header")
    ids = [r["id"] for r in rows]
    if len(set(ids)) != len(ids):
        notes.append("some ids repeat; each row still counts once")
    return rows, notes


# ---- detection and the entry point ----


def detect_format(text: str) -> str:
    """The format of ``text`` (one of FORMATS), or BenchmarkParseError listing the formats read."""
    s = text.lstrip("\ufeff \t\r\n")
    if "\0" in text:
        raise BenchmarkParseError("the input contains NUL bytes (binary data, not a benchmark's text "
                                  "output). " + _formats_line())
    if s.startswith("{"):
        fmt, _, _ = _parse_json(text, None)
        return fmt
    lines = _lines(s)
    for line in lines:
        if len(line) <= _MAX_LINE and (_SERVING_TITLE.fullmatch(line.strip())
                                       or _PREFIXED_TITLE.fullmatch(line)):
            return _serving_flavour(text)
    if any(line.strip() == "= PERFORMANCE OVERVIEW" for line in lines):
        return "trtllm-bench"
    if s.startswith("["):
        raise BenchmarkParseError("line 1: a JSON list; expected the object `vllm bench serve "
                                  "--save-result` writes or SGLang's JSON lines (vLLM's .pytorch.json "
                                  "file is not read)")
    first = next((line for line in lines if line.strip()), "")
    names = [c.strip().lower() for c in first.split(",")]
    if "kind" in names and "value" in names:
        return "csv"
    if any(len(line) <= _MAX_LINE and _RESULT_LINE.match(line.strip()) for line in lines):
        raise BenchmarkParseError(
            "these look like a serving benchmark's result lines without their title line. Paste the "
            "block from its first line on, '============ Serving Benchmark Result ============' "
            "(vllm bench serve, sglang.bench_serving): the title says which benchmark wrote it. "
            + _formats_line())
    raise BenchmarkParseError("unknown format. " + _formats_line())


def _serving_flavour(text: str) -> str:
    # not 'Input token throughput (tok/s)': vLLM's 2024 block printed it too, and has no 'Backend:'
    sglang_labels = ("Backend:", "Max request concurrency:", "Mean E2E Latency (ms):",
                     "Total generated tokens (retokenized):")
    for line in _strip_prefix(_lines(text))[0]:
        if line.strip().startswith(sglang_labels):
            return "sglang-summary"
    return "vllm-summary"


def _formats_line() -> str:
    """The formats read, for an error message the page shows as plain text (no markdown backticks)."""
    return "Formats read: " + "; ".join(f"{k} ({v})" for k, v in FORMATS.items()).replace("`", "")


def parse_benchmark(text: str, fmt: str | None = None) -> Parsed:
    """The rows a benchmark's output maps to (see the module docstring). ``fmt``: one of FORMATS to
    force a format; None detects it. Raises BenchmarkParseError (and nothing else) on bad input."""
    if not isinstance(text, str):
        raise BenchmarkParseError(f"expected text, got {type(text).__name__}")
    if len(text) > MAX_BYTES or len(text.encode("utf-8", "replace")) > MAX_BYTES:
        raise BenchmarkParseError(f"the input is larger than {MAX_BYTES:,} bytes")
    if fmt is not None and fmt not in FORMATS:
        raise BenchmarkParseError(f"format {str(fmt)[:40]!r} is not one of {', '.join(FORMATS)}")
    if not text.strip():
        raise BenchmarkParseError("the input is empty. " + _formats_line())
    try:
        return _parse(text, fmt)
    except BenchmarkParseError:
        raise
    except (RecursionError, MemoryError, ValueError, TypeError, KeyError, IndexError,
            AttributeError, OverflowError) as exc:  # a bug of ours; still the one error callers catch
        raise BenchmarkParseError(f"internal error while reading the input ({type(exc).__name__}: "
                                  f"{str(exc)[:200]})") from exc


#: Terminal colour and cursor codes a captured log may carry (``\x1b[32m``).
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def _parse(text: str, fmt: str | None) -> Parsed:
    # one line ending (a classic Mac's CR alone too) and no terminal codes: the labels are then the
    # engines' own
    text = _ANSI.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))
    if "\0" in text:
        raise BenchmarkParseError("the input contains NUL bytes (binary data, not a benchmark's text "
                                  "output). " + _formats_line())
    fmt = fmt or detect_format(text)
    notes: list[str] = []
    if fmt == "csv":
        rows, notes = _parse_csv(text)
        notes.insert(0, f"read {len(rows)} typed row(s)")
        return Parsed(fmt, tuple(rows), tuple(notes))
    if fmt in ("vllm-json", "sglang-jsonl"):
        if not text.lstrip("\ufeff \t\r\n").startswith("{"):
            raise BenchmarkParseError(f"line 1: {fmt} is JSON; the text does not start with '{{'")
        fmt, runs, notes = _parse_json(text, fmt)
    elif fmt in ("vllm-summary", "sglang-summary"):
        runs, notes = _parse_serving_text(text, fmt)
    else:
        runs, notes = _parse_trtllm(text)
    prefix = {"vllm-summary": "vllm-s", "vllm-json": "vllm-j", "sglang-summary": "sgl-s",
              "sglang-jsonl": "sgl-j", "trtllm-bench": "trt"}[fmt]
    rows: list[dict[str, str]] = []
    notes.append(f"read {len(runs)} run(s) as {fmt}")
    for i, run in enumerate(runs, start=1):
        run_rows, run_notes = _rows_for(run, prefix, i)
        rows.extend(run_rows)
        notes.extend(run_notes)
    if rows:
        try:
            parse_rows(rows_to_csv(rows))
        except RowError as exc:
            raise BenchmarkParseError(f"a row did not read back as measured.csv: {exc}") from None
    return Parsed(fmt, tuple(rows), tuple(notes))
