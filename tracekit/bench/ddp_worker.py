"""One point of the DDP sweep, on one rank.

Entry points:

* :func:`run_point` -- the ranks of one point, in a process group (the default one under
  our per-point elastic launch, a fresh subgroup under an outer torchrun/srun job).
* ``python -m tracekit.bench.ddp_worker`` -- what the per-point elastic launch starts; it
  reads the :class:`~tracekit.profile.config.ProfileConfig` from ``$TRACEKIT_PROFILE_CONFIG``
  and the point from ``$TRACEKIT_BENCH_POINT``; rank 0 writes ``result.json`` into
  ``$TRACEKIT_BENCH_RUN_DIR``.

The model, DDP wrapping (bucket caps, comm hook, on a subgroup too), compile order, the train
step and the manifest are tracekit profile's own public pieces (:func:`build_workload`,
:func:`~tracekit.profile.parallel.wrap_ddp`, :func:`~tracekit.profile.parallel.compile_inner`,
:class:`~tracekit.profile.training.Trainer`, :mod:`tracekit.profile.records`).
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import json
import os
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from tracekit.profile.compile_facts import enter_compile_scope
from tracekit.profile.config import ProfileConfig
from tracekit.profile.env import CONFIG_ENV, apply_gpu_safety_env, detect_rank_env
from tracekit.profile.failure import report_failure
from tracekit.profile.harness import run_profiled_steps, time_steps
from tracekit.traces.manifest import write_manifest
from tracekit.profile.models import build_workload
from tracekit.profile.parallel import compile_inner, wrap_ddp
from tracekit.profile.records import build_manifest, rank_record, topology
from tracekit.profile.training import Trainer

POINT_ENV = "TRACEKIT_BENCH_POINT"
FAIL_ENV = "TRACEKIT_BENCH_FAIL"  # test hook: "<label>:<rank>" raises on that rank of that point
RESULT_NAME = "result.json"


def run_point(config: ProfileConfig, point: dict[str, Any], *, rank: int, local_rank: int, device: Any,
              backend: str, group: Any = None) -> list[dict[str, Any]] | None:
    """Run one point on this rank; return every rank's record on the point's rank 0 (None elsewhere).

    ``point``: ``{"label", "ddp": bool, "world_size", "profile_dir": str|None}``.
    """
    import torch
    import torch.distributed as dist

    fail = os.environ.get(FAIL_ENV, "")
    if fail and fail == f"{point['label']}:{rank}":
        raise RuntimeError(f"tracekit bench test failure injected on rank {rank} of {point['label']}")
    use_ddp = bool(point["ddp"])
    if not use_ddp:  # no DDP: plain (optionally compiled) model; nothing DDP-specific applies
        config = dataclasses.replace(config, optimize_ddp=None, inductor_ddp_fusion=None, inductor_ddp_bucket_mb=None)
    world = dist.get_world_size(group)
    torch.manual_seed(config.seed)
    model, batch_fn, _blocks = build_workload(config)
    torch.manual_seed(config.seed + 1 + rank)
    batches = [batch_fn(config.batch_size, device) for _ in range(config.grad_accum)]
    mode = config.resolved_optimize_ddp if use_ddp else None
    profile_dir = point.get("profile_dir")
    with ExitStack() as stack:
        facts = enter_compile_scope(stack, config, mode)  # before DDP is constructed
        model.to(device)
        compile_inner(model, config)
        ddp = None
        if use_ddp:
            ddp, applied = wrap_ddp(model, config, device, process_group=group)
            train_model = ddp
        else:
            train_model, applied = model, {"ddp": False}
        trainer = Trainer(config, train_model, batches, device)
        sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
        warmup_s = time_steps(trainer.step, config.warmup, sync)
        facts.mark_warmup_done()
        step_s = time_steps(trainer.step, config.steps, sync)
        trace = None
        if profile_dir:
            win = run_profiled_steps(config, profile_dir, rank, device.type, trainer.step, sync)
            trace = {"rank": rank, "file": win.trace_path.name, "bytes": win.trace_path.stat().st_size}
        facts.mark_run_done()
        compile_facts = facts.facts()
    record = rank_record(rank=rank, local_rank=local_rank, device=device, warmup_s=warmup_s, step_s=step_s,
                         compile_facts=compile_facts, ddp=ddp, applied=applied, trace=trace,
                         backward_compiler=trainer.backward_compiler)
    record["topology"], record["topology_unavailable"] = (
        topology() if local_rank == 0 else (None, "reported by local rank 0"))
    gathered: list[Any] = [None] * world
    dist.all_gather_object(gathered, record, group=group)
    if rank != 0:
        return None
    gathered.sort(key=lambda r: r["rank"])
    if profile_dir:
        _write_profile_manifest(config, gathered, world, device.type, backend, Path(profile_dir), use_ddp)
    return gathered


def _write_profile_manifest(config: ProfileConfig, records: list[dict[str, Any]], world: int, device: str,
                            backend: str, out_dir: Path, use_ddp: bool) -> None:
    """``run.json`` in the ``tracekit profile`` layout, so ``tracekit analyze <dir>`` reads the point."""
    cfg = dataclasses.replace(config, nproc=world, out_dir=str(out_dir))
    manifest = build_manifest(cfg, records, world, device, backend)
    manifest["bench_point"] = {"ddp": use_ddp, "world_size": world}
    write_manifest(out_dir, manifest)


def main() -> int:
    """Entry of ``python -m tracekit.bench.ddp_worker`` (one rank of one point)."""
    run_dir = os.environ.get("TRACEKIT_BENCH_RUN_DIR")
    rank = int(os.environ.get("RANK", "0"))
    try:
        config = ProfileConfig.from_json(os.environ[CONFIG_ENV])
        point = json.loads(os.environ[POINT_ENV])
        rank_env = detect_rank_env()
        assert rank_env is not None, "RANK/WORLD_SIZE not set"
        if config.device == "cuda":
            apply_gpu_safety_env()
        import torch
        import torch.distributed as dist

        if config.device == "cuda":
            torch.cuda.set_device(rank_env.local_rank)
            device, backend = torch.device("cuda", rank_env.local_rank), "nccl"
        else:
            device, backend = torch.device("cpu"), "gloo"
        dist.init_process_group(backend=backend, timeout=_dt.timedelta(seconds=config.timeout_s))
        records = run_point(config, point, rank=dist.get_rank(), local_rank=rank_env.local_rank,
                            device=device, backend=backend)
        if records is not None and run_dir:
            tmp = Path(run_dir) / f".{RESULT_NAME}.tmp"
            tmp.write_text(json.dumps({"backend": backend, "records": records}, default=str))
            os.replace(tmp, Path(run_dir) / RESULT_NAME)
        dist.barrier()  # tear down together (see tracekit.profile.worker.run_rank)
        dist.destroy_process_group()
    except BaseException as e:
        return report_failure(run_dir, rank, e)
    return 0


if __name__ == "__main__":
    sys.exit(main())
