"""Sweep JSON: reading the original benchmark.py format, tracekit's superset, and diff arithmetic."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tracekit.compare.bench import diff_files
from tracekit.compare.core import speedup_pct
from tracekit.bench.schema import build_document, load_document, point_stats
from tracekit.cli.bench import bench_group
from tracekit.errors import ConfigError

# What PyTorch's benchmarks/distributed/ddp/benchmark.py writes with --json: the first
# result is the 1-GPU "no ddp" run, then DDP on 1, 2, 4, 8 GPUs (measurements of all
# ranks concatenated).
ORIGINAL = {
    "pytorch_version": "1.4.0a0+05a6a7b",
    "cuda_version": "10.1",
    "distributed_backend": "nccl",
    "bucket_size": 25,
    "benchmark_results": [
        {
            "model": "resnet50",
            "batch_size": 32,
            "result": [
                {"ranks": [0], "measurements": [0.100, 0.102, 0.101, 0.103]},
                {"ranks": [0], "measurements": [0.110, 0.112, 0.111, 0.113]},
                {"ranks": [0, 1], "measurements": [0.120, 0.121, 0.122, 0.123, 0.120, 0.121, 0.122, 0.124]},
                {"ranks": [0, 1, 2, 3], "measurements": [0.130] * 16},
            ],
        },
        {
            "model": "resnet101",
            "batch_size": 32,
            "result": [
                {"ranks": [0], "measurements": [0.200, 0.201]},
                {"ranks": [0], "measurements": [0.210, 0.211]},
            ],
        },
    ],
}


def _point(ddp: bool, ws: int, per_rank: list[list[float]] | None, error: str | None = None) -> dict:
    return {"label": ("ddp %d" % ws) if ddp else "no ddp", "ddp": ddp, "world_size": ws, "ranks": list(range(ws)),
            "per_rank": per_rank, "hosts": ["h"] * ws, "error": error, "trace_dir": None}


def _tracekit_doc(scale: float) -> dict:
    meta = {"pytorch_version": "2.13.0", "cuda_version": "12.8", "distributed_backend": "nccl", "bucket_size": 25,
            "config": {"dynamo": "inductor"}, "topology": "GPU0 X NV18", "hosts": [{"hostname": "h", "ranks": [0, 1]}]}
    pts = [_point(False, 1, [[0.1 * scale] * 4]), _point(True, 1, [[0.110 * scale] * 4]),
           _point(True, 2, [[0.120 * scale] * 4, [0.120 * scale] * 4]), _point(True, 4, None, "rank 3: boom")]
    return build_document(meta, [{"model": "resnet50", "batch_size": 32, "points": pts}])


def test_read_original_format(tmp_path: Path) -> None:
    p = tmp_path / "orig.json"
    p.write_text(json.dumps(ORIGINAL))
    doc = load_document(p)
    assert doc["format"] == "original"
    assert doc["meta"]["distributed_backend"] == "nccl" and doc["meta"]["bucket_size"] == 25
    r50, r101 = doc["models"]
    assert r50["model"] == "resnet50" and r50["batch_size"] == 32
    assert [(x["label"], x["ddp"], x["world_size"]) for x in r50["points"]] == [
        ("no ddp", False, 1), ("ddp 1", True, 1), ("ddp 2", True, 2), ("ddp 4", True, 4)]
    assert r50["points"][2]["measurements"][-1] == 0.124
    assert [x["label"] for x in r101["points"]] == ["no ddp", "ddp 1"]


def test_superset_keeps_original_shape() -> None:
    doc = _tracekit_doc(1.0)
    for key in ("pytorch_version", "cuda_version", "distributed_backend", "bucket_size", "benchmark_results"):
        assert key in doc
    entry = doc["benchmark_results"][0]
    assert set(entry) >= {"model", "batch_size", "result"}
    assert all(set(r) >= {"ranks", "measurements"} for r in entry["result"])
    assert entry["result"][2]["measurements"] == [0.12] * 8  # ranks concatenated, as the original
    assert entry["failures"] == [{"label": "ddp 4", "ddp": True, "world_size": 4, "ranks": [0, 1, 2, 3],
                                  "error": "rank 3: boom"}]
    assert doc["tracekit_schema"] == "tracekit.bench.ddp/1" and doc["topology"] == "GPU0 X NV18"


def test_point_stats() -> None:
    s = point_stats([0.1, 0.2, 0.3, 0.4, 0.5], batch_size=10, world_size=2)
    assert s["sec_per_iter"]["p50"] == pytest.approx(0.3)
    assert s["sec_per_iter"]["p75"] == pytest.approx(0.4)
    assert s["sec_per_iter"]["p95"] == pytest.approx(0.48)
    assert s["ex_per_sec_per_gpu"]["p50"] == pytest.approx(10 / 0.3)
    assert s["ex_per_sec"]["p50"] == pytest.approx(20 / 0.3)


def test_diff_arithmetic(tmp_path: Path) -> None:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(_tracekit_doc(1.0)))
    b.write_text(json.dumps(_tracekit_doc(0.8)))  # B is 20% less time per iteration
    d = diff_files(str(a), str(b))
    (m,) = d["models"]
    rows = {r["label"]: r for r in m["rows"]}
    assert set(rows) == {"no ddp", "ddp 1", "ddp 2", "ddp 4"}
    c = rows["ddp 2"]["p75"]
    assert c["a_sec"] == pytest.approx(0.12) and c["b_sec"] == pytest.approx(0.096)
    assert c["change_pct"] == pytest.approx(20.0)  # positive = faster
    assert c["a_ex_per_sec"] == pytest.approx(32 / 0.12) and c["b_ex_per_sec"] == pytest.approx(32 / 0.096)
    assert rows["ddp 4"]["error_a"] == "rank 3: boom" and rows["ddp 4"]["p95"]["change_pct"] is None
    assert speedup_pct(1.0, 1.5) == pytest.approx(-50.0)
    meta = {r["key"]: r for r in d["meta"]}
    assert meta["pytorch_version"]["same"] and meta["config.dynamo"]["a"] == "inductor"


def test_diff_cli_original_vs_tracekit(tmp_path: Path) -> None:
    a, b = tmp_path / "orig.json", tmp_path / "new.json"
    a.write_text(json.dumps(ORIGINAL))
    b.write_text(json.dumps(_tracekit_doc(1.0)))
    r = CliRunner().invoke(bench_group, ["diff", str(a), str(b)])
    assert r.exit_code == 0, r.output
    out = r.stdout
    assert "[original format]" in out and "[tracekit format]" in out
    assert "resnet50 with batch size 32" in out and "only in A" in out  # resnet101 missing from B
    assert "1.4.0a0+05a6a7b" in out and "2.13.0" in out
    # p75 of ddp 2: A 0.12225 (interpolated), B 0.12 -> +1.8%
    assert "+1.8%" in out
    r = CliRunner().invoke(bench_group, ["diff", str(a), str(b), "--format", "json"])
    d = json.loads(r.stdout)
    ddp2 = next(x for x in d["models"][0]["rows"] if x["label"] == "ddp 2")
    assert ddp2["p75"]["change_pct"] == pytest.approx(-100 * (0.12 - 0.12225) / 0.12225)


def test_bad_file(tmp_path: Path) -> None:
    p = tmp_path / "x.json"
    p.write_text('{"foo": 1}')
    with pytest.raises(ConfigError, match="benchmark_results"):
        load_document(p)
    r = CliRunner().invoke(bench_group, ["diff", str(p), str(p)])
    assert r.exit_code == 2 and "not a DDP benchmark file" in r.stderr
