#!/usr/bin/env python
"""Profile a training loop the way most code does: no device synchronize between steps.

A check of ``tracekit whatif`` on traces that ``tracekit profile`` would not make: its harness
synchronizes the device at every step, but a plain loop lets the CPU queue whole steps ahead of a
GPU-bound step, so the profiled window opens with GPU work launched before it. For each model this
times ``--steps`` unprofiled steps with one synchronize at each end (the truth: the step *period*,
wall time / steps), then profiles ``--active`` steps with ``torch.profiler`` (``schedule(wait=1,
warmup=2, active=N)``, ``prof.step()`` each step, no synchronize in the loop), then times the
unprofiled steps again (how far the truth moved). Writes ``OUT/<name>/rank0.trace.json`` and
``OUT/<name>/truth.json`` (``period_ms_before``, ``period_ms_after``, the model and shape);
``benchmarks/bench_unsynced.py`` predicts each from its trace alone and compares.

Under ``torchrun`` (``WORLD_SIZE`` > 1) each model is wrapped in DDP over NCCL, one GPU per rank; every rank
writes ``rank<N>.trace.json``, and the period is the slowest rank's (rank 0 writes ``truth.json``).

Usage (a CUDA machine, repo root)::

    python benchmarks/gpu/unsynced_steps.py --out /tmp/unsynced
    python -m torch.distributed.run --standalone --nproc-per-node 2 benchmarks/gpu/unsynced_steps.py --out /tmp/ddp2
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import torch
import torch.distributed as dist

from tracekit.profile.config import ProfileConfig
from tracekit.profile.models import build_workload, output_to_loss

#: name -> ProfileConfig fields (the shapes: GPU-bound ones, where the CPU runs ahead, and one launch-bound)
SHAPES = {
    "bigmlp-fp32": dict(model="toy", width=4096, depth=16, batch_size=512),
    "resnet50-fp32": dict(model="resnet50", batch_size=64),
    "vit-bf16": dict(model="vit_b_16", batch_size=64, dtype="bf16"),
    "gpt2-bf16": dict(model="gpt2", batch_size=8, seq_len=512, dtype="bf16"),
    "transformer-fp32": dict(model="transformer", width=1024, depth=8, seq_len=512, batch_size=16),
    "smallmlp-fp32": dict(model="toy", width=256, depth=48, batch_size=64),
}


def _rank() -> int:
    return dist.get_rank() if dist.is_initialized() else 0


def _step_fn(name: str, fields: dict):
    cfg = ProfileConfig(device="cuda", **{k: v for k, v in fields.items() if k != "dtype"})
    torch.manual_seed(0)
    model, batch_fn, _ = build_workload(cfg)
    model = model.cuda()
    if dist.is_initialized():
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[torch.cuda.current_device()])
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    batch = batch_fn(cfg.batch_size, torch.device("cuda"))
    bf16 = fields.get("dtype") == "bf16"

    def step() -> None:
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=bf16):
            out = model(**batch) if isinstance(batch, dict) else model(batch)
            loss = output_to_loss(out)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    return step


def _period_ms(step, n: int) -> float:
    """Wall time per step over ``n`` steps, one synchronize at each end; the slowest rank's under DDP."""
    if dist.is_initialized():
        dist.barrier()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(n):
        step()
    torch.cuda.synchronize()
    ms = torch.tensor([(time.perf_counter() - t0) / n * 1e3], device="cuda")
    if dist.is_initialized():
        dist.all_reduce(ms, op=dist.ReduceOp.MAX)
    return float(ms.item())


def run(name: str, fields: dict, out: Path, steps: int, active: int) -> dict:
    step = _step_fn(name, fields)
    for _ in range(10):
        step()
    before = _period_ms(step, steps)
    d = out / name
    d.mkdir(parents=True, exist_ok=True)
    sched = torch.profiler.schedule(wait=1, warmup=2, active=active, repeat=1)
    acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=acts, schedule=sched,
                                on_trace_ready=lambda p: p.export_chrome_trace(str(d / f"rank{_rank()}.trace.json"))) as prof:
        for _ in range(1 + 2 + active + 1):
            step()
            prof.step()
    torch.cuda.synchronize()
    after = _period_ms(step, steps)
    truth = {"name": name, **fields, "steps": steps, "active": active, "period_ms_before": before,
             "period_ms_after": after, "torch": torch.__version__, "gpu": torch.cuda.get_device_name(),
             "world_size": dist.get_world_size() if dist.is_initialized() else 1}
    if _rank() == 0:
        (d / "truth.json").write_text(json.dumps(truth, indent=1))
    return truth


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--active", type=int, default=3)
    ap.add_argument("--only", nargs="*", default=None, help="shape names (default: all)")
    a = ap.parse_args()
    if int(os.environ.get("WORLD_SIZE", "1")) > 1:
        torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
        dist.init_process_group("nccl")
    for name, fields in SHAPES.items():
        if a.only and name not in a.only:
            continue
        try:
            t = run(name, fields, a.out, a.steps, a.active)
            if _rank() == 0:
                print(f"{name}: period {t['period_ms_before']:.2f} ms before, {t['period_ms_after']:.2f} ms after",
                      flush=True)
        except Exception as e:  # noqa: BLE001 - one shape failing must not lose the others
            print(f"{name}: failed: {type(e).__name__}: {e}", flush=True)
        torch.cuda.empty_cache()
    if dist.is_initialized():
        dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
