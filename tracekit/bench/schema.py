"""The DDP sweep's JSON: a superset of PyTorch's ``benchmarks/distributed/ddp/benchmark.py`` output.

No torch import here (``bench diff`` reads files only).

Original keys, kept as they are::

    pytorch_version, cuda_version, distributed_backend, bucket_size (MiB, number)
    benchmark_results: [{"model": str, "batch_size": int,
                         "result": [{"ranks": [int...], "measurements": [sec/iter...]}]}]

``measurements`` is every rank's per-iteration time, concatenated rank by rank (as
the original gathers them); in the original the first ``result`` entry is the 1-GPU
"no ddp" baseline and the others are DDP points in increasing size.

Added by tracekit:

* per result entry: ``label`` ("no ddp" | "ddp N"), ``ddp`` (bool), ``world_size``,
  ``per_rank_measurements`` ([[sec...] per rank]), ``hosts`` (hostname per rank),
  ``trace_dir`` (``--profile``: the point's ``tracekit profile`` style run folder, else null);
* per model: ``failures``: [{"label", "ddp", "world_size", "ranks", "error"}] -- points that
  failed are listed here, not in ``result``, so tools written for the original format
  still read ``result``;
* top level: ``tracekit_schema`` ("tracekit.bench.ddp/1"), ``tracekit_version``,
  ``created_utc``, ``command_line``, ``config`` (the ProfileConfig used for every point),
  ``models``, ``world_sizes``, ``device`` ("cuda"|"cpu"), ``unit`` ("gpu"|"rank"),
  ``notice``, ``launcher``, ``topology`` (``nvidia-smi topo -m`` text or null),
  ``topology_unavailable``, ``hosts`` ([{"hostname", "ranks": [...]}]).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from tracekit.errors import ConfigError
from tracekit.json_writer import dumps
from tracekit.profile.harness import PERCENTILES, percentile

SCHEMA = "tracekit.bench.ddp/1"
ORIGINAL_KEYS = ("pytorch_version", "cuda_version", "distributed_backend", "bucket_size", "benchmark_results")


def point_label(ddp: bool, world_size: int) -> str:
    return f"ddp {world_size}" if ddp else "no ddp"


def point_stats(measurements: list[float], batch_size: int, world_size: int) -> dict[str, Any]:
    """Percentiles of sec/iter over all ranks' iterations, and examples/sec per GPU and aggregate."""
    sec = {f"p{q}": percentile(measurements, q) for q in PERCENTILES}
    per_gpu = {k: (batch_size / v if v > 0 else None) for k, v in sec.items()}
    agg = {k: (v * world_size if v is not None else None) for k, v in per_gpu.items()}
    return {"sec_per_iter": sec, "ex_per_sec_per_gpu": per_gpu, "ex_per_sec": agg}


def scaling_efficiency(sec_ws: float, sec_1: float) -> float | None:
    """Efficiency of an N-rank DDP point against 1-rank DDP: per-GPU throughput ratio = t1 / tN."""
    return sec_1 / sec_ws if sec_ws > 0 else None


def build_document(meta: dict[str, Any], models: list[dict[str, Any]]) -> dict[str, Any]:
    """The JSON document. ``meta`` holds the top-level keys; ``models``: [{"model", "batch_size", "points"}]

    where each point is ``{"label", "ddp", "world_size", "ranks", "per_rank": [[sec...]] | None,
    "hosts", "error": str | None, "trace_dir"}``.
    """
    results = []
    for m in models:
        ok, failed = [], []
        for p in m["points"]:
            if p.get("error"):
                failed.append({k: p.get(k) for k in ("label", "ddp", "world_size", "ranks", "error")})
                continue
            ok.append({
                "ranks": p["ranks"],
                "measurements": [t for r in p["per_rank"] for t in r],
                "label": p["label"], "ddp": p["ddp"], "world_size": p["world_size"],
                "per_rank_measurements": p["per_rank"], "hosts": p.get("hosts"), "trace_dir": p.get("trace_dir"),
            })
        results.append({"model": m["model"], "batch_size": m["batch_size"], "result": ok, "failures": failed})
    doc = {k: meta.get(k) for k in ORIGINAL_KEYS[:-1]}
    doc["benchmark_results"] = results
    doc["tracekit_schema"] = SCHEMA
    for k, v in meta.items():
        doc.setdefault(k, v)
    return doc


def write_document(path: str | os.PathLike[str], doc: dict[str, Any]) -> None:
    p = Path(path)
    if p.parent and not p.parent.exists():
        p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_name(f".{p.name}.tmp{os.getpid()}")
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(dumps(doc, default=str))
        fh.write("\n")
    os.replace(tmp, p)


def load_document(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read a sweep JSON (tracekit's or the original script's) into one normalized form::

        {"path", "format": "tracekit"|"original", "meta": {top-level key: value},
         "models": [{"model", "batch_size", "points": [{"label", "ddp", "world_size", "ranks",
                     "measurements": [...], "error": str|None}]}]}
    """
    try:
        with open(path, encoding="utf-8") as fh:
            doc = json.load(fh)
    except OSError as e:
        raise ConfigError(f"{path}: cannot read: {e.strerror or e}") from e
    except ValueError as e:
        raise ConfigError(f"{path}: not valid JSON: {e}") from e
    if not isinstance(doc, dict) or not isinstance(doc.get("benchmark_results"), list):
        raise ConfigError(f"{path}: not a DDP benchmark file (no 'benchmark_results' list)")
    fmt = "tracekit" if doc.get("tracekit_schema") else "original"
    models = []
    for i, entry in enumerate(doc["benchmark_results"]):
        try:
            models.append(_normalize_model(entry, fmt))
        except (KeyError, TypeError, ValueError) as e:
            raise ConfigError(f"{path}: benchmark_results[{i}] is malformed: {type(e).__name__}: {e}") from e
    meta = {k: v for k, v in doc.items() if k != "benchmark_results"}
    return {"path": str(path), "format": fmt, "meta": meta, "models": models}


def _normalize_model(entry: dict[str, Any], fmt: str) -> dict[str, Any]:
    points = []
    for j, r in enumerate(entry["result"]):
        ranks = list(r["ranks"])
        if "ddp" in r:
            ddp = bool(r["ddp"])
        else:  # original: the first entry is the 1-GPU run without DDP
            ddp = not (j == 0 and len(ranks) == 1)
        ws = int(r.get("world_size") or len(ranks))
        points.append({"label": r.get("label") or point_label(ddp, ws), "ddp": ddp, "world_size": ws,
                       "ranks": ranks, "measurements": [float(x) for x in r["measurements"]], "error": None})
    for f in entry.get("failures") or []:
        ws = int(f.get("world_size") or len(f.get("ranks") or []) or 1)
        points.append({"label": f.get("label") or point_label(bool(f.get("ddp", True)), ws),
                       "ddp": bool(f.get("ddp", True)), "world_size": ws, "ranks": f.get("ranks") or [],
                       "measurements": [], "error": str(f.get("error"))})
    points.sort(key=lambda p: (p["ddp"], p["world_size"]))
    return {"model": str(entry["model"]), "batch_size": int(entry["batch_size"]), "points": points}
