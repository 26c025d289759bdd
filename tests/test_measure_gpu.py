"""scripts/measure_gpu.py: runs on a CPU with --tiny (numpy backend), writes measured.csv rows that
calib.parsers and sim.truth read; the shapes, FLOP counts and the model's forward pass are right."""

from __future__ import annotations

import csv
import importlib.util
import io
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from calib.parsers import parse_benchmark, rows_to_csv
from sim.truth import COLUMNS, parse_rows

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "measure_gpu.py"
NUMERIC = ("gpus", "batch", "concurrency", "qps", "requests", "prompt_tokens", "output_tokens", "value")

spec = importlib.util.spec_from_file_location("measure_gpu", SCRIPT)
mg = importlib.util.module_from_spec(spec)
sys.modules["measure_gpu"] = mg
spec.loader.exec_module(mg)


@pytest.fixture(scope="module")
def tiny_csv(tmp_path_factory) -> str:
    out = tmp_path_factory.mktemp("mg") / "rows.csv"
    proc = subprocess.run([sys.executable, str(SCRIPT), "--tiny", "--backend", "numpy", "--out", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""
    assert "mg-copy" in proc.stderr  # progress goes to stderr
    return out.read_text(encoding="utf-8")


def test_tiny_run_writes_the_measured_csv_schema(tiny_csv):
    reader = csv.DictReader(io.StringIO(tiny_csv))
    assert tuple(reader.fieldnames) == COLUMNS
    rows = list(reader)
    assert {r["kind"] for r in rows} == {"gemm_tflops", "hbm_tbps", "ttft_ms", "static_batch_tok_s"}
    for r in rows:
        assert r["value"], r["id"]
        for col in NUMERIC:
            if r[col]:
                v = float(r[col])
                assert math.isfinite(v) and v > 0, (r["id"], col, r[col])
        assert r["engine"] == "measure_gpu.py (numpy)"
        assert r["gpu"] == "CPU" and r["weights"] == "fp32"
        assert "median of 3 after 1 warm-up(s)" in r["notes"]
    static = [r for r in rows if r["kind"] == "static_batch_tok_s"]
    assert {(r["batch"], r["prompt_tokens"], r["output_tokens"]) for r in static} == {
        ("1", "16", "8"), ("4", "16", "8"), ("1", "64", "8"), ("4", "64", "8")}
    assert len({r["id"] for r in rows}) == len(rows)


def test_tiny_rows_import_through_the_parser_and_parse_rows(tiny_csv):
    parsed = parse_benchmark(tiny_csv)
    assert parsed.fmt == "csv"
    rows = parse_rows(tiny_csv)
    assert [r["id"] for r in parsed.rows] == [r.id for r in rows]
    assert len(parse_rows(rows_to_csv(parsed.rows))) == len(rows)


def test_stdout_and_gpu_name():
    proc = subprocess.run([sys.executable, str(SCRIPT), "--tiny", "--backend", "numpy", "--quiet",
                           "--skip", "decode,prefill", "--gpu-name", "H200 SXM"],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    rows = parse_rows(proc.stdout)
    assert {r.kind for r in rows} == {"gemm_tflops", "hbm_tbps"}
    assert {r.gpu for r in rows} == {"H200 SXM"}


def test_llama_3_1_8b_shapes():
    cfg = mg.PRESETS["llama-3.1-8b"]
    assert (cfg.hidden, cfg.intermediate, cfg.layers, cfg.heads, cfg.kv_heads, cfg.vocab) == (
        4096, 14336, 32, 32, 8, 128256)
    assert mg.param_count(cfg) == 8_030_261_248  # Llama-3.1-8B's published count
    hf = {"_name_or_path": "meta-llama/Llama-3.1-8B", "hidden_size": 4096, "intermediate_size": 14336,
          "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
          "vocab_size": 128256, "rms_norm_eps": 1e-5, "tie_word_embeddings": False}
    assert mg.config_from_json(json.dumps(hf)) == cfg
    with pytest.raises(ValueError, match="mixture-of-experts"):
        mg.config_from_json(json.dumps(hf | {"num_local_experts": 8}))
    with pytest.raises(ValueError, match="hidden_size"):
        mg.config_from_json(json.dumps(hf | {"hidden_size": "4096"}))


def test_tiny_model_weights_and_flops():
    cfg = mg.TINY
    model = mg.Model(mg.NumpyBackend(), cfg, "bf16")
    sizes = sum(w.size for layer in model.layers for w in layer.values())
    sizes += model.embed.size + model.lnf.size + model.lm_head.size
    assert sizes == mg.param_count(cfg)
    norms = (2 * cfg.layers + 1) * cfg.hidden
    linear = mg.param_count(cfg) - cfg.vocab * cfg.hidden - norms  # what one token multiplies
    assert mg.linear_params(cfg) == linear
    attention = 4 * cfg.layers * cfg.heads * cfg.head_dim * 1
    assert mg.decode_flops(cfg, 1, 0) == 2 * linear + attention
    assert mg.decode_flops(cfg, 8, 100) == 8 * mg.decode_flops(cfg, 1, 100)
    # "2 x params-ish": every weight but the embedding table, twice
    big = mg.PRESETS["llama-3.1-8b"]
    assert 0.9 < mg.decode_flops(big, 1, 0) / (2 * mg.param_count(big)) < 1.0
    assert mg.prefill_flops(cfg, 1) == 2 * linear + attention
    assert mg.kv_bytes_per_token(big, 2) == 131072  # 2 x 32 layers x 1024 x 2 B


def test_decode_step_continues_the_prefill():
    """The shared forward pass: logits of a prompt's last token equal those of the prompt less its
    last token, prefilled, then one decode step over that cache."""
    be = mg.NumpyBackend(seed=1)
    cfg = mg.TINY
    model = mg.Model(be, cfg, "bf16")
    tokens = be.tokens(2, 9, cfg.vocab)
    full = model.forward(tokens, be.new_cache(cfg, 2, 9), 0)
    assert full.shape == (2, cfg.vocab)
    cache = be.new_cache(cfg, 2, 8)
    model.forward(tokens[:, :8], cache, 0)
    longer = be.new_cache(cfg, 2, 9)
    for old, new in zip(cache[0] + cache[1], longer[0] + longer[1], strict=True):
        new[:, :, :8] = old
    step = model.forward(tokens[:, 8:], longer, 8)
    np.testing.assert_allclose(step, full, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(model.forward(tokens, None, 0), full, rtol=1e-5, atol=1e-6)


def test_bad_arguments():
    for args in (["--dtype", "fp16"], ["--batches", "0"], ["--gemm-shapes", "8x8"], ["--skip", "all"]):
        with pytest.raises(SystemExit):
            mg.parse_args(["--tiny", *args])
    with pytest.raises(SystemExit, match="numpy backend on a CPU"):
        mg.run(["--backend", "numpy", "--quiet"])  # Llama-3.1-8B in float32 on numpy: refused


# ---- the PyTorch backend's CPU path, on a stand-in for torch built from numpy ----
# (CI has no PyTorch; this runs TorchBackend's code with torch's semantics for the calls it makes.
# The CUDA-only parts, CUDA graphs, events and FP8 _scaled_mm, need a GPU and are not run here.)


class _T(np.ndarray):
    """The torch.Tensor methods TorchBackend calls, with torch's meanings."""

    def t(self):
        return self.T

    def contiguous(self):
        return np.ascontiguousarray(self).view(_T)

    def to(self, dtype):
        return self.astype(dtype).view(_T)

    def float(self):
        return self.astype(np.float32).view(_T)

    def pow(self, n):
        return np.power(self, n)

    def mean(self, dim=None, keepdim=False):  # torch's keywords
        return np.asarray(self).mean(axis=dim, keepdims=keepdim).view(_T)

    def transpose(self, a, b):  # torch swaps two dims
        return np.swapaxes(self, a, b)

    def copy_(self, other):
        np.copyto(self, other)
        return self

    def repeat_interleave(self, n, dim):
        return np.repeat(self, n, axis=dim)


class _FakeTorch:
    __version__ = "0.0-numpy-stand-in"
    bfloat16 = float32 = np.float32

    class version:
        cuda = None

    class cuda:
        @staticmethod
        def is_available():
            return False

    class nn:
        class functional:
            @staticmethod
            def silu(x):
                return x / (1.0 + np.exp(-x))

            @staticmethod
            def scaled_dot_product_attention(q, k, v, is_causal=False):
                q, k, v = (np.asarray(a) for a in (q, k, v))
                return mg.NumpyBackend.attention(q, k, v, is_causal).view(_T)

    def __init__(self):
        self.rng = np.random.default_rng(3)

    def manual_seed(self, seed):
        self.rng = np.random.default_rng(seed)

    def _shape(self, shape):
        return shape if isinstance(shape, tuple) else (shape,)

    def randn(self, shape, device=None, dtype=None):
        return self.rng.standard_normal(self._shape(shape)).astype(np.float32).view(_T)

    def ones(self, shape, device=None, dtype=None):
        return np.ones(self._shape(shape), np.float32).view(_T)

    def zeros(self, shape, device=None, dtype=None):
        return np.zeros(self._shape(shape), np.float32).view(_T)

    def randint(self, low, high, shape, device=None):
        return self.rng.integers(low, high, shape).view(_T)

    @staticmethod
    def empty_like(x):
        return np.empty_like(x)

    @staticmethod
    def split(x, sizes, dim=-1):
        return np.split(x, np.cumsum(sizes)[:-1], axis=dim)

    @staticmethod
    def softmax(x, dim):
        e = np.exp(x - x.max(axis=dim, keepdims=True))
        return e / e.sum(axis=dim, keepdims=True)

    @staticmethod
    def rsqrt(x):
        return 1.0 / np.sqrt(x)

    @staticmethod
    def inference_mode():
        import contextlib
        return contextlib.nullcontext()


def test_torch_backend_cpu_path_matches_numpy():
    fake = _FakeTorch()
    be = mg.TorchBackend(fake, "cpu")
    assert (be.cuda, be.fp8, be.dtypes, be.weight_name) == (False, False, ("bf16",), "fp32")
    cfg = mg.TINY
    model = mg.Model(be, cfg, "bf16")
    tokens = be.tokens(2, 9, cfg.vocab)
    full = model.forward(tokens, be.new_cache(cfg, 2, 9), 0)
    cache = be.new_cache(cfg, 2, 8)
    model.forward(tokens[:, :8], cache, 0)
    longer = be.new_cache(cfg, 2, 9)
    for old, new in zip(cache[0] + cache[1], longer[0] + longer[1], strict=True):
        new[:, :, :8] = old
    step = model.forward(tokens[:, 8:], longer, 8)  # the grouped-matmul decode attention
    np.testing.assert_allclose(step, full, rtol=1e-4, atol=1e-5)
    # the same weights on the numpy backend give the same logits
    ref = mg.Model.__new__(mg.Model)
    ref.__dict__.update(model.__dict__, be=mg.NumpyBackend(), embed=np.asarray(model.embed),
                        lnf=np.asarray(model.lnf), lm_head=np.asarray(model.lm_head),
                        layers=[{k: np.asarray(w) for k, w in layer.items()} for layer in model.layers])
    np.testing.assert_allclose(ref.forward(np.asarray(tokens), None, 0), full, rtol=1e-4, atol=1e-5)


def test_run_with_the_torch_backend_on_cpu(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", _FakeTorch())
    text = mg.run(["--tiny", "--backend", "torch", "--quiet"])
    rows = parse_rows(text)
    assert {r.kind for r in rows} == {"gemm_tflops", "hbm_tbps", "ttft_ms", "static_batch_tok_s"}
    assert {r.engine for r in rows} == {"measure_gpu.py (torch)"}
    assert all(r.value > 0 for r in rows)
