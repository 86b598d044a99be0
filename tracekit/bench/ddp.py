"""``tracekit bench ddp``: DDP scaling sweep (PyTorch's ``benchmarks/distributed/ddp/benchmark.py``).

For each model: a 1-rank baseline without DDP, then DDP on 1, 2, 4, ... ranks (up to the
GPUs here, or ``world_sizes``). Each point is a fresh process group and model:

* run standalone, each point is its own elastic launch (fresh processes, c10d rendezvous
  on port 0, as ``tracekit profile`` does), so a crashing or hanging point is
  stopped by the agent / the process-group timeout and the sweep goes on;
* under an outer multi-rank launcher (torchrun, srun) every rank runs this function;
  each point gets a fresh subgroup of the first N ranks (as the original does), which
  gives multi-node points when N exceeds the ranks of one host.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from tabulate import tabulate

from tracekit.version import version
from tracekit.bench.ddp_worker import POINT_ENV, RESULT_NAME, run_point
from tracekit.bench.launch import launch_local
from tracekit.bench.progress import Progress
from tracekit.bench.schema import (
    build_document, point_label, point_stats, scaling_efficiency, _normalize_model,
)
from tracekit.errors import ConfigError, RunError
from tracekit.profile.config import ProfileConfig
from tracekit.profile.env import CONFIG_ENV, apply_gpu_safety_env, detect_rank_env
from tracekit.profile.harness import percentile
from tracekit.profile.models import check_model_available
from tracekit.profile.preflight import check_torch_features, resolve_device

DEFAULT_BUCKET_MB = 25


def default_world_sizes(available: int) -> list[int]:
    """1, 2, 4, ... up to ``available``, and ``available`` itself."""
    sizes, n = [], 1
    while n <= available:
        sizes.append(n)
        n *= 2
    if available not in sizes:
        sizes.append(available)
    return sizes


def plan_points(world_sizes: list[int], baseline: bool = True) -> list[tuple[bool, int]]:
    """``[(ddp, world_size)]`` in run order: the no-DDP baseline, then DDP by increasing size."""
    pts = [(False, 1)] if baseline else []
    return pts + [(True, n) for n in sorted(set(world_sizes))]


def check_topologies(records: list[dict[str, Any]]) -> tuple[str | None, str | None]:
    """The common ``nvidia-smi topo -m`` of all hosts, ``(topology, why_unavailable)``.

    Raises RunError when hosts report different topologies (as the original benchmark does).
    """
    by_host: dict[str, str | None] = {}
    why = None
    for r in records:
        if r.get("local_rank") == 0:
            by_host.setdefault(r["hostname"], r.get("topology"))
            why = why or r.get("topology_unavailable")
    topos = {h: t for h, t in by_host.items() if t is not None}
    if len(set(topos.values())) > 1:
        first = next(iter(topos))
        other = next(h for h, t in topos.items() if t != topos[first])
        raise RunError(f"hosts report different GPU topologies (nvidia-smi topo -m): {first} differs from "
                       f"{other}; run the sweep on identical machines")
    if topos:
        return next(iter(topos.values())), None
    return None, why or "not reported"


def _hosts(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    hosts: dict[str, list[int]] = {}
    for r in records:
        hosts.setdefault(r["hostname"], []).append(r["rank"])
    return [{"hostname": h, "ranks": sorted(rs)} for h, rs in hosts.items()]


def _summary(point: dict[str, Any], batch_size: int) -> str:
    if point.get("error"):
        return f"FAILED: {point['error']}"
    flat = [t for r in point["per_rank"] for t in r]
    s = point_stats(flat, batch_size, point["world_size"])
    return f"p50 {s['sec_per_iter']['p50']:.4f} s/iter"


def run_sweep(base: ProfileConfig, models: list[str], world_sizes: list[int] | None = None, *,
              profile_dir: str | None = None, progress: Progress | None = None,
              notify: Any = None) -> dict[str, Any] | None:
    """Run the sweep; return the JSON document (None on ranks other than 0 of an outer job)."""
    notify = notify or (lambda msg: print(msg, file=sys.stderr))
    if not models:
        raise ConfigError("give at least one --model")
    if world_sizes is not None and any(n < 1 for n in world_sizes):
        raise ConfigError("--world-sizes must be positive")
    for m in models:
        check_model_available(dataclasses.replace(base, model=m))
    rank_env = detect_rank_env()
    if rank_env is not None and rank_env.world_size > 1:
        return _sweep_in_job(base, models, world_sizes, rank_env, profile_dir=profile_dir, notify=notify)

    import torch

    gpus = torch.cuda.device_count() if torch.cuda.is_available() and base.device != "cpu" else 0
    sizes = world_sizes or default_world_sizes(gpus if gpus > 0 else 2)
    device, notice = resolve_device(base, max(sizes))
    check_torch_features(base, device)
    if device == "cpu":
        notice = (notice + "; " if notice else "") + "cpu run: each 'GPU' in the table is one rank (gloo)"
    if notice:
        notify(f"notice: {notice}")
    if device == "cuda":
        apply_gpu_safety_env()
    points = plan_points(sizes)
    progress = progress or Progress(len(models) * len(points))
    all_records: list[dict[str, Any]] = []
    model_results = []
    tmp_root = Path(tempfile.mkdtemp(prefix="tracekit-bench-"))
    try:
        for model in models:
            mres = {"model": model, "batch_size": base.batch_size, "points": []}
            for k, (ddp, ws) in enumerate(points):
                label = point_label(ddp, ws)
                progress.start(f"{model} {label}")
                cfg = dataclasses.replace(base, model=model, nproc=ws, device=device, launcher="elastic",
                                          device_notice=notice)
                pdir = _point_profile_dir(profile_dir, model, ddp, ws)
                run_dir = tmp_root / f"{len(model_results)}-{k}"
                point = {"label": label, "ddp": ddp, "world_size": ws, "ranks": list(range(ws)),
                         "profile_dir": pdir, "per_rank": None, "hosts": None, "error": None, "trace_dir": pdir}
                err = launch_local(ws, "tracekit.bench.ddp_worker",
                                   {CONFIG_ENV: cfg.to_json(), POINT_ENV: json.dumps(point)},
                                   run_dir, cfg.timeout_s)
                if err is None:
                    try:
                        result = json.loads((run_dir / RESULT_NAME).read_text())
                        recs = result["records"]
                        point["per_rank"] = [r["step_s"] for r in recs]
                        point["hosts"] = [r["hostname"] for r in recs]
                        all_records.extend(recs)
                    except (OSError, ValueError, KeyError) as e:
                        err = f"the ranks finished but wrote no result: {e}"
                if err:
                    point["error"] = err
                    point["trace_dir"] = None
                progress.done(_summary(point, base.batch_size))
                mres["points"].append(point)
            model_results.append(mres)
    finally:
        shutil.rmtree(tmp_root, ignore_errors=True)
    topo, topo_why = check_topologies(all_records) if all_records else (None, "no point succeeded")
    meta = _meta(base, models, sizes, device, notice, "elastic", topo, topo_why, _hosts(all_records))
    return build_document(meta, model_results)


def _point_profile_dir(profile_dir: str | None, model: str, ddp: bool, ws: int) -> str | None:
    if not profile_dir:
        return None
    safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in model)
    return str(Path(profile_dir) / safe / (f"ddp-{ws}" if ddp else "no-ddp"))


def _meta(base: ProfileConfig, models: list[str], sizes: list[int], device: str, notice: str | None,
          launcher: str, topo: str | None, topo_why: str | None, hosts: list[dict[str, Any]]) -> dict[str, Any]:
    import torch

    cfg = base.to_dict()
    for k in ("command_line", "model", "nproc", "out_dir", "fail_rank", "fail_at", "launcher", "device_notice"):
        cfg.pop(k, None)
    return {
        "pytorch_version": torch.__version__,
        "cuda_version": torch.version.cuda,
        "distributed_backend": "nccl" if device == "cuda" else "gloo",
        "bucket_size": base.bucket_cap_mb if base.bucket_cap_mb is not None else DEFAULT_BUCKET_MB,
        "tracekit_version": version(),
        "created_utc": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "command_line": base.command_line or sys.argv,
        "config": cfg,
        "models": models,
        "world_sizes": sizes,
        "device": device,
        "unit": "gpu" if device == "cuda" else "rank",
        "notice": notice,
        "launcher": launcher,
        "topology": topo,
        "topology_unavailable": topo_why,
        "hosts": hosts,
    }


def _sweep_in_job(base: ProfileConfig, models: list[str], world_sizes: list[int] | None, rank_env: Any, *,
                  profile_dir: str | None, notify: Any) -> dict[str, Any] | None:
    """Every rank of an outer torchrun/srun job runs this; points use subgroups of the first N ranks."""
    import torch
    import torch.distributed as dist

    device_kind, notice = resolve_device(base, rank_env.local_world_size)
    check_torch_features(base, device_kind)
    if device_kind == "cuda":
        apply_gpu_safety_env()
        torch.cuda.set_device(rank_env.local_rank)
        device, backend = torch.device("cuda", rank_env.local_rank), "nccl"
    else:
        device, backend = torch.device("cpu"), "gloo"
        notice = (notice + "; " if notice else "") + "cpu run: each 'GPU' in the table is one rank (gloo)"
    timeout = _dt.timedelta(seconds=base.timeout_s)
    if not dist.is_initialized():
        dist.init_process_group(backend=backend, timeout=timeout)
    rank, world = dist.get_rank(), dist.get_world_size()
    sizes = sorted({n for n in (world_sizes or default_world_sizes(world)) if n <= world})
    if world_sizes and len(sizes) < len(set(world_sizes)):
        raise ConfigError(f"--world-sizes {sorted(set(world_sizes))} exceed the job's {world} ranks")
    points = plan_points(sizes)
    progress = Progress(len(models) * len(points), enabled=rank == 0)
    if notice and rank == 0:
        notify(f"notice: {notice}")
    all_records: list[dict[str, Any]] = []
    model_results = []
    for model in models:
        mres = {"model": model, "batch_size": base.batch_size, "points": []}
        for ddp, ws in points:
            label = point_label(ddp, ws)
            progress.start(f"{model} {label}")
            cfg = dataclasses.replace(base, model=model, nproc=ws, device=device_kind,
                                      launcher=rank_env.launcher, device_notice=notice)
            pdir = _point_profile_dir(profile_dir, model, ddp, ws)
            group = dist.new_group(ranks=list(range(ws)), backend=backend, timeout=timeout)  # all ranks call it
            recs, err = None, None
            if rank < ws:
                try:
                    recs = run_point(cfg, {"label": label, "ddp": ddp, "world_size": ws, "profile_dir": pdir},
                                     rank=rank, local_rank=rank_env.local_rank, device=device, backend=backend,
                                     group=group)
                except Exception as e:  # noqa: BLE001 - reported in the table
                    err = f"rank {rank}: {type(e).__name__}: {str(e).strip().splitlines()[-1:] or ''}"
            status: list[Any] = [None] * world
            dist.all_gather_object(status, (err, recs))
            dist.destroy_process_group(group)
            errors = [s[0] for s in status if s[0]]
            recs = status[0][1]
            point = {"label": label, "ddp": ddp, "world_size": ws, "ranks": list(range(ws)),
                     "per_rank": None, "hosts": None, "error": errors[0] if errors else None,
                     "trace_dir": None if errors else pdir}
            if not errors and recs:
                point["per_rank"] = [r["step_s"] for r in recs]
                point["hosts"] = [r["hostname"] for r in recs]
                all_records.extend(recs)
            progress.done(_summary(point, base.batch_size))
            mres["points"].append(point)
        model_results.append(mres)
    dist.barrier()  # tear down together (see tracekit.profile.worker.run_rank)
    dist.destroy_process_group()
    if rank != 0:
        return None
    topo, topo_why = check_topologies(all_records) if all_records else (None, "no point succeeded")
    meta = _meta(base, models, sizes, device_kind, notice, rank_env.launcher, topo, topo_why, _hosts(all_records))
    return build_document(meta, model_results)


def render_sweep(doc: dict[str, Any], fmt: str = "simple") -> str:
    """One table per model: p50..p95 sec/iter, ex/s per GPU (rank on cpu) and aggregate, efficiency."""
    unit = "GPU" if doc.get("unit", "gpu") == "gpu" else "rank"
    out = []
    if doc.get("notice"):
        out.append(f"note: {doc['notice']}")
    for entry in doc["benchmark_results"]:
        m = _normalize_model(entry, "tracekit")
        base1 = next((p for p in m["points"] if p["ddp"] and p["world_size"] == 1 and not p["error"]), None)
        t1 = percentile_of(base1["measurements"], 50) if base1 else None
        rows = []
        for p in m["points"]:
            if p["error"]:
                rows.append([p["label"], "-", "-", "-", "-", "-", "-", "-", _short(f"FAILED: {p['error']}")])
                continue
            s = point_stats(p["measurements"], m["batch_size"], p["world_size"])
            sec = s["sec_per_iter"]
            eff = scaling_efficiency(sec["p50"], t1) if (p["ddp"] and t1) else None
            rows.append([p["label"], *(f"{sec[k]:.4f}" for k in ("p50", "p75", "p90", "p95")),
                         f"{s['ex_per_sec_per_gpu']['p50']:.1f}", f"{s['ex_per_sec']['p50']:.1f}",
                         f"{eff:.1%}" if eff is not None else "-", "ok"])
        head = ["point", "p50 s/iter", "p75 s/iter", "p90 s/iter", "p95 s/iter", f"ex/s per {unit}",
                "ex/s total", "efficiency", "status"]
        out.append(f"Model {m['model']}, batch size {m['batch_size']} per {unit} "
                   f"(ex/s at p50; efficiency = 1-{unit} DDP p50 / N-{unit} p50)")
        out.append(tabulate(rows, headers=head, tablefmt=fmt, disable_numparse=True))
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def sweep_rows(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per model and point (``--format csv``): sec/iter percentiles, ex/s per GPU (rank on cpu) and
    in total at p50, scaling efficiency against 1-GPU DDP at p50, and the error of a failed point."""
    rows = []
    for entry in doc["benchmark_results"]:
        m = _normalize_model(entry, "tracekit")
        base1 = next((p for p in m["points"] if p["ddp"] and p["world_size"] == 1 and not p["error"]), None)
        t1 = percentile_of(base1["measurements"], 50) if base1 else None
        for p in m["points"]:
            row: dict[str, Any] = {"model": m["model"], "batch_size": m["batch_size"], "point": p["label"],
                                   "ddp": p["ddp"], "world_size": p["world_size"], "error": p["error"]}
            if not p["error"]:
                s = point_stats(p["measurements"], m["batch_size"], p["world_size"])
                row |= {f"{k}_sec_per_iter": v for k, v in s["sec_per_iter"].items()}
                row |= {"ex_per_sec_per_gpu_p50": s["ex_per_sec_per_gpu"]["p50"], "ex_per_sec_p50": s["ex_per_sec"]["p50"],
                        "efficiency_p50": scaling_efficiency(s["sec_per_iter"]["p50"], t1) if (p["ddp"] and t1) else None}
            rows.append(row)
    return rows


def percentile_of(values: list[float], q: float) -> float:
    return percentile(values, q)


def _short(text: str, n: int = 100) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def failed_points(doc: dict[str, Any]) -> int:
    return sum(len(e.get("failures") or []) for e in doc["benchmark_results"])


__all__ = ["run_sweep", "render_sweep", "default_world_sizes", "plan_points", "check_topologies",
           "failed_points"]
