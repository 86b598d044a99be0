#!/usr/bin/env python
"""CUPTI's cost per CUDA operation, by kind of operation (why the profiler's cost varies by model).

One *subject* per process: either a micro step (``--kind``: a loop of ``--ops`` operations of one kind on small
tensors, so the step is bound by the CPU) or a real model's DDP step of one rank (``--model`` ..., as
``tracekit profile`` trains it, via ``benchmarks/gpu/paired_ddp_variants.py``'s builder). Timed, each step between device
synchronizes: ``plain`` steps (no profiler, before any session), then one ``torch.profiler`` session with CPU and
CUDA activities and the schedule ``wait=1, warmup=W, active=A`` as ``tracekit profile`` runs it: its warm-up steps
(``cupti``: CUPTI's activity tracing on, nothing recorded) and its recorded steps (``full``). The recorded steps'
trace is counted: per step, the runtime and driver calls by name, the kernels (GEMMs apart), the memcpys/memsets
and the CPU operators. The JSON keeps every step and the counts; a line per subject says CUPTI's cost per step and
per launch.

Usage (one GPU)::

    python -m torch.distributed.run --standalone --nproc-per-node 1 benchmarks/gpu/cupti_cost_by_kind.py --kind add --json a.json
    python -m torch.distributed.run --standalone --nproc-per-node 1 benchmarks/gpu/cupti_cost_by_kind.py \\
        --model gpt2 --seq-len 512 --batch-size 4 --amp bf16 --json g.json
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import statistics
import sys
import tempfile
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import paired_ddp_variants as pv  # noqa: E402

from tracekit.profile.harness import time_steps  # noqa: E402

KINDS = ("add", "mm32", "mm16", "linear_ac", "softmax", "layernorm", "sdpa", "triton", "empty", "cast",
         "mm32_big", "add_launch_only")


def _micro(kind: str, ops: int, torch: object):
    """A step of ``ops`` operations of ``kind`` on small CUDA tensors (a callable)."""
    F = torch.nn.functional
    dev = "cuda"
    x = torch.randn(1024, device=dev)
    a, b = torch.randn(64, 64, device=dev), torch.randn(64, 64, device=dev)
    a16, b16 = a.bfloat16(), b.bfloat16()
    big = torch.randn(1024, 1024, device=dev)
    w = torch.randn(64, 64, device=dev)
    q = torch.randn(1, 4, 64, 64, device=dev, dtype=torch.bfloat16)
    ln = torch.nn.LayerNorm(64).to(dev)
    fused = torch.compile(lambda t: (t * 2 + 1).relu() - t.sin()) if kind == "triton" else None
    if fused is not None:
        fused(x)  # compiled here, before any timing
    one = {
        "add": lambda: x.add_(1.0),
        "mm32": lambda: torch.mm(a, b),
        "mm16": lambda: torch.mm(a16, b16),
        "mm32_big": lambda: torch.mm(big, big),
        "linear_ac": lambda: _autocast_linear(torch, F, a, w),
        "softmax": lambda: torch.softmax(a, -1),
        "layernorm": lambda: ln(a),
        "sdpa": lambda: F.scaled_dot_product_attention(q, q, q, is_causal=True),
        "triton": lambda: fused(x),
        "empty": lambda: torch.empty(1024, device=dev),
        "cast": lambda: a.to(torch.bfloat16),
        "add_launch_only": lambda: torch.add(x, 1.0, out=x),
    }[kind]

    def step() -> None:
        with torch.no_grad():
            for _ in range(ops):
                one()
    return step


def _autocast_linear(torch: object, F: object, a: object, w: object) -> object:
    with torch.autocast("cuda", dtype=torch.bfloat16):
        return F.linear(a, w)


def _counts(path: str, steps: int) -> dict:
    """Per recorded step: runtime/driver calls by name, kernels (GEMMs apart), memcpy/memset, CPU operators."""
    events = json.loads(Path(path).read_text()).get("traceEvents", [])
    api: collections.Counter[str] = collections.Counter()
    c: collections.Counter[str] = collections.Counter()
    for e in events:
        if e.get("ph") != "X":
            continue
        cat, name = e.get("cat", ""), e.get("name", "")
        if cat in ("cuda_runtime", "cuda_driver"):
            api[f"{cat}:{name}"] += 1
        elif cat == "kernel":
            c["kernels"] += 1
            low = name.lower()
            if "gemm" in low or "cutlass" in low or "sm90" in low or "cublas" in low or "nvjet" in low:
                c["gemm_kernels"] += 1
        elif cat in ("gpu_memcpy", "gpu_memset"):
            c[cat] += 1
        elif cat == "cpu_op":
            c["cpu_ops"] += 1
        elif cat == "user_annotation":
            c["annotations"] += 1
    c["runtime_calls"] = sum(v for k, v in api.items() if k.startswith("cuda_runtime:"))
    c["driver_calls"] = sum(v for k, v in api.items() if k.startswith("cuda_driver:"))
    return {"per_step": {k: v / steps for k, v in c.items()},
            "api_per_step": {k: v / steps for k, v in api.most_common()}}


def run(args: argparse.Namespace) -> dict:
    import torch
    import torch.distributed as dist

    torch.cuda.set_device(0)
    sync = torch.cuda.synchronize
    if args.kind:
        step = _micro(args.kind, args.ops, torch)
    else:
        dist.init_process_group("nccl")
        trainer = pv._variant(args, pv._spec("", 1), dist.new_group([0]), torch.device("cuda:0"))
        step = trainer.step
    time_steps(step, args.warmup, sync)
    out: dict = {"plain": time_steps(step, args.plain, sync)}
    acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    sched = torch.profiler.schedule(wait=1, warmup=args.warm, active=args.active, repeat=1)
    trace = os.path.join(tempfile.mkdtemp(), "t.json")
    steps: list[float] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with torch.profiler.profile(activities=acts, schedule=sched,
                                    on_trace_ready=lambda p: p.export_chrome_trace(trace)) as prof:
            for _ in range(1 + args.warm + args.active):
                steps += time_steps(step, 1, sync)
                prof.step()
    out.update(wait=steps[:1], cupti=steps[1:1 + args.warm], full=steps[1 + args.warm:])
    out["counts"] = _counts(trace, args.active)
    if not args.kind:
        dist.destroy_process_group()
    return out


def summary(out: dict, ops: int | None) -> dict[str, float]:
    med = {k: 1e3 * statistics.median(out[k][1:] if k == "cupti" else out[k]) for k in ("plain", "cupti", "full")}
    n = out["counts"]["per_step"]
    launches = n.get("kernels", 0) + n.get("gpu_memcpy", 0) + n.get("gpu_memset", 0)
    s = {**med, "cupti_ms": med["cupti"] - med["plain"], "full_ms": med["full"] - med["plain"],
         "launches": launches, "runtime": n.get("runtime_calls", 0), "driver": n.get("driver_calls", 0),
         "cpu_ops": n.get("cpu_ops", 0)}
    s["cupti_us_per_launch"] = 1e3 * s["cupti_ms"] / launches if launches else float("nan")
    calls = s["runtime"] + s["driver"]
    s["cupti_us_per_call"] = 1e3 * s["cupti_ms"] / calls if calls else float("nan")
    if ops:
        s["cupti_us_per_op"] = 1e3 * s["cupti_ms"] / ops
        s["plain_us_per_op"] = 1e3 * med["plain"] / ops
    return s


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    pv.add_job_args(ap)
    ap.add_argument("--kind", choices=KINDS, help="a micro step of this kind of operation (else the model)")
    ap.add_argument("--ops", type=int, default=500, help="operations per micro step")
    ap.add_argument("--warmup", type=int, default=10, help="untimed steps first")
    ap.add_argument("--plain", type=int, default=20)
    ap.add_argument("--warm", type=int, default=6, help="profiler warm-up steps (the first is not counted)")
    ap.add_argument("--active", type=int, default=2)
    ap.add_argument("--json", type=Path, required=True)
    args = ap.parse_args(argv)
    out = run(args)
    out["summary"] = summary(out, args.ops if args.kind else None)
    out["args"] = vars(args)
    args.json.write_text(json.dumps(out, default=str))
    print(args.kind or args.model, "  ".join(f"{k} {v:.2f}" for k, v in out["summary"].items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
