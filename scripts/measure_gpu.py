"""Measure the machine this runs on and write rows in measured.csv's schema (``sim.truth.COLUMNS``).

On a GPU box, from the repository root (PyTorch with CUDA installed; nothing is downloaded, the
weights are random):

    python scripts/measure_gpu.py --model llama-3.1-8b --dtype bf16 --out rows.csv
    python scripts/measure_gpu.py --model llama-3.1-8b --dtype bf16,fp8 --time-limit 300 --out rows.csv
    python scripts/measure_gpu.py --config path/to/config.json --dtype bf16 --out rows.csv

On a CPU (no PyTorch needed; numpy float32, a tiny Llama-style config, a few seconds):

    python scripts/measure_gpu.py --tiny

Paste or upload the CSV into the app's "Your measurements" panel, or read it with
``calib.parsers.parse_benchmark`` (format ``csv``) and ``sim.truth.parse_rows``.

What each row means (MEASURED.md section 1's kinds, the ones ``sim.truth.predict`` reads):

- ``gemm_tflops``: a dense ``(M x K) @ (K x N)`` matmul, 2MNK / time, at each ``--gemm-shapes`` shape;
  BF16 (``x @ w``) and, where ``torch.float8_e4m3fn`` and ``torch._scaled_mm`` exist, FP8 (per-tensor
  scales of 1, BF16 output). ``weights`` is the precision.
- ``hbm_tbps``: a device-to-device copy of ``--copy-gib`` GiB, (bytes read + bytes written) / time.
- ``ttft_ms``: one prompt of ``prompt_tokens`` through the model on an idle device (the forward
  pass that writes its KV cache and computes the last token's logits); no tokenizer, sampling,
  scheduler or HTTP, so an engine's TTFT sits above it.
- ``static_batch_tok_s``: a static batch of ``batch`` prompts of ``prompt_tokens`` run for
  ``output_tokens`` tokens: batch x output / (prefill time + (output - 1) x decode-step time). The
  prefill is measured in groups of k prompts (k x prompt <= ``--max-prefill-tokens``; time = batch / k
  x one group's time); the decode step is measured once, at the mean context prompt + output / 2, with
  a CUDA graph on CUDA (decode steps grow linearly with context, so the mean step is the step at the
  mean context). The notes give the step's milliseconds, FLOPs and bytes.

The model is Llama-style (RMSNorm, fused QKV with grouped-query attention, SwiGLU MLP, untied
LM head unless the config ties it), built from ``--model llama-3.1-8b`` (hidden 4096, intermediate
14336, 32 layers, 32 heads, 8 KV heads, vocab 128256), a HF ``--config`` config.json, or ``--tiny``.
RoPE is left out (elementwise, under 1 % of a step). The KV cache is BF16 (float32 on numpy); with
``--dtype fp8`` every linear layer but the LM head runs as an FP8 ``_scaled_mm``. Combinations
whose KV cache would not fit ``--max-kv-gib`` are skipped (said on stderr).

Timing: ``--warmup`` untimed runs, then the median of ``--repeats`` timed ones; torch.cuda.Event on
CUDA, time.perf_counter elsewhere. ``engine`` is ``measure_gpu.py (<backend>)``; ``gpu`` is the app's
preset name when the device matches one (``--gpu-name`` overrides it, default
``torch.cuda.get_device_name`` or "CPU").
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import io
import json
import math
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from calib.parsers import gpu_preset, model_preset  # noqa: E402
from sim.truth import COLUMNS, UNITS  # noqa: E402

GIB = 1024**3


# ---- the model's shapes ----


@dataclass(frozen=True)
class Config:
    name: str  # the app's model name when it is one of them ("" otherwise)
    hidden: int
    intermediate: int
    layers: int
    heads: int
    kv_heads: int
    vocab: int
    head_dim: int
    tied: bool = False
    eps: float = 1e-5

    @property
    def q_dim(self) -> int:
        return self.heads * self.head_dim

    @property
    def kv_dim(self) -> int:
        return self.kv_heads * self.head_dim


PRESETS = {"llama-3.1-8b": Config("Llama-3.1-8B", 4096, 14336, 32, 32, 8, 128256, 128)}
TINY = Config("", 64, 176, 2, 4, 2, 512, 16)


def config_from_json(text: str, name: str = "") -> Config:
    """A Llama-style Config from a HF config.json's text (raises ValueError naming what is wrong)."""
    raw = json.loads(text)
    if not isinstance(raw, dict):
        raise ValueError("config.json is not a JSON object")
    if "text_config" in raw and isinstance(raw["text_config"], dict):
        raw = raw["text_config"]
    for moe in ("num_local_experts", "num_experts", "n_routed_experts"):
        if raw.get(moe):
            raise ValueError(f"{moe} = {raw[moe]}: mixture-of-experts models are not built here")

    def whole(key: str, default: int | None = None) -> int:
        v = raw.get(key, default)
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"config.json: {key} = {v!r} must be a whole number >= 1")
        return v

    hidden, heads = whole("hidden_size"), whole("num_attention_heads")
    head_dim = raw.get("head_dim") or hidden // heads
    cfg = Config(name=name or model_preset(str(raw.get("_name_or_path", ""))),
                 hidden=hidden, intermediate=whole("intermediate_size"),
                 layers=whole("num_hidden_layers"), heads=heads,
                 kv_heads=whole("num_key_value_heads", heads), vocab=whole("vocab_size"),
                 head_dim=int(head_dim), tied=bool(raw.get("tie_word_embeddings", False)),
                 eps=float(raw.get("rms_norm_eps", 1e-5)))
    if cfg.heads % cfg.kv_heads:
        raise ValueError(f"num_attention_heads {heads} is not a multiple of num_key_value_heads")
    return cfg


def layer_shapes(cfg: Config) -> dict[str, tuple[int, ...]]:
    """One decoder layer's weights, as (in, out) for the linear layers."""
    return {"wqkv": (cfg.hidden, cfg.q_dim + 2 * cfg.kv_dim), "wo": (cfg.q_dim, cfg.hidden),
            "wgu": (cfg.hidden, 2 * cfg.intermediate), "wd": (cfg.intermediate, cfg.hidden),
            "ln1": (cfg.hidden,), "ln2": (cfg.hidden,)}


def global_shapes(cfg: Config) -> dict[str, tuple[int, ...]]:
    shapes = {"embed": (cfg.vocab, cfg.hidden), "lnf": (cfg.hidden,)}
    if not cfg.tied:
        shapes["lm_head"] = (cfg.hidden, cfg.vocab)
    return shapes


def param_count(cfg: Config) -> int:
    per_layer = sum(math.prod(s) for s in layer_shapes(cfg).values())
    return cfg.layers * per_layer + sum(math.prod(s) for s in global_shapes(cfg).values())


def linear_params(cfg: Config, head: bool = True) -> int:
    """Weights one token multiplies: every linear layer (the LM head too when ``head``)."""
    per_layer = sum(math.prod(s) for k, s in layer_shapes(cfg).items() if k.startswith("w"))
    return cfg.layers * per_layer + (cfg.hidden * cfg.vocab if head else 0)


def decode_flops(cfg: Config, batch: int, context: int) -> float:
    """FLOPs of one decode step: 2 x linear weights per token, plus attention's QK and PV over
    ``context`` cached tokens and the new one."""
    attention = 4.0 * cfg.layers * cfg.heads * cfg.head_dim * (context + 1)
    return batch * (2.0 * linear_params(cfg) + attention)


def decode_bytes(cfg: Config, batch: int, context: int, weight_bytes: float, kv_bytes: float) -> float:
    """Bytes one decode step must move: the weights once, the KV cache of every sequence, the
    embedding rows."""
    kv = 2.0 * cfg.layers * cfg.kv_dim * (context + 1) * batch * kv_bytes
    return linear_params(cfg) * weight_bytes + kv + batch * cfg.hidden * kv_bytes


def prefill_flops(cfg: Config, prompt: int) -> float:
    """FLOPs of one prompt's prefill: every token through the layers, the last through the head."""
    attention = 4.0 * cfg.layers * cfg.heads * cfg.head_dim * prompt * (prompt + 1) / 2
    return 2.0 * prompt * linear_params(cfg, head=False) + 2.0 * cfg.hidden * cfg.vocab + attention


def kv_bytes_per_token(cfg: Config, kv_bytes: float) -> float:
    return 2.0 * cfg.layers * cfg.kv_dim * kv_bytes


# ---- backends: the few array operations the model needs ----


class NumpyBackend:
    """CPU, float32 (numpy has no BF16); wall time with time.perf_counter."""

    name = "numpy"
    dtypes = ("bf16",)  # run as float32; the rows say fp32

    def __init__(self, seed: int = 0) -> None:
        self.rng = np.random.default_rng(seed)
        self.label = f"numpy {np.__version__}, CPU, float32"
        self.weight_name = "fp32"
        self.kv_name = "fp32"
        self.kv_bytes = 4.0
        self.weight_bytes = 4.0

    def weight(self, shape: tuple[int, ...], dtype: str, norm: bool = False) -> np.ndarray:
        if norm:
            return np.ones(shape, dtype=np.float32)
        return (self.rng.standard_normal(shape, dtype=np.float32) * 0.02).astype(np.float32)

    def embedding(self, shape: tuple[int, ...]) -> np.ndarray:
        return self.weight(shape, "bf16")

    def tokens(self, batch: int, length: int, vocab: int) -> np.ndarray:
        return self.rng.integers(0, vocab, size=(batch, length))

    def new_cache(self, cfg: Config, batch: int, length: int) -> tuple[list, list]:
        shape = (batch, cfg.kv_heads, length, cfg.head_dim)
        return ([np.zeros(shape, np.float32) for _ in range(cfg.layers)],
                [np.zeros(shape, np.float32) for _ in range(cfg.layers)])

    @staticmethod
    def linear(x, w):
        return x @ w

    head = linear

    @staticmethod
    def rmsnorm(x, w, eps):
        return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * w

    @staticmethod
    def split(x, sizes):
        return np.split(x, np.cumsum(sizes)[:-1], axis=-1)

    @staticmethod
    def heads(x, b, t, n, d):
        return x.reshape(b, t, n, d).transpose(0, 2, 1, 3)

    @staticmethod
    def merge(o, b, t):
        return o.transpose(0, 2, 1, 3).reshape(b * t, -1)

    @staticmethod
    def silu_mul(gu, inter):
        g, u = gu[:, :inter], gu[:, inter:]
        return g / (1.0 + np.exp(-g)) * u

    @staticmethod
    def write(cache, start, kv):
        cache[:, :, start:start + kv.shape[2]] = kv

    @staticmethod
    def attention(q, k, v, causal):
        b, h, t, d = q.shape
        kvh, s = k.shape[1], k.shape[2]
        q5 = q.reshape(b, kvh, h // kvh, t, d)
        scores = q5 @ k[:, :, None].swapaxes(-1, -2) / math.sqrt(d)
        if causal:
            scores = scores + np.triu(np.full((t, s), -np.inf, np.float32), k=s - t + 1)
        scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
        scores /= scores.sum(axis=-1, keepdims=True)
        return (scores @ v[:, :, None]).reshape(b, h, t, d)

    @staticmethod
    def last(h, b, t):
        return h.reshape(b, t, -1)[:, -1]

    @staticmethod
    def capture(fn: Callable[[], object]) -> Callable[[], object]:
        return fn

    @staticmethod
    def time(fn: Callable[[], object], warmup: int, repeats: int) -> float:
        for _ in range(warmup):
            fn()
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
        return statistics.median(times)

    def gemm(self, m: int, n: int, k: int, dtype: str) -> Callable[[], object]:
        a = self.rng.standard_normal((m, k), dtype=np.float32)
        b = self.rng.standard_normal((k, n), dtype=np.float32)
        return lambda: a @ b

    def copy(self, nbytes: int) -> Callable[[], object]:
        src = np.ones(nbytes // 4, np.float32)
        dst = np.empty_like(src)
        return lambda: np.copyto(dst, src)

    def free(self) -> None:
        pass

    def kv_budget(self, gib: float | None) -> float:
        return (gib if gib is not None else 2.0) * GIB

    timing = "time.perf_counter"


class TorchBackend:
    """PyTorch: BF16 on CUDA (float32 on a CPU device), FP8 linear layers via torch._scaled_mm,
    decode steps captured in CUDA graphs, torch.cuda.Event timing."""

    name = "torch"

    def __init__(self, torch, device: str, seed: int = 0) -> None:
        self.torch = torch
        self.F = torch.nn.functional
        self.device = device
        self.cuda = device.startswith("cuda")
        torch.manual_seed(seed)
        self.dt = torch.bfloat16 if self.cuda else torch.float32
        self.fp8 = (self.cuda and hasattr(torch, "float8_e4m3fn") and hasattr(torch, "_scaled_mm")
                    and tuple(torch.cuda.get_device_capability(device)) >= (8, 9))  # Ada, Hopper and later
        self.dtypes = ("bf16", "fp8") if self.fp8 else ("bf16",)
        cuda = f", CUDA {torch.version.cuda}" if self.cuda else ""
        self.label = (f"torch {torch.__version__}{cuda}, {'CUDA graphs' if self.cuda else 'CPU float32'}")
        self.weight_name = "bf16" if self.cuda else "fp32"
        self.kv_name = self.weight_name
        self.kv_bytes = 2.0 if self.cuda else 4.0
        self.weight_bytes = self.kv_bytes
        self.one = torch.ones((), device=device, dtype=torch.float32)
        self.timing = "torch.cuda.Event" if self.cuda else "time.perf_counter"
        self._pad_fp8 = False

    def weight(self, shape, dtype, norm=False):
        t = self.torch
        if norm:
            return t.ones(shape, device=self.device, dtype=self.dt)
        w = t.randn(shape, device=self.device, dtype=self.dt) * 0.02
        if dtype == "fp8" and len(shape) == 2:
            return _Fp8(w.t().contiguous().to(t.float8_e4m3fn))  # (out, in), row-major
        return w

    def embedding(self, shape):
        return self.torch.randn(shape, device=self.device, dtype=self.dt) * 0.02

    def tokens(self, batch, length, vocab):
        return self.torch.randint(0, vocab, (batch, length), device=self.device)

    def new_cache(self, cfg, batch, length):
        shape = (batch, cfg.kv_heads, length, cfg.head_dim)
        z = self.torch.zeros
        return ([z(shape, device=self.device, dtype=self.dt) for _ in range(cfg.layers)],
                [z(shape, device=self.device, dtype=self.dt) for _ in range(cfg.layers)])

    def linear(self, x, w):
        if isinstance(w, _Fp8):
            return self._fp8_mm(x, w.w)
        return x @ w

    def _fp8_mm(self, x, w8):
        t = self.torch
        m = x.shape[0]
        if self._pad_fp8 and m % 16:
            x = self.F.pad(x, (0, 0, 0, 16 - m % 16))
        try:
            out = t._scaled_mm(x.to(t.float8_e4m3fn), w8.t(), scale_a=self.one, scale_b=self.one,
                               out_dtype=t.bfloat16)
        except RuntimeError:
            if self._pad_fp8 or m % 16 == 0:
                raise
            self._pad_fp8 = True  # this torch wants the token count padded to a multiple of 16
            return self._fp8_mm(x, w8)
        if isinstance(out, tuple):  # torch < 2.4 returns (out, amax)
            out = out[0]
        return out[:m]

    def head(self, x, w):
        return x @ w

    def rmsnorm(self, x, w, eps):
        xf = x.float()
        return (xf * self.torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)).to(self.dt) * w

    def split(self, x, sizes):
        return self.torch.split(x, list(sizes), dim=-1)

    @staticmethod
    def heads(x, b, t, n, d):
        return x.reshape(b, t, n, d).transpose(1, 2)

    @staticmethod
    def merge(o, b, t):
        return o.transpose(1, 2).reshape(b * t, -1)

    def silu_mul(self, gu, inter):
        return self.F.silu(gu[:, :inter]) * gu[:, inter:]

    @staticmethod
    def write(cache, start, kv):
        cache[:, :, start:start + kv.shape[2]].copy_(kv)

    def attention(self, q, k, v, causal):
        b, h, t, d = q.shape
        kvh = k.shape[1]
        if t == 1:
            # Decode: the query heads of each KV head as one batched matmul, so the cache is read
            # once (repeating K and V per query head would read it h / kvh times).
            q4 = q.reshape(b, kvh, h // kvh, d)
            scores = (q4 @ k.transpose(-1, -2)).float() * (1.0 / math.sqrt(d))
            probs = self.torch.softmax(scores, dim=-1).to(q.dtype)
            return (probs @ v).reshape(b, h, 1, d)
        if kvh != h:  # prefill: SDPA (flash where it applies) over K and V repeated per query head
            k, v = k.repeat_interleave(h // kvh, dim=1), v.repeat_interleave(h // kvh, dim=1)
        return self.F.scaled_dot_product_attention(q, k, v, is_causal=causal)

    @staticmethod
    def last(h, b, t):
        return h.reshape(b, t, -1)[:, -1]

    def capture(self, fn):
        """fn as a CUDA graph replay (on CUDA), captured after warm-up runs on a side stream."""
        if not self.cuda:
            return fn
        t = self.torch
        stream = t.cuda.Stream()
        stream.wait_stream(t.cuda.current_stream())
        with t.cuda.stream(stream):
            for _ in range(3):
                fn()
        t.cuda.current_stream().wait_stream(stream)
        graph = t.cuda.CUDAGraph()
        with t.cuda.graph(graph):
            fn()
        self._graph = graph  # keep it (and its memory pool) alive while it is timed
        return graph.replay

    def time(self, fn, warmup, repeats):
        t = self.torch
        with t.inference_mode():
            if not self.cuda:  # wall-clock timing, as the numpy backend's
                return NumpyBackend.time(fn, warmup, repeats)
            for _ in range(warmup):
                fn()
            t.cuda.synchronize()
            times = []
            for _ in range(repeats):
                start, end = t.cuda.Event(enable_timing=True), t.cuda.Event(enable_timing=True)
                start.record()
                fn()
                end.record()
                end.synchronize()
                times.append(start.elapsed_time(end) / 1e3)
            return statistics.median(times)

    def gemm(self, m, n, k, dtype):
        t = self.torch
        a = t.randn((m, k), device=self.device, dtype=self.dt)
        if dtype == "fp8":
            a8 = a.to(t.float8_e4m3fn)
            b8 = t.randn((n, k), device=self.device, dtype=self.dt).to(t.float8_e4m3fn)

            def run():
                out = t._scaled_mm(a8, b8.t(), scale_a=self.one, scale_b=self.one, out_dtype=t.bfloat16)
                return out[0] if isinstance(out, tuple) else out
            return run
        b = t.randn((k, n), device=self.device, dtype=self.dt)
        return lambda: a @ b

    def copy(self, nbytes):
        src = self.torch.ones(nbytes // 2, device=self.device, dtype=self.torch.bfloat16)
        dst = self.torch.empty_like(src)
        return lambda: dst.copy_(src)

    def free(self):
        self._graph = None
        if self.cuda:
            self.torch.cuda.synchronize()
            self.torch.cuda.empty_cache()

    def kv_budget(self, gib):
        if gib is not None:
            return gib * GIB
        if self.cuda:
            free, _ = self.torch.cuda.mem_get_info()
            return 0.8 * free
        return 8.0 * GIB


@dataclass
class _Fp8:
    w: object  # (out, in) float8_e4m3fn


# ---- the model ----


class Model:
    """A Llama-style decoder with random weights on ``backend`` (linear weights as (in, out))."""

    def __init__(self, be, cfg: Config, dtype: str) -> None:
        self.be, self.cfg = be, cfg
        self.layers = []
        for _ in range(cfg.layers):
            self.layers.append({k: be.weight(s, dtype, norm=k.startswith("ln"))
                                for k, s in layer_shapes(cfg).items()})
        self.embed = be.embedding((cfg.vocab, cfg.hidden))
        self.lnf = be.weight((cfg.hidden,), dtype, norm=True)
        # The LM head stays in the high precision (engines keep it BF16 under FP8 weights).
        self.lm_head = self.embed.T if cfg.tied else be.weight((cfg.hidden, cfg.vocab), "bf16")

    def forward(self, tokens, cache, start: int = 0):
        """Logits of each sequence's last token. ``tokens``: (batch, T); ``cache``: (k, v) lists of
        (batch, kv_heads, start + T, head_dim) arrays, written at ``start``; None for none."""
        be, c = self.be, self.cfg
        b, t = tokens.shape
        if t > 1 and start:
            raise ValueError("a prompt starts at position 0")
        h = self.embed[tokens.reshape(-1)]
        for i, w in enumerate(self.layers):
            a = be.rmsnorm(h, w["ln1"], c.eps)
            q, k, v = be.split(be.linear(a, w["wqkv"]), (c.q_dim, c.kv_dim, c.kv_dim))
            q = be.heads(q, b, t, c.heads, c.head_dim)
            k = be.heads(k, b, t, c.kv_heads, c.head_dim)
            v = be.heads(v, b, t, c.kv_heads, c.head_dim)
            if cache is not None:
                be.write(cache[0][i], start, k)
                be.write(cache[1][i], start, v)
                k, v = cache[0][i], cache[1][i]
            o = be.attention(q, k, v, causal=t > 1)
            h = h + be.linear(be.merge(o, b, t), w["wo"])
            a = be.rmsnorm(h, w["ln2"], c.eps)
            h = h + be.linear(be.silu_mul(be.linear(a, w["wgu"]), c.intermediate), w["wd"])
        return be.head(be.rmsnorm(be.last(h, b, t), self.lnf, c.eps), self.lm_head)


# ---- measuring ----


def _ints(text: str) -> list[int]:
    values = [int(v) for v in text.split(",") if v.strip()]
    if not values or any(v < 1 for v in values):
        raise argparse.ArgumentTypeError(f"{text!r}: expected whole numbers >= 1, comma-separated")
    return values


def _shapes(text: str) -> list[tuple[int, int, int]]:
    out = []
    for part in text.split(","):
        dims = part.lower().split("x")
        if len(dims) != 3 or not all(d.strip().isdigit() and int(d) > 0 for d in dims):
            raise argparse.ArgumentTypeError(f"{part!r}: expected MxNxK, e.g. 8192x8192x8192")
        out.append((int(dims[0]), int(dims[1]), int(dims[2])))
    return out


def _fmt(x: float) -> str:
    return f"{x:.6g}"


class Measurer:
    def __init__(self, be, cfg: Config, args: argparse.Namespace, gpu: str) -> None:
        self.be, self.cfg, self.args, self.gpu = be, cfg, args, gpu
        self.rows: list[dict[str, str]] = []
        self.t0 = time.monotonic()
        self.skipped: list[str] = []
        self.conditions = (f"random weights; {be.label}; median of {args.repeats} after {args.warmup} "
                           f"warm-up(s), {be.timing}")

    def out_of_time(self, what: str) -> bool:
        if self.args.time_limit and time.monotonic() - self.t0 > self.args.time_limit:
            self.skipped.append(what)
            return True
        return False

    def log(self, text: str) -> None:
        if not self.args.quiet:
            print(text, file=sys.stderr, flush=True)

    def add(self, rid: str, kind: str, value: float, weights: str, notes: str, **cells: object) -> None:
        if not (math.isfinite(value) and value > 0):
            self.log(f"  {rid}: measured {value!r}, not written")
            return
        row = {c: "" for c in COLUMNS}
        row.update(id=rid, gpu=self.gpu, gpus="1", weights=weights, kv=self.be.kv_name,
                   engine=f"measure_gpu.py ({self.be.name})", kind=kind, value=_fmt(value),
                   unit=UNITS[kind], source="scripts/measure_gpu.py", notes=f"{notes}; {self.conditions}")
        row.update({k: str(v) for k, v in cells.items()})
        self.rows.append(row)
        self.log(f"  {rid}: {_fmt(value)} {UNITS[kind]}")

    def precision(self, dtype: str) -> str:
        return "fp8" if dtype == "fp8" else self.be.weight_name

    def gemms(self, dtypes: list[str]) -> None:
        for dtype in dtypes:
            for m, n, k in self.args.gemm_shapes:
                if self.out_of_time(f"gemm {dtype} {m}x{n}x{k}"):
                    return
                t = self.be.time(self.be.gemm(m, n, k, dtype), self.args.warmup, self.args.repeats)
                self.be.free()
                prec = self.precision(dtype)
                self.add(f"mg-gemm-{prec}-{m}x{n}x{k}", "gemm_tflops", 2.0 * m * n * k / t / 1e12, prec,
                         f"({m} x {k}) @ ({k} x {n}), {t * 1e3:.4g} ms")

    def copy(self) -> None:
        if self.out_of_time("copy"):
            return
        nbytes = int(self.args.copy_gib * GIB) // 64 * 64
        t = self.be.time(self.be.copy(nbytes), self.args.warmup, self.args.repeats)
        self.be.free()
        self.add("mg-copy", "hbm_tbps", 2.0 * nbytes / t / 1e12, self.be.weight_name,
                 f"copy of {nbytes / GIB:.4g} GiB, read + write counted, {t * 1e3:.4g} ms")

    def model_rows(self, dtype: str) -> None:
        if self.out_of_time(f"the {dtype} model"):
            return
        try:
            self._model_rows(dtype)
        finally:
            self.be.free()

    def _model_rows(self, dtype: str) -> None:
        be, cfg, a = self.be, self.cfg, self.args
        model = Model(be, cfg, dtype)
        prec = self.precision(dtype)
        wbytes = 1.0 if dtype == "fp8" else be.weight_bytes
        for p in a.prompts:
            if self.out_of_time(f"prefill {dtype} {p}"):
                break
            t = self._prefill(model, 1, p)
            self.add(f"mg-ttft-{prec}-p{p}", "ttft_ms", t * 1e3, prec,
                     f"one prompt's forward (KV written, last token's logits), "
                     f"{prefill_flops(cfg, p) / t / 1e12:.4g} TFLOP/s achieved",
                     batch=1, concurrency=1, requests=1, workload="fixed", prompt_tokens=p,
                     output_tokens=1)
        budget = be.kv_budget(a.max_kv_gib)
        group_times: dict[tuple[int, int], float] = {}
        out = a.output_tokens
        for c in a.contexts:
            for b in a.batches:
                mean_ctx = c + out // 2
                need = kv_bytes_per_token(cfg, be.kv_bytes) * b * (mean_ctx + 1)
                if need > budget:
                    self.log(f"  skip batch {b} context {c}: KV cache {need / GIB:.3g} GiB > "
                             f"{budget / GIB:.3g} GiB")
                    self.skipped.append(f"batch {b} context {c} (KV cache does not fit)")
                    continue
                if self.out_of_time(f"decode {dtype} b{b} c{c}"):
                    return
                k = min(b, max(1, a.max_prefill_tokens // c))
                if (k, c) not in group_times:
                    group_times[(k, c)] = self._prefill(model, k, c)
                t_prefill = b / k * group_times[(k, c)]
                cache = be.new_cache(cfg, b, mean_ctx + 1)
                tokens = be.tokens(b, 1, cfg.vocab)
                step = be.capture(lambda m=model, x=tokens, kv=cache, s=mean_ctx: m.forward(x, kv, s))
                t_step = be.time(step, a.warmup, a.repeats)
                del cache, step
                be.free()
                total = t_prefill + (out - 1) * t_step
                flops = decode_flops(cfg, b, mean_ctx)
                nbytes = decode_bytes(cfg, b, mean_ctx, wbytes, be.kv_bytes)
                self.add(f"mg-static-{prec}-b{b}-c{c}", "static_batch_tok_s", b * out / total, prec,
                         f"decode step at context {mean_ctx}: {t_step * 1e3:.4g} ms "
                         f"({flops / t_step / 1e12:.4g} TFLOP/s, {nbytes / t_step / 1e12:.4g} TB/s of "
                         f"weights + KV); prefill {t_prefill * 1e3:.4g} ms as {b / k:g} group(s) of {k} "
                         f"prompt(s); total {total * 1e3:.4g} ms for {out} tokens",
                         batch=b, requests=b, workload="fixed", prompt_tokens=c, output_tokens=out)

    def _prefill(self, model: Model, batch: int, prompt: int) -> float:
        be = self.be
        cache = be.new_cache(self.cfg, batch, prompt)
        tokens = be.tokens(batch, prompt, self.cfg.vocab)
        t = be.time(lambda m=model, x=tokens, kv=cache: m.forward(x, kv, 0), self.args.warmup,
                    self.args.repeats)
        del cache
        be.free()
        return t


def pick_backend(choice: str, device: str | None):
    if choice in ("auto", "torch"):
        try:
            import torch
        except ImportError:
            if choice == "torch":
                raise SystemExit("--backend torch: PyTorch is not importable") from None
        else:
            return TorchBackend(torch, device or ("cuda" if torch.cuda.is_available() else "cpu"))
    return NumpyBackend()


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    src = p.add_mutually_exclusive_group()
    src.add_argument("--model", choices=sorted(PRESETS), default="llama-3.1-8b")
    src.add_argument("--config", type=Path, help="a HF config.json (Llama-style, dense)")
    src.add_argument("--tiny", action="store_true", help="a tiny config and tiny sizes (seconds on a CPU)")
    p.add_argument("--model-name", default=None, help="the model column (default: the app's name, if any)")
    p.add_argument("--backend", choices=("auto", "torch", "numpy"), default="auto")
    p.add_argument("--device", default=None, help="torch device (default cuda when available)")
    p.add_argument("--dtype", default="bf16", help="bf16, fp8 or bf16,fp8 (fp8 needs torch._scaled_mm)")
    p.add_argument("--batches", type=_ints, default=None, help="default 1,8,32,64,128,256")
    p.add_argument("--contexts", type=_ints, default=None, help="prompt lengths of the static batches "
                   "(default 512,2048,8192)")
    p.add_argument("--prompts", type=_ints, default=None, help="TTFT prompts (default 128,512,2048,8192)")
    p.add_argument("--output-tokens", type=int, default=None, help="tokens per static batch (default 128)")
    p.add_argument("--gemm-shapes", type=_shapes, default=None,
                   help="MxNxK,... (default 4096x4096x4096,8192x8192x8192,4096x28672x4096)")
    p.add_argument("--copy-gib", type=float, default=None, help="copy size (default 4)")
    p.add_argument("--max-prefill-tokens", type=int, default=16384)
    p.add_argument("--max-kv-gib", type=float, default=None,
                   help="KV cache budget (default 80 %% of free GPU memory; 2 GiB on numpy)")
    p.add_argument("--warmup", type=int, default=None, help="default 3 (1 with --tiny)")
    p.add_argument("--repeats", type=int, default=None, help="default 10 (3 with --tiny)")
    p.add_argument("--time-limit", type=float, default=0.0, help="seconds; start nothing new after")
    p.add_argument("--skip", default="", help="comma list of gemm, copy, prefill, decode")
    p.add_argument("--gpu-name", default=None, help="the gpu column (default: the device's preset name)")
    p.add_argument("--out", type=Path, default=None, help="write the CSV here (default stdout)")
    p.add_argument("--quiet", action="store_true")
    a = p.parse_args(argv)
    tiny = a.tiny
    defaults = {"batches": [1, 4] if tiny else [1, 8, 32, 64, 128, 256],
                "contexts": [16, 64] if tiny else [512, 2048, 8192],
                "prompts": [16, 64] if tiny else [128, 512, 2048, 8192],
                "output_tokens": 8 if tiny else 128,
                "gemm_shapes": [(64, 64, 64), (128, 256, 128)] if tiny
                else [(4096, 4096, 4096), (8192, 8192, 8192), (4096, 28672, 4096)],
                "copy_gib": 1 / 128 if tiny else 4.0, "warmup": 1 if tiny else 3,
                "repeats": 3 if tiny else 10}
    for key, value in defaults.items():
        if getattr(a, key) is None:
            setattr(a, key, value)
    a.dtypes = [d.strip() for d in a.dtype.split(",") if d.strip()]
    if not a.dtypes or any(d not in ("bf16", "fp8") for d in a.dtypes):
        p.error(f"--dtype {a.dtype!r}: expected bf16, fp8 or bf16,fp8")
    a.skips = {s.strip() for s in a.skip.split(",") if s.strip()}
    if a.skips - {"gemm", "copy", "prefill", "decode"}:
        p.error(f"--skip {a.skip!r}: expected gemm, copy, prefill, decode")
    if a.output_tokens < 1 or a.warmup < 0 or a.repeats < 1:
        p.error("--output-tokens and --repeats must be >= 1, --warmup >= 0")
    return a


def run(argv: list[str] | None = None) -> str:
    a = parse_args(argv)
    if a.tiny:
        cfg = TINY
    elif a.config:
        try:
            cfg = config_from_json(a.config.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise SystemExit(f"--config {a.config}: {exc}") from None
    else:
        cfg = PRESETS[a.model]
    if a.model_name is not None:
        cfg = dataclasses.replace(cfg, name=a.model_name)
    be = pick_backend(a.backend, a.device)
    on_gpu = isinstance(be, TorchBackend) and be.cuda
    if not on_gpu and param_count(cfg) * 4 > 4 * GIB:
        raise SystemExit(f"{param_count(cfg) / 1e9:.2f} B parameters in float32 is too much for the "
                         f"{be.name} backend on a CPU: use --tiny (or a small --config)")
    unsupported = [d for d in a.dtypes if d not in be.dtypes]
    if unsupported:
        print(f"skipping {', '.join(unsupported)}: not supported by {be.label}", file=sys.stderr)
    dtypes = [d for d in a.dtypes if d in be.dtypes]
    if a.gpu_name:
        gpu = a.gpu_name
    elif on_gpu:
        name = be.torch.cuda.get_device_name(be.device)
        gpu = gpu_preset(name) or name
    else:
        gpu = "CPU"
    m = Measurer(be, cfg, a, gpu)
    m.log(f"{be.label}; {gpu}; model {cfg.name or 'tiny/custom'}: {param_count(cfg) / 1e9:.3g} B parameters")
    if "gemm" not in a.skips:
        m.gemms(dtypes)
    if "copy" not in a.skips:
        m.copy()
    for dtype in dtypes:
        if "prefill" in a.skips:
            a.prompts = []
        if "decode" in a.skips:
            a.contexts = []
        if a.prompts or a.contexts:
            m.model_rows(dtype)
    for row in m.rows:
        if row["kind"] in ("ttft_ms", "static_batch_tok_s"):
            row["model"] = cfg.name
    if m.skipped:
        m.log("not measured: " + "; ".join(m.skipped))
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(m.rows)
    return out.getvalue()


def main(argv: list[str] | None = None) -> int:
    text = run(argv)
    a = parse_args(argv)
    if a.out:
        a.out.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
